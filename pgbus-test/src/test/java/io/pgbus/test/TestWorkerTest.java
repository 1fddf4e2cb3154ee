package io.pgbus.test;

import static io.pgbus.test.PgbusAssertions.job;
import static io.pgbus.test.PgbusAssertions.requireEnqueued;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.test.Payloads.Order;
import io.pgbus.test.Payloads.OrderHandler;
import io.pgbus.test.Payloads.ReceiptHandler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class TestWorkerTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  @BeforeAll
  static void businessTable() {
    db.update("CREATE TABLE shipped (order_id bigint PRIMARY KEY)");
  }

  @BeforeEach
  void emptyQueues() {
    PgbusTest.reset(db.dataSource());
    db.update("TRUNCATE shipped");
  }

  private final JobQueue jobs = PgbusTest.jobQueue(db.dataSource());

  @Test
  void aResultObjectIsMappedWithJsonbAndStoredWithTheCompletion() {
    TestWorker worker = TestWorker.builder(db.dataSource()).handler(new ReceiptHandler()).build();
    long id = jobs.enqueue("receipts", new Order(7, "ada"));

    RunReport report = worker.drain("receipts");
    assertThat(report.completed()).as(report.toString()).isEqualTo(1);

    assertThat(
            db.queryLong(
                "SELECT (result->>'orderId')::bigint FROM pgbus.job"
                    + " WHERE id = ? AND result->>'status' = 'paid'",
                id))
        .isEqualTo(7);
  }

  @Test
  void drainRunsEveryDueJobThroughTheHandlerItsHandlesNames() {
    var handler = new OrderHandler();
    TestWorker worker = TestWorker.builder(db.dataSource()).handler(handler).build();
    long first = jobs.enqueue("orders", new Order(1, "ada"));
    jobs.enqueue("orders", new Order(2, "grace"));
    jobs.enqueue("orders_too", new Order(3, "linus"));

    RunReport report = worker.drain("orders");

    assertThat(report.count()).isEqualTo(2);
    assertThat(report.completed()).isEqualTo(2);
    assertThat(handler.handled).containsExactly(new Order(1, "ada"), new Order(2, "grace"));
    assertThat(job(db.dataSource(), first).state()).isEqualTo("completed");
    // Only the queue asked for: orders_too waits.
    requireEnqueued(
        db.dataSource(), "orders_too", new Order(3, "linus"), Expect.any().state("available"));
    assertThat(worker.drain("orders").count()).isZero();
  }

  @Test
  void aFailedAttemptIsRetryableWithItsErrorAndItsWritesRolledBack() {
    TestWorker worker =
        shipping(
            order -> {
              throw new IllegalStateException("no stock for order " + order.id());
            });
    long id = jobs.enqueue("orders", new Order(1, "ada"));

    RunReport report = worker.drain("orders");

    assertThat(report.runs())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.jobId()).isEqualTo(id);
              assertThat(r.attempt()).isEqualTo(1);
              assertThat(r.state()).isEqualTo("retryable");
              assertThat(r.error()).contains("no stock for order 1");
            });
    assertThat(db.queryLong("SELECT count(*) FROM shipped")).isZero();
    // The backoff (1s, +-20%) is in the future: the same drain does not run it again.
    assertThat(job(db.dataSource(), id).attempt()).isEqualTo(1);
  }

  @Test
  void handlerWritesThroughTheWorkersDataSourceCommitWithTheJob() {
    TestWorker worker =
        shipping(order -> order.id() == 2 ? Outcome.cancel("order 2 was withdrawn") : null);
    jobs.enqueue("orders", new Order(1, "ada"));
    jobs.enqueue("orders", new Order(2, "grace"));

    RunReport report = worker.drain("orders");

    assertThat(report.runs()).extracting(JobRun::state).containsExactly("completed", "cancelled");
    assertThat(report.runs().get(1).error()).contains("order 2 was withdrawn");
    assertThat(db.queryLongs("SELECT order_id FROM shipped ORDER BY 1")).containsExactly(1L, 2L);
  }

  /**
   * A worker whose handler writes a "shipped" row through the builder's DataSource (jdbc/pgbus to a
   * handler), then ends the attempt as {@code then} says.
   */
  private static TestWorker shipping(Function<Order, Outcome> then) {
    TestWorker.Builder b = TestWorker.builder(db.dataSource());
    TestWorker worker =
        b.handler(
                "orders",
                Order.class,
                (order, job) -> {
                  try (Connection c = b.dataSource().getConnection();
                      PreparedStatement ps = c.prepareStatement("INSERT INTO shipped VALUES (?)")) {
                    ps.setLong(1, order.id());
                    ps.executeUpdate();
                  }
                  return then.apply(order);
                })
            .build();
    assertThat(worker.dataSource()).isSameAs(b.dataSource());
    return worker;
  }

  @Test
  void aRetryRunsOnceTheClockPassesItsBackoffAndTheLastFailureMakesTheJobDead() {
    TestClock clock = TestClock.of(db.dataSource());
    var attempts = new AtomicInteger();
    TestWorker worker =
        TestWorker.builder(db.dataSource())
            .clock(clock)
            .retry(Duration.ofMinutes(1), Duration.ofHours(1), 0)
            .handler(
                "orders",
                Order.class,
                (order, job) -> {
                  attempts.incrementAndGet();
                  return Outcome.retry("attempt " + job.attempt() + " of " + job.maxAttempts());
                })
            .build();
    long id =
        jobs.enqueue("orders", new Order(1, "ada"), EnqueueOptions.defaults().withMaxAttempts(2));

    assertThat(worker.drain("orders").count()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(59));
    assertThat(worker.drain("orders").count()).isZero();
    clock.advance(Duration.ofSeconds(2));
    RunReport second = worker.drain("orders");

    assertThat(second.runs())
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.attempt()).isEqualTo(2);
              assertThat(r.state()).isEqualTo("dead");
              assertThat(r.error()).isEqualTo("attempt 2 of 2");
            });
    assertThat(attempts).hasValue(2);
    assertThat(job(db.dataSource(), id).errors())
        .containsExactly("attempt 2 of 2", "attempt 1 of 2");
  }

  @Test
  void aJobAHandlerEnqueuesRunsInTheSameDrain() {
    TestWorker.Builder b = TestWorker.builder(db.dataSource());
    JobQueue inJob = PgbusTest.jobQueue(b.dataSource());
    TestWorker worker =
        b.handler(
                "orders",
                Order.class,
                (order, job) -> {
                  if (order.id() < 3) {
                    inJob.enqueue("orders", new Order(order.id() + 1, order.customer()));
                  }
                  return Outcome.complete();
                })
            .build();
    jobs.enqueue("orders", new Order(1, "ada"));

    assertThat(worker.drain("orders").completed()).isEqualTo(3);
  }

  @Test
  void aJobAHandlerEnqueuesInheritsTheHandledJobsCorrelationIdAsInProduction() {
    TestWorker.Builder b = TestWorker.builder(db.dataSource());
    JobQueue inJob = PgbusTest.jobQueue(b.dataSource());
    TestWorker worker =
        b.handler(
                "orders",
                Order.class,
                (order, job) -> {
                  inJob.enqueue("receipts", order);
                  inJob.enqueue(
                      "receipts", order, EnqueueOptions.defaults().withCorrelationId("own"));
                  return Outcome.complete();
                })
            .build();
    jobs.enqueue("orders", new Order(1, "ada"), EnqueueOptions.defaults().withCorrelationId("c-1"));
    jobs.enqueue("receipts", new Order(2, "grace")); // outside a handler: none to inherit

    assertThat(worker.drain("orders").completed()).isEqualTo(1);
    assertThat(
            db.queryLong(
                "SELECT count(*) FROM pgbus.job WHERE queue = 'receipts'"
                    + " AND coalesce(correlation_id, '-') || '/' || (payload->>'id')"
                    + " IN ('c-1/1', 'own/1', '-/2')"))
        .isEqualTo(3);
  }

  @Test
  void drainGivesUpOnAHandlerThatKeepsItsQueueBusy() {
    TestWorker worker =
        TestWorker.builder(db.dataSource())
            .handler("orders", Order.class, (order, job) -> Outcome.snooze(Duration.ZERO))
            .build();
    jobs.enqueue("orders", new Order(1, "ada"));

    assertThatThrownBy(() -> worker.drain("orders", 20))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("queue 'orders' still has due jobs after 20 runs");
  }

  @Test
  void aQueueWithoutAHandlerIsRefusedBeforeAnythingIsClaimed() {
    TestWorker worker = TestWorker.builder(db.dataSource()).handler(new OrderHandler()).build();
    long id = jobs.enqueue("emails", new Order(1, "ada"));

    assertThatThrownBy(() -> worker.drain("emails"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no handler for queue 'emails'")
        .hasMessageContaining("orders");
    assertThat(job(db.dataSource(), id).state()).isEqualTo("available");
  }

  @Test
  void aHandlerWithoutHandlesIsRefusedWithTheWayOut() {
    assertThatThrownBy(() -> TestWorker.builder(db.dataSource()).handler(new Payloads.Unbound()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("has no @Handles annotation")
        .hasMessageContaining("handler(\"<queue>\", PayloadType.class, handler)");
  }

  @Test
  void aPayloadThatDoesNotMapFailsTheAttemptAsInProduction() {
    TestWorker worker = TestWorker.builder(db.dataSource()).handler(new OrderHandler()).build();
    jobs.enqueue("orders", RawJson.of("{\"id\": \"not a number\"}"));

    JobRun run = worker.runNext("orders").orElseThrow();

    assertThat(run.state()).isEqualTo("retryable");
    // The job records pgbus's own message with the parser's cause, as the runtime's worker does.
    assertThat(run.error())
        .contains("does not map to io.pgbus.test.Payloads$Order")
        .contains("Unable to deserialize property 'id'");
  }
}
