package io.pgbus.engine;

import java.io.PrintStream;
import java.sql.Connection;
import java.util.concurrent.CountDownLatch;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A JVM that enqueues one job with the Java SE engine ({@code pgbus.wake-mode=coalesced}), commits,
 * and then hangs before any wake, for {@link CommitThenKillTest} to SIGKILL between the commit and
 * the wake. The enqueue runs in the engine's own transaction scope ({@link LocalAfterCommit}, as
 * {@link JdbcTransactions} opens it), whose commit is never reported: neither this JVM's capsules
 * nor the sender hear of the job. It prints {@code COMMITTED id} once committed.
 *
 * <p>Arguments: JDBC URL, queue.
 */
public final class CommitThenHangWorker {

  private CommitThenHangWorker() {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String queue = args[1];
    PrintStream out = System.out;
    var ds = new PGSimpleDataSource();
    ds.setUrl(url);
    Engine engine =
        Engine.builder(EngineConfig.builder().workerId("doomed").build(), ds)
            .maintenance(false)
            .build();
    engine.start();
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      engine.localAfterCommit().begin(c);
      long id = engine.jobs().enqueue(c, NewJob.of(queue, "{}"));
      c.commit();
      out.println("COMMITTED " + id);
      out.flush();
      new CountDownLatch(1).await(); // until the SIGKILL
    }
  }
}
