package io.pgbus.cli;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Why jobs wait: the SQL functions {@code pgbus.explain(bigint)} and {@code
 * pgbus.queue_blockers(text)} (issue #28), which the command line calls as psql would. A schema
 * older than them answers 42883 (undefined_function): {@link #missing} tells it apart.
 */
final class Diagnosis {

  static final String EXPLAIN_FUNCTION = "pgbus.explain(bigint)";
  static final String BLOCKERS_FUNCTION = "pgbus.queue_blockers(text)";

  private static final String EXPLAIN = "SELECT pgbus.explain(?::bigint)::text";

  private static final String BLOCKERS =
      "SELECT queue, waiting, runnable_now, cause, jobs FROM pgbus.queue_blockers(?::text)"
          + " ORDER BY queue, cause";

  private Diagnosis() {}

  /** The explanation as JSON text, or null when there is no such job. */
  static String explain(Connection c, long jobId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EXPLAIN)) {
      ps.setLong(1, jobId);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  /**
   * A queue's waiting jobs, those a free slot would claim now, and the rest by cause.
   *
   * @param blocked jobs per cause, by cause name
   */
  record Blockers(long waiting, long runnableNow, Map<String, Long> blocked) {}

  /** Per queue (all of them for {@code queue} null), by queue name. */
  static Map<String, Blockers> blockers(Connection c, String queue) throws SQLException {
    var rows = new TreeMap<String, Blockers>();
    try (PreparedStatement ps = c.prepareStatement(BLOCKERS)) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          // One row per (queue, cause); waiting and runnable_now repeat on each of a queue's rows.
          String q = rs.getString(1);
          Blockers before = rows.get(q);
          Map<String, Long> blocked = before == null ? new LinkedHashMap<>() : before.blocked();
          String cause = rs.getString(4);
          long jobs = rs.getLong(5);
          if (cause != null && jobs > 0) {
            blocked.merge(cause, jobs, Long::sum);
          }
          rows.put(q, new Blockers(rs.getLong(2), rs.getLong(3), blocked));
        }
      }
    }
    return rows;
  }

  /** True when {@code e} says a function is not there (the schema predates it). */
  static boolean missing(SQLException e) {
    return "42883".equals(e.getSQLState());
  }

  /** The failure for a missing function: the schema is older than this command line. */
  static CliException missingFunction(String function) {
    return CliException.failed(
        function
            + " is missing from the database: its pgbus schema is older than this command line;"
            + " run pgbus migrate with this build (or deploy it)");
  }
}
