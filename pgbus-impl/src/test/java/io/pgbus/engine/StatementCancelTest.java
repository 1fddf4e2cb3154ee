package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.ClaimedJobs;
import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

/**
 * A cancel or a timeout of a handler blocked in a SQL statement of its job's connection cancels
 * that statement (issue #23, item 11), and only while the attempt runs: the same connection, back
 * in a pool and serving the next job, never gets a stray cancel.
 */
class StatementCancelTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.empty();

  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Executor THREADS = r -> new Thread(r, "watchdog-test").start();

  private final Watchdog watchdog = new Watchdog(THREADS);

  @Test
  void aCancelEndsTheStatementOfItsAttemptAndNeverTheConnectionsNextOne() throws Exception {
    try (Connection c = db.connect()) {
      Watchdog.Attempt attempt = watchdog.watch(job(1), Duration.ofMinutes(1), c);
      CompletableFuture<Boolean> cancel =
          CompletableFuture.supplyAsync(
              () -> {
                awaitSleeping(c);
                return attempt.cancel();
              });

      long start = System.nanoTime();
      assertThatThrownBy(() -> sleep(c, 10))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(took).as("pg_sleep(10) ended by the cancel").isLessThan(Duration.ofSeconds(2));
      assertThat(attempt.end()).as("ended as cancelled").isTrue(); // and clears the interrupt
      assertThat(cancel.get()).isTrue();

      // The attempt is over: a late cancel (a request heard just now) sends nothing to the
      // connection, which serves the next job.
      assertThat(attempt.cancel()).isFalse();
      Watchdog.Attempt next = watchdog.watch(job(2), Duration.ofMinutes(1), c);
      sleep(c, 1);
      assertThat(next.end()).isFalse();
    }
  }

  @Test
  void aTimeoutEndsTheStatementOfItsAttemptAndTheConnectionStaysUsable() throws Exception {
    try (Connection c = db.connect()) {
      sleep(c, 0); // warm: the timeout must find the connection inside pg_sleep(10)
      Watchdog.Attempt attempt = watchdog.watch(job(3), Duration.ofMillis(500), c);

      long start = System.nanoTime();
      assertThatThrownBy(() -> sleep(c, 10))
          .isInstanceOf(SQLException.class)
          .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("57014"));
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertThat(took).as("timeout 500 ms, pg_sleep(10)").isLessThan(Duration.ofSeconds(3));
      assertThat(attempt.end()).as("ended as timed out").isTrue();
      assertThat(Thread.currentThread().isInterrupted()).as("interrupt cleared").isFalse();

      sleep(c, 1); // no stray cancel left for the next statement
    }
  }

  private static void awaitSleeping(Connection c) {
    int pid;
    try {
      pid = c.unwrap(PGConnection.class).getBackendPID();
    } catch (SQLException e) {
      throw new IllegalStateException(e);
    }
    Await.until(
        "pg_sleep to run",
        WAIT,
        () ->
            db.queryLong(
                    "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND state = 'active'"
                        + " AND query LIKE 'SELECT pg_sleep%'",
                    pid)
                == 1);
  }

  private static void sleep(Connection c, int seconds) throws SQLException {
    try (Statement s = c.createStatement()) {
      s.execute("SELECT pg_sleep(" + seconds + ")");
    }
  }

  private static RunningJob job(long id) {
    return new RunningJob(ClaimedJobs.claimed(id, "q"));
  }
}
