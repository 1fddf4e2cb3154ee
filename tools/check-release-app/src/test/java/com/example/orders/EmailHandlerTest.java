package com.example.orders;

import static io.pgbus.test.PgbusAssertions.requireEnqueued;

import io.pgbus.test.PgbusTest;
import io.pgbus.test.TestWorker;
import java.sql.Connection;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * README step 6: tools/check-release compiles it against pgbus-test from the staged bundle (it
 * builds with -DskipTests, so it needs no database).
 */
class EmailHandlerTest {
  @Test
  void aSignupEmailIsEnqueuedAndRuns() throws Exception {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl("jdbc:postgresql://127.0.0.1:5432/postgres");
    ds.setUser("postgres");
    PgbusTest.migrate(ds);
    PgbusTest.reset(ds);
    TestWorker worker = TestWorker.builder(ds).handler(new EmailHandler()).build();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      PgbusTest.jobQueue(c).enqueue("emails", new Email("ada@example.com"));
      requireEnqueued(c, "emails", new Email("ada@example.com"));
      c.commit();
    }
    worker.drain("emails");
  }
}
