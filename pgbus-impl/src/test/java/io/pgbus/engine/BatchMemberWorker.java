package io.pgbus.engine;

import io.pgbus.Outcome;
import java.io.PrintStream;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A pgbus worker in a JVM of its own that runs batch members, for {@link BatchTest} to kill with
 * SIGKILL in the middle of a batch. Its handler is {@link #member}: the same as the test's engines.
 * Once it has handled {@code afterN} members, every further handler hangs in its open transaction
 * until the JVM is killed. It reports on stdout:
 *
 * <pre>
 * HOLDING   once its handlers hang (afterN members handled; some jobs held, uncommitted)
 * </pre>
 *
 * <p>Arguments: JDBC URL, member queue, worker id, lease in ms, leader TTL in ms, afterN.
 */
public final class BatchMemberWorker {

  private BatchMemberWorker() {}

  /** A member: {@code {"n":<n>}}; every 1000th from 7 on always fails, the others complete. */
  static Outcome member(String payload) {
    int n = Integer.parseInt(payload.replaceAll("\\D", ""));
    if (n % 1000 == 7) {
      throw new IllegalStateException("member " + n + " always fails");
    }
    return Outcome.completeJson("{\"n\":" + n + "}");
  }

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String queue = args[1];
    String workerId = args[2];
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    Duration leaderTtl = Duration.ofMillis(Long.parseLong(args[4]));
    int afterN = Integer.parseInt(args[5]);
    PrintStream out = System.out;

    var ds = new PGSimpleDataSource();
    ds.setUrl(url);
    EngineConfig config =
        EngineConfig.builder()
            .workerId(workerId)
            .capsule(new CapsuleConfig("members", List.of(queue), 4, 10))
            .lease(lease)
            .leaderTtl(leaderTtl)
            .retry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(1), 0))
            .rescueInterval(Duration.ofMillis(200))
            .build();
    var handled = new AtomicInteger();
    var holding = new AtomicInteger();
    Engine engine =
        Engine.builder(config, ds)
            .listenerConnections(() -> DriverManager.getConnection(url))
            .jobs(
                (job, tx) -> {
                  if (handled.incrementAndGet() > afterN) {
                    if (holding.getAndIncrement() == 0) {
                      out.println("HOLDING");
                      out.flush();
                    }
                    hangUntilKilled();
                  }
                  return member(job.payload());
                })
            .build();
    engine.start();
    hangUntilKilled();
  }

  /** Never returns: neither the job timeout's interrupt nor anything else ends it. */
  private static void hangUntilKilled() {
    var never = new CountDownLatch(1);
    while (true) {
      try {
        never.await();
      } catch (InterruptedException ignored) {
        // the job timeout; this worker waits for its SIGKILL regardless
      }
    }
  }
}
