package io.pgbus.test;

import static io.pgbus.test.PgbusAssertions.enqueued;
import static io.pgbus.test.PgbusAssertions.requireEnqueued;
import static io.pgbus.test.PgbusAssertions.requireNotEnqueued;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.test.Payloads.Order;
import java.sql.Connection;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class PgbusAssertionsTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  @BeforeEach
  void emptyQueues() {
    PgbusTest.reset(db.dataSource());
  }

  @Test
  void requireEnqueuedSeesAJobInsideItsTransactionAndNothingAfterTheRollback() throws Exception {
    try (Connection c = db.connect()) {
      c.setAutoCommit(false);
      long id = PgbusTest.jobQueue(c).enqueue("orders", new Order(1, "ada"));

      EnqueuedJob job = requireEnqueued(c, "orders", new Order(1, "ada"));
      assertThat(job.id()).isEqualTo(id);
      assertThat(job.state()).isEqualTo("available");
      assertThat(job.payload(Order.class)).isEqualTo(new Order(1, "ada"));
      // Not committed: another connection sees nothing yet.
      requireNotEnqueued(db.dataSource(), "orders");

      c.rollback();
      requireNotEnqueued(c, "orders", new Order(1, "ada"));
    }
  }

  @Test
  void requireEnqueuedFailsNamingTheJobsTheQueueHas() {
    JobQueue jobs = PgbusTest.jobQueue(db.dataSource());
    jobs.enqueue("orders", new Order(1, "ada"));
    jobs.enqueue("orders", new Order(2, "grace"));

    assertThatThrownBy(() -> requireEnqueued(db.dataSource(), "orders", new Order(3, "linus")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected a job in queue 'orders' with payload")
        .hasMessageContaining("\"linus\"")
        .hasMessageContaining("the queue has 2 job(s)")
        .hasMessageContaining("\"ada\"")
        .hasMessageContaining("\"grace\"");
  }

  @Test
  void requireEnqueuedChecksTheOptionsAndNamesWhatDiffers() {
    long id =
        PgbusTest.jobQueue(db.dataSource())
            .enqueue(
                "orders",
                new Order(1, "ada"),
                EnqueueOptions.defaults()
                    .withPriority(-5)
                    .withMaxAttempts(3)
                    .withDelay(Duration.ofHours(1))
                    .withUniqueKey("order-1"));

    EnqueuedJob job =
        requireEnqueued(
            db.dataSource(),
            "orders",
            new Order(1, "ada"),
            Expect.any()
                .state("scheduled")
                .priority(-5)
                .maxAttempts(3)
                .delay(Duration.ofHours(1))
                .uniqueKey("order-1"));
    assertThat(job.id()).isEqualTo(id);

    assertThatThrownBy(
            () ->
                requireEnqueued(
                    db.dataSource(), "orders", new Order(1, "ada"), Expect.any().priority(0)))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("priority -5 (expected 0)");
  }

  @Test
  void payloadsCompareAsJsonWhateverTheKeyOrder() {
    PgbusTest.jobQueue(db.dataSource()).enqueue("orders", new Order(7, "ada"));

    requireEnqueued(db.dataSource(), "orders", RawJson.of("{\"customer\":\"ada\", \"id\": 7}"));
    requireNotEnqueued(db.dataSource(), "orders", RawJson.of("{\"customer\":\"ada\",\"id\":8}"));
  }

  @Test
  void requireEnqueuedRefusesTwoMatchingJobs() {
    JobQueue jobs = PgbusTest.jobQueue(db.dataSource());
    jobs.enqueue("orders", new Order(1, "ada"));
    jobs.enqueue("orders", new Order(1, "ada"));

    assertThatThrownBy(() -> requireEnqueued(db.dataSource(), "orders", new Order(1, "ada")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("found 2");
    assertThat(enqueued(db.dataSource(), "orders")).hasSize(2);
  }

  @Test
  void requireNotEnqueuedFailsNamingTheJobThatIsThere() {
    long id = PgbusTest.jobQueue(db.dataSource()).enqueue("orders", new Order(1, "ada"));

    assertThatThrownBy(() -> requireNotEnqueued(db.dataSource(), "orders"))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("expected no job in queue 'orders'")
        .hasMessageContaining("job " + id);
  }

  @Test
  void aBadQueueNameIsRefusedWithTheRule() {
    assertThatThrownBy(() -> requireNotEnqueued(db.dataSource(), "Orders!"))
        .hasMessageContaining("Orders!");
  }
}
