package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.testing.ClaimedJobs;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The context a handler is passed reads its batch and dependencies on the connection the runner
 * lent it, and only on the handler's thread while the handler runs: no thread-local decides, the
 * context itself does.
 */
class RunningJobTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private final RunningJob job = new RunningJob(ClaimedJobs.claimed(7, "q"));

  @Test
  void readsRunInTheLentTransactionOnTheHandlersThreadOnly() throws Exception {
    try (Connection c = db.connect()) {
      job.open(c);
      assertThat(job.batch()).as("no batch has job 7 as its callback").isEmpty();
      assertThat(job.dependencyResults()).isEmpty();
      assertThat(job.batchResults(0, 10)).isEmpty();

      assertThatThrownBy(() -> CompletableFuture.supplyAsync(job::batch).join())
          .isInstanceOf(CompletionException.class)
          .cause()
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("pgbus job 7")
          .hasMessageContaining("handler's own thread");

      job.close();
      assertThatThrownBy(job::dependencyResults)
          .as("after the handler returned")
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("while it runs");
    }
  }

  @Test
  void aHandlerInItsOwnTransactionsIsToldWhyItCannotRead() {
    job.open(null);
    assertThatThrownBy(job::batch)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("JobTransaction.HANDLER");
  }

  @Test
  void aReadBeforeTheHandlerRunsIsRefused() {
    assertThatThrownBy(job::batch)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("handler's own thread");
  }

  @Test
  void theCancellationIsThisAttemptsOwn() {
    var other = new RunningJob(job.claimed());
    job.requestCancellation();
    assertThat(job.cancellationRequested()).isTrue();
    assertThat(other.cancellationRequested()).as("another claim of the same attempt").isFalse();
  }
}
