package io.pgbus.jakarta.admin;

import io.pgbus.AuditEntry;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import io.pgbus.Schedules;
import io.pgbus.admin.InvalidFilterException;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.io.InputStream;
import java.util.List;
import java.util.Locale;

/**
 * {@code schedules}: list and read them with their audit history, create and replace them from a
 * JSON body ({@link ScheduleBody}), and pause, resume, delete or trigger one, all through {@link
 * Schedules}. Viewers read; the payload is masked for them like a job's. Public only because JAX-RS
 * and JSON-B reach it by reflection; {@link AdminResource#schedules} makes one per request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class SchedulesResource {

  /** The default page size of {@code GET schedules}. */
  static final int DEFAULT_PAGE = 50;

  /** How many audit entries {@code GET schedules/{name}} shows, newest first. */
  static final int HISTORY = 20;

  private final AdminCall call;
  private final Schedules schedules;

  SchedulesResource(AdminCall call, Schedules schedules) {
    this.call = call;
    this.schedules = schedules;
  }

  /** Schedules by name: {@code ?after=<name>&limit=<1..500>}; {@code next} is the next after. */
  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response list(@Context UriInfo uri) {
    return call.read(
        () -> {
          MultivaluedMap<String, String> q = uri.getQueryParameters();
          int limit = AdminParams.positive("limit", q.getFirst("limit"), DEFAULT_PAGE);
          List<Schedule> page = schedules.list(q.getFirst("after"), limit);
          boolean masked = call.masked();
          return AdminCall.ok(
              new PageJson(
                  page.stream().map(s -> ScheduleJson.of(s, masked, null)).toList(),
                  page.size() == limit ? page.get(page.size() - 1).name() : null));
        });
  }

  /** One schedule with its latest audit entries (V18): who changed or triggered it, and when. */
  @GET
  @Path("{name}")
  @Produces(MediaType.APPLICATION_JSON)
  public Response one(@PathParam("name") String name) {
    return call.read(
        () ->
            schedules
                .get(name)
                .map(
                    s ->
                        AdminCall.ok(
                            ScheduleJson.of(
                                s,
                                call.masked(),
                                schedules.history(name, HISTORY).stream()
                                    .map(HistoryJson::of)
                                    .toList())))
                .orElseGet(() -> AdminCall.notFound("name")));
  }

  /** Creates a schedule from a JSON body; 201 with it as stored. */
  @POST
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response create(InputStream body) {
    return call.act(
        () -> {
          ScheduleDefinition d = ScheduleBody.definition(call.body(body), null);
          return AdminCall.json(
              Response.Status.CREATED.getStatusCode(),
              ScheduleJson.of(schedules.create(d), false, null));
        });
  }

  /** Replaces a schedule's definition from a JSON body; 404 when there is none. */
  @POST
  @Path("{name}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response update(@PathParam("name") String name, InputStream body) {
    return call.act(
        () ->
            schedules
                .update(ScheduleBody.definition(call.body(body), name))
                .map(s -> AdminCall.ok(ScheduleJson.of(s, false, null)))
                .orElseGet(() -> AdminCall.notFound("name")));
  }

  /**
   * {@code POST schedules/{name}/pause|resume|delete|trigger}: {@code
   * {"name":..,"action":..,"changed":true}}, with {@code jobId} for a trigger; 404 when there is no
   * such schedule.
   */
  @POST
  @Path("{name}/{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response act(@PathParam("name") String name, @PathParam("action") String action) {
    return call.act(
        () -> {
          String jobId = null;
          boolean found;
          switch (action) {
            case "pause" -> found = schedules.pause(name);
            case "resume" -> found = schedules.resume(name);
            case "delete" -> found = schedules.delete(name);
            case "trigger" -> {
              var job = schedules.trigger(name);
              found = job.isPresent();
              jobId = found ? String.valueOf(job.getAsLong()) : null;
            }
            default ->
                throw new InvalidFilterException(
                    "action", action, "use pause, resume, delete or trigger");
          }
          return found
              ? AdminCall.ok(new ActionJson(name, action, jobId, true))
              : AdminCall.notFound("name");
        });
  }

  /**
   * A page of schedules by name: {@code next} is the {@code after} of the next, null on the last.
   */
  @JsonbNillable
  @JsonbPropertyOrder({"schedules", "next"})
  public record PageJson(List<ScheduleJson> schedules, String next) {}

  /**
   * A schedule as the API shows it; the payload is null when masked. A stored row that cannot run
   * ({@link Schedule#problem}) is shown with its values as stored, {@code error} {@code
   * "unreadable"} and the {@code problem}; both are null for the others. {@code history} is only in
   * {@code GET schedules/{name}}: left out elsewhere, where every other null is written.
   */
  @JsonbNillable
  @JsonbPropertyOrder({
    "name",
    "cron",
    "zone",
    "queue",
    "payload",
    "payloadMasked",
    "priority",
    "maxAttempts",
    "misfire",
    "catchUpLimit",
    "overlap",
    "paused",
    "lastRun",
    "lastJobId",
    "lastOutcome",
    "nextRun",
    "source",
    "updatedAt",
    "updatedBy",
    "error",
    "problem",
    "history"
  })
  public record ScheduleJson(
      String name,
      String cron,
      String zone,
      String queue,
      String payload,
      boolean payloadMasked,
      int priority,
      Integer maxAttempts,
      String misfire,
      Integer catchUpLimit,
      String overlap,
      boolean paused,
      String lastRun,
      String lastJobId,
      String lastOutcome,
      String nextRun,
      String source,
      String updatedAt,
      String updatedBy,
      String error,
      String problem,
      @JsonbNillable(false) List<HistoryJson> history) {

    static ScheduleJson of(Schedule s, boolean masked, List<HistoryJson> history) {
      ScheduleDefinition d = s.definition();
      return new ScheduleJson(
          d.name(),
          d.cron(),
          d.zone(),
          d.queue(),
          masked ? null : d.payloadJson(),
          masked,
          d.priority(),
          d.maxAttempts(),
          d.misfire() == null ? null : d.misfire().name().toLowerCase(Locale.ROOT),
          d.catchUpLimit(),
          d.overlap() == null ? null : d.overlap().name().toLowerCase(Locale.ROOT),
          s.paused(),
          JobsResource.text(s.lastRun()),
          s.lastJobId() == null ? null : String.valueOf(s.lastJobId()),
          s.lastOutcome(),
          JobsResource.text(s.nextRun()),
          s.source(),
          JobsResource.text(s.updatedAt()),
          s.updatedBy(),
          s.readable() ? null : "unreadable",
          s.problem(),
          history);
    }
  }

  /** One audit entry of a schedule, newest first. */
  @JsonbNillable
  @JsonbPropertyOrder({"at", "actor", "action", "queue", "jobId"})
  public record HistoryJson(String at, String actor, String action, String queue, String jobId) {

    static HistoryJson of(AuditEntry e) {
      return new HistoryJson(
          JobsResource.text(e.at()),
          e.actor(),
          e.action(),
          e.queue(),
          e.jobId() == null ? null : String.valueOf(e.jobId()));
    }
  }

  /** What an action did; {@code jobId} only for a trigger (left out, not null, otherwise). */
  @JsonbPropertyOrder({"name", "action", "jobId", "changed"})
  public record ActionJson(String name, String action, String jobId, boolean changed) {}
}
