package io.pgbus.engine;

import io.pgbus.AuditEntry;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads {@code pgbus.audit} (V7__audit.sql). The rows are written by the actions themselves (the
 * cancel and replay statements of {@link JobStore}, and pgbus.pause/resume), in their transaction.
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
       WHERE queue = ? ORDER BY id DESC LIMIT ?
      """;

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
