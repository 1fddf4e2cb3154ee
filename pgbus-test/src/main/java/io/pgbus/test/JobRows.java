package io.pgbus.test;

import io.pgbus.engine.JobCipher;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * The kit's reads of {@code pgbus.job}, read-only. Functions are qualified with {@code pg_catalog.}
 * and states compared as text, so that the application's search_path does not matter (see {@code
 * JobStore}). The payloads and errors of encrypting queues are opened with the cipher given; with
 * {@link JobCipher#NONE} a sealed payload is refused with the way to assert on it.
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

  // A sealed payload cannot be compared in the row's query: its opened text is compared here, as
  // jsonb like the plain ones (key order and spacing do not matter).
  private static final String EQUALS =
      """
      SELECT u.p::jsonb OPERATOR(pg_catalog.=) ?::jsonb
        FROM pg_catalog.unnest(?::text[]) WITH ORDINALITY AS u(p, n)
       ORDER BY u.n
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
  static List<Match> inQueue(Connection c, String queue, String payloadJson, JobCipher cipher)
      throws SQLException {
    var jobs = new ArrayList<EnqueuedJob>();
    var equal = new ArrayList<Boolean>();
    var sealed = new ArrayList<Integer>();
    try (PreparedStatement ps = c.prepareStatement(IN_QUEUE)) {
      ps.setString(1, payloadJson);
      ps.setString(2, queue);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          if (JobCipher.sealed(rs.getString(5))) {
            sealed.add(jobs.size());
          }
          jobs.add(read(rs, cipher));
          equal.add(rs.getBoolean(14));
        }
      }
    }
    if (payloadJson != null && !sealed.isEmpty()) {
      String[] opened = sealed.stream().map(i -> jobs.get(i).payloadJson()).toArray(String[]::new);
      try (PreparedStatement ps = c.prepareStatement(EQUALS)) {
        ps.setString(1, payloadJson);
        ps.setArray(2, c.createArrayOf("text", opened));
        try (ResultSet rs = ps.executeQuery()) {
          for (int i : sealed) {
            rs.next();
            equal.set(i, rs.getBoolean(1));
          }
        }
      }
    }
    var out = new ArrayList<Match>(jobs.size());
    for (int i = 0; i < jobs.size(); i++) {
      out.add(new Match(jobs.get(i), equal.get(i)));
    }
    return out;
  }

  /** The job's row, or {@code null} when there is none (never enqueued, or pruned). */
  static EnqueuedJob byId(Connection c, long id, JobCipher cipher) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BY_ID)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? read(rs, cipher) : null;
      }
    }
  }

  private static EnqueuedJob read(ResultSet rs, JobCipher cipher) throws SQLException {
    long id = rs.getLong(1);
    String queue = rs.getString(2);
    String payload = rs.getString(5);
    if (JobCipher.sealed(payload)) {
      if (cipher == JobCipher.NONE) {
        throw new IllegalStateException(
            "pgbus-test: job "
                + id
                + " of queue '"
                + queue
                + "' has an encrypted payload (pgbus.queue."
                + queue
                + ".encrypt=true): assert through kit.assertions() (PgbusTestKit, in a container)"
                + " or PgbusAssertions.decrypting(settings), which hold the keys");
      }
      payload = cipher.openPayload(queue, id, payload);
    }
    Array stored = rs.getArray(13);
    var errors = new ArrayList<String>();
    if (stored != null) {
      for (String e : (String[]) stored.getArray()) {
        errors.add(cipher == JobCipher.NONE ? e : cipher.openError(id, e));
      }
    }
    return new EnqueuedJob(
        id,
        queue,
        rs.getString(3),
        rs.getInt(4),
        payload,
        rs.getInt(6),
        rs.getInt(7),
        rs.getTimestamp(8).toInstant(),
        rs.getTimestamp(9).toInstant(),
        rs.getString(10),
        rs.getString(11),
        rs.getString(12),
        errors);
  }
}
