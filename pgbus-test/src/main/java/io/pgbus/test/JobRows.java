package io.pgbus.test;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The kit's reads of {@code pgbus.job}, read-only. Functions are qualified with {@code pg_catalog.}
 * and states compared as text, so that the application's search_path does not matter (see {@code
 * JobStore}).
 */
final class JobRows {

  /** A job of the queue and whether its payload equals the one asked about. */
  record Match(EnqueuedJob job, boolean payloadEquals) {}

  private static final String COLUMNS =
      """
      SELECT j.id, j.queue::text, j.state::text, j.priority, j.payload::text, j.attempt,
             j.max_attempts, j.run_at, j.created_at, j.unique_key, j.correlation_id, j.enqueued_by,
             ARRAY(SELECT e.value OPERATOR(pg_catalog.->>) 'error'
                     FROM pg_catalog.jsonb_array_elements(j.errors) WITH ORDINALITY AS e(value, n)
                    ORDER BY e.n)
      """;

  private static final String IN_QUEUE =
      COLUMNS
          + """
            , j.payload OPERATOR(pg_catalog.=) ?::jsonb
        FROM pgbus.job j
       WHERE j.queue::text = ?::text
       ORDER BY j.id
      """;

  private static final String BY_ID = COLUMNS + " FROM pgbus.job j WHERE j.id = ?";

  private static final String DUE =
      """
      SELECT count(*) FROM pgbus.job j
       WHERE j.queue::text = ?::text AND j.state::text IN ('available', 'scheduled', 'retryable')
         AND j.run_at <= pg_catalog.now()
      """;

  private JobRows() {}

  /** How many jobs of {@code queue} a claim could take now (pauses aside). */
  static long dueCount(Connection c, String queue) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DUE)) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * Every job of {@code queue}, oldest first, with whether its payload equals {@code payloadJson}
   * ({@code null}: compare nothing).
   */
  static List<Match> inQueue(Connection c, String queue, String payloadJson) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(IN_QUEUE)) {
      ps.setString(1, payloadJson);
      ps.setString(2, queue);
      var out = new ArrayList<Match>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new Match(read(rs), rs.getBoolean(14)));
        }
      }
      return out;
    }
  }

  /** The job's row, or {@code null} when there is none (never enqueued, or pruned). */
  static EnqueuedJob byId(Connection c, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BY_ID)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? read(rs) : null;
      }
    }
  }

  private static EnqueuedJob read(ResultSet rs) throws SQLException {
    Array errors = rs.getArray(13);
    return new EnqueuedJob(
        rs.getLong(1),
        rs.getString(2),
        rs.getString(3),
        rs.getInt(4),
        rs.getString(5),
        rs.getInt(6),
        rs.getInt(7),
        rs.getTimestamp(8).toInstant(),
        rs.getTimestamp(9).toInstant(),
        rs.getString(10),
        rs.getString(11),
        rs.getString(12),
        errors == null ? List.of() : Arrays.asList((String[]) errors.getArray()));
  }
}
