package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;

/**
 * The fleet as an operator reads it (the admin API's {@code GET fleet} and the readers of {@code
 * GET queues}): the holder of the maintenance lease, the live listener backends and the rows of
 * {@code pgbus.node}. One read model over {@link LeaderStore}, {@link FleetStore} and {@link
 * NodeStore}, so that no caller outside the engine reaches into the stores; each read takes one
 * connection and returns it.
 */
public final class Fleet {

  /** How long a node row whose JVM is not connected is still shown (it died without stopping). */
  public static final Duration KEEP_UNCONNECTED = Duration.ofDays(1);

  /**
   * The fleet at one reading.
   *
   * @param leader the holder of the maintenance lease, or null when it is free
   * @param listeners the live LISTEN backends, oldest first: one per JVM with capsules
   * @param nodes the engines' rows, connected or seen within {@link #KEEP_UNCONNECTED}, oldest
   *     start first
   */
  public record Snapshot(
      String leader, List<FleetStore.ListenerBackend> listeners, List<NodeStore.Node> nodes) {

    public Snapshot {
      listeners = List.copyOf(listeners);
      nodes = List.copyOf(nodes);
    }
  }

  private final DataSource dataSource;
  private final LeaderStore leases = new LeaderStore();
  private final FleetStore backends = new FleetStore();
  private final NodeStore nodeRows = new NodeStore();

  public Fleet(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** The leader, the listeners and the nodes, on one connection. */
  public Snapshot snapshot() {
    try (Connection c = dataSource.getConnection()) {
      LeaderStore.Lease lease = leases.leaderLease(c, Elector.MAINTENANCE);
      return new Snapshot(
          lease == null ? null : lease.holder(),
          backends.listeners(c),
          nodeRows.nodes(c, KEEP_UNCONNECTED));
    } catch (SQLException e) {
      throw Failures.of(null, "read the fleet", e);
    }
  }

  /** The nodes alone: what a queue's readers need, without the other two reads. */
  public List<NodeStore.Node> nodes() {
    try (Connection c = dataSource.getConnection()) {
      return nodeRows.nodes(c, KEEP_UNCONNECTED);
    } catch (SQLException e) {
      throw Failures.of(null, "read the nodes", e);
    }
  }
}
