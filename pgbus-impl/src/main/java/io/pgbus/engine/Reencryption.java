package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Moves the jobs of an encrypting queue to its newest key, one bounded batch per call: the rows
 * whose payload, result or an error is plain or sealed under an older key are locked ({@code SKIP
 * LOCKED}: a job being claimed or settled is left for the next batch), opened and sealed again in
 * Java, and written back in the caller's transaction. The finished jobs of {@code
 * pgbus.job_history} follow once the live ones are done: they stay readable (console, admin API)
 * only under a key in the ring. Run it until it returns 0 after a rotation (or after a queue
 * started to encrypt with jobs waiting); then the old key may leave {@code
 * pgbus.encryption.key-ids}. Each batch writes an audit entry (action {@code reencrypt}) in its
 * transaction, and a log line.
 */
public final class Reencryption {

  private static final System.Logger LOG = System.getLogger(Reencryption.class.getName());

  /** The most rows one call re-seals: bounds its locks and its transaction. */
  public static final int MAX_BATCH = 1000;

  // A row needs work when any of its sealed slots is plain or under another key than the newest.
  // The LIKE patterns are bound: '%' and '_' cannot occur in a key id's place (KeyRing.KEY_ID
  // allows '_', which LIKE reads as "any one character": harmless, it only widens the match and
  // the Java side re-seals such a row anyway).
  private static final String CANDIDATES = candidates("pgbus.job", "NULL::timestamptz");

  // History keeps the payloads, results and errors of the jobs that ended: they stay readable only
  // while their key is in the ring, so they are re-sealed as well. Its key is (id, finalized_at):
  // the update names both, and finds its one partition.
  private static final String HISTORY_CANDIDATES =
      candidates("pgbus.job_history", "j.finalized_at");

  private static String candidates(String table, String finalizedAt) {
    return """
        SELECT j.id, j.payload::text, j.result::text,
               ARRAY(SELECT x.e OPERATOR(pg_catalog.->>) 'error'
                       FROM pg_catalog.jsonb_array_elements(j.errors) WITH ORDINALITY AS x(e, o)
                      ORDER BY x.o),
               %s
          FROM %s j
         WHERE j.queue::pg_catalog.text OPERATOR(pg_catalog.=) ?::text
           AND (coalesce(j.payload OPERATOR(pg_catalog.->>) 'pgbus.enc', '') NOT LIKE ?::text
                OR (j.result IS NOT NULL
                    AND coalesce(j.result OPERATOR(pg_catalog.->>) 'pgbus.enc', '')
                        NOT LIKE ?::text)
                OR EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(j.errors) AS x(e)
                            WHERE coalesce(x.e OPERATOR(pg_catalog.->>) 'error', '')
                                  NOT LIKE ?::text))
         ORDER BY j.id
         LIMIT ?
           FOR UPDATE OF j SKIP LOCKED
        """
        .formatted(finalizedAt, table);
  }

  private static final String RESEAL = reseal("pgbus.job", "j.id = ?");

  private static final String HISTORY_RESEAL =
      reseal("pgbus.job_history", "j.id = ? AND j.finalized_at = ?");

  private static String reseal(String table, String where) {
    return """
        UPDATE %s j
           SET payload = ?::jsonb,
               result = ?::jsonb,
               errors = coalesce(
                 (SELECT pg_catalog.jsonb_agg(
                           CASE WHEN n.t IS NULL THEN x.e
                                ELSE pg_catalog.jsonb_set(x.e, '{error}', pg_catalog.to_jsonb(n.t))
                           END
                           ORDER BY x.o)
                    FROM pg_catalog.jsonb_array_elements(j.errors) WITH ORDINALITY AS x(e, o)
                    LEFT JOIN pg_catalog.unnest(?::text[]) WITH ORDINALITY AS n(t, o)
                           ON n.o = x.o),
                 '[]'::jsonb)
         WHERE %s
        """
        .formatted(table, where);
  }

  private static final String AUDIT =
      """
      INSERT INTO pgbus.audit (actor, action, queue, detail)
      VALUES (coalesce(nullif(?::text, ''), session_user::text), 'reencrypt', ?::text,
              pg_catalog.jsonb_build_object('key', ?::text, 'live', ?::int, 'finished', ?::int,
                                            'first_id', ?::bigint, 'last_id', ?::bigint))
      """;

