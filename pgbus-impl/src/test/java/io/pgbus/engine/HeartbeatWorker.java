package io.pgbus.engine;

import java.io.PrintStream;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A pgbus worker in a JVM of its own, for {@link HeartbeatCrashTest} to kill with SIGKILL: an
 * engine without maintenance (another JVM leads) with one slot on the given queue, a long lease and
 * job timeout and a short heartbeat TTL. Its handler reports the job on stdout and never returns:
 *
 * <pre>
 * RUNNING id attempt  when its handler holds a job
 * </pre>
 *
 * <p>Arguments: JDBC URL, queue, worker id, lease in ms, heartbeat TTL in ms.
 */
public final class HeartbeatWorker {

  private HeartbeatWorker() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String queue = args[1];
    String workerId = args[2];
    Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
    Duration ttl = Duration.ofMillis(Long.parseLong(args[4]));
    PrintStream out = System.out;

    var ds = new PGSimpleDataSource();
    ds.setUrl(url);
    EngineConfig config =
        EngineConfig.builder()
            .workerId(workerId)
            .capsule("beat", 1, queue)
            .lease(lease)
            .jobTimeout(lease.multipliedBy(10))
            .set(ExecutionConfig.HEARTBEAT_TTL, ttl)
            .build();
    Engine engine =
        Engine.builder(config, ds)
            .maintenance(false)
            .listenerConnections(() -> DriverManager.getConnection(url))
            .jobs(
                (job, tx) -> {
                  out.println("RUNNING " + job.id() + " " + job.attempt());
                  out.flush();
                  var never = new CountDownLatch(1);
                  while (true) {
                    try {
                      never.await();
                    } catch (InterruptedException ignored) {
                      // waits for its SIGKILL regardless
                    }
                  }
                })
            .build();
    engine.start();
    out.println("STARTED");
    out.flush();
    new CountDownLatch(1).await();
  }
}
