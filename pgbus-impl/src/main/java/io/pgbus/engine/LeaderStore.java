package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;

/**
 * All SQL on {@code pgbus.leader}: the lease row that elects one maintenance leader. Written to
 * resolve nothing through the application's search_path (see {@link JobStore}): string binds are
 * cast to text (pgjdbc sends varchar, and {@code text = varchar} has no exact operator), and
 * durations are float8 milliseconds.
 */
final class LeaderStore {

  /**
   * A lease no elector wrote: ending more than an hour from now (pgbus.leader.ttl is at most 1 h),
   * or never ('infinity', which made every tick fail). Anyone may write the table by SQL, and V23's
   * CHECK is NOT VALID for a row already there: such a lease counts as free.
   */
  static final String FORGED =
      "(NOT pg_catalog.isfinite(expires_at) OR expires_at OPERATOR(pg_catalog.>)"
          + " (pg_catalog.now() OPERATOR(pg_catalog.+) interval '1 hour'))";

  /** Who holds the lease now and for how much longer, by the database's clock; no lock taken. */
  private static final String HOLDER =
      """
      SELECT holder, pg_catalog.ceil(extract(epoch FROM expires_at - now())::numeric * 1000.0)::bigint
        FROM pgbus.leader
       WHERE name = ?::text AND expires_at > now() AND NOT %s
      """
          .formatted(FORGED);

  // Takes the lease when it is free, expired or forged, or is ours already. When another live
  // holder has
  // it, the conditional DO UPDATE changes nothing and RETURNING yields no row.
  private static final String ELECT =
      """
      INSERT INTO pgbus.leader AS l (name, holder, elected_at, expires_at)
      VALUES (?, ?, now(), now() + ?::float8 * interval '1 millisecond')
      ON CONFLICT (name) DO UPDATE
         SET holder = excluded.holder, elected_at = now(), expires_at = excluded.expires_at
       WHERE l.expires_at <= now() OR l.holder = excluded.holder OR %s
      RETURNING holder
      """
          .formatted(FORGED.replace("expires_at", "l.expires_at"));

  // The renewal also reads whether any job runs anywhere (job_lease_idx holds running jobs only):
  // while none does, the leader's rescue has nothing to look at and skips its rounds
  // (Maintainer.renewalSeen), so an idle deployment's leader pays no statement for it (#26). And
  // the earliest start-by deadline of a waiting job (job_start_by_idx holds only jobs that have
  // one: empty in an idle deployment), so the expiry needs no probe of its own (V43).
  private static final String RENEW =
      """
      UPDATE pgbus.leader SET expires_at = now() + ?::float8 * interval '1 millisecond'
       WHERE name = ?::text AND holder = ?::text
      RETURNING EXISTS (SELECT 1 FROM pgbus.job j WHERE j.state OPERATOR(pg_catalog.=) 'running'),
                (SELECT min(j.start_by) FROM pgbus.job j
                  WHERE j.start_by IS NOT NULL
                    AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}'))
      """;

  // One statement: the lease row goes and, when it was ours, a NOTIFY on Channels.LEADER tells
  // every follower's listener to look now rather than at its next tick. Delivered at commit. The
  // channel is a literal, so that it is mapped with the text onto the instance's schema.
  private static final String RESIGN =
      """
      WITH gone AS (
        DELETE FROM pgbus.leader WHERE name = ?::text AND holder = ?::text RETURNING name)
      SELECT pg_catalog.pg_notify('%s'::text, ''::text) FROM gone
      """
          .formatted(Channels.LEADER);

  /** A live lease: its holder and how long it has left by the database's clock. */
  record Lease(String holder, long remainingMillis) {}

  /** The live lease of {@code name}, or null when the lease is free. */
  Lease leaderLease(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(HOLDER)) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? new Lease(rs.getString(1), rs.getLong(2)) : null;
      }
    }
  }

  /** Takes the lease if it is free; true when {@code holder} now leads. */
  boolean leaderAttemptElect(Connection c, String name, String holder, Duration ttl)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ELECT)) {
      ps.setString(1, name);
      ps.setString(2, holder);
      ps.setLong(3, ttl.toMillis());
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }

  /**
   * What a renewal found: whether the lease was still ours, and, when it was, whether any job was
   * running in the deployment and the earliest start-by deadline of a waiting job (null: none).
   */
  record Renewal(boolean renewed, boolean jobsRunning, Instant nextStartBy) {}

  /** Extends our lease, and reads whether any job runs and the next start-by deadline. */
  Renewal leaderRenew(Connection c, String name, String holder, Duration ttl) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RENEW)) {
      ps.setLong(1, ttl.toMillis());
      ps.setString(2, name);
      ps.setString(3, holder);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return new Renewal(false, true, null);
        }
        OffsetDateTime next = rs.getObject(2, OffsetDateTime.class);
        return new Renewal(true, rs.getBoolean(1), next == null ? null : next.toInstant());
      }
    }
  }

  /**
   * Gives the lease up and, when it was ours, tells the followers ({@code NOTIFY} on {@link
   * Channels#LEADER}), so another JVM takes it at once; true when it was ours.
   */
  boolean leaderResign(Connection c, String name, String holder) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(RESIGN)) {
      ps.setString(1, name);
      ps.setString(2, holder);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}
