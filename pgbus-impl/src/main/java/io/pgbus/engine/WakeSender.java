package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.postgresql.PGConnection;

/**
 * Sends the wakes of this JVM's committed enqueues to the other JVMs (WakeMode COALESCED): one
 * short auto-commit statement at most about once per {@link #GAP}, for every queue handed in since
 * the last, each with its earliest due time. Its transaction writes nothing, so it holds
 * PostgreSQL's notification lock without a WAL flush, at most a thousand times a second, instead of
 * every enqueuing business commit holding it through its flush.
 *
 * <p>The payload is the one pgbus 0.1.0 reads: empty for "now", the due time in epoch milliseconds
 * for later; {@code pgbus.notify} sends nothing for a paused queue. This JVM's own listener hears
 * the NOTIFY too; it drops that echo ({@link SentWakes}: the capsules were woken in-process
 * already) by the backend the sender used, which the sender records before each send.
 *
 * <p>A failed send is counted and logged at most once a minute, and the queues of its batch are
 * dropped: their jobs are committed, and the other JVMs find them at their next poll, within {@code
 * pgbus.poll-ceiling}.
 */
final class WakeSender extends Loop {

  private static final System.Logger LOG = System.getLogger(WakeSender.class.getName());

  /** The shortest time between two sends: the coalescing window. */
  static final Duration GAP = Duration.ofMillis(1);

  /** How long the sender waits after a failed send; queues handed in meanwhile are merged. */
  static final Duration FAILURE_PAUSE = Duration.ofSeconds(1);

  // Qualified names only: the pooled connection keeps the application's search_path. A null due
  // time is "now", which pgbus.notify sends as an empty payload.
  private static final String SEND =
      """
      SELECT pgbus.notify(t.q::pgbus.queue_name, coalesce(t.d::timestamptz, pg_catalog.now()))
        FROM ROWS FROM (pg_catalog.unnest(?::text[]), pg_catalog.unnest(?::text[])) AS t(q, d)
      """;

  private final DataSource dataSource;
  private final ThrottledWarning warning = new ThrottledWarning(LOG, Duration.ofMinutes(1));
  private final Object lock = new Object();
  private Map<String, Instant> pending = new HashMap<>(); // guarded by lock; null value: now
  private final AtomicLong handed = new AtomicLong();
  private final AtomicLong coalesced = new AtomicLong();
  private final AtomicLong statements = new AtomicLong();
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();

  private final SentWakes echoes;

  WakeSender(DataSource dataSource, SentWakes echoes) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.echoes = Objects.requireNonNull(echoes, "echoes");
  }

  /** Hands in a committed wake; returns at once. A queue already waiting is merged into it. */
  void send(Wake wake) {
    synchronized (lock) {
      for (String q : wake.now()) {
        handed.incrementAndGet();
        if (pending.containsKey(q)) {
          coalesced.incrementAndGet();
        }
        pending.put(q, null);
      }
      wake.later()
          .forEach(
              (q, due) -> {
                handed.incrementAndGet();
                if (pending.containsKey(q)) {
                  coalesced.incrementAndGet();
                  Instant was = pending.get(q);
                  if (was != null && due.isBefore(was)) {
                    pending.put(q, due);
                  }
                } else {
                  pending.put(q, due);
                }
              });
    }
    signal().signal();
  }

  @Override
  protected void loop() throws InterruptedException {
    while (!stopping() && !moving()) {
      signal().await(TimeUnit.SECONDS.toNanos(1));
      long started = System.nanoTime();
      if (!sendPending()) {
        signal().sleep(FAILURE_PAUSE.toMillis());
        continue;
      }
      long left = GAP.toNanos() - (System.nanoTime() - started);
      if (left > 0) {
        LockSupport.parkNanos(left); // sub-millisecond: a stop waits this out, at most GAP
      }
    }
    if (!moving()) {
      sendPending(); // the last commits before the stop
    }
  }

  /** Sends what is waiting, if anything; false when the send failed (counted and logged). */
  private boolean sendPending() {
    Map<String, Instant> batch;
    synchronized (lock) {
      if (pending.isEmpty()) {
        return true;
      }
      batch = pending;
      pending = new HashMap<>();
    }
    try {
      sendNow(batch);
      sent.addAndGet(batch.size());
      return true;
    } catch (SQLException | RuntimeException e) {
      moveAfter(e); // go on on a fresh thread (Loop.run)
      failed.addAndGet(batch.size());
      warning.warn(
          "pgbus could not send the wakes of "
              + batch.size()
              + " queue(s) after their commit ("
              + e.getMessage()
              + "); other JVMs find those jobs at their next poll (pgbus.poll-ceiling)");
      return false;
    }
  }

  private void sendNow(Map<String, Instant> batch) throws SQLException {
    String[] queues = new String[batch.size()];
    String[] due = new String[batch.size()];
    int i = 0;
    for (var e : batch.entrySet()) {
      queues[i] = e.getKey();
      // ISO-8601 instants: pgjdbc writes array elements of Timestamp without their offset.
      due[i++] = e.getValue() == null ? null : e.getValue().toString();
    }
    try (Connection c = dataSource.getConnection()) {
      if (c.isWrapperFor(PGConnection.class)) {
        // The backend that will send: known to pgjdbc since the connection started.
        echoes.sending(c.unwrap(PGConnection.class).getBackendPID(), batch.keySet());
      }
      try (PreparedStatement ps = c.prepareStatement(SEND)) {
        ps.setArray(1, c.createArrayOf("text", queues));
        ps.setArray(2, c.createArrayOf("text", due));
        ps.execute();
      }
    }
    statements.incrementAndGet();
  }

  /** NOTIFY statements sent so far. */
  long statements() {
    return statements.get();
  }

  /** What the sender did so far, for {@link EngineStatus}. */
  EngineStatus.Wakes status(WakeMode mode, long local) {
    return new EngineStatus.Wakes(
        mode,
        local,
        handed.get(),
        coalesced.get(),
        statements.get(),
        sent.get(),
        failed.get(),
        echoes.echoes());
  }
}