  private final JobCipher cipher;

  public Reencryption(JobCipher cipher) {
    this.cipher = Objects.requireNonNull(cipher, "cipher");
  }

  /**
   * Re-seals up to {@code batch} jobs of {@code queue} under the newest key in {@code c}'s
   * transaction and returns how many; 0: the queue has none left (or only locked ones).
   *
   * @param actor who asked, for the audit line
   */
  public int run(Connection c, String queue, int batch, String actor) throws SQLException {
    QueueNames.require(queue);
    if (!cipher.encrypts(queue)) {
      throw new InvalidConfigException(
          "pgbus.queue." + queue + ".encrypt",
          "queue '"
              + queue
              + "' does not encrypt: set pgbus.queue."
              + queue
              + ".encrypt=true (and pgbus.encryption.key-ids) where reencrypt runs");
    }
    if (batch < 1 || batch > MAX_BATCH) {
      throw new IllegalArgumentException(
          "a reencrypt batch of " + batch + " is out of range: use 1 to " + MAX_BATCH);
    }
    String newest = JobCipher.PREFIX + cipher.keys().newest() + ":%";
    List<Row> rows = candidates(c, CANDIDATES, queue, newest, batch);
    reseal(c, RESEAL, queue, rows);
    // The live jobs first (they still run); history fills what the batch has left.
    List<Row> history =
        rows.size() < batch
            ? candidates(c, HISTORY_CANDIDATES, queue, newest, batch - rows.size())
            : List.of();
    reseal(c, HISTORY_RESEAL, queue, history);
    int n = rows.size() + history.size();
    if (n > 0) {
      long first = Long.MAX_VALUE;
      long last = Long.MIN_VALUE;
      for (List<Row> part : List.of(rows, history)) {
        for (Row r : part) {
          first = Math.min(first, r.id);
          last = Math.max(last, r.id);
        }
      }
      try (PreparedStatement ps = c.prepareStatement(AUDIT)) {
        ps.setString(1, actor);
        ps.setString(2, queue);
        ps.setString(3, cipher.keys().newest());
        ps.setInt(4, rows.size());
        ps.setInt(5, history.size());
        ps.setLong(6, first);
        ps.setLong(7, last);
        ps.executeUpdate();
      }
      LOG.log(
          System.Logger.Level.INFO,
          "pgbus audit: {0} re-encrypted {1} live and {2} finished jobs of queue {3} under key {4}",
          actor == null ? "(unknown)" : actor,
          rows.size(),
          history.size(),
          queue,
          cipher.keys().newest());
    }
    return n;
  }

  private static List<Row> candidates(
      Connection c, String sql, String queue, String newest, int limit) throws SQLException {
    var rows = new ArrayList<Row>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, queue);
      ps.setString(2, newest);
      ps.setString(3, newest);
      ps.setString(4, "%" + newest);
      ps.setInt(5, limit);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Array errors = rs.getArray(4);
          rows.add(
              new Row(
                  rs.getLong(1),
                  rs.getString(2),
                  rs.getString(3),
                  errors == null ? new String[0] : (String[]) errors.getArray(),
                  rs.getObject(5, OffsetDateTime.class)));
        }
      }
    }
    return rows;
  }

  private void reseal(Connection c, String sql, String queue, List<Row> rows) throws SQLException {
    if (rows.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (Row r : rows) {
        String payload =
            JobCipher.sealed(r.payload) ? cipher.openPayload(queue, r.id, r.payload) : r.payload;
        ps.setString(1, cipher.sealPayload(queue, payload));
        ps.setString(
            2,
            r.result == null
                ? null
                : cipher.sealResult(queue, r.id, cipher.openResult(r.id, r.result)));
        String[] errors = new String[r.errors.length];
        for (int i = 0; i < errors.length; i++) {
          errors[i] =
              r.errors[i] == null
                  ? null
                  : cipher.sealError(queue, r.id, cipher.openError(r.id, r.errors[i]));
        }
        ps.setArray(3, c.createArrayOf("text", errors));
        ps.setLong(4, r.id);
        if (r.finalizedAt != null) {
          ps.setObject(5, r.finalizedAt);
        }
        ps.addBatch();
      }
      ps.executeBatch();
    }
  }

  private record Row(
      long id, String payload, String result, String[] errors, OffsetDateTime finalizedAt) {}
}
