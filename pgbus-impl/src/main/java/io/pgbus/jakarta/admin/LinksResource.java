package io.pgbus.jakarta.admin;

import io.pgbus.engine.JobLinks;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Instant;
import java.util.List;

/**
 * A batch ({@code GET batches/{id}}: its counters, callback and members) and a job's dependency
 * edges ({@code GET jobs/{id}/links}: its batch, the jobs it waits on and those that wait on it),
 * read through the engine's {@link JobLinks}. Both roles read them; a batch's callback payload is
 * masked with the payloads. Public only because JAX-RS and JSON-B reach it by reflection; {@link
 * AdminResource} makes one per request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class LinksResource {

  private final AdminCall call;
  private final JobLinks links;
  private final String id;

  LinksResource(AdminCall call, JobLinks links, String id) {
    this.call = call;
    this.links = links;
    this.id = id;
  }

  /** {@code GET batches/{id}?after=&limit=}: the batch, 404 when there is none. */
  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response batch(@QueryParam("after") String after, @QueryParam("limit") String limit) {
    return call.read(
        () -> {
          long batchId = batchId(id);
          Long from = AdminParams.number("after", after);
          if (from != null && from < 0) {
            throw new io.pgbus.admin.InvalidFilterException(
                "after", after, "use the next of the previous page");
          }
          int page = AdminParams.positive("limit", limit, JobLinks.MAX_PAGE);
          if (page > JobLinks.MAX_PAGE) {
            throw new io.pgbus.admin.InvalidFilterException(
                "limit", limit, "use 1 to " + JobLinks.MAX_PAGE);
          }
          JobLinks.Batch b = links.batch(batchId, from == null ? 0 : from, page);
          return b == null
              ? AdminCall.notFound("id")
              : AdminCall.ok(BatchJson.of(b, call.masked()));
        });
  }

  /** {@code GET jobs/{id}/links}: the job's batch, parents and children; 404 when it is gone. */
  Response jobLinks() {
    return call.read(
        () -> {
          long jobId = AdminParams.id(id);
          JobLinks.Links l = links.links(jobId);
          return l == null ? AdminCall.notFound("id") : AdminCall.ok(LinksJson.of(l));
        });
  }

  private static long batchId(String v) {
    Long n = AdminParams.number("id", v);
    if (n == null || n < 1) {
      throw new io.pgbus.admin.InvalidFilterException("id", v, "use a batch id, a positive number");
    }
    return n;
  }

  private static String text(Instant at) {
    return at == null ? null : at.toString();
  }

  /** A batch; {@code callbackPayload} is null while payloads are masked for the caller. */
  @JsonbNillable
  @JsonbPropertyOrder({
    "id",
    "size",
    "pending",
    "completed",
    "dead",
    "cancelled",
    "callbackQueue",
    "callbackPayload",
    "payloadMasked",
    "callbackJobId",
    "callbackState",
    "createdAt",
    "finishedAt",
    "jobs",
    "next"
  })
  public record BatchJson(
      String id,
      int size,
      int pending,
      int completed,
      int dead,
      int cancelled,
      String callbackQueue,
      String callbackPayload,
      boolean payloadMasked,
      String callbackJobId,
      String callbackState,
      String createdAt,
      String finishedAt,
      List<MemberJson> jobs,
      String next) {

    static BatchJson of(JobLinks.Batch b, boolean masked) {
      return new BatchJson(
          String.valueOf(b.id()),
          b.size(),
          b.pending(),
          b.completed(),
          b.dead(),
          b.cancelled(),
          b.callbackQueue(),
          masked ? null : b.callbackPayload(),
          masked,
          b.callbackJobId() == null ? null : String.valueOf(b.callbackJobId()),
          b.callbackState(),
          text(b.createdAt()),
          text(b.finishedAt()),
          b.members().stream().map(MemberJson::of).toList(),
          b.next() == null ? null : String.valueOf(b.next()));
    }
  }

  /** A member of a batch. */
  @JsonbNillable
  @JsonbPropertyOrder({"id", "queue", "state", "attempt", "createdAt", "finalizedAt"})
  public record MemberJson(
      String id, String queue, String state, int attempt, String createdAt, String finalizedAt) {
    static MemberJson of(JobLinks.Member m) {
      return new MemberJson(
          String.valueOf(m.id()),
          m.queue(),
          m.state(),
          m.attempt(),
          text(m.createdAt()),
          text(m.finalizedAt()));
    }
  }

  /** A job's links. */
  @JsonbNillable
  @JsonbPropertyOrder({"job", "batchId", "parents", "children", "moreChildren"})
  public record LinksJson(
      String job,
      String batchId,
      List<EdgeJson> parents,
      List<EdgeJson> children,
      boolean moreChildren) {
    static LinksJson of(JobLinks.Links l) {
      return new LinksJson(
          String.valueOf(l.job()),
          l.batchId() == null ? null : String.valueOf(l.batchId()),
          l.parents().stream().map(EdgeJson::of).toList(),
          l.children().stream().map(EdgeJson::of).toList(),
          l.moreChildren());
    }
  }

  /** An edge seen from one end: the job at the other, its queue and state (null when gone). */
  @JsonbNillable
  @JsonbPropertyOrder({"job", "queue", "state", "edge", "onFailure"})
  public record EdgeJson(String job, String queue, String state, String edge, String onFailure) {
    static EdgeJson of(JobLinks.Edge e) {
      return new EdgeJson(String.valueOf(e.job()), e.queue(), e.state(), e.edge(), e.onFailure());
    }
  }
}
