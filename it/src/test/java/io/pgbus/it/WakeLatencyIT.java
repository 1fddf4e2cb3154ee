package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.JobQueue;
import io.pgbus.engine.ListenerState;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.TestServer;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Records enqueue-commit to handler-start latency at idle inside the server, over 300 jobs enqueued
 * one at a time. It asserts only that every job ran; the numbers go to the log and to
 * target/wake-latency.txt, for docs/performance.md. Timing targets live in the benchmarks.
 */
@ExtendWith(ArquillianExtension.class)
class WakeLatencyIT {

  private static final int JOBS = 300;

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
        "wake-latency",
        "pgbus.capsules=latency",
        "pgbus.capsule.latency.queues=it_latency",
        "pgbus.capsule.latency.concurrency=4");
  }

  @Inject JobQueue jobs;
  @Inject PgbusRuntime runtime;

  @Resource(lookup = "java:comp/UserTransaction")
  UserTransaction tx;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void measuresCommitToHandlerStartAtIdle() throws Exception {
    Await.until(
        "the listener to deliver",
        Duration.ofSeconds(30),
        () -> runtime.engine().status().listener().state() == ListenerState.DELIVERING);
    String run = UUID.randomUUID().toString();
    List<Long> micros = new ArrayList<>();
    for (int i = 0; i < JOBS; i++) {
      String text = run + "-" + i;
      tx.begin();
      jobs.enqueue("it_latency", new Marker(text, false));
      tx.commit();
      long committed = System.nanoTime();
      Await.until(
          "job " + text + " to start",
          Duration.ofSeconds(30),
          () -> RecordingHandler.STARTED.containsKey(text));
      micros.add(Math.max(0, RecordingHandler.STARTED.get(text) - committed) / 1_000);
      Thread.sleep(20); // idle between jobs, as a trickle of traffic would be
    }
    assertEquals(JOBS, micros.size());
    Collections.sort(micros);
    String report =
        String.format(
            Locale.ROOT,
            "%s wake latency over %d jobs (commit -> handler start): p50=%.2f ms p95=%.2f ms"
                + " p99=%.2f ms max=%.2f ms",
            TestServer.current().label(),
            JOBS,
            pct(micros, 50),
            pct(micros, 95),
            pct(micros, 99),
            micros.get(micros.size() - 1) / 1000.0);
    System.out.println("[pgbus-it] " + report);
    write(report);
  }

  private static double pct(List<Long> sorted, int p) {
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return sorted.get(Math.max(0, i)) / 1000.0;
  }

  private static void write(String report) {
    String dir = System.getProperty("pgbus.it.reports", System.getProperty("java.io.tmpdir"));
    try {
      Files.writeString(
          Path.of(dir, "wake-latency-" + TestServer.current().label() + ".txt"), report + "\n");
    } catch (IOException e) {
      System.out.println("[pgbus-it] could not write the latency report: " + e.getMessage());
    }
  }
}
