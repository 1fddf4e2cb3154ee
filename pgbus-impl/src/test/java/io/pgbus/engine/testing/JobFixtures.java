package io.pgbus.engine.testing;

import io.pgbus.EnqueueOptions;
import io.pgbus.engine.JobStore;
import io.pgbus.engine.NewJob;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/** Builds jobs for tests through the engine's own insert path ({@link JobStore}). */
public final class JobFixtures {

  private static final int BATCH = 1000;

  private final DataSource dataSource;
  private final JobStore store = new JobStore();

  public JobFixtures(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  public static JobFixtures in(TestDatabase db) {
    return new JobFixtures(db.dataSource());
  }

  /** A job for {@code queue} with payload {@code {"n": n}}. */
  public static NewJob job(String queue, int n, EnqueueOptions options) {
    return new NewJob(queue, "{\"n\":" + n + "}", options);
  }

  /** Enqueues one job that may run now; returns its id. */
  public long enqueue(String queue) {
    return enqueue(queue, EnqueueOptions.defaults());
  }

  /** Enqueues one job; returns its id. */
  public long enqueue(String queue, EnqueueOptions options) {
    try (Connection c = dataSource.getConnection()) {
      return store.jobInsert(c, job(queue, 0, options));
    } catch (SQLException e) {
      throw new IllegalStateException("could not enqueue into " + queue, e);
    }
  }

  /** Enqueues {@code n} jobs that may run now, payloads {"n": 0..n-1}; ids in order. */
  public List<Long> enqueue(String queue, int n) {
    return enqueue(queue, n, EnqueueOptions.defaults());
  }

  /** Enqueues {@code n} jobs with the same options, in batches, committed; ids in order. */
  public List<Long> enqueue(String queue, int n, EnqueueOptions options) {
    var ids = new ArrayList<Long>(n);
    try (Connection c = dataSource.getConnection()) {
      for (int from = 0; from < n; from += BATCH) {
        var batch = new ArrayList<NewJob>();
        for (int i = from; i < Math.min(n, from + BATCH); i++) {
          batch.add(job(queue, i, options));
        }
        ids.addAll(store.jobInsertMany(c, batch));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("could not enqueue " + n + " jobs into " + queue, e);
    }
    return ids;
  }
}
