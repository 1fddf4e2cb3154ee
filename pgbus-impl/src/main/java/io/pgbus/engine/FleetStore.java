package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/**
 * The fleet as the database sees it, without any table of its own: every JVM with capsules holds
 * one LISTEN connection named {@value Channels#LISTENER_APPLICATION_NAME} (pg_stat_activity), so
 * the live JVMs are those backends, and nothing is written to keep the list current (no heartbeat:
 * an idle fleet issues no statement for it). A role sees the address and start of its own sessions;
 * of other roles' only the pid, unless it has pg_read_all_stats.
 */
public final class FleetStore {

  /** One live listener backend: one JVM of the fleet. */
  public record ListenerBackend(int pid, String clientAddress, Instant since) {}

  private static final String LISTENERS =
      """
      SELECT a.pid, pg_catalog.host(a.client_addr), a.backend_start
        FROM pg_catalog.pg_stat_activity a
       WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
         AND a.application_name OPERATOR(pg_catalog.=) '%s'::text
       ORDER BY a.backend_start, a.pid
      """
          .formatted(Channels.LISTENER_APPLICATION_NAME); // a literal: mapped onto the schema

  /** The live listener backends of this database, oldest first. */
  public List<ListenerBackend> listeners(Connection c) throws SQLException {
    var out = new ArrayList<ListenerBackend>();
    try (PreparedStatement ps = c.prepareStatement(LISTENERS)) {
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          OffsetDateTime since = rs.getObject(3, OffsetDateTime.class);
          out.add(
              new ListenerBackend(
                  rs.getInt(1), rs.getString(2), since == null ? null : since.toInstant()));
        }
      }
    }
    return out;
  }
}
