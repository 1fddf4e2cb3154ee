package io.pgbus.engine;

import io.pgbus.BatchSummary;
import io.pgbus.JobContext;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;

/**
 * One attempt of a claimed job while its handler runs: the {@link JobContext} the {@link
 * JobFunction} is handed. It is passed, never looked up: the attempt's own cancellation flag (set
 * by the {@link Watchdog} before it interrupts), its progress reports ({@link JobProgress}) and,
 * for the batch and dependency reads, the connection of the handler's transaction, which the {@link
 * JobRunner} lends it for the handler call only.
 *
 * <p>Those reads run on that connection, so only on the handler's thread and only while the handler
 * runs: a JDBC connection is not for two threads at once, and after the call it is settling the job
 * or back in its pool. A job that never asks costs nothing.
 */
public final class RunningJob implements JobContext {

  private static final LinkStore LINKS = new LinkStore();
  private final JobCipher cipher;

  private final ClaimedJob job;
  private final JobProgress progress = new JobProgress();
  private volatile boolean cancellationRequested;

  // Set by open, cleared by close, on the handler's thread (JobRunner.handle): the reads check
  // both, so they are only ever read by the thread that wrote them.
  private Connection transaction;
  private Thread handlerThread;
  private boolean ownTransactions;

  RunningJob(ClaimedJob job) {
    this(job, JobCipher.NONE);
  }

  /**
   * @param cipher opens the results of encrypting queues' jobs this handler reads
   */
  RunningJob(ClaimedJob job, JobCipher cipher) {
    this.job = Objects.requireNonNull(job, "job");
    this.cipher = Objects.requireNonNull(cipher, "cipher");
  }

  /** The job as it was claimed. */
  public ClaimedJob claimed() {
    return job;
  }

  @Override
  public long id() {
    return job.id();
  }

  @Override
  public String queue() {
    return job.queue();
  }

  @Override
  public int attempt() {
    return job.attempt();
  }

  @Override
  public int maxAttempts() {
    return job.maxAttempts();
  }

  @Override
  public Instant createdAt() {
    return job.createdAt();
  }

  @Override
  public OptionalLong workflowId() {
    return job.workflowId() == null ? OptionalLong.empty() : OptionalLong.of(job.workflowId());
  }

  /** The job's JSON payload, as enqueued. */
  public String payload() {
    return job.payload();
  }

  @Override
  public boolean cancellationRequested() {
    return cancellationRequested;
  }

  /** An operator's cancel of this attempt was confirmed: the handler may ask from now on. */
  void requestCancellation() {
    cancellationRequested = true;
  }

  @Override
  public void progress(int percent, String message) {
    JobContext.super.progress(percent, message); // the bounds, with their error text
    progress.report(percent, message);
  }

  /** This attempt's progress reports, coalesced. */
  JobProgress reports() {
    return progress;
  }

  /**
   * The handler is about to run on this thread in {@code c}, the job's transaction (null: a handler
   * in its own transactions, {@code JobTransaction.HANDLER}).
   */
  void open(Connection c) {
    transaction = c;
    ownTransactions = c == null;
    handlerThread = Thread.currentThread();
  }

  /** The handler returned: the connection is the runner's again. */
  void close() {
    transaction = null;
    handlerThread = null;
  }

  @Override
  public Optional<BatchSummary> batch() {
    return read(c -> LINKS.batchOfCallback(c, job.id()));
  }

  @Override
  public SortedMap<Long, String> batchResults(long afterJobId, int limit) {
    JobContext.super.batchResults(afterJobId, limit); // the bounds, with their error text
    SortedMap<Long, String> results = read(c -> LINKS.batchResults(c, job.id(), afterJobId, limit));
    results.replaceAll(cipher::openResult);
    return results;
  }

  @Override
  public Map<Long, String> dependencyResults() {
    Map<Long, String> results = read(c -> LINKS.dependencyResults(c, job.id()));
    results.replaceAll(cipher::openResult);
    return results;
  }

  private interface Read<T> {
    T run(Connection c) throws SQLException;
  }

  private <T> T read(Read<T> read) {
    if (handlerThread != Thread.currentThread()) {
      throw new IllegalStateException(
          "pgbus job "
              + job.id()
              + ": batch and dependency results are read on the handler's own thread, while it"
              + " runs; read them there and pass them on");
    }
    if (ownTransactions) {
      throw new IllegalStateException(
          "pgbus job "
              + job.id()
              + ": batch and dependency results are read in the job's transaction, and a handler"
              + " of a queue in JobTransaction.HANDLER mode runs in none");
    }
    try {
      return read.run(transaction);
    } catch (SQLException e) {
      throw Failures.of(null, "read the batch or dependencies of job " + job.id(), e);
    }
  }

  @Override
  public String toString() {
    return "RunningJob["
        + job
        + ", "
        + (cancellationRequested ? "cancel requested, " : "")
        + progress
        + "]";
  }
}
