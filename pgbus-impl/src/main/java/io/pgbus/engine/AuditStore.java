package io.pgbus.engine;

import io.pgbus.AuditEntry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads {@code pgbus.audit} (V7__audit.sql). The rows are written by the actions themselves (the
 * cancel and replay statements of {@link JobStore}, pgbus.pause/resume, and the schedule changes of
 * {@link ScheduleStore}, V18), in their transaction.
 */
final class AuditStore {

  private static final String BY_JOB =
      """
      SELECT id, at, actor, action, queue, job_id FROM pgbus.audit
       WHERE job_id = ? ORDER BY id
      """;

  private static final String BY_QUEUE =
      """
      SELECT id, at, actor, action, queue, job_id FROM pgbus.audit
       WHERE queue = ?::text ORDER BY id DESC LIMIT ?
      """;

  // A schedule's changes and triggers (V18), newest first: one range of audit_schedule_idx.
  private static final String BY_SCHEDULE =
      """
      SELECT id, at, actor, action, queue, job_id FROM pgbus.audit
       WHERE schedule = ?::text ORDER BY id DESC LIMIT ?
      """;

  // Oldest first through the primary key (ids grow with time), a batch at a time like job
  // retention, so one round never holds many row locks.
  private static final String PRUNE =
      """
      DELETE FROM pgbus.audit
       WHERE id IN (SELECT id FROM pgbus.audit
                     WHERE at < now() - ?::float8 * interval '1 millisecond'
                     ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)
      """;

  /** Deletes up to {@code batch} entries older than {@code age}. */
  int auditPrune(Connection c, Duration age, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PRUNE)) {
      ps.setLong(1, age.toMillis());
      ps.setInt(2, batch);
      return ps.executeUpdate();
    }
  }

  List<AuditEntry> auditOfJob(Connection c, long jobId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BY_JOB)) {
      ps.setLong(1, jobId);
      return entries(ps);
    }
  }

  List<AuditEntry> auditOfQueue(Connection c, String queue, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BY_QUEUE)) {
      ps.setString(1, queue);
      ps.setInt(2, limit);
      return entries(ps);
    }
  }

  List<AuditEntry> auditOfSchedule(Connection c, String schedule, int limit) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BY_SCHEDULE)) {
      ps.setString(1, schedule);
      ps.setInt(2, limit);
      return entries(ps);
    }
  }

  private static List<AuditEntry> entries(PreparedStatement ps) throws SQLException {
    var entries = new ArrayList<AuditEntry>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        Timestamp at = rs.getTimestamp(2);
        long jobId = rs.getLong(6);
        Long job = rs.wasNull() ? null : jobId;
        entries.add(
            new AuditEntry(
                rs.getLong(1),
                at.toInstant(),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                job));
      }
    }
    return entries;
  }
}
