package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.RecordingEvents;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.sql.Connection;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The jobs of an encrypting queue reach PostgreSQL only sealed: payload, result and stored errors,
 * as a dump of the database shows; the handler reads them plain; rotation keeps old rows readable
 * and {@link Reencryption} moves them to the newest key; a plain SQL enqueue is refused with what
 * to do; a moved row does not open; bad key settings fail naming the setting.
 */
class EncryptionTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final String MARKER = "MARKER-4f1c-PAYLOAD";
  private static final String RESULT_MARKER = "MARKER-4f1c-RESULT";
  private static final String ERROR_MARKER = "MARKER-4f1c-ERROR";

  @TempDir Path dir;

  private static SecretKeySpec key() {
    byte[] k = new byte[32];
    new SecureRandom().nextBytes(k);
    return new SecretKeySpec(k, "AES");
  }

  private static KeyRing ring(Map<String, SecretKeySpec> keys) {
    var m = new java.util.LinkedHashMap<String, javax.crypto.SecretKey>();
    keys.forEach(m::put);
    return KeyRing.of(m);
  }

  @Test
  void anEncryptingQueueStoresNothingPlainAndRotatesToTheNewestKey() throws Exception {
    var k1 = key();
    var k2 = key();
    JobCipher first = new JobCipher(ring(Map.of("k1", k1)), Set.of("secret"));
    var seen = new ConcurrentHashMap<Long, String>();
    var events = new RecordingEvents();
    Engine engine =
        start(
            "secret",
            Duration.ofHours(1),
            first,
            events,
            (job, tx) -> {
              seen.put(job.id(), job.claimed().payload());
              if (job.claimed().payload().contains("fail")) {
                throw new IllegalStateException("handler saw " + ERROR_MARKER);
              }
              return Outcome.completeJson("{\"r\": \"" + RESULT_MARKER + "\"}");
            });
    long ok;
    long failing;
    try (Connection c = db.connect()) {
      ok = engine.jobs().enqueue(c, NewJob.of("secret", "{\"ssn\": \"" + MARKER + "\"}"));
      failing =
          engine
              .jobs()
              .enqueue(c, NewJob.of("secret", "{\"ssn\": \"" + MARKER + "\", \"fail\": 1}"));
    }
    events.awaitFinished(ok, 1, Duration.ofSeconds(20));
    events.awaitFinished(failing, 1, Duration.ofSeconds(20));

    assertThat(seen.get(ok)).isEqualTo("{\"ssn\": \"" + MARKER + "\"}");
    String stored = db.job(ok).payload();
    assertThat(JobCipher.sealed(stored)).as(stored).isTrue();
    assertThat(JobCipher.keyIdOf(stored)).isEqualTo("k1");
    String result = result(ok);
    assertThat(first.openResult(ok, result)).contains(RESULT_MARKER);
    String error = db.job(failing).errors().get(0).error();
    assertThat(error).doesNotContain(ERROR_MARKER);
    assertThat(first.openError(failing, error)).contains(ERROR_MARKER);
    assertThat(dump()).doesNotContain("MARKER-4f1c");
    assertThat(statements()).doesNotContain("MARKER-4f1c");

    // A result moved to another job's row does not open there.
    assertThatThrownBy(() -> first.openResult(failing, result))
        .isInstanceOf(PgbusException.class)
        .hasMessageContaining("does not verify under key 'k1'");

    // The completed job ends up in history (the leader's archive): it is re-sealed there too.
    db.update("UPDATE pgbus.job SET finalized_at = now() - interval '2 minutes' WHERE id = ?", ok);
    try (Connection c = db.connect()) {
      new ArchiveStore().archive(c, Duration.ofDays(3), 10);
    }
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job_history WHERE id = ?", ok))
        .isEqualTo(1);
    String archived = stored("payload", ok);

    // Rotation: k2 seals, k1 still opens; reencrypt moves every row to k2 in bounded batches.
    JobCipher rotated = new JobCipher(ring(linked("k1", k1, "k2", k2)), Set.of("secret"));
    var reencryption = new Reencryption(rotated);
    int total = 0;
    int n;
    try (Connection c = db.connect()) {
      while ((n = reencryption.run(c, "secret", 1, "tester")) > 0) {
        total += n;
      }
    }
    assertThat(total).isEqualTo(2);
    // Each batch left an audit entry in its transaction: one live job, then one finished.
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'reencrypt' AND queue = 'secret'"
                    + " AND actor = 'tester' AND detail->>'key' = 'k2'"
                    + " AND (detail->>'live')::int + (detail->>'finished')::int = 1"))
        .isEqualTo(2);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.audit WHERE action = 'reencrypt'"
                    + " AND (detail->>'finished')::int = 1 AND (detail->>'first_id')::bigint = ?",
                ok))
        .isEqualTo(1);
    JobCipher onlyK2 = new JobCipher(ring(Map.of("k2", k2)), Set.of("secret"));
    assertThat(JobCipher.keyIdOf(archived)).isEqualTo("k1");
    assertThat(JobCipher.keyIdOf(stored("payload", ok))).isEqualTo("k2");
    assertThat(onlyK2.openPayload("secret", ok, stored("payload", ok))).contains(MARKER);
    assertThat(onlyK2.openResult(ok, stored("result", ok))).contains(RESULT_MARKER);
    assertThat(onlyK2.openError(failing, db.job(failing).errors().get(0).error()))
        .contains(ERROR_MARKER);
    assertThat(dump()).doesNotContain("MARKER-4f1c");
    // A server that lost k2 says which key it lacks.
    assertThatThrownBy(() -> first.openPayload("secret", ok, stored("payload", ok)))
        .hasMessageContaining("encrypted with key 'k2', which this server does not have");
  }

  @Test
  void aSchedulesRunIntoAnEncryptingQueueIsSealedLikeAnyJavaEnqueue() throws Exception {
    JobCipher cipher = new JobCipher(ring(Map.of("k1", key())), Set.of("sealed_cron"));
    var events = new RecordingEvents();
    var ran = new ConcurrentHashMap<Long, String>();
    Engine engine =
        start(
            "sealed_cron",
            Duration.ofHours(1),
            cipher,
            events,
            (job, tx) -> {
              ran.put(job.id(), job.claimed().payload());
              return Outcome.complete();
            });
    // The schedule's change below wakes the leader through its listener: listening first (a warm
    // JVM got here before it did, and the leader then waited for its next tick).
    TestEngines.awaitDelivering(engine);
    try (Connection c = db.connect()) {
      engine
          .schedules()
          .create(
              c,
              io.pgbus.ScheduleDefinition.of("sealed-nightly", "0 3 * * *", "sealed_cron")
                  .withPayloadJson("{\"ssn\": \"" + MARKER + "\"}"),
              null);
    }
    // Its last run, 03:00, counts as not yet dealt with: the change wakes the leader, whose tick
    // enqueues it (late, misfire run_once).
    db.update(
        "UPDATE pgbus.schedule SET next_run_at = date_trunc('day', now()) + CASE WHEN now()"
            + " >= date_trunc('day', now()) + interval '3 hours' THEN interval '3 hours' ELSE"
            + " interval '-21 hours' END WHERE name = 'sealed-nightly'");
    events.awaitFinished(Outcome.Kind.COMPLETE, 1, Duration.ofSeconds(30));
    long id = ran.keySet().iterator().next();
    assertThat(ran.get(id)).contains(MARKER);
    assertThat(JobCipher.sealed(db.job(id).payload())).as(db.job(id).payload()).isTrue();
    // The schedule's own definition keeps its payload plain (docs/operations.md): gone, so that the
    // other tests' dumps hold no marker.
    db.update("DELETE FROM pgbus.schedule WHERE name = 'sealed-nightly'");
  }

  @Test
  void aPlainSqlEnqueueIntoAnEncryptingQueueFailsWithWhatToDoUntilReencryptSealsIt()
      throws Exception {
    JobCipher cipher = new JobCipher(ring(Map.of("k1", key())), Set.of("sealed_sql"));
    long id = db.queryLong("SELECT pgbus.enqueue('sealed_sql', '{\"x\": \"" + MARKER + "\"}')");
    var events = new RecordingEvents();
    var ran = new ConcurrentHashMap<Long, String>();
    Engine engine =
        start(
            "sealed_sql",
            Duration.ofMillis(50),
            cipher,
            events,
            (job, tx) -> {
              ran.put(job.id(), job.claimed().payload());
              return Outcome.complete();
            });
    events.awaitFinished(id, 1, Duration.ofSeconds(20));
    assertThat(ran).isEmpty();
    String error = cipher.openError(id, db.job(id).errors().get(0).error());
    assertThat(error)
        .contains("has a plain payload, but pgbus.queue.sealed_sql.encrypt=true")
        .contains("pgbus reencrypt sealed_sql");
    // The job retries every 50 ms, and reencrypt skips a row a retry holds: it seals it at a round
    // that finds it free.
    Await.until(
        "reencrypt to seal the job",
        Duration.ofSeconds(20),
        () -> {
          try (Connection c = db.connect()) {
            return new Reencryption(cipher).run(c, "sealed_sql", 10, "tester");
          }
        },
        n -> n == 1);
    assertThat(JobCipher.sealed(db.job(id).payload())).isTrue();
    events.awaitFinished(Outcome.Kind.COMPLETE, 1, Duration.ofSeconds(20));
    assertThat(ran.get(id)).contains(MARKER);
    engine.stop();
  }

  @Test
  void anSqlEnqueueOfAPlainPayloadIsRefusedWhileTheQueueEncryptsAndTakenOnceItStops()
      throws Exception {
    JobCipher cipher = new JobCipher(ring(Map.of("k1", key())), Set.of("sealed_at"));
    var events = new RecordingEvents();
    var ran = new ConcurrentHashMap<Long, String>();
    Engine engine =
        start(
            "sealed_at",
            Duration.ofHours(1),
            cipher,
            events,
            (job, tx) -> {
              ran.put(job.id(), job.claimed().payload());
              return Outcome.complete();
            });
    // The engine's start recorded that the queue encrypts (V53).
    assertThat(db.queryText("SELECT array_to_string(encrypted_queues, ',') FROM pgbus.setting"))
        .isEqualTo("sealed_at");
    long before = db.jobCount();
    String why = "queue sealed_at encrypts its payloads, and the payload";
    String fix = "enqueue through the Java API (JobQueue";
    for (String sql :
        List.of(
            "SELECT pgbus.enqueue('sealed_at', '{\"x\": 1}')",
            "SELECT pgbus.enqueue('sealed_at', '{\"x\": 1}', unique_key => 'u1')",
            "SELECT id FROM pgbus.enqueue_unique('sealed_at', '{\"x\": 1}', 'u2',"
                + " period => interval '1 hour')",
            "SELECT id FROM pgbus.enqueue_after('sealed_at', '{\"x\": 1}',"
                + " ARRAY[pgbus.enqueue('plain_q', '{}')])",
            // A wrapper that only looks like an envelope is plaintext too.
            "SELECT pgbus.enqueue('sealed_at', '{\"pgbus.enc\": \"secret\"}')")) {
      assertThatThrownBy(() -> db.queryLong(sql))
          .as(sql)
          .hasStackTraceContaining(why + " is plaintext")
          .hasStackTraceContaining(fix);
    }
    // A batch names the payload; nothing of it is written, the plain queue's jobs neither.
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT * FROM pgbus.enqueue_many(ARRAY['plain_q', 'sealed_at'],"
                        + " ARRAY['{}', '{}']::jsonb[], ARRAY[NULL, NULL]::timestamptz[],"
                        + " ARRAY[0, 0], ARRAY[25, 25])"))
        .hasStackTraceContaining(why + " 2 of the batch is plaintext");
    assertThatThrownBy(
            () ->
                db.queryLong(
                    "SELECT batch_id FROM pgbus.enqueue_batch(ARRAY['sealed_at'],"
                        + " ARRAY['{}']::jsonb[], ARRAY[0], ARRAY[25], 'plain_q', '{}')"))
        .hasStackTraceContaining(why + " 1 of the batch is plaintext");
    assertThat(db.jobCount()).isEqualTo(before);

    // A batch stored its plain callback before the queue began to encrypt: the completion of its
    // last member still enqueues it (its handler refuses it, `pgbus reencrypt` seals it).
    db.queryText("SELECT pgbus.queue_encrypt_set('late_sealed', false)");
    long member =
        db.queryLong(
            "SELECT job_ids[1] FROM pgbus.enqueue_batch(ARRAY['plain_q'], ARRAY['{}']::jsonb[],"
                + " ARRAY[0], ARRAY[25], 'late_sealed', '{}')");
    db.queryText("SELECT pgbus.queue_encrypt_set('late_sealed', true)");
    db.queryText(
        "WITH f AS (UPDATE pgbus.job SET state = 'completed', finalized_at = now() WHERE id = ?"
            + " RETURNING id) SELECT pgbus.job_finished(ARRAY(SELECT id FROM f))",
        member);
    assertThat(db.jobCount("late_sealed", "available")).isEqualTo(1);
    db.queryText("SELECT pgbus.queue_encrypt_set('late_sealed', false)");

    // A payload the Java API sealed is taken from SQL, one or in a batch, and runs.
    String sealed = cipher.sealPayload("sealed_at", "{\"x\": 2}");
    long one = db.queryLong("SELECT pgbus.enqueue('sealed_at', ?::jsonb)", sealed);
    long many =
        db.queryLong(
            "SELECT * FROM pgbus.enqueue_many(ARRAY['plain_q', 'sealed_at'],"
                + " ARRAY['{}', ?]::jsonb[], ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0],"
                + " ARRAY[25, 25]) ORDER BY 1 DESC LIMIT 1",
            sealed);
    events.awaitFinished(one, 1, Duration.ofSeconds(20));
    events.awaitFinished(many, 1, Duration.ofSeconds(20));
    assertThat(ran.get(one)).isEqualTo("{\"x\": 2}");
    assertThat(ran.get(many)).isEqualTo("{\"x\": 2}");
    engine.stop();

    // The deployment stops encrypting the queue: its next start clears the flag, plain is taken.
    engines.start(
        engines.config().capsule(new CapsuleConfig("c", List.of("sealed_at"), 1)).build(),
        (job, tx) -> Outcome.complete());
    assertThat(db.queryText("SELECT encrypted_queues::text FROM pgbus.setting")).isNull();
    assertThat(db.queryLong("SELECT pgbus.enqueue('sealed_at', '{\"x\": 3}')")).isPositive();
  }

  @Test
  void keysComeFromAPkcs12KeystoreAnElytronCredentialStoreFileOrAConfigSecret() throws Exception {
    var k1 = key();
    var k2 = key();
    Path p12 = dir.resolve("keys.p12");
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    var pw = new KeyStore.PasswordProtection("storepw".toCharArray());
    ks.setEntry("k1", new KeyStore.SecretKeyEntry(k1), pw);
    // Elytron's KeyStoreCredentialStore names a SecretKeyCredential entry <alias>/<type>/<alg>/.
    ks.setEntry("k2/secretkeycredential/aes/", new KeyStore.SecretKeyEntry(k2), pw);
    try (OutputStream out = Files.newOutputStream(p12)) {
      ks.store(out, "storepw".toCharArray());
    }
    String k3 = Base64.getEncoder().encodeToString(key().getEncoded());
    Map<String, String> settings =
        Map.of(
            "pgbus.encryption.key-ids",
            "k1, k2, k3",
            "pgbus.encryption.keystore",
            p12.toString(),
            "pgbus.encryption.keystore-password",
            "storepw",
            "pgbus.encryption.key.k3",
            k3);
    KeyRing ring = EncryptionKeys.load(source(settings), List.of("q"));
    assertThat(ring.ids()).containsExactly("k1", "k2", "k3");
    assertThat(ring.newest()).isEqualTo("k3");
    assertThat(ring.key("k2").getEncoded()).isEqualTo(k2.getEncoded());

    assertRefused(
        with(settings, "pgbus.encryption.key-ids", "k1,k9"),
        "pgbus.encryption.key-ids",
        "names key 'k9', which is neither a secret key entry");
    assertRefused(
        with(settings, "pgbus.encryption.keystore", dir.resolve("missing.p12").toString()),
        "pgbus.encryption.keystore",
        "no readable file there");
    assertRefused(
        with(settings, "pgbus.encryption.keystore-password", "wrong"),
        "pgbus.encryption.keystore-password",
        "check pgbus.encryption.keystore-password");
    assertRefused(
        Map.of(
            "pgbus.encryption.key-ids",
            "short",
            "pgbus.encryption.key.short",
            Base64.getEncoder().encodeToString(new byte[10])),
        "pgbus.encryption.key-ids",
        "key 'short' is 80 bits; AES-GCM needs a 128, 192 or 256-bit key");
    assertRefused(Map.of(), "pgbus.encryption.key-ids", "pgbus.queue.q.encrypt=true but");
  }

  /** An engine whose one capsule reads {@code queue}, retrying after {@code backoff}. */
  private Engine start(
      String queue, Duration backoff, JobCipher cipher, RecordingEvents events, JobFunction jobs) {
    return engines.start(
        engines
            .builder(
                engines
                    .config()
                    .retry(new RetryPolicy(backoff, backoff.multipliedBy(2), 0))
                    .capsule(new CapsuleConfig("c", List.of(queue), 1))
                    .build())
            .events(events)
            .cipher(cipher)
            .jobs(jobs));
  }

  private static void assertRefused(Map<String, String> settings, String key, String message) {
    assertThatThrownBy(() -> EncryptionKeys.load(source(settings), List.of("q")))
        .isInstanceOfSatisfying(
            InvalidConfigException.class, e -> assertThat(e.key()).isEqualTo(key))
        .hasMessageContaining(message);
  }

  private static Map<String, String> with(Map<String, String> m, String k, String v) {
    var copy = new java.util.HashMap<>(m);
    copy.put(k, v);
    return copy;
  }

  private static Function<String, Optional<String>> source(Map<String, String> m) {
    return k -> Optional.ofNullable(m.get(k));
  }

  private static Map<String, SecretKeySpec> linked(
      String a, SecretKeySpec ka, String b, SecretKeySpec kb) {
    var m = new java.util.LinkedHashMap<String, SecretKeySpec>();
    m.put(a, ka);
    m.put(b, kb);
    return m;
  }

  /** The whole database as pg_dump writes it: tables, data, functions. */
  private static String dump() throws Exception {
    var url =
        java.util.regex.Pattern.compile("jdbc:postgresql://([^:/]+):?(\\d*)/([^?]+)")
            .matcher(db.jdbcUrl());
    assertThat(url.find()).as(db.jdbcUrl()).isTrue();
    String port = url.group(2).isEmpty() ? "5432" : url.group(2);
    Process p =
        new ProcessBuilder(
                "pg_dump", "-h", url.group(1), "-p", port, "-U", "postgres", "-d", url.group(3))
            .redirectErrorStream(true)
            .start();
    var out = new ByteArrayOutputStream();
    p.getInputStream().transferTo(out);
    String dump = out.toString(StandardCharsets.UTF_8);
    org.junit.jupiter.api.Assumptions.assumeFalse(
        dump.contains("server version mismatch"), "pg_dump is older than the test server");
    assertThat(p.waitFor()).as(dump.length() > 2000 ? dump.substring(0, 2000) : dump).isZero();
    assertThat(dump).contains("COPY pgbus.job");
    return dump;
  }

  /** A column of the job wherever it is now: live, or moved to history. */
  private static String stored(String column, long id) throws java.sql.SQLException {
    try (Connection c = db.helperConnection();
        var ps =
            c.prepareStatement("SELECT " + column + "::text FROM pgbus.job_all WHERE id = ?")) {
      ps.setLong(1, id);
      try (var rs = ps.executeQuery()) {
        assertThat(rs.next()).as("job %d exists", id).isTrue();
        return rs.getString(1);
      }
    }
  }

  private static String result(long id) throws java.sql.SQLException {
    try (Connection c = db.helperConnection();
        var ps = c.prepareStatement("SELECT result::text FROM pgbus.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  /** pg_stat_statements' texts when the extension is loaded, else "". */
  private static String statements() {
    try {
      var texts = new StringBuilder();
      try (Connection c = db.helperConnection();
          var rs = c.createStatement().executeQuery("SELECT query FROM pg_stat_statements")) {
        while (rs.next()) {
          texts.append(rs.getString(1)).append('\n');
        }
      }
      return texts.toString();
    } catch (java.sql.SQLException e) {
      return ""; // pg_stat_statements is not loaded in this server
    }
  }
}
