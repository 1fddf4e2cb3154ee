package io.pgbus.jakarta.admin;

import io.pgbus.JobQueue;
import io.pgbus.admin.Explanation;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobPage;
import io.pgbus.admin.JobView;
import io.pgbus.admin.Reason;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code jobs}: search ({@code GET jobs}), one job ({@code GET jobs/{id}}), why it is where it is
 * ({@code GET jobs/{id}/explain}), and the actions on one or many ({@code POST jobs/{id}/{action}},
 * {@code POST jobs/{action}?<filter>}), all through {@link JobAdmin}. A viewer's search by payload
 * is refused while payloads are masked, and every user's payload searches are rate-limited ({@link
 * SearchBudget}). Public only because JAX-RS and JSON-B reach it by reflection; {@link
 * AdminResource#jobs} makes one per request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class JobsResource {

  /** The default page size of a search. */
  static final int DEFAULT_PAGE = 50;

  /** Payload searches per user, for every subclass of the admin API in this application. */
  private static final SearchBudget SEARCHES = new SearchBudget(System::nanoTime);

  private final AdminCall call;
  private final JobAdmin admin;
  private final JobQueue queue;
  private final Supplier<Map<String, String>> handlers;

  /**
   * @param handlers each queue's handler class in this application, for the search by handler
   */
  JobsResource(
      AdminCall call, JobAdmin admin, JobQueue queue, Supplier<Map<String, String>> handlers) {
    this.call = call;
    this.admin = admin;
    this.queue = queue;
    this.handlers = handlers;
  }

  /**
   * The filter of a search or bulk action: {@link AdminParams#filter}'s parameters, and {@code
   * handler}: the queues its {@code @Handles} bean is bound to ({@link HandlerQueues}).
   */
  private JobFilter filter(MultivaluedMap<String, String> q) {
    JobFilter filter = AdminParams.filter(q::getFirst);
    String handler = q.getFirst("handler");
    return handler == null ? filter : filter.withQueues(HandlerQueues.of(handler, handlers.get()));
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response search(@Context UriInfo uri) {
    return call.read(
        () -> {
          MultivaluedMap<String, String> q = uri.getQueryParameters();
          boolean masked = call.masked();
          String scan =
              q.getFirst("payload") != null
                  ? "payload"
                  : q.getFirst("error") != null ? "error" : null;
          if (scan != null) {
            Response refused = payloadSearchRefused(masked, scan);
            if (refused != null) {
              return refused;
            }
          }
          JobFilter filter = filter(q);
          Long before = AdminParams.number("before", q.getFirst("before"));
          int limit = AdminParams.positive("limit", q.getFirst("limit"), DEFAULT_PAGE);
          JobPage page = admin.search(filter, before, limit);
          return AdminCall.ok(
              new PageJson(
                  page.jobs().stream().map(j -> JobJson.of(j, masked)).toList(),
                  page.next() == null ? null : String.valueOf(page.next())));
        });
  }

  /**
   * A 403 or a 429 for this payload or error search ({@code field}), or null when it may run. Both
   * read what is masked for viewers, and neither has an index: one budget for both.
   */
  private Response payloadSearchRefused(boolean masked, String field) {
    // Whether a job matches tells what its payload holds: a masked PIN took 200 guesses.
    if (masked) {
      return AdminCall.error(
          Response.Status.FORBIDDEN,
          "forbidden",
          field,
          "a "
              + field
              + " search is for the role "
              + AdminResource.ADMIN
              + " while pgbus.admin.mask-payloads is on: it tells what masked "
              + field
              + "s hold");
    }
    long wait = SEARCHES.take(call.user());
    if (wait <= 0) {
      return null;
    }
    return Response.fromResponse(
            AdminCall.error(
                Response.Status.TOO_MANY_REQUESTS,
                "rate-limited",
                field,
                "at most "
                    + SearchBudget.BURST
                    + " payload or error searches at once per user, then one a second: retry in "
                    + wait
                    + " s"))
        .header(HttpHeaders.RETRY_AFTER, wait)
        .build();
  }

  @GET
  @Path("{id}")
  @Produces(MediaType.APPLICATION_JSON)
  public Response job(@PathParam("id") String id) {
    return call.read(
        () -> {
          long jobId = AdminParams.id(id);
          return admin
              .job(jobId)
              .map(j -> AdminCall.ok(JobDetailJson.of(j, call.masked())))
              .orElseGet(() -> AdminCall.notFound("id"));
        });
  }

  /**
   * {@code GET jobs/{id}/explain}: why the job is in its state ({@link JobAdmin#explain};
   * docs/explain.md); 404 when there is no such job. Error texts are masked with the payloads.
   */
  @GET
  @Path("{id}/explain")
  @Produces(MediaType.APPLICATION_JSON)
  public Response explain(@PathParam("id") String id) {
    return call.read(
        () -> {
          long jobId = AdminParams.id(id);
          boolean masked = call.masked();
          return admin
              .explain(jobId)
              .map(e -> AdminCall.ok(ExplanationJson.of(masked ? e.withoutErrors() : e)))
              .orElseGet(() -> AdminCall.notFound("id"));
        });
  }

  @POST
  @Path("{id}/{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response actOnOne(
      @Context UriInfo uri, @PathParam("id") String id, @PathParam("action") String action) {
    return call.act(
        () -> {
          long jobId = AdminParams.id(id);
          // A waiting job moved: ?runAt=<ISO-8601>&priority=<n> (JobAdmin.replaceWaiting).
          if (action.equals("replace")) {
            MultivaluedMap<String, String> q = uri.getQueryParameters();
            Long priority = AdminParams.number("priority", q.getFirst("priority"));
            if (priority != null
                && (priority < Integer.MIN_VALUE || priority > Integer.MAX_VALUE)) {
              throw new InvalidFilterException("priority", priority, "use -100 to 100");
            }
            boolean moved =
                admin.replaceWaiting(
                    jobId,
                    AdminParams.instant("runAt", q.getFirst("runAt")),
                    priority == null ? null : priority.intValue());
            return moved ? AdminCall.ok(new ChangedJson(action, 1)) : AdminCall.notFound("id");
          }
          // One job's cancel reaches a running job too (JobQueue.cancel: the JVM that runs it is
          // asked to stop it); the bulk cancel stays with the waiting jobs
          // (JobAdmin.cancelWaiting).
          if (action.equals("cancel")) {
            return AdminCall.ok(new ChangedJson(action, queue.cancel(jobId) ? 1 : 0));
          }
          return changed(action, JobFilter.byId(jobId), 1);
        });
  }

  @POST
  @Path("{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response actOnMany(@Context UriInfo uri, @PathParam("action") String action) {
    return call.act(
        () -> {
          MultivaluedMap<String, String> q = uri.getQueryParameters();
          return changed(
              action,
              filter(q),
              AdminParams.positive("limit", q.getFirst("limit"), AdminParams.DEFAULT_BULK));
        });
  }

  private Response changed(String action, JobFilter filter, int limit) {
    int n =
        switch (action) {
          case "replay" -> admin.replayDead(filter, limit);
          case "retry" -> admin.retryNow(filter, limit);
          case "cancel" -> admin.cancelWaiting(filter, limit);
          case "delete" -> admin.deleteFinished(filter, limit);
          default ->
              throw new InvalidFilterException(
                  "action", action, "use replay, retry, cancel or delete");
        };
    return AdminCall.ok(new ChangedJson(action, n));
  }

  static String text(Instant at) {
    return at == null ? null : at.toString();
  }

  /** A page of a search: {@code next} is the {@code before} of the next page, null on the last. */
  @JsonbNillable
  @JsonbPropertyOrder({"jobs", "next"})
  public record PageJson(List<JobJson> jobs, String next) {}

  /** A job's explanation: its id (a string, as everywhere here), queue, state and reasons. */
  @JsonbPropertyOrder({"job", "queue", "state", "reasons"})
  public record ExplanationJson(String job, String queue, String state, List<ReasonJson> reasons) {
    static ExplanationJson of(Explanation e) {
      return new ExplanationJson(
          String.valueOf(e.job()),
          e.queue(),
          e.state().sqlName(),
          e.reasons().stream().map(ReasonJson::of).toList());
    }
  }

  /**
   * One reason: {@code evidence} is a JSON object as text (as a job's {@code payload} and {@code
   * errors}); {@code action}, {@code resolvesAt} and {@code error} may be null.
   */
  @JsonbNillable
  @JsonbPropertyOrder({"code", "sentence", "evidence", "action", "resolvesAt", "error"})
  public record ReasonJson(
      String code,
      String sentence,
      String evidence,
      String action,
      String resolvesAt,
      String error) {
    static ReasonJson of(Reason r) {
      return new ReasonJson(
          r.code(), r.sentence(), r.evidence(), r.action(), text(r.resolvesAt()), r.error());
    }
  }

  /** What an action changed: {@code {"action":"replay","changed":3}}. */
  @JsonbPropertyOrder({"action", "changed"})
  public record ChangedJson(String action, int changed) {}

  /**
   * A job in a search: no payload, and its last error masked with the payloads. Ids are strings:
   * JavaScript loses precision above 2^53.
   */
  @JsonbNillable
  @JsonbPropertyOrder({
    "id",
    "queue",
    "state",
    "priority",
    "attempt",
    "maxAttempts",
    "runAt",
    "createdAt",
    "attemptedAt",
    "finalizedAt",
    "attemptedBy",
    "leaseExpiresAt",
    "uniqueKey",
    "enqueuedBy",
    "correlationId",
    "lastError",
    "progress",
    "attemptsBeforeReplay"
  })
  public record JobJson(
      String id,
      String queue,
      String state,
      int priority,
      int attempt,
      int maxAttempts,
      String runAt,
      String createdAt,
      String attemptedAt,
      String finalizedAt,
      String attemptedBy,
      String leaseExpiresAt,
      String uniqueKey,
      String enqueuedBy,
      String correlationId,
      String lastError,
      String progress,
      int attemptsBeforeReplay) {

    static JobJson of(JobView j, boolean masked) {
      return new JobJson(
          String.valueOf(j.id()),
          j.queue(),
          j.state().sqlName(),
          j.priority(),
          j.attempt(),
          j.maxAttempts(),
          text(j.runAt()),
          text(j.createdAt()),
          text(j.attemptedAt()),
          text(j.finalizedAt()),
          j.attemptedBy(),
          text(j.leaseExpiresAt()),
          j.uniqueKey(),
          j.enqueuedBy(),
          j.correlationId(),
          // Handlers build error texts from the payload (a card number, an address): masked with
          // it.
          masked ? null : j.lastError(),
          j.progress(),
          j.attemptsBeforeReplay());
    }
  }

  /**
   * One job ({@code GET jobs/{id}}): the search's fields, then the payload, its errors and result
   * (all null while masked for the caller), its batch and its dependencies.
   */
  @JsonbNillable
  @JsonbPropertyOrder({
    "id",
    "queue",
    "state",
    "priority",
    "attempt",
    "maxAttempts",
    "runAt",
    "createdAt",
    "attemptedAt",
    "finalizedAt",
    "attemptedBy",
    "leaseExpiresAt",
    "uniqueKey",
    "enqueuedBy",
    "correlationId",
    "lastError",
    "progress",
    "payload",
    "payloadMasked",
    "errors",
    "result",
    "batchId",
    "dependencies",
    "attemptsBeforeReplay",
    "startBy",
    "workflowId"
  })
  public record JobDetailJson(
      String id,
      String queue,
      String state,
      int priority,
      int attempt,
      int maxAttempts,
      String runAt,
      String createdAt,
      String attemptedAt,
      String finalizedAt,
      String attemptedBy,
      String leaseExpiresAt,
      String uniqueKey,
      String enqueuedBy,
      String correlationId,
      String lastError,
      String progress,
      String payload,
      boolean payloadMasked,
      String errors,
      String result,
      String batchId,
      String dependencies,
      int attemptsBeforeReplay,
      String startBy,
      String workflowId) {

    static JobDetailJson of(JobView j, boolean masked) {
      JobJson s = JobJson.of(j, masked);
      return new JobDetailJson(
          s.id(),
          s.queue(),
          s.state(),
          s.priority(),
          s.attempt(),
          s.maxAttempts(),
          s.runAt(),
          s.createdAt(),
          s.attemptedAt(),
          s.finalizedAt(),
          s.attemptedBy(),
          s.leaseExpiresAt(),
          s.uniqueKey(),
          s.enqueuedBy(),
          s.correlationId(),
          s.lastError(),
          s.progress(),
          masked ? null : j.payload(),
          masked,
          masked ? null : j.errors(),
          masked ? null : j.result(),
          j.batchId() == null ? null : String.valueOf(j.batchId()),
          j.dependencies(),
          j.attemptsBeforeReplay(),
          text(j.startBy()),
          j.workflowId() == null ? null : String.valueOf(j.workflowId()));
    }
  }
}
