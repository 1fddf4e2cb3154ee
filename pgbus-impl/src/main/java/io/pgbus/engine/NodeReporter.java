package io.pgbus.engine;

import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import javax.sql.DataSource;

/**
 * Keeps this engine's row of {@code pgbus.node} ({@link NodeStore}): written at start, on each
 * listener state change (and again when a tick finds it gone), and deleted at stop. Its heartbeat
 * is not here: it rides on the ticker's tick ({@link Ticker}), so the idle cost does not move. A
 * database error is logged as a WARNING and never stops the engine: the row is for the operator's
 * view only. A state change is written off the listener's thread, and always with the state current
 * at the time of writing, so a late write never leaves an older state.
 */
final class NodeReporter {

  private static final System.Logger LOG = System.getLogger(NodeReporter.class.getName());

  private final DataSource dataSource;
  private final NodeStore store = new NodeStore();
  private final String workerId;
  private final List<CapsuleConfig> capsules;
  private final Supplier<ListenerState> state;
  private final Supplier<Integer> listenerPid;
  private final Duration heartbeatTtl;
  private final String host = WorkerIds.host();
  private final long pid = ProcessHandle.current().pid();
  // Guarded by this: false before start and after stop, so a late write never brings back a row.
  private boolean live;

  NodeReporter(
      DataSource dataSource,
      String workerId,
      List<CapsuleConfig> capsules,
      Supplier<ListenerState> state,
      Supplier<Integer> listenerPid,
      Duration heartbeatTtl) {
    this.heartbeatTtl = heartbeatTtl;
    this.dataSource = dataSource;
    this.workerId = workerId;
    this.capsules = List.copyOf(capsules);
    this.state = state;
    this.listenerPid = listenerPid;
  }

  /** Writes the row as the engine starts. */
  synchronized void started() {
    live = true;
    write();
  }

  /**
   * The listener changed state, or a tick found the row gone: writes the row on {@code executor},
   * or here if it refuses.
   */
  void changed(Executor executor) {
    try {
      executor.execute(this::rewrite);
    } catch (RejectedExecutionException e) {
      rewrite();
    }
  }

  /**
   * The engine stops: the row is no longer written on a state change, but it stays (the ticker
   * beats on through the drain) until {@link #stopped} deletes it, once the engine's jobs are back.
   * A JVM that stops without getting there keeps a row that goes stale, and its jobs are rescued
   * within one heartbeat TTL instead of at the end of their leases.
   */
  synchronized void stopping() {
    live = false;
  }

  /** Deletes the row as the engine's stop ends, its jobs handed back. */
  synchronized void stopped() {
    live = false;
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      store.nodeDelete(c, workerId);
    } catch (Exception e) {
      warn("delete", e);
    }
  }

  private synchronized void rewrite() {
    if (live) {
      write();
    }
  }

  private void write() {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      store.nodeUpsert(
          c, workerId, host, pid, state.get(), listenerPid.get(), capsules, heartbeatTtl);
    } catch (Exception e) {
      warn("write", e);
    }
  }

  private void warn(String what, Exception e) {
    LOG.log(
        System.Logger.Level.WARNING,
        "pgbus engine {0} could not {1} its row of pgbus.node ({2}); jobs go on, only the admin"
            + " API''s fleet and readers miss or keep this JVM until its next state change",
        workerId,
        what,
        e.getMessage());
  }
}
