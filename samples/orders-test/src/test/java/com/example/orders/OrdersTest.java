package com.example.orders;

import static io.pgbus.test.PgbusAssertions.requireEnqueued;
import static io.pgbus.test.PgbusAssertions.requireNotEnqueued;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.test.Expect;
import io.pgbus.test.JobRun;
import io.pgbus.test.PgbusTest;
import io.pgbus.test.RunReport;
import io.pgbus.test.TestClock;
import io.pgbus.test.TestWorker;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The orders module, tested the way a team adopting pgbus would: pgbus-test's public API only. */
class OrdersTest {

  @RegisterExtension static final OrdersDatabase db = new OrdersDatabase();

  private DataSource ds;
  private TestClock clock;
  private TestWorker worker;
  private final AtomicInteger declinesLeft = new AtomicInteger();
  private final AtomicInteger charges = new AtomicInteger();

  @BeforeEach
  void setUp() throws Exception {
    ds = db.dataSource();
    PgbusTest.reset(ds);
    try (Connection c = ds.getConnection()) {
      c.createStatement().execute("TRUNCATE orders");
    }
    clock = TestClock.of(ds);
    PaymentGateway payments =
        (orderId, cents) -> {
          charges.incrementAndGet();
          if (declinesLeft.getAndDecrement() > 0) {
            throw new IllegalStateException("card declined for order " + orderId);
          }
        };
    // The handlers as the container would build them: jdbc/pgbus is the builder's DataSource,
    // whose connections join the job's transaction. pgbus.retry.base=30s in production too.
    TestWorker.Builder b = TestWorker.builder(ds).clock(clock);
    worker =
        b.handler(new OrderHandler(b.dataSource(), payments))
            .handler(new ReminderHandler(b.dataSource()))
            .retry(Duration.ofSeconds(30), Duration.ofHours(1), 0.2)
            .build();
  }

  @Test
  void placingAnOrderEnqueuesItsChargeInTheSameTransaction() throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long id = new OrderService(PgbusTest.jobQueue(c)).place(c, "ada", 4200);

      // Inside the transaction: the job is there, with its options.
      requireEnqueued(c, "orders", new OrderPlaced(id), Expect.any().maxAttempts(5));
      requireEnqueued(
          c, "reminders", new PaymentDue(id), Expect.any().delay(OrderService.PAYMENT_WINDOW));
      // Outside it: nothing yet.
      requireNotEnqueued(ds, "orders");

      c.rollback();
      requireNotEnqueued(c, "orders", new OrderPlaced(id));
      requireNotEnqueued(c, "reminders");
    }
  }

  @Test
  void drainingTheQueueChargesTheOrderAndMarksItPaid() throws Exception {
    long id = placeAndCommit("ada", 4200);

    RunReport report = worker.drain("orders");

    assertEquals(1, report.completed(), report.toString());
    assertEquals("paid", status(id));
    assertEquals(1, charges.get());
  }

  @Test
  void aDeclinedPaymentRollsBackAndIsRetriedAfterItsBackoff() throws Exception {
    long id = placeAndCommit("grace", 990);
    declinesLeft.set(1);

    JobRun first = worker.drain("orders").runs().get(0);
    assertEquals("retryable", first.state());
    assertTrue(first.error().contains("card declined for order " + id), first.error());
    assertEquals("placed", status(id));
    assertEquals(0, worker.drain("orders").count(), "not before its backoff");

    clock.advance(Duration.ofMinutes(1)); // past 30s +-20%
    JobRun second = worker.drain("orders").runs().get(0);

    assertEquals(2, second.attempt());
    assertEquals("completed", second.state());
    assertEquals("paid", status(id));
  }

  @Test
  void theReminderRunsADayLaterAndOnlyForAnUnpaidOrder() throws Exception {
    long paid = placeAndCommit("ada", 4200);
    worker.drain("orders");
    long unpaid = placeAndCommit("linus", 100);
    declinesLeft.set(5);
    worker.drain("orders");

    clock.advance(Duration.ofHours(23));
    assertEquals(0, worker.drain("reminders").count(), "not before the day is over");
    clock.advance(Duration.ofHours(2));
    assertEquals(2, worker.drain("reminders").completed());

    assertFalse(reminded(paid));
    assertTrue(reminded(unpaid));
  }

  private long placeAndCommit(String customer, long cents) throws Exception {
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      long id = new OrderService(PgbusTest.jobQueue(c)).place(c, customer, cents);
      c.commit();
      return id;
    }
  }

  private String status(long id) throws Exception {
    return (String) column("SELECT status FROM orders WHERE id = ?", id);
  }

  private boolean reminded(long id) throws Exception {
    return (Boolean) column("SELECT reminded FROM orders WHERE id = ?", id);
  }

  private Object column(String sql, long id) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getObject(1);
      }
    }
  }
}
