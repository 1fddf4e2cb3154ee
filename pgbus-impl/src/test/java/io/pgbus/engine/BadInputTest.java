package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.JobQueue;
import io.pgbus.PgbusException;
import io.pgbus.QueueNames;
import io.pgbus.engine.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input is refused before anything is written, with a message that names the bad value and says
 * how to fix it, from Java and from SQL alike.
 */
class BadInputTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private static final int PAYLOAD_LIMIT = 1024;
  private static final String RULE = "use a lower-case letter followed by lower-case letters";

  private Engine engine;

  @BeforeEach
  void engineWithASmallPayloadLimit() {
    db.update("DELETE FROM pgbus.job");
    EngineConfig config = EngineConfig.builder().maxPayloadBytes(PAYLOAD_LIMIT).build();
    engine = Engine.builder(config, db.dataSource()).build();
  }

  @AfterEach
  void nothingWasWritten() {
    assertThat(db.jobCount()).as("jobs written").isZero();
  }

  static Stream<Arguments> badQueueNames() {
    return Stream.of(
        Arguments.of("it's", "a quote"),
        Arguments.of("two words", "a space"),
        Arguments.of("Emails", "upper case"),
        Arguments.of("1st", "a leading digit"),
        Arguments.of("", "empty"),
        Arguments.of("a".repeat(QueueNames.MAX_LENGTH + 1), "over 48 characters"),
        Arguments.of("emails;drop table pgbus.job", "SQL"),
        Arguments.of("line\nbreak", "a line break"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badQueueNames")
  void refusesABadQueueNameNamingItAndTheRule(String queue, String what) {
    assertThatThrownBy(() -> enqueue(NewJob.of(queue, "{}")))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining(RULE)
        .hasMessageContaining("'" + queue.replace("\n", "\\n") + "'");
  }

  @Test
  void refusesANullQueueNameSayingSo() {
    assertThatThrownBy(() -> enqueue(NewJob.of(null, "{}")))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("must not be null")
        .hasMessageContaining(RULE);
  }

  @Test
  void acceptsAQueueNameOfExactlyTheMaximumLength() throws Exception {
    String longest = "q" + "_".repeat(QueueNames.MAX_LENGTH - 2) + "9";
    long id = enqueue(NewJob.of(longest, "{}"));
    assertThat(db.job(id).queue()).isEqualTo(longest);
    db.update("DELETE FROM pgbus.job"); // keep the after-each check about refusals
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(strings = {"null", " null ", "", "   "})
  void refusesAMissingPayloadSayingWhatToPassInstead(String payload) {
    assertThatThrownBy(() -> enqueue(new NewJob("emails", payload, EnqueueOptions.defaults())))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("'emails'")
        .hasMessageContaining("null")
        .hasMessageContaining("{}");
  }

  @Test
  void refusesAPayloadOverTheLimitNamingItsSizeTheLimitAndTheKey() {
    String payload = "{\"text\":\"" + "x".repeat(PAYLOAD_LIMIT) + "\"}";

    assertThatThrownBy(() -> enqueue(NewJob.of("emails", payload)))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("'emails'")
        .hasMessageContaining(payload.length() + " bytes")
        .hasMessageContaining("limit of " + PAYLOAD_LIMIT)
        .hasMessageContaining("pgbus.max-payload-bytes");
  }

  @Test
  void countsPayloadSizeInUtf8BytesNotCharacters() {
    // About 600 characters but 1,200 bytes: over the limit only when counted in bytes.
    String payload = "{\"t\":\"" + "é".repeat(597) + "\"}";
    assertThat(payload.length()).isLessThan(PAYLOAD_LIMIT);

    assertThatThrownBy(() -> enqueue(NewJob.of("emails", payload)))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining(payload.getBytes(StandardCharsets.UTF_8).length + " bytes");
  }

  @Test
  void aBatchWithOneBadPayloadWritesNothing() {
    var batch = new ArrayList<NewJob>();
    for (int i = 0; i < 10; i++) {
      batch.add(NewJob.of("emails", "{}"));
    }
    batch.add(NewJob.of("emails", "[\"" + "x".repeat(PAYLOAD_LIMIT) + "\"]"));

    assertThatThrownBy(
            () -> {
              try (Connection c = db.connect()) {
                engine.jobs().enqueueAll(c, batch);
              }
            })
        .isInstanceOf(InvalidJobException.class);
  }

  @Test
  void refusesABatchOverTheLimitNamingItsSizeAndTheLimit() {
    var batch = new ArrayList<NewJob>();
    for (int i = 0; i <= JobQueue.MAX_BATCH_SIZE; i++) {
      batch.add(NewJob.of("emails", "{}"));
    }

    assertThatThrownBy(
            () -> {
              try (Connection c = db.connect()) {
                engine.jobs().enqueueAll(c, batch);
              }
            })
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("a batch of 10001 jobs for queue 'emails'")
        .hasMessageContaining("over the limit of 10000 jobs per enqueueAll")
        .hasMessageContaining("split it");
  }

  @Test
  void acceptsABatchOfExactlyTheLimit() throws Exception {
    var batch = new ArrayList<NewJob>();
    for (int i = 0; i < JobQueue.MAX_BATCH_SIZE; i++) {
      batch.add(NewJob.of("emails", "{}"));
    }
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      assertThat(engine.jobs().enqueueAll(c, batch)).hasSize(JobQueue.MAX_BATCH_SIZE);
      c.rollback(); // nothing stays written, as after every test here
    }
  }

  @Test
  void theBatchSqlFunctionRefusesABatchOverTheLimit() {
    assertThatThrownBy(
            () ->
                sql(
                    "SELECT pgbus.enqueue_many(array_fill('ok'::text, ARRAY[10001]),"
                        + " array_fill('{}'::jsonb, ARRAY[10001]),"
                        + " array_fill(NULL::timestamptz, ARRAY[10001]),"
                        + " array_fill(0, ARRAY[10001]), array_fill(1, ARRAY[10001]))"))
        .hasMessageContaining("pgbus: a batch of 10001 jobs is over the limit of 10000 jobs")
        .hasMessageContaining("split it")
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("54000"));
  }

  @Test
  void refusesACapsuleListingMoreQueuesThanTheLimit() {
    var queues = new ArrayList<String>();
    for (int i = 0; i < CapsuleConfig.MAX_QUEUES; i++) {
      queues.add("q" + i);
    }
    assertThat(new CapsuleConfig("wide", queues, 1).queues()).hasSize(CapsuleConfig.MAX_QUEUES);

    queues.add("one_more");
    assertThatThrownBy(() -> new CapsuleConfig("wide", queues, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capsule 'wide' lists 1001 queues (pgbus.capsule.wide.queues)")
        .hasMessageContaining("over the limit of 1000")
        .hasMessageContaining("split them over several capsules");
  }

  @Test
  void aClaimRefusesMoreQueuesThanTheLimitFromJavaAndFromSql() throws SQLException {
    var queues = new ArrayList<String>();
    for (int i = 0; i <= CapsuleConfig.MAX_QUEUES; i++) {
      queues.add("q" + i);
    }
    var store = new JobStore();
    assertThatThrownBy(
            () -> {
              try (Connection c = db.connect()) {
                store.jobClaim(c, queues, 1, "w", Duration.ofMinutes(1));
              }
            })
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("a claim of 1001 queues is over the limit of 1000 queues per claim")
        .hasMessageContaining("split them over several capsules");
    assertThatThrownBy(
            () ->
                sql(
                    "SELECT * FROM pgbus.claim(array_fill('q'::text, ARRAY[1001]), 1, 'w',"
                        + " interval '1 minute')"))
        .hasMessageContaining("pgbus: a claim of 1001 queues is over the limit of 1000 queues")
        .hasMessageContaining("split them over several capsules")
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("54000"));

    queues.remove(queues.size() - 1);
    try (Connection c = db.connect()) {
      assertThat(store.jobClaim(c, queues, 1, "w", Duration.ofMinutes(1))).isEmpty();
    }
  }

  @Test
  void refusesAPayloadThatIsNotJson() {
    assertThatThrownBy(() -> enqueue(NewJob.of("emails", "{not json")))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("invalid input syntax for type json")
        .extracting(e -> ((PgbusException) e).queue())
        .isEqualTo("emails");
  }

  @Test
  void refusesOptionsOutOfRangeNamingTheValueAndTheRange() {
    assertThatThrownBy(() -> EnqueueOptions.defaults().withPriority(101))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("101")
        .hasMessageContaining("-100 to 100");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withMaxAttempts(0))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("0")
        .hasMessageContaining("1 to 1000");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withDelay(Duration.ofSeconds(-1)))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("negative");
  }

  @ParameterizedTest
  @ValueSource(strings = {"Bad Name", "it's", "1st", "", "UPPER"})
  void theSqlFunctionRefusesABadQueueNameWithThePgbusMessage(String queue) {
    assertThatThrownBy(() -> sql("SELECT pgbus.enqueue(?, '{}')", queue))
        .isInstanceOf(SQLException.class)
        .hasMessageContaining("pgbus: invalid queue name '" + queue.replace("'", "''") + "'")
        .hasMessageContaining("lower-case letter")
        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"));
  }

  @Test
  void theSqlFunctionRefusesANullQueueAndANullPayload() {
    assertThatThrownBy(() -> sql("SELECT pgbus.enqueue(NULL, '{}')"))
        .hasMessageContaining("pgbus: invalid queue name NULL");
    assertThatThrownBy(() -> sql("SELECT pgbus.enqueue('emails', NULL)"))
        .hasMessageContaining("pgbus: payload must not be null")
        .hasMessageContaining("'{}'");
    assertThatThrownBy(() -> sql("SELECT pgbus.enqueue('emails', 'null')"))
        .as("a JSON null, as the Java API refuses it")
        .hasMessageContaining("pgbus: payload must not be null");
  }

  @Test
  void theBatchSqlFunctionRefusesABadQueueOrANullPayloadAndWritesNothing() {
    assertThatThrownBy(
            () ->
                sql(
                    "SELECT pgbus.enqueue_many(ARRAY['ok', 'Not OK'], ARRAY['{}', '{}']::jsonb[],"
                        + " ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0], ARRAY[1, 1])"))
        .hasMessageContaining("pgbus: invalid queue name 'Not OK'");
    assertThatThrownBy(
            () ->
                sql(
                    "SELECT pgbus.enqueue_many(ARRAY['ok', 'ok'], ARRAY['{}', NULL]::jsonb[],"
                        + " ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0], ARRAY[1, 1])"))
        .hasMessageContaining("payload 2 of the batch is null");
    assertThatThrownBy(
            () ->
                sql(
                    "SELECT pgbus.enqueue_many(ARRAY['ok'], ARRAY['null']::jsonb[],"
                        + " ARRAY[NULL]::timestamptz[], ARRAY[0], ARRAY[1])"))
        .hasMessageContaining("payload 1 of the batch is null");
  }

  private long enqueue(NewJob job) throws SQLException {
    try (Connection c = db.connect()) {
      return engine.jobs().enqueue(c, job);
    }
  }

  private static void sql(String sql, Object... args) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      ps.execute();
    }
  }
}
