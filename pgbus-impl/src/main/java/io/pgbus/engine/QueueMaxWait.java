package io.pgbus.engine;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import javax.sql.DataSource;

/**
 * {@code pgbus.queue.<name>.max-wait} where the SQL enqueue functions read it ({@code
 * pgbus.queue_max_wait}, V56): a job any enqueue gives no deadline of its own gets one there, SQL
 * clients, bulk enqueues and batch callbacks included. Written by every engine at its start for the
 * queues its capsules read (removed for those it configures none for) and those it configures: the
 * newest build wins, and among the JVMs of one build the last to start (V26's rule). The Java API
 * applies this JVM's own setting too ({@link StartBy}), so what it enqueues holds to it whatever
 * the table says.
 */
final class QueueMaxWait {

  // The engine's logger: the line belongs to its start.
  private static final System.Logger LOG = System.getLogger(Engine.class.getName());

  // The build that last wrote the queue's row, locked until the commit (as QueueLimitStore.WRITER).
  private static final String WRITER =
      "SELECT build FROM pgbus.queue_max_wait WHERE queue::text OPERATOR(pg_catalog.=) ?::text"
          + " FOR UPDATE";

  // What the table holds for these queues: read first, so that an engine whose windows are there
  // already writes nothing (and needs no grant beyond V56's SELECT).
  private static final String STORED =
      "SELECT queue::text, (extract(epoch FROM max_wait) * 1000::numeric)::bigint, build"
          + " FROM pgbus.queue_max_wait WHERE queue::text = ANY (?::text[])";

  private static final String SET =
      "SELECT pgbus.queue_max_wait_set(?, ?::float8 * interval '1 millisecond', ?)";

  private static final String MARK_WRITER =
      "UPDATE pgbus.queue_max_wait SET build = ?::text"
          + " WHERE queue::text OPERATOR(pg_catalog.=) ?::text"
          + " AND (build IS NULL OR build OPERATOR(pg_catalog.<>) ?::text)";

  private QueueMaxWait() {}

  /** The queues this engine writes: those its capsules read, then those it configures. */
  static List<String> queues(EngineConfig config) {
    var all = new ArrayList<>(config.queues());
    config.queuePolicies().values().stream()
        .filter(p -> p.maxWait() != null && !all.contains(p.queue()))
        .map(QueuePolicy::queue)
        .sorted()
        .forEach(all::add);
    return all;
  }

  /**
   * Writes each queue's max-wait (or removes it), unless a newer build wrote the queue's row. A
   * failure (a role without the grant) is logged: the Java API keeps its own setting either way.
   */
  static void publish(EngineConfig config, DataSource dataSource) {
    List<String> queues = queues(config);
    if (queues.isEmpty()) {
      return;
    }
    BuildVersion build = BuildVersion.current();
    try (Connection c = dataSource.getConnection()) {
      List<String> differ = differing(c, config, queues, build);
      if (differ.isEmpty()) {
        return;
      }
      var kept = new LinkedHashMap<String, BuildVersion>();
      LocalTransaction.run(
          c,
          () -> {
            for (String q : differ) {
              BuildVersion newer = write(c, q, config.maxWait(q), build, config.workerId());
              if (newer != null) {
                kept.put(q, newer);
              }
            }
            return null;
          });
      if (!kept.isEmpty()) {
        LOG.log(
            Level.INFO,
            "pgbus engine {0}: keeping the max-wait newer builds wrote for {1} (this build is"
                + " {2}): the newest build wins",
            config.workerId(),
            kept,
            build);
      }
    } catch (SQLException e) {
      LOG.log(
          Level.WARNING,
          "pgbus engine {0} could not write pgbus.queue.*.max-wait to pgbus.queue_max_wait: {1};"
              + " SQL enqueues keep the windows stored there, and this JVM's Java enqueues use"
              + " its own. Grant the application's role EXECUTE on pgbus.queue_max_wait_set",
          config.workerId(),
          e.getMessage());
    }
  }

  /**
   * The queues whose stored window is not this configuration's, or was written by an older build
   * (so that this one's mark keeps older builds from writing it back).
   */
  private static List<String> differing(
      Connection c, EngineConfig config, List<String> queues, BuildVersion build)
      throws SQLException {
    var stored = new java.util.HashMap<String, Long>();
    var builds = new java.util.HashMap<String, String>();
    try (PreparedStatement ps = c.prepareStatement(STORED)) {
      ps.setArray(1, c.createArrayOf("text", queues.toArray()));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          stored.put(rs.getString(1), rs.getLong(2));
          builds.put(rs.getString(1), rs.getString(3));
        }
      }
    }
    var differ = new ArrayList<String>();
    for (String q : queues) {
      Duration mine = config.maxWait(q);
      Long ms = stored.get(q);
      boolean same = mine == null ? ms == null : ms != null && ms == mine.toMillis();
      String writer = builds.get(q);
      boolean olderWriter =
          ms != null && (writer == null || BuildVersion.parse(writer).olderThan(build));
      if (!same || (mine != null && olderWriter)) {
        differ.add(q);
      }
    }
    return differ;
  }

  /** Writes one queue's max-wait as {@code build}; the newer build that kept its own, or null. */
  static BuildVersion write(
      Connection c, String queue, Duration maxWait, BuildVersion build, String by)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(WRITER)) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        String writer = rs.next() ? rs.getString(1) : null;
        if (writer != null && build.olderThan(BuildVersion.parse(writer))) {
          return BuildVersion.parse(writer);
        }
      }
    }
    try (PreparedStatement ps = c.prepareStatement(SET)) {
      ps.setString(1, queue);
      ps.setObject(2, maxWait == null ? null : (double) maxWait.toMillis(), Types.DOUBLE);
      ps.setString(3, by);
      ps.executeQuery().close();
    }
    try (PreparedStatement ps = c.prepareStatement(MARK_WRITER)) {
      ps.setString(1, build.toString());
      ps.setString(2, queue);
      ps.setString(3, build.toString());
      ps.executeUpdate();
    }
    return null;
  }
}
