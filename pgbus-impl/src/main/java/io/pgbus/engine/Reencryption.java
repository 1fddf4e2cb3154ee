package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Moves the jobs of an encrypting queue to its newest key, one bounded batch per call: the rows
 * whose payload, result or an error is plain or sealed under an older key are locked ({@code SKIP
 * LOCKED}: a job being claimed or settled is left for the next batch), opened and sealed again in
 * Java, and written back in the caller's transaction. Run it until it returns 0 after a rotation
 * (or after a queue started to encrypt with jobs waiting); then the old key may leave {@code
 * pgbus.encryption.key-ids}. Each batch is logged as an audit line with the actor.
 */
public final class Reencryption {

  private static final System.Logger LOG = System.getLogger(Reencryption.class.getName());

  /** The most rows one call re-seals: bounds its locks and its transaction. */
  public static final int MAX_BATCH = 1000;

  // A row needs work when any of its sealed slots is plain or under another key than the newest.
  // The LIKE patterns are bound: '%' and '_' cannot occur in a key id's place (KeyRing.KEY_ID
  // allows '_', which LIKE reads as "any one character": harmless, it only widens the match and
  // the Java side re-seals such a row anyway).
  private static final String CANDIDATES =
      """
      SELECT j.id, j.payload::text, j.result::text,
             ARRAY(SELECT x.e OPERATOR(pg_catalog.->>) 'error'
                     FROM pg_catalog.jsonb_array_elements(j.errors) WITH ORDINALITY AS x(e, o)
                    ORDER BY x.o)
        FROM pgbus.job j
       WHERE j.queue::pg_catalog.text OPERATOR(pg_catalog.=) ?::text
         AND (coalesce(j.payload OPERATOR(pg_catalog.->>) 'pgbus.enc', '') NOT LIKE ?::text
              OR (j.result IS NOT NULL
                  AND coalesce(j.result OPERATOR(pg_catalog.->>) 'pgbus.enc', '') NOT LIKE ?::text)
              OR EXISTS (SELECT 1 FROM pg_catalog.jsonb_array_elements(j.errors) AS x(e)
                          WHERE coalesce(x.e OPERATOR(pg_catalog.->>) 'error', '') NOT LIKE ?::text))
       ORDER BY j.id
       LIMIT ?
         FOR UPDATE OF j SKIP LOCKED
      """;

  private static final String RESEAL =
      """
      UPDATE pgbus.job j
         SET payload = ?::jsonb,
             result = ?::jsonb,
             errors = coalesce(
               (SELECT pg_catalog.jsonb_agg(
                         CASE WHEN n.t IS NULL THEN x.e
                              ELSE pg_catalog.jsonb_set(x.e, '{error}', pg_catalog.to_jsonb(n.t)) END
                         ORDER BY x.o)
                  FROM pg_catalog.jsonb_array_elements(j.errors) WITH ORDINALITY AS x(e, o)
                  LEFT JOIN pg_catalog.unnest(?::text[]) WITH ORDINALITY AS n(t, o) ON n.o = x.o),
               '[]'::jsonb)
       WHERE j.id = ?
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
    var rows = new ArrayList<Row>();
    try (PreparedStatement ps = c.prepareStatement(CANDIDATES)) {
      ps.setString(1, queue);
      ps.setString(2, newest);
      ps.setString(3, newest);
      ps.setString(4, "%" + newest);
      ps.setInt(5, batch);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          Array errors = rs.getArray(4);
          rows.add(
              new Row(
                  rs.getLong(1),
                  rs.getString(2),
                  rs.getString(3),
                  errors == null ? new String[0] : (String[]) errors.getArray()));
        }
      }
    }
    if (rows.isEmpty()) {
      return 0;
    }
    try (PreparedStatement ps = c.prepareStatement(RESEAL)) {
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
        ps.addBatch();
      }
      ps.executeBatch();
    }
    List<Long> ids = rows.stream().map(Row::id).toList();
    LOG.log(
        System.Logger.Level.INFO,
        "pgbus audit: {0} re-encrypted {1} jobs of queue {2} under key {3} (ids {4} to {5})",
        actor == null ? "(unknown)" : actor,
        ids.size(),
        queue,
        cipher.keys().newest(),
        ids.get(0),
        ids.get(ids.size() - 1));
    return ids.size();
  }

  private record Row(long id, String payload, String result, String[] errors) {}
}
