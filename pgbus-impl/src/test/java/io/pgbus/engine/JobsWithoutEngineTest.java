package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.AuditEntry;
import io.pgbus.InvalidJobException;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The job operations need no engine: no threads, no listener, no datasource of their own, only the
 * caller's connection and the settings that shape an enqueue.
 */
class JobsWithoutEngineTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  @Test
  void enqueuePauseCancelAndHistoryWorkOnTheCallersConnectionAlone() throws SQLException {
    Jobs jobs = new Jobs(EngineConfig.builder().workerId("producer").maxPayloadBytes(64).build());
    try (Connection c = db.connect()) {
      long id = jobs.enqueue(c, NewJob.of("standalone", "{\"n\": 1}"));
      assertThat(db.job(id).state()).isEqualTo("available");

      assertThat(jobs.pause(c, "standalone")).isTrue();
      assertThat(jobs.isPaused(c, "standalone")).isTrue();
      assertThat(jobs.pausedQueues(c)).contains("standalone");
      assertThat(jobs.resume(c, "standalone")).isTrue();

      assertThat(jobs.cancel(c, id)).isTrue();
      assertThat(db.job(id).state()).isEqualTo("cancelled");
      assertThat(jobs.history(c, id)).extracting(AuditEntry::action).contains("cancel");

      assertThatThrownBy(
              () -> jobs.enqueue(c, NewJob.of("standalone", "\"" + "x".repeat(80) + "\"")))
          .isInstanceOf(InvalidJobException.class)
          .hasMessageContaining("over the limit of 64 bytes");
    }
  }
}
