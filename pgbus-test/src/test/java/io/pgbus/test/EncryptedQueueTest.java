package io.pgbus.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.JobCipher;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.NewJob;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.test.Payloads.Order;
import java.sql.Connection;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The kit on a queue that encrypts: its worker opens payloads, its assertions need the keys. */
class EncryptedQueueTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  private static final String QUEUE = "sealed_orders";

  private static final Map<String, String> SETTINGS =
      Map.of(
          "pgbus.queue." + QUEUE + ".encrypt",
          "true",
          "pgbus.encryption.key-ids",
          "k1",
          "pgbus.encryption.key.k1",
          Base64.getEncoder()
              .encodeToString(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}));

  private static final JobCipher CIPHER = Ciphers.of(SETTINGS);

  private static String text(String sql, long id) throws Exception {
    try (Connection c = db.dataSource().getConnection();
        var ps = c.prepareStatement(sql)) {
      ps.setLong(1, id);
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  @BeforeEach
  void emptyQueues() {
    PgbusTest.reset(db.dataSource());
  }

  private long enqueueSealed(Order order) throws Exception {
    var jobs = new Jobs(EngineConfig.builder().workerId("sealing-test").build(), CIPHER);
    try (Connection c = db.dataSource().getConnection()) {
      return jobs.enqueueIfAbsent(
              c, new NewJob(QUEUE, Json.of(QUEUE, order), EnqueueOptions.defaults(), null, null))
          .id();
    }
  }

  @Test
  void theDecryptingAssertionsFindASealedPayloadThePlainOnesRefuseWithTheWayOut() throws Exception {
    long id = enqueueSealed(new Order(5, "ada"));
    assertThat(text("SELECT payload::text FROM pgbus.job WHERE id = ?", id))
        .contains(JobCipher.FIELD)
        .doesNotContain("ada");

    EnqueuedJob found =
        PgbusAssertions.decrypting(SETTINGS)
            .requireEnqueued(db.dataSource(), QUEUE, new Order(5, "ada"));
    assertThat(found.id()).isEqualTo(id);
    assertThat(found.payload(Order.class)).isEqualTo(new Order(5, "ada"));
    PgbusAssertions.decrypting(SETTINGS)
        .requireNotEnqueued(db.dataSource(), QUEUE, new Order(6, "ada"));
    assertThatThrownBy(
            () ->
                PgbusAssertions.decrypting(SETTINGS)
                    .requireEnqueued(db.dataSource(), QUEUE, new Order(6, "ada")))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("found none");

    assertThatThrownBy(
            () -> PgbusAssertions.requireEnqueued(db.dataSource(), QUEUE, new Order(5, "ada")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("job " + id + " of queue '" + QUEUE + "' has an encrypted payload")
        .hasMessageContaining("PgbusAssertions.decrypting(settings)");
  }

  @Test
  void theWorkerOpensThePayloadForTheHandlerAndSealsTheErrorItRecords() throws Exception {
    var handled = new CopyOnWriteArrayList<Order>();
    TestWorker worker =
        TestWorker.builder(db.dataSource())
            .encryption(SETTINGS)
            .handler(
                QUEUE,
                Order.class,
                (order, job) -> {
                  if (order.customer().equals("fail")) {
                    throw new IllegalStateException("no card for " + order.customer());
                  }
                  handled.add(order);
                  return io.pgbus.Outcome.complete();
                })
            .build();
    enqueueSealed(new Order(1, "ada"));
    long failing = enqueueSealed(new Order(2, "fail"));

    RunReport report = worker.drain(QUEUE);

    assertThat(handled).containsExactly(new Order(1, "ada"));
    assertThat(report.count()).isEqualTo(2);
    JobRun failed = report.runs().get(1);
    assertThat(failed.jobId()).isEqualTo(failing);
    assertThat(failed.error()).contains("IllegalStateException");
    assertThat(text("SELECT errors::text FROM pgbus.job WHERE id = ?", failing))
        .doesNotContain("IllegalStateException");
  }
}
