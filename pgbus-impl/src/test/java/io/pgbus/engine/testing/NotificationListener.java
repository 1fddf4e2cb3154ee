package io.pgbus.engine.testing;

import io.pgbus.QueueNames;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * A dedicated LISTEN connection on the channels of some queues ({@code pgbus_<queue>}), read by the
 * test's own thread.
 *
 * <p>{@link #untilBarrier()} makes "nothing arrived" deterministic: PostgreSQL delivers the
 * notifications of different transactions in commit order, so once a barrier NOTIFY committed after
 * some transaction comes back, every notification that transaction sent has come back too.
 */
public final class NotificationListener implements AutoCloseable {

  /** One received notification. */
  public record Received(String channel, String payload) {}

  private final DataSource dataSource;
  private final Connection connection;
  private final PGConnection pg;
  private final String barrierChannel;
  private final Deque<Received> buffer = new ArrayDeque<>();
  private long barriers;

  private NotificationListener(DataSource dataSource, Connection connection) throws SQLException {
    this.dataSource = dataSource;
    this.connection = connection;
    this.pg = connection.unwrap(PGConnection.class);
    this.barrierChannel =
        "pgbus_test_barrier_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
  }

  static NotificationListener open(DataSource dataSource, String... queues) throws SQLException {
    Connection c = dataSource.getConnection();
    try {
      c.setAutoCommit(true);
      var listener = new NotificationListener(dataSource, c);
      try (Statement st = c.createStatement()) {
        for (String q : queues) {
          // Validated identifiers only, so quoting is safe; LISTEN takes no bind parameter.
          st.execute("LISTEN \"" + channel(QueueNames.require(q)) + "\"");
        }
        st.execute("LISTEN \"" + listener.barrierChannel + "\"");
      }
      return listener;
    } catch (SQLException | RuntimeException e) {
      c.close();
      throw e;
    }
  }

  /** The channel of a queue, as pgbus.channel() names it. */
  public static String channel(String queue) {
    return "pgbus_" + queue;
  }

  /**
   * The next notification on the queue's channel within {@code timeout}, or {@code null} when none
   * came. Notifications on other channels that arrive meanwhile are kept for later calls.
   */
  public Received next(String queue, Duration timeout) throws SQLException {
    String channel = channel(queue);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      for (var it = buffer.iterator(); it.hasNext(); ) {
        Received r = it.next();
        if (r.channel().equals(channel)) {
          it.remove();
          return r;
        }
      }
      long leftMs = (deadline - System.nanoTime()) / 1_000_000;
      if (leftMs <= 0) {
        return null;
      }
      receive((int) Math.min(leftMs, 250));
    }
  }

  /** Everything that arrives within {@code window}, barriers excluded: a bounded negative check. */
  public List<Received> during(Duration window) throws SQLException {
    long deadline = System.nanoTime() + window.toNanos();
    long leftMs;
    while ((leftMs = (deadline - System.nanoTime()) / 1_000_000) > 0) {
      receive((int) Math.min(leftMs, 250));
    }
    return drain();
  }

  /**
   * Commits a NOTIFY on a private channel from another connection and returns every notification
   * that arrived before it: everything committed before this call, and nothing still uncommitted.
   */
  public List<Received> untilBarrier() throws SQLException {
    String token = Long.toString(++barriers);
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT pg_notify(?, ?)")) {
      c.setAutoCommit(true);
      ps.setString(1, barrierChannel);
      ps.setString(2, token);
      ps.execute();
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    var before = new ArrayList<Received>();
    while (System.nanoTime() < deadline) {
      while (!buffer.isEmpty()) {
        Received r = buffer.pollFirst();
        if (r.channel().equals(barrierChannel)) {
          if (r.payload().equals(token)) {
            return before;
          }
        } else {
          before.add(r);
        }
      }
      receive(250);
    }
    throw new AssertionError("the barrier notification did not come back within 10 s");
  }

  private void receive(int timeoutMs) throws SQLException {
    PGNotification[] batch = pg.getNotifications(Math.max(1, timeoutMs));
    if (batch != null) {
      for (PGNotification n : batch) {
        buffer.addLast(new Received(n.getName(), n.getParameter()));
      }
    }
  }

  private List<Received> drain() {
    var out = new ArrayList<Received>();
    for (Received r : buffer) {
      if (!r.channel().equals(barrierChannel)) {
        out.add(r);
      }
    }
    buffer.clear();
    return out;
  }

  @Override
  public void close() throws SQLException {
    connection.close();
  }
}
