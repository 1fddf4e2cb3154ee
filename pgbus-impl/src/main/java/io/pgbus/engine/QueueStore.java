package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * All SQL on {@code pgbus.queue_pause}: pausing and resuming queues. Pause and resume are the SQL
 * functions of R__pause.sql, so an operator can do the same from psql; resume sends the queue's
 * wake-up at commit. Each method runs in the caller's transaction.
 */
final class QueueStore {

  // The functions audit the action as pgbus.actor() (V7), which reads pgbus.principal: set in the
  // same statement, in a sub-select that runs first, so that autocommit works too. '' clears it.
  private static final String PAUSE =
      """
      SELECT pgbus.pause(s.queue, ?)
        FROM (SELECT ?::text AS queue,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p
              OFFSET 0) s
      """;

  private static final String RESUME =
      """
      SELECT pgbus.resume(s.queue)
        FROM (SELECT ?::text AS queue,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p
              OFFSET 0) s
      """;

  private static final String IS_PAUSED =
      "SELECT EXISTS (SELECT 1 FROM pgbus.queue_pause WHERE queue::text = ?::text)";

  private static final String PAUSED = "SELECT queue FROM pgbus.queue_pause ORDER BY queue";

  /** Pauses a queue, audited as {@code actor}; true when it was running before. */
  boolean queuePause(Connection c, String queue, String pausedBy, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PAUSE)) {
      ps.setString(1, pausedBy);
      ps.setString(2, queue);
      ps.setString(3, actor);
      return bool(ps);
    }
  }

  /**
   * Resumes a queue, audited as {@code actor}, and wakes its workers at commit; true when it was
   * paused.
   */
  boolean queueResume(Connection c, String queue, String actor) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RESUME)) {
      ps.setString(1, queue);
      ps.setString(2, actor);
      return bool(ps);
    }
  }

  boolean queueIsPaused(Connection c, String queue) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(IS_PAUSED)) {
      ps.setString(1, queue);
      return bool(ps);
    }
  }

  /** Every paused queue, by name. */
  List<String> queuesPaused(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PAUSED);
        ResultSet rs = ps.executeQuery()) {
      var queues = new ArrayList<String>();
      while (rs.next()) {
        queues.add(rs.getString(1));
      }
      return queues;
    }
  }

  private static boolean bool(PreparedStatement ps) throws SQLException {
    try (ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getBoolean(1);
    }
  }
}
