package io.pgbus.bench;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * The baseline: the queue one writes directly on pgjdbc. A minimal job table, INSERT plus pg_notify
 * in the producer's transaction, one dedicated LISTEN connection, and worker threads that claim up
 * to k jobs with {@code UPDATE ... WHERE id IN (SELECT ... FOR UPDATE SKIP LOCKED LIMIT k)
 * RETURNING}, run them, and delete them. No retries, leases, priorities or fencing: this is the
 * floor of what a PostgreSQL queue costs, not a competitor.
 */
final class RawSystem implements QueueSystem {

  private static final String SCHEMA =
      """
      CREATE TABLE raw_job (
        id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        queue      text NOT NULL,
        payload    jsonb NOT NULL,
        state      smallint NOT NULL DEFAULT 0,   -- 0 waiting, 1 running
        locked_at  timestamptz,
        created_at timestamptz NOT NULL DEFAULT now());
      CREATE INDEX raw_job_waiting ON raw_job (queue, id) WHERE state = 0;
      """;

  private static final String ENQUEUE_ONE =
      """
      WITH j AS (INSERT INTO raw_job (queue, payload) VALUES (?, ?::jsonb) RETURNING id)
      SELECT j.id, pg_notify(?, '') FROM j
      """;

  // One statement for the whole batch and one notification, as pgbus.enqueue_many does.
  private static final String ENQUEUE_MANY =
      """
      WITH j AS (
        INSERT INTO raw_job (queue, payload)
        SELECT ?, t.p FROM unnest(?::jsonb[]) WITH ORDINALITY AS t(p, o) ORDER BY t.o
        RETURNING id),
      n AS (SELECT pg_notify(?, ''))
      SELECT j.id FROM j, n ORDER BY j.id
      """;

  private static final String CLAIM =
      """
      UPDATE raw_job SET state = 1, locked_at = now()
       WHERE id IN (SELECT id FROM raw_job
                     WHERE queue = ? AND state = 0
                     ORDER BY id
                     LIMIT ?
                     FOR UPDATE SKIP LOCKED)
      RETURNING id, payload::text
      """;

  private static final String DELETE = "DELETE FROM raw_job WHERE id = ANY(?)";

  private final int batch;

  /**
   * @param batch k, the LIMIT of each claim
   */
  RawSystem(int batch) {
    this.batch = batch;
  }

  @Override
  public String name() {
    return "raw";
  }

