package io.pgbus.engine;

import io.pgbus.admin.HistoryPoint;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The per-minute history of the queues ({@code pgbus.queue_minute}, V31): the leader's rollup
 * ({@code pgbus.queue_history_rollup}, R__history.sql) and the admin API's read of it.
 */
public final class HistoryStore {

  /**
   * How long after a minute ended it is rolled up: the time a finishing transaction may take from
   * the statement that stamped finalized_at to its commit. A job committed later than that after
   * its minute is not in the history (the minute is written once).
   */
  static final Duration GRACE = Duration.ofSeconds(15);

  private static final String ROLLUP =
      "SELECT pgbus.queue_history_rollup(?::float8 * interval '1 millisecond',"
          + " ?::float8 * interval '1 millisecond')";

  // The minutes of one queue (a range of the primary key) or of all (queue_minute_minute_idx), in
  // steps of date_bin from the epoch. The (? IS NULL OR ...) filter is folded away by the custom
  // plan of each execution, as in JobAdminStore. Percentiles of a step are the worst minute's:
  // those of parts do not combine into the whole's.
  private static final String READ =
      """
      SELECT pg_catalog.date_bin(?::float8 * interval '1 minute', h.minute,
                                 'epoch'::timestamptz) AS at,
             sum(h.completed), sum(h.failed), sum(h.dead),
             max(h.wait_p50_ms), max(h.wait_p95_ms), max(h.wait_p99_ms),
             max(h.run_p50_ms), max(h.run_p95_ms), max(h.run_p99_ms)
        FROM pgbus.queue_minute h
       WHERE (?::text IS NULL OR h.queue::text OPERATOR(pg_catalog.=) ?::text)
         AND h.minute >= ?::timestamptz AND h.minute < ?::timestamptz
       GROUP BY 1
       ORDER BY 1
      """;

  /**
   * Writes the minutes since the last rollup that ended {@link #GRACE} ago and deletes those older
   * than {@code keep}; returns the rows written plus deleted. Safe to run from two JVMs at once.
   */
  long rollup(Connection c, Duration keep) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ROLLUP)) {
      ps.setLong(1, GRACE.toMillis());
      ps.setLong(2, keep.toMillis());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** {@link JobAdmin#history}: checks the bounds, then reads; steps without rows come as zeros. */
  public List<HistoryPoint> history(
      Connection c, String queue, Instant from, Instant to, int stepMinutes) throws SQLException {
    if (queue != null) {
      JobFilter.all().withQueue(queue); // the same bound and message as a search's
    }
    Instant start = checkRange(from, to, stepMinutes);
    var rows = new TreeMap<Instant, HistoryPoint>();
    try (PreparedStatement ps = c.prepareStatement(READ)) {
      ps.setInt(1, stepMinutes);
      ps.setObject(2, queue, Types.VARCHAR);
      ps.setObject(3, queue, Types.VARCHAR);
      ps.setTimestamp(4, Timestamp.from(start));
      ps.setTimestamp(5, Timestamp.from(to));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Instant at = rs.getObject(1, OffsetDateTime.class).toInstant();
          rows.put(
              at,
              new HistoryPoint(
                  at,
                  rs.getLong(2),
                  rs.getLong(3),
                  rs.getLong(4),
                  percentiles(rs, 5),
                  percentiles(rs, 8)));
        }
      }
    }
    var points = new ArrayList<HistoryPoint>();
    Duration step = Duration.ofMinutes(stepMinutes);
    for (Instant at = start; at.isBefore(to); at = at.plus(step)) {
      HistoryPoint p = rows.get(at);
      points.add(p != null ? p : new HistoryPoint(at, 0, 0, 0, null, null));
    }
    return points;
  }

  /** The range's start cut down to a whole step from the epoch, after checking every bound. */
  static Instant checkRange(Instant from, Instant to, int stepMinutes) {
    if (from == null) {
      throw new InvalidFilterException("from", null, "give the start of the range");
    }
    if (to == null) {
      throw new InvalidFilterException("to", null, "give the end of the range");
    }
    if (!to.isAfter(from)) {
      throw new InvalidFilterException("to", to, "use a time after from (" + from + ")");
    }
    if (Duration.between(from, to).compareTo(Duration.ofDays(JobAdmin.MAX_HISTORY_DAYS)) > 0) {
      throw new InvalidFilterException(
          "from",
          from,
          "use a range of at most " + JobAdmin.MAX_HISTORY_DAYS + " days (to is " + to + ")");
    }
    if (stepMinutes < 1 || stepMinutes > JobAdmin.MAX_HISTORY_STEP_MINUTES) {
      throw new InvalidFilterException(
          "step", stepMinutes, "use 1 to " + JobAdmin.MAX_HISTORY_STEP_MINUTES + " minutes");
    }
    long stepSeconds = stepMinutes * 60L;
    Instant start =
        Instant.ofEpochSecond(Math.floorDiv(from.getEpochSecond(), stepSeconds) * stepSeconds);
    long points = (Duration.between(start, to).toSeconds() + stepSeconds - 1) / stepSeconds;
    if (points > JobAdmin.MAX_HISTORY_POINTS) {
      long least =
          (Duration.between(start, to).toSeconds() + JobAdmin.MAX_HISTORY_POINTS * 60L - 1)
              / (JobAdmin.MAX_HISTORY_POINTS * 60L);
      throw new InvalidFilterException(
          "step",
          stepMinutes,
          "use at least "
              + least
              + " minutes for this range (at most "
              + JobAdmin.MAX_HISTORY_POINTS
              + " points)");
    }
    return start;
  }

  private static HistoryPoint.Percentiles percentiles(ResultSet rs, int at) throws SQLException {
    long p50 = rs.getLong(at);
    if (rs.wasNull()) {
      return null;
    }
    return new HistoryPoint.Percentiles(p50, rs.getLong(at + 1), rs.getLong(at + 2));
  }
}
