package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Limits written by two builds never flip-flop (issue #25, V26): an engine writes its queue limits
 * and the payload limit (and, V27, the wake mode) at start unless a newer build wrote them, and
 * records its build; before, the last engine to start won, so a rolling upgrade flipped them with
 * every restart.
 */
class NewestBuildWinsTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.queue_limit");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private static final String NEWER = "99.0.0";
  private static final String OLDER = "0.0.1";

  @Test
  void anEngineWritesItsLimitsAndRecordsItsBuild() throws Exception {
    start(5, 2048);

    assertThat(db.queryLong("SELECT global_concurrency FROM pgbus.queue_limit WHERE queue = 'q'"))
        .isEqualTo(5);
    assertThat(text("SELECT build FROM pgbus.queue_limit WHERE queue = 'q'"))
        .isEqualTo(BuildVersion.current().toString());
    assertThat(db.queryLong("SELECT max_payload_bytes FROM pgbus.setting")).isEqualTo(2048);
    assertThat(text("SELECT wake_mode FROM pgbus.setting")).isEqualTo("in_transaction");
    assertThat(text("SELECT build FROM pgbus.setting")).isEqualTo(BuildVersion.current() + "");
  }

  @Test
  void limitsANewerBuildWroteAreKept() throws Exception {
    writtenBy(NEWER);

    start(5, 2048);

    assertThat(db.queryLong("SELECT global_concurrency FROM pgbus.queue_limit WHERE queue = 'q'"))
        .as("the newer build's limit")
        .isEqualTo(2);
    assertThat(text("SELECT build FROM pgbus.queue_limit WHERE queue = 'q'")).isEqualTo(NEWER);
    assertThat(db.queryLong("SELECT max_payload_bytes FROM pgbus.setting")).isEqualTo(4096);
    assertThat(text("SELECT wake_mode FROM pgbus.setting")).isEqualTo("coalesced");
    assertThat(text("SELECT build FROM pgbus.setting")).isEqualTo(NEWER);
  }

  @Test
  void limitsAnOlderBuildWroteAreReplaced() throws Exception {
    writtenBy(OLDER);

    start(5, 2048);

    assertThat(db.queryLong("SELECT global_concurrency FROM pgbus.queue_limit WHERE queue = 'q'"))
        .isEqualTo(5);
    assertThat(text("SELECT build FROM pgbus.queue_limit WHERE queue = 'q'"))
        .isEqualTo(BuildVersion.current().toString());
    assertThat(db.queryLong("SELECT max_payload_bytes FROM pgbus.setting")).isEqualTo(2048);
    assertThat(text("SELECT wake_mode FROM pgbus.setting")).isEqualTo("in_transaction");
  }

  // A queue limit of 2, a payload limit of 4096 and the coalesced wake mode, as build wrote them.
  private static void writtenBy(String build) {
    db.queryLong("SELECT 1 FROM pgbus.queue_limit_set('q', global_concurrency => 2)");
    db.update("UPDATE pgbus.queue_limit SET build = ? WHERE queue = 'q'", build);
    db.update(
        "UPDATE pgbus.setting SET max_payload_bytes = 4096, wake_mode = 'coalesced', build = ?",
        build);
  }

  private void start(int global, int payloadBytes) {
    Engine e =
        engines.start(
            engines
                .config()
                .capsule("main", 1, "q")
                .queueLimit(new QueueLimit("q", global, null))
                .maxPayloadBytes(payloadBytes)
                .wakeMode(WakeMode.IN_TRANSACTION)
                .build(),
            (job, tx) -> Outcome.complete());
    e.stop();
  }

  private static String text(String sql) throws Exception {
    try (Connection c = db.helperConnection();
        PreparedStatement ps = c.prepareStatement(sql);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return rs.getString(1);
    }
  }
}