  @Override
  public void install(DataSource dataSource) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      st.execute(SCHEMA);
    }
  }

  static String channel(String queue) {
    return "raw_" + queue;
  }

  @Override
  public long[] enqueueBatch(Connection c, String queue, int count) throws SQLException {
    String[] payloads = new String[count];
    for (int i = 0; i < count; i++) {
      payloads[i] = "{\"n\": " + i + "}";
    }
    try (PreparedStatement ps = c.prepareStatement(ENQUEUE_MANY)) {
      ps.setString(1, queue);
      ps.setArray(2, c.createArrayOf("text", payloads));
      ps.setString(3, channel(queue));
      long[] ids = new long[count];
      int i = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          ids[i++] = rs.getLong(1);
        }
      }
      return ids;
    }
  }

  @Override
  public long enqueueOne(Connection c, String queue) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ENQUEUE_ONE)) {
      ps.setString(1, queue);
      ps.setString(2, "{\"n\": 0}");
      ps.setString(3, channel(queue));
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  @Override
  public Consumers start(
      BenchDatabase db, DataSource pool, List<String> queues, int slots, JobTracker tracker) {
    var running = new Running(db, pool, queues.get(0), slots, batch, tracker);
    running.start();
    return running;
  }

  /** The listener thread and the worker threads. */
  private static final class Running implements Consumers {
    private final BenchDatabase db;
    private final DataSource pool;
    private final String queue;
    private final int batch;
    private final JobTracker tracker;
    private final List<Thread> threads = new ArrayList<>();
    private final CountDownLatch listening = new CountDownLatch(1);
    private final Object signal = new Object();
    private final AtomicLong claims = new AtomicLong();
    private final AtomicLong emptyClaims = new AtomicLong();
    private final AtomicLong claimed = new AtomicLong();
    private final AtomicLong notifications = new AtomicLong();
    private long generation; // guarded by signal: bumped by every batch of notifications
    private volatile boolean stopping;

    Running(
        BenchDatabase db,
        DataSource pool,
        String queue,
        int workers,
        int batch,
        JobTracker tracker) {
      this.db = db;
      this.pool = pool;
      this.queue = queue;
      this.batch = batch;
      this.tracker = tracker;
      threads.add(new Thread(this::listen, "raw-listener"));
      for (int i = 0; i < workers; i++) {
        threads.add(new Thread(this::work, "raw-worker-" + (i + 1)));
      }
    }

    void start() {
      threads.forEach(
          t -> {
            t.setDaemon(true);
            t.start();
          });
    }

    private void listen() {
      try (Connection c = db.connect("raw-listener")) {
        try (Statement st = c.createStatement()) {
          // The channel is built from a bench queue name ([a-z0-9_]); LISTEN takes no parameters.
          st.execute("LISTEN " + channel(queue));
        }
        listening.countDown();
        PGConnection pg = c.unwrap(PGConnection.class);
        while (!stopping) {
          PGNotification[] batch = pg.getNotifications(250);
          if (batch != null && batch.length > 0) {
            tracker.woke();
            notifications.addAndGet(batch.length);
            synchronized (signal) {
              generation++;
              signal.notifyAll();
            }
          }
        }
      } catch (SQLException e) {
        if (!stopping) {
          System.err.println("[bench] raw listener failed: " + e.getMessage());
        }
      }
    }

    private void work() {
      try {
        while (!stopping) {
          long seen;
          synchronized (signal) {
            seen = generation;
          }
          List<Long> ids = claim();
          if (ids.isEmpty()) {
            // Nothing to do: sleep until a notification arrives after this claim began. The
            // timed wait only rechecks `stopping`; it issues no statement.
            synchronized (signal) {
              while (!stopping && generation == seen) {
                signal.wait(1000);
              }
            }
            continue;
          }
          for (long id : ids) {
            tracker.started(id); // the no-op handler
          }
          delete(ids);
          ids.forEach(tracker::finished);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (SQLException e) {
        if (!stopping) {
          System.err.println("[bench] raw worker failed: " + e.getMessage());
        }
      }
    }

    private List<Long> claim() throws SQLException {
      var ids = new ArrayList<Long>(batch);
      try (Connection c = pool.getConnection();
          PreparedStatement ps = c.prepareStatement(CLAIM)) {
        ps.setString(1, queue);
        ps.setInt(2, batch);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            ids.add(rs.getLong(1));
            rs.getString(2); // read the payload, as a handler would
          }
        }
      }
      claims.incrementAndGet();
      claimed.addAndGet(ids.size());
      if (ids.isEmpty()) {
        emptyClaims.incrementAndGet();
      }
      return ids;
    }

    private void delete(List<Long> ids) throws SQLException {
      try (Connection c = pool.getConnection();
          PreparedStatement ps = c.prepareStatement(DELETE)) {
        Array a = c.createArrayOf("int8", ids.toArray());
        ps.setArray(1, a);
        ps.executeUpdate();
      }
    }

    @Override
    public void awaitReady(Duration timeout) throws InterruptedException {
      if (!listening.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        throw new IllegalStateException("raw listener not listening after " + timeout);
      }
    }

    @Override
    public Map<String, Long> counters() {
      var out = new LinkedHashMap<String, Long>();
      out.put("claims", claims.get());
      out.put("empty claims", emptyClaims.get());
      out.put("claimed", claimed.get());
      out.put("notifications", notifications.get());
      return out;
    }

    @Override
    public void close() {
      stopping = true;
      synchronized (signal) {
        signal.notifyAll();
      }
      for (Thread t : threads) {
        try {
          t.join(5_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }
}
