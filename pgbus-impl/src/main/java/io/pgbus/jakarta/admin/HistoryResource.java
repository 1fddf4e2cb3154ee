package io.pgbus.jakarta.admin;

import io.pgbus.admin.HistoryPoint;
import io.pgbus.admin.JobAdmin;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * {@code GET history?queue=&from=&to=&step=}: the per-minute history of one queue or of all ({@link
 * JobAdmin#history}), for the console's timing charts. Without {@code to} it ends now, without
 * {@code from} an hour before {@code to}, without {@code step} one point per minute. Public only
 * because JAX-RS and JSON-B reach it by reflection; {@link AdminResource#history} makes one per
 * request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class HistoryResource {

  private final AdminCall call;
  private final JobAdmin admin;

  HistoryResource(AdminCall call, JobAdmin admin) {
    this.call = call;
    this.admin = admin;
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response read(
      @QueryParam("queue") String queue,
      @QueryParam("from") String from,
      @QueryParam("to") String to,
      @QueryParam("step") String step) {
    return call.read(
        () -> {
          Instant end = to == null ? Instant.now() : AdminParams.instant("to", to);
          Instant start =
              from == null ? end.minus(Duration.ofHours(1)) : AdminParams.instant("from", from);
          int minutes = AdminParams.positive("step", step, 1);
          List<HistoryPoint> points = admin.history(queue, start, end, minutes);
          return AdminCall.ok(
              new HistoryJson(queue, minutes, points.stream().map(PointJson::of).toList()));
        });
  }

  /** The history of {@code queue} (null: all queues), one point per {@code stepMinutes}. */
  @JsonbNillable
  @JsonbPropertyOrder({"queue", "stepMinutes", "points"})
  public record HistoryJson(String queue, int stepMinutes, List<PointJson> points) {}

  /** One step; the timings are null (written) when no job completed or died in it. */
  @JsonbNillable
  @JsonbPropertyOrder({"at", "completed", "failed", "dead", "waitMs", "runMs"})
  public record PointJson(
      String at,
      long completed,
      long failed,
      long dead,
      @JsonbNillable TimingJson waitMs,
      @JsonbNillable TimingJson runMs) {

    static PointJson of(HistoryPoint p) {
      return new PointJson(
          p.at().toString(),
          p.completed(),
          p.failed(),
          p.dead(),
          TimingJson.of(p.waitTime()),
          TimingJson.of(p.runTime()));
    }
  }

  /** Percentiles in milliseconds. */
  @JsonbPropertyOrder({"p50", "p95", "p99"})
  public record TimingJson(long p50, long p95, long p99) {

    static TimingJson of(HistoryPoint.Percentiles p) {
      return p == null ? null : new TimingJson(p.p50Ms(), p.p95Ms(), p.p99Ms());
    }
  }
}
