package io.pgbus.jakarta.admin;

import io.pgbus.engine.Durations;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.Fleet;
import io.pgbus.engine.FleetStore;
import io.pgbus.engine.ListenerState;
import io.pgbus.engine.NodeStore;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code GET fleet}: the maintenance leader, the live listeners and the nodes of the whole fleet
 * ({@link Fleet}), and this JVM ({@link EngineStatus}). Public only because JAX-RS and JSON-B reach
 * it by reflection; {@link AdminResource#fleet} makes one per request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class FleetResource {

  private final AdminCall call;
  private final Supplier<Fleet.Snapshot> fleet;
  private final Supplier<EngineStatus> engine;

  FleetResource(AdminCall call, Supplier<Fleet.Snapshot> fleet, Supplier<EngineStatus> engine) {
    this.call = call;
    this.fleet = fleet;
    this.engine = engine;
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response read() {
    return call.read(
        () -> {
          Fleet.Snapshot now = fleet.get();
          return AdminCall.ok(
              new FleetJson(
                  now.leader(),
                  now.listeners().stream().map(ListenerJson::of).toList(),
                  now.nodes().stream().map(n -> NodeJson.of(n, now.leader())).toList(),
                  SelfJson.of(engine.get())));
        });
  }

  /** The fleet; {@code leader} is null (written) while the maintenance lease is free. */
  @JsonbNillable
  @JsonbPropertyOrder({"leader", "listeners", "nodes", "self"})
  public record FleetJson(
      String leader, List<ListenerJson> listeners, List<NodeJson> nodes, SelfJson self) {}

  /** A live LISTEN backend: one JVM with capsules. Address and start are null for other roles'. */
  @JsonbNillable
  @JsonbPropertyOrder({"pid", "clientAddress", "since"})
  public record ListenerJson(int pid, String clientAddress, String since) {

    static ListenerJson of(FleetStore.ListenerBackend b) {
      return new ListenerJson(b.pid(), b.clientAddress(), JobsResource.text(b.since()));
    }
  }

  /** A row of {@code pgbus.node}: one engine with capsules, in any JVM on the database. */
  @JsonbNillable
  @JsonbPropertyOrder({
    "worker",
    "host",
    "pid",
    "connected",
    "leader",
    "listener",
    "mode",
    "startedAt",
    "seenAt",
    "heartbeatTtl",
    "alive",
    "capsules"
  })
  public record NodeJson(
      String worker,
      String host,
      Long pid,
      boolean connected,
      boolean leader,
      String listener,
      String mode,
      String startedAt,
      String seenAt,
      String heartbeatTtl,
      boolean alive,
      List<NodeCapsuleJson> capsules) {

    static NodeJson of(NodeStore.Node n, String leader) {
      return new NodeJson(
          n.workerId(),
          n.host(),
          n.pid(),
          n.connected(),
          n.workerId().equals(leader),
          n.listener(),
          n.mode(),
          JobsResource.text(n.startedAt()),
          JobsResource.text(n.seenAt()),
          n.heartbeatTtl() == null ? null : Durations.format(n.heartbeatTtl()),
          n.alive(),
          n.capsules().stream()
              .map(c -> new NodeCapsuleJson(c.name(), c.queues(), c.concurrency()))
              .toList());
    }
  }

  /** A capsule as its node's row recorded it. */
  @JsonbPropertyOrder({"name", "queues", "concurrency"})
  public record NodeCapsuleJson(String name, List<String> queues, int concurrency) {}

  /** The JVM that answered: its listener state and mode now, and its capsules. */
  @JsonbPropertyOrder({"worker", "leader", "listener", "mode", "capsules"})
  public record SelfJson(
      String worker, boolean leader, String listener, String mode, List<CapsuleJson> capsules) {

    static SelfJson of(EngineStatus e) {
      ListenerState listener = e.listener().state();
      return new SelfJson(
          e.workerId(),
          e.leader(),
          PgbusRuntime.listenerLabel(listener),
          listener.delivering() ? "notify" : "polling",
          e.capsules().stream()
              .map(c -> new CapsuleJson(c.name(), c.queues(), c.concurrency(), c.inFlight()))
              .toList());
    }
  }

  /** One of this JVM's capsules, with its slots busy now. */
  @JsonbPropertyOrder({"name", "queues", "concurrency", "inFlight"})
  public record CapsuleJson(String name, List<String> queues, int concurrency, int inFlight) {}
}
