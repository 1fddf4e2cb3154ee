package io.pgbus.engine.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * One row of {@code pgbus.job} as the tests see it, read straight from the table.
 *
 * @param errors the error entries, newest first, as the table keeps them
 * @param dbNow the database clock when the row was read, to compare run_at without clock skew
 */
public record JobRow(
    long id,
    String queue,
    String state,
    int priority,
    String payload,
    int attempt,
    int maxAttempts,
    Instant runAt,
    Instant attemptedAt,
    String attemptedBy,
    Instant leaseExpiresAt,
    Instant finalizedAt,
    List<JobError> errors,
    Instant dbNow) {

  /** One entry of the errors list. */
  public record JobError(int attempt, Instant at, String error) {}

  private static final String COLUMNS =
      """
      SELECT j.id, j.queue, j.state::text, j.priority, j.payload::text, j.attempt, j.max_attempts,
             j.run_at, j.attempted_at, j.attempted_by, j.lease_expires_at, j.finalized_at,
             ARRAY(SELECT e->>'attempt' FROM jsonb_array_elements(j.errors)
                     WITH ORDINALITY AS x(e, n) ORDER BY n),
             ARRAY(SELECT e->>'at' FROM jsonb_array_elements(j.errors)
                     WITH ORDINALITY AS x(e, n) ORDER BY n),
             ARRAY(SELECT e->>'error' FROM jsonb_array_elements(j.errors)
                     WITH ORDINALITY AS x(e, n) ORDER BY n),
             clock_timestamp()
        FROM pgbus.job j
      """;

  /** The job with this id; fails when there is none. */
  public static JobRow find(DataSource ds, long id) {
    List<JobRow> rows = query(ds, COLUMNS + " WHERE j.id = ?", id);
    if (rows.isEmpty()) {
      throw new IllegalStateException("no job " + id);
    }
    return rows.get(0);
  }

  /** The jobs of a queue, by id. */
  public static List<JobRow> inQueue(DataSource ds, String queue) {
    return query(ds, COLUMNS + " WHERE j.queue = ? ORDER BY j.id", queue);
  }

  private static List<JobRow> query(DataSource ds, String sql, Object arg) {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setObject(1, arg);
      var rows = new ArrayList<JobRow>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(read(rs));
        }
      }
      return rows;
    } catch (SQLException e) {
      throw new IllegalStateException("could not read jobs: " + e.getMessage(), e);
    }
  }

  private static JobRow read(ResultSet rs) throws SQLException {
    String[] attempts = (String[]) rs.getArray(13).getArray();
    String[] ats = (String[]) rs.getArray(14).getArray();
    String[] texts = (String[]) rs.getArray(15).getArray();
    var errors = new ArrayList<JobError>(attempts.length);
    for (int i = 0; i < attempts.length; i++) {
      errors.add(
          new JobError(
              Integer.parseInt(attempts[i]),
              java.time.OffsetDateTime.parse(ats[i]).toInstant(),
              texts[i]));
    }
    return new JobRow(
        rs.getLong(1),
        rs.getString(2),
        rs.getString(3),
        rs.getInt(4),
        rs.getString(5),
        rs.getInt(6),
        rs.getInt(7),
        instant(rs.getTimestamp(8)),
        instant(rs.getTimestamp(9)),
        rs.getString(10),
        instant(rs.getTimestamp(11)),
        instant(rs.getTimestamp(12)),
        List.copyOf(errors),
        instant(rs.getTimestamp(16)));
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
