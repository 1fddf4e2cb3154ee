package io.pgbus.jakarta.admin;

import io.pgbus.JobQueue;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.engine.WorkflowGraph;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.OptionalInt;

/**
 * A workflow ({@code GET workflows/{id}}: its state, counts, members and edges, the console's
 * graph), read through the engine's {@link WorkflowGraph}; and a whole workflow's cancel and retry
 * ({@code POST workflows/{id}/cancel|retry}, admins, CSRF, audited {@code workflow_cancel} and
 * {@code workflow_retry} by the SQL functions), through {@link JobQueue}. Public only because
 * JAX-RS and JSON-B reach it by reflection; {@link AdminResource} makes one per request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class WorkflowsResource {

  private final AdminCall call;
  private final WorkflowGraph graphs;
  private final JobQueue queue;
  private final String id;

  WorkflowsResource(AdminCall call, WorkflowGraph graphs, JobQueue queue, String id) {
    this.call = call;
    this.graphs = graphs;
    this.queue = queue;
    this.id = id;
  }

  /** {@code GET workflows/{id}}: the workflow; 404 {@code id} when there is none. */
  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response workflow() {
    return call.read(
        () -> {
          WorkflowGraph.Graph g = graphs.graph(workflowId(id));
          return g == null ? AdminCall.notFound("id") : AdminCall.ok(WorkflowJson.of(g));
        });
  }

  /** {@code POST workflows/{id}/cancel|retry}: how many members changed; 404 for none. */
  @POST
  @Path("{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response act(@PathParam("action") String action) {
    return call.act(
        () -> {
          long workflowId = workflowId(id);
          OptionalInt n =
              switch (action) {
                case "cancel" -> queue.cancelWorkflow(workflowId);
                case "retry" -> queue.retryWorkflow(workflowId);
                default ->
                    throw new InvalidFilterException("action", action, "use cancel or retry");
              };
          return n.isEmpty()
              ? AdminCall.notFound("id")
              : AdminCall.ok(new JobsResource.ChangedJson(action, n.getAsInt()));
        });
  }

  private static long workflowId(String v) {
    Long n = AdminParams.number("id", v);
    if (n == null || n < 1) {
      throw new InvalidFilterException("id", v, "use a workflow id, a positive number");
    }
    return n;
  }

  /** A workflow: {@code more} when it has more members than {@code nodes} lists. */
  @JsonbNillable
  @JsonbPropertyOrder({
    "id",
    "name",
    "createdAt",
    "createdBy",
    "state",
    "counts",
    "nodes",
    "edges",
    "more"
  })
  public record WorkflowJson(
      String id,
      String name,
      String createdAt,
      String createdBy,
      String state,
      CountsJson counts,
      List<NodeJson> nodes,
      List<EdgeJson> edges,
      boolean more) {
    static WorkflowJson of(WorkflowGraph.Graph g) {
      WorkflowGraph.Counts c = g.counts();
      return new WorkflowJson(
          String.valueOf(g.id()),
          g.name(),
          g.createdAt() == null ? null : g.createdAt().toString(),
          g.createdBy(),
          g.state(),
          new CountsJson(c.waiting(), c.running(), c.completed(), c.dead(), c.cancelled()),
          g.nodes().stream().map(NodeJson::of).toList(),
          g.edges().stream().map(EdgeJson::of).toList(),
          g.more());
    }
  }

  /** Members per state: waiting is scheduled, available or retryable. */
  @JsonbPropertyOrder({"waiting", "running", "completed", "dead", "cancelled"})
  public record CountsJson(int waiting, int running, int completed, int dead, int cancelled) {}

  /** A member: {@code node} null for a fan-out job, {@code state} null once it was pruned. */
  @JsonbNillable
  @JsonbPropertyOrder({"job", "node", "queue", "state"})
  public record NodeJson(String job, String node, String queue, String state) {
    static NodeJson of(WorkflowGraph.Member m) {
      return new NodeJson(String.valueOf(m.job()), m.node(), m.queue(), m.state());
    }
  }

  /** An edge: {@code predicate} null but for a result edge. */
  @JsonbNillable
  @JsonbPropertyOrder({"from", "to", "kind", "predicate", "state", "onFailure"})
  public record EdgeJson(
      String from, String to, String kind, String predicate, String state, String onFailure) {
    static EdgeJson of(WorkflowGraph.Link l) {
      return new EdgeJson(
          String.valueOf(l.from()),
          String.valueOf(l.to()),
          l.kind(),
          l.predicate(),
          l.state(),
          l.onFailure());
    }
  }
}
