package io.pgbus.engine;

import java.io.PrintStream;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A pgbus worker in a JVM of its own, for {@link CrashRescueTest} to kill with SIGKILL. It runs an
 * engine with maintenance on the given database and queue; its handler writes a row to {@code
 * crash_handled} in the job's transaction, reports the job on stdout and then never returns. It
 * reports on stdout, one line each:
 *
 * <pre>
 * LEADER              once it is the maintenance leader
 * RUNNING id attempt  when its handler holds a job (the row is written, not committed)
 * </pre>
 *
 * <p>Arguments: JDBC URL, queue, worker id, lease in ms, leader TTL in ms.
 */
public final class KillableWorker {

  private KillableWorker() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String queue = args[1];
    String workerId = args[2];
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    Duration leaderTtl = Duration.ofMillis(Long.parseLong(args[4]));
    PrintStream out = System.out;

    var ds = new PGSimpleDataSource();
    ds.setUrl(url);
    EngineConfig config =
        EngineConfig.builder()
            .workerId(workerId)
            .capsule("crash", 1, queue)
            .lease(lease)
            .leaderTtl(leaderTtl)
            .rescueInterval(Duration.ofMillis(200))
            .build();
    Engine engine =
        Engine.builder(config, ds)
            .listenerConnections(() -> DriverManager.getConnection(url))
            .jobs(
                (job, tx) -> {
                  try (PreparedStatement ps =
                      tx.prepareStatement("INSERT INTO crash_handled VALUES (?, ?, ?)")) {
                    ps.setLong(1, job.id());
                    ps.setInt(2, job.attempt());
                    ps.setString(3, workerId);
                    ps.executeUpdate();
                  }
                  out.println("RUNNING " + job.id() + " " + job.attempt());
                  out.flush();
                  hangUntilKilled();
                  return null;
                })
            .build();
    engine.start();
    while (!engine.leader()) {
      Thread.sleep(10);
    }
    out.println("LEADER");
    out.flush();
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
