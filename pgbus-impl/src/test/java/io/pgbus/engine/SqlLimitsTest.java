package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.InvalidJobException;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The limits hold on every path, not only in the Java API: SQL enqueues refuse a payload over
 * pgbus.max-payload-bytes with the Java message and a run_at that is infinite or more than 100
 * years ahead; a claim never hands out an oversized payload, whoever inserted it.
 */
class SqlLimitsTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final int LIMIT = 1000;
  private static final String OVER = "{\"text\":\"" + "x".repeat(LIMIT) + "\"}";
  private static final int OVER_BYTES = LIMIT + 12; // as PostgreSQL prints it: {"text": "..."}

  private final JobStore store = new JobStore();

  private static void limit(int bytes) {
    db.update("UPDATE pgbus.setting SET max_payload_bytes = ?", bytes);
  }

  @Test
  void theEngineWritesItsPayloadLimitWhereSqlReadsIt() {
    limit(1048576);

    engines.start(
        engines.builder(engines.config().maxPayloadBytes(4321).build()).maintenance(false));

    assertThat(db.queryLong("SELECT max_payload_bytes FROM pgbus.setting")).isEqualTo(4321);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "SELECT pgbus.enqueue('big', ?::jsonb)",
        "SELECT * FROM pgbus.enqueue_job('big', ?::jsonb, unique_key => 'k')",
        "SELECT * FROM pgbus.enqueue_many(ARRAY['big', 'big'], ARRAY['{}', ?]::jsonb[],"
            + " ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0], ARRAY[25, 25])"
      })
  void sqlEnqueueRefusesAPayloadOverTheLimitWithTheJavaMessage(String sql) {
    limit(LIMIT);
    assertThatThrownBy(() -> run(sql, OVER))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining(
            "payload for queue 'big' is "
                + OVER_BYTES
                + " bytes, over the limit of "
                + LIMIT
                + " bytes: store large data in your own table and enqueue its key, or raise"
                + " pgbus.max-payload-bytes")
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void theSqlPayloadLimitIsHeldToTheRangeJavaAllows() {
    try {
      for (int outside : List.of(1, 268_435_457)) {
        assertThatThrownBy(() -> limit(outside))
            .as("max_payload_bytes = %d", outside)
            .hasStackTraceContaining("setting_max_payload_bytes_range");
      }
      limit(2);
      limit(268_435_456);
      assertThat(db.queryLong("SELECT max_payload_bytes FROM pgbus.setting"))
          .isEqualTo(268_435_456);
    } finally {
      limit(1048576);
    }
  }

  @Test
  void aPayloadAtTheLimitIsTaken() throws SQLException {
    limit(LIMIT);
    String exact = "{\"text\": \"" + "x".repeat(LIMIT - 12) + "\"}";
    run("SELECT pgbus.enqueue('big', ?::jsonb)", exact);
    assertThat(db.jobCount()).isEqualTo(1);
  }

  @Test
  void aClaimBuriesAnOversizedJobAndHandsOutTheNextOne() throws SQLException {
    limit(LIMIT);
    // Inserted past the functions, as jobs from before V5 or a plain INSERT are.
    db.update(
        "INSERT INTO pgbus.job (queue, payload, priority) VALUES ('big', ?::jsonb, -1)", OVER);
    db.update("INSERT INTO pgbus.job (queue, payload) VALUES ('big', '{\"small\":1}')");

    List<ClaimedJob> claimed;
    try (Connection c = db.connect()) {
      claimed = store.jobClaim(c, List.of("big"), 1, "w", Duration.ofMinutes(1));
    }

    assertThat(claimed).extracting(ClaimedJob::payload).containsExactly("{\"small\": 1}");
    assertThat(db.jobCount("big", "dead")).isEqualTo(1);
    assertThat(
            db.queryLongs(
                "SELECT attempt FROM pgbus.job WHERE state = 'dead' AND errors->0->>'error' = ?",
                "payload for queue 'big' is "
                    + OVER_BYTES
                    + " bytes, over the limit of "
                    + LIMIT
                    + " bytes: not claimed; store large data in your own table and enqueue its"
                    + " key, or raise pgbus.max-payload-bytes and replay the job"))
        .containsExactly(1L);
  }

  @Test
  void aCompressedOversizedPayloadIsBuriedToo() throws SQLException {
    // 200 kB of one letter: stored compressed in a few kB, still 200 kB of text for Java.
    limit(100000);
    db.update(
        "INSERT INTO pgbus.job (queue, payload) VALUES ('big', jsonb_build_array(repeat('x', 200000)))");
    assertThat(db.queryLong("SELECT pg_column_size(payload) FROM pgbus.job"))
        .isLessThan(100000 / 6);

    try (Connection c = db.connect()) {
      assertThat(store.jobClaim(c, List.of("big"), 5, "w", Duration.ofMinutes(1))).isEmpty();
    }
    assertThat(db.jobCount("big", "dead")).isEqualTo(1);
  }

  /** 10 MB of one letter in a jsonb column: stored compressed in about 120 kB. */
  private static void stashCompressible(int textBytes) {
    db.update("CREATE TABLE IF NOT EXISTS stash (p jsonb)");
    db.update("TRUNCATE stash");
    // {"text": "aaa…"}: 12 bytes of JSON around the letters.
    db.update(
        "INSERT INTO stash VALUES (jsonb_build_object('text', repeat('a', ?)))", textBytes - 12);
    assertThat(db.queryLong("SELECT octet_length(p::text) FROM stash")).isEqualTo(textBytes);
    assertThat(db.queryLong("SELECT pg_column_size(p) FROM stash"))
        .as("stored compressed")
        .isLessThan(1048576 / 6);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "SELECT pgbus.enqueue('big', s.p) FROM stash s",
        "SELECT (pgbus.enqueue_job('big', s.p, unique_key => 'k')).id FROM stash s",
        "SELECT pgbus.enqueue_many(ARRAY['big'], ARRAY[s.p], ARRAY[NULL]::timestamptz[],"
            + " ARRAY[0], ARRAY[25]) FROM stash s",
        "SELECT (pgbus.enqueue_after('big', s.p, ARRAY[(SELECT min(j.id) FROM pgbus.job j)])).id"
            + " FROM stash s",
        "SELECT (pgbus.enqueue_batch(ARRAY['big'], ARRAY[s.p], ARRAY[0], ARRAY[25], 'big',"
            + " '{}')).batch_id FROM stash s",
        "SELECT (pgbus.enqueue_batch(ARRAY['big'], ARRAY['{}'::jsonb], ARRAY[0], ARRAY[25], 'big',"
            + " s.p)).batch_id FROM stash s"
      })
  void aCompressibleOversizedPayloadReadFromATableIsRefusedAtEnqueueAsTheClaimWouldBuryIt(
      String sql) throws SQLException {
    limit(1048576);
    stashCompressible(10_000_000);
    run("SELECT pgbus.enqueue('dep', '{}')", null); // for enqueue_after to depend on

    assertThatThrownBy(() -> run(sql, null))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining(
            "payload for queue 'big' is 10000000 bytes, over the limit of 1048576 bytes: store"
                + " large data in your own table and enqueue its key, or raise"
                + " pgbus.max-payload-bytes")
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
    assertThat(db.jobCount("big", "available") + db.jobCount("big", "scheduled")).isZero();
  }

  @Test
  void aCompressibleOversizedPayloadIsRefusedByTheJavaApiToo() {
    String payload = "{\"text\":\"" + "a".repeat(10_000_000) + "\"}";
    var jobs = new Jobs("w", 1048576, JobTracing.NONE);

    assertThatThrownBy(
            () -> {
              try (Connection c = db.connect()) {
                jobs.enqueue(c, NewJob.of("big", payload));
              }
            })
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining(
            "payload for queue 'big' is 10000011 bytes, over the limit of 1048576")
        .hasMessageContaining("pgbus.max-payload-bytes");
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void aCompressiblePayloadExactlyAtTheLimitIsEnqueuedAndClaimedNotBuried() throws SQLException {
    limit(1048576);
    stashCompressible(1048576);
    run("SELECT pgbus.enqueue('big', s.p) FROM stash s", null);
    // And through Java, as JSON-B writes it (PostgreSQL prints it with a space after ':').
    try (Connection c = db.connect()) {
      new Jobs("w", 1048576, JobTracing.NONE)
          .enqueue(c, NewJob.of("big", "{\"text\":\"" + "a".repeat(1048576 - 12) + "\"}"));
    }

    List<ClaimedJob> claimed;
    try (Connection c = db.connect()) {
      claimed = store.jobClaim(c, List.of("big"), 5, "w", Duration.ofMinutes(1));
    }
    assertThat(claimed).hasSize(2);
    assertThat(claimed)
        .allSatisfy(j -> assertThat(j.payload().getBytes(StandardCharsets.UTF_8)).hasSize(1048576));
    assertThat(db.jobCount("big", "running")).isEqualTo(2);
    assertThat(db.jobCount("big", "dead")).isZero();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"infinity", "-infinity"})
  void anInfiniteRunAtIsRefusedSayingItMustBeFinite(String runAt) {
    for (String sql :
        List.of(
            "SELECT pgbus.enqueue('later', '{}', run_at => ?::timestamptz)",
            "SELECT * FROM pgbus.enqueue_many(ARRAY['later'], ARRAY['{}']::jsonb[],"
                + " ARRAY[?::timestamptz], ARRAY[0], ARRAY[25])")) {
      assertThatThrownBy(() -> run(sql, runAt))
          .hasMessageContaining("run_at must be a finite time, not " + runAt + " (queue later)")
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
    }
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void aRunAtMoreThan100YearsAheadIsRefusedNamingTheBound() throws SQLException {
    Instant far = Instant.now().plus(36_501, ChronoUnit.DAYS);
    for (String sql :
        List.of(
            "SELECT pgbus.enqueue('later', '{}', run_at => ?::timestamptz)",
            "SELECT * FROM pgbus.enqueue_many(ARRAY['later'], ARRAY['{}']::jsonb[],"
                + " ARRAY[?::timestamptz], ARRAY[0], ARRAY[25])")) {
      assertThatThrownBy(() -> run(sql, far.toString()))
          .hasMessageContaining(
              "is more than 100 years (interval '36500 days') ahead (queue later)")
          .hasMessageContaining("schedule it nearer")
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
    }
    run("SELECT pgbus.enqueue('later', '{}', run_at => now() + interval '36499 days')", null);
    assertThat(db.jobCount()).isEqualTo(1);
  }

  @Test
  void aRetryOrSnoozeBeyondTheBoundIsClampedTo100Years() throws SQLException {
    Duration thousandYears = Duration.ofDays(365_000);
    try (Connection c = db.connect()) {
      store.jobInsert(c, NewJob.of("later", "{}"));
      store.jobInsert(c, NewJob.of("later", "{}"));
      List<ClaimedJob> held = store.jobClaim(c, List.of("later"), 2, "w", Duration.ofMinutes(1));
      store.jobSnooze(c, held.get(0), thousandYears);
      store.jobFail(c, held.get(1), "boom", thousandYears);
    }
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job"
                    + " WHERE run_at BETWEEN now() + interval '36499 days' AND now() + interval '36500 days'"))
        .isEqualTo(2);
  }

  private static void run(String sql, String arg) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      if (arg != null) {
        ps.setString(1, arg);
      }
      ps.execute();
    }
  }

  @Test
  void aClaimRefusesAWorkerIdWithANewlineNamingIt() {
    assertThatThrownBy(
            () ->
                run(
                    "SELECT * FROM pgbus.claim(ARRAY['q'], 1, ?, interval '30 seconds')",
                    "host:1\nINFO forged line"))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("the worker id 'host:1?INFO forged line' is invalid")
        .hasMessageContaining("without control characters")
        .extracting(e -> ((SQLException) e).getSQLState())
        .isEqualTo("22023");
  }
}
