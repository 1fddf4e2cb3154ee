package io.pgbus.engine;

import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * Runs one claimed job: the handler and the job's state change commit in one transaction, so
 * business writes made in it commit exactly when the job is marked done. A handler that throws
 * rolls its transaction back; the failure is then recorded in a transaction of its own.
 *
 * <p>A handler that runs past the job timeout is interrupted by the {@link Watchdog}. Whatever it
 * does then (throw, or return an outcome anyway), its attempt fails as timed out: the transaction
 * rolls back and the job is retried with backoff, or dead once its attempts are spent.
 *
 * <p>A job of a queue in {@link io.pgbus.JobTransaction#HANDLER} mode ({@code ownTransactions})
 * runs its handler outside any transaction ({@link Transactions#outsideTransaction}); the handler
 * opens its own. Its outcome is then settled in a short transaction of its own, fenced on (id,
 * attempt, running) like every state change, so an attempt that was rescued or cancelled meanwhile
 * changes nothing. What the handler committed stays, whatever becomes of the attempt.
 */
final class JobRunner {

  private static final System.Logger LOG = System.getLogger(JobRunner.class.getName());

  private final JobStore store;
  private final DataSource dataSource;
  private final Transactions transactions;
  private final JobFunction function;
  private final Predicate<String> ownTransactions; // by queue: JobTransaction.HANDLER
  private final Function<String, RetryPolicy> retries; // by queue
  private final JobEvents events;
  private final Watchdog watchdog;
  private final boolean deleteCompleted; // pgbus.retention.completed=0
  private final ErrorDetail errorDetail; // pgbus.errors.detail
  private final JobCipher cipher; // seals the results and errors of encrypting queues
  private volatile boolean abandoned;
  private volatile boolean stopping;

  /** Cancel requests heard for attempts not running here (yet); see {@link EarlyCancels}. */
  private final EarlyCancels heardEarly = new EarlyCancels();

  /** Requests the database did not confirm: forged ones can come in floods. */
  private final ThrottledWarning unconfirmed = new ThrottledWarning(LOG, Duration.ofMinutes(1));

  /**
   * How long a worker keeps trying to record a failure while the database is away: a restart or a
   * failover takes seconds to a minute. Longer outages are left to lease rescue.
   */
  static final Duration RECORD_RETRY_FOR = Duration.ofMinutes(2);

  private static final Duration RECORD_RETRY_FIRST = Duration.ofMillis(100);
  private static final Duration RECORD_RETRY_MAX_WAIT = Duration.ofSeconds(2);

  JobRunner(
      JobStore store,
      DataSource dataSource,
      Transactions transactions,
      JobFunction function,
      Predicate<String> ownTransactions,
      Function<String, RetryPolicy> retries,
      JobEvents events,
      Executor executor,
      boolean deleteCompleted,
      ErrorDetail errorDetail,
      JobCipher cipher) {
    this.cipher = Objects.requireNonNull(cipher);
    this.watchdog = new Watchdog(executor);
    this.deleteCompleted = deleteCompleted;
    this.errorDetail = Objects.requireNonNull(errorDetail);
    this.store = Objects.requireNonNull(store);
    this.dataSource = Objects.requireNonNull(dataSource);
    this.transactions = Objects.requireNonNull(transactions);
    this.function = Objects.requireNonNull(function);
    this.ownTransactions = Objects.requireNonNull(ownTransactions);
    this.retries = Objects.requireNonNull(retries);
    this.events = Objects.requireNonNull(events);
  }

  /** How messages name a job attempt: "pgbus job 42 (queue emails, attempt 3)". */
  static String named(ClaimedJob job) {
    return "pgbus job " + job.id() + " (queue " + job.queue() + ", attempt " + job.attempt() + ")";
  }

  /** Thrown inside the job transaction when the fence no longer matches: roll everything back. */
  static final class LeaseLostException extends Exception {
    private static final long serialVersionUID = 1L;

    LeaseLostException(ClaimedJob job) {
      super(named(job) + " is no longer held by this worker: its lease expired and it was rescued");
    }
  }

  /**
   * Thrown inside the job transaction when a stopping engine released the job while its handler ran
   * (the drain ran out): roll it back; the job is already back in {@code available}.
   */
  static final class JobReleasedException extends Exception {
    private static final long serialVersionUID = 1L;

    JobReleasedException(ClaimedJob job, boolean own, Throwable handlerFailure) {
      super(
          named(job)
              + " was released by the drain of a stopping engine (pgbus.drain-timeout): the handler"
              + " was interrupted and "
              + (own ? ROLLED_BACK_OWN : "its transaction rolled back"),
          handlerFailure);
    }
  }

  /** Thrown inside the job transaction when the handler ran past its timeout: roll it back. */
  static final class JobTimeoutException extends Exception {
    private static final long serialVersionUID = 1L;

    JobTimeoutException(ClaimedJob job, Duration timeout, boolean own, Throwable handlerFailure) {
      super(
          named(job)
              + " timed out after "
              + timeout
              + " (pgbus.job-timeout): the handler was interrupted and "
              + (own ? ROLLED_BACK_OWN : "its transaction rolled back"),
          handlerFailure);
    }
  }

  /** Thrown inside the job transaction when an operator cancelled the running job: roll it back. */
  static final class JobCancelledException extends Exception {
    private static final long serialVersionUID = 1L;

    JobCancelledException(ClaimedJob job, boolean own, Throwable handlerFailure) {
      super(
          named(job)
              + " was cancelled while running: the handler was interrupted and "
              + (own ? ROLLED_BACK_OWN : "its transaction rolled back"),
          handlerFailure);
    }
  }

  /** The error text a job cancelled while running keeps (after "cancelled: "). */
  static final String CANCELLED_WHILE_RUNNING =
      "by an operator while running; the handler's writes were rolled back";

  /** As {@link #CANCELLED_WHILE_RUNNING}, for a handler that ran in its own transactions. */
  static final String CANCELLED_WHILE_RUNNING_OWN =
      "by an operator while running; the handler ran in its own transactions (JobTransaction"
          + ".HANDLER), and what it committed stays";

  /** What becomes of the writes of a stopped handler that ran in its own transactions. */
  private static final String ROLLED_BACK_OWN =
      "what it committed in its own transactions stays (JobTransaction.HANDLER)";

  /** Whether the job's handler runs in its own transactions ({@code JobTransaction.HANDLER}). */
  boolean ownsTransactions(ClaimedJob job) {
    return ownTransactions.test(job.queue());
  }

  /**
   * Runs the job, interrupting its handler after {@code timeout}; returns when it is due again
   * (retry or snooze), or null. Never throws.
   */
  Instant run(ClaimedJob job, Duration timeout) {
    return run(job, timeout, true);
  }

  /**
   * As {@link #run(ClaimedJob, Duration)}; {@code announce} false when {@link JobEvents#started}
   * was already reported for this attempt (a job run again after its shared transaction failed).
   */
  Instant run(ClaimedJob job, Duration timeout, boolean announce) {
    return run(job, timeout, announce, nanos -> {});
  }

  /**
   * As {@link #run(ClaimedJob, Duration, boolean)}, and tells {@code handlerNanos} how long the
   * handler itself ran (the transaction's commit not included), when it returned.
   */
  Instant run(ClaimedJob job, Duration timeout, boolean announce, LongConsumer handlerNanos) {
    long started = System.nanoTime();
    if (announce) {
      events.started(job);
    }
    Settled settled;
    boolean own = ownsTransactions(job);
    try {
      if (own) {
        // The handler commits on its own, for as long as its job timeout allows; only the
        // outcome needs a transaction of pgbus's, and a short one.
        Outcome outcome =
            transactions.outsideTransaction(
                () -> {
                  long start = System.nanoTime();
                  Outcome o = handle(null, job, timeout);
                  handlerNanos.accept(System.nanoTime() - start);
                  return o;
                });
        settled = transactions.inNewTransaction(c -> settle(c, job, outcome));
      } else {
        settled =
            transactions.inNewTransaction(
                c -> {
                  long start = System.nanoTime();
                  Outcome outcome = handle(c, job, timeout);
                  handlerNanos.accept(System.nanoTime() - start);
                  return settle(c, job, outcome);
                });
      }
    } catch (Throwable t) {
      Throwable cause = rootCause(t);
      if (cause instanceof JobReleasedException) {
        // DEBUG: the drain's release already named the job, once (Engine.handBack).
        LOG.log(System.Logger.Level.DEBUG, cause.getMessage());
        events.finished(job, null, System.nanoTime() - started);
        return null;
      }
      if (cause instanceof LeaseLostException) {
        LOG.log(
            System.Logger.Level.WARNING,
            cause.getMessage()
                + (own
                    ? "; what its handler committed in its own transactions stays"
                    : "; its writes were rolled back"));
        events.finished(job, null, System.nanoTime() - started);
        return null;
      }
      if (t instanceof Error && !(t instanceof AssertionError) && !(t instanceof LinkageError)) {
        LOG.log(System.Logger.Level.ERROR, "pgbus job " + job.id() + " hit a VM error", t);
      }
      if (stopping && !(cause instanceof JobCancelledException)) {
        releaseFailedInStop(job, cause);
        events.finished(job, null, System.nanoTime() - started);
        return null;
      }
      RunAsUnavailableException refused = RunAsUnavailableException.in(t);
      settled =
          refused == null
              ? recordStopped(job, cause)
              : recordFailure(job, refused.getMessage(), true);
    }
    events.finished(job, settled == null ? null : settled.kind, System.nanoTime() - started);
    return settled == null ? null : settled.dueAgain;
  }

  /**
   * Records an attempt whose transaction rolled back: cancelled when an operator cancelled it while
   * it ran, else a failure.
   */
  Settled recordStopped(ClaimedJob job, Throwable cause) {
    if (cause instanceof JobReleasedException) {
      return null; // back in available already, its attempt not spent
    }
    if (!(cause instanceof JobCancelledException)) {
      return recordFailure(job, describe(cause));
    }
    String reason = ownsTransactions(job) ? CANCELLED_WHILE_RUNNING_OWN : CANCELLED_WHILE_RUNNING;
    // A transaction of its own: the cancel and its report to the job's batch and dependents
    // (pgbus.job_finished) commit together.
    try {
      if (transactions.inNewTransaction(c -> store.jobCancelRunning(c, job, reason))) {
        return new Settled(Outcome.Kind.CANCEL, null);
      }
      LOG.log(
          System.Logger.Level.WARNING,
          "{0} was cancelled after its lease was lost; the new holder decides its fate",
          named(job));
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not record the cancel of job {0}: {1}; lease rescue will retry it",
          job.id(),
          e.getMessage());
    }
    return null;
  }

  /**
   * "pgbus-cancel" notifications were heard (the {@link Notifier} hands them on together, at most
   * every {@link HeardCancels#GAP}): those for attempts running here are checked against the
   * database, in one statement (a payload alone may be forged), and the confirmed ones are flagged
   * and their handlers interrupted. Anything else changes nothing: another JVM's job, one that
   * ended meanwhile, or a request the database does not know. A request for an attempt that does
   * not run here yet is kept for when its handler starts.
   */
  void cancelsHeard(Collection<CancelRequest> requests) {
    var here = new LinkedHashMap<CancelRequest, Watchdog.Attempt>();
    for (CancelRequest request : requests) {
      Watchdog.Attempt attempt = watchdog.running(request.id(), request.attempt());
      if (attempt == null) {
        heardEarly.heard(request);
      } else {
        here.put(request, attempt);
      }
    }
    if (!here.isEmpty()) {
      confirm(here);
    }
  }

  /** Checks requests against the database and cancels the attempts of those that are real. */
  private void confirm(Map<CancelRequest, Watchdog.Attempt> requests) {
    Set<CancelRequest> confirmed;
    try (Connection c = dataSource.getConnection()) {
      confirmed = store.jobsCancelRequested(c, requests.keySet());
    } catch (SQLException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not check the cancel of job(s) {0}: {1}; the jobs run on",
          requests.keySet().stream().map(r -> Long.toString(r.id())).toList(),
          e.getMessage());
      return;
    }
    requests.forEach(
        (request, attempt) -> {
          if (confirmed.contains(request)) {
            attempt.cancel();
          } else {
            // Only parsed numbers in the line: never the payload's own text.
            unconfirmed.warn(
                "pgbus ignored a "
                    + Channels.CANCEL
                    + " notification for job "
                    + request.id()
                    + " attempt "
                    + request.attempt()
                    + ": the database records no such request (a NOTIFY not sent by pgbus? any"
                    + " database login may send one)");
          }
        });
  }

  /** The wait before the job's next attempt, by its queue's retry policy. */
  private Duration backoff(ClaimedJob job) {
    // Since the last replay (V30): a replayed job backs off from the first step again.
    return retries.apply(job.queue()).backoff(job.attempt() - job.attemptBase());
  }

  /**
   * The engine stops: from now on an attempt that fails goes back to {@code available} without
   * spending an attempt instead of being recorded as a failure. A server that stops pulls the
   * ground from under running handlers (WildFly's {@code :shutdown} interrupts them and refuses the
   * job's EJB calls: WFLYEJB0034), so such a failure says nothing about the job; and the container
   * may refuse the very transaction that would record it, which left the job {@code running} until
   * its lease ran out (issue #32).
   */
  void engineStopping() {
    stopping = true;
  }

  /**
   * Releases an attempt that failed while the engine stopped, on a plain connection (not through
   * {@link Transactions}, which a stopping container may refuse); logged once, by id.
   */
  private void releaseFailedInStop(ClaimedJob job, Throwable failure) {
    // An encrypting queue's failure may quote its payload: only its class reaches the log.
    String cause =
        cipher.encrypts(job.queue()) ? failure.getClass().getName() : String.valueOf(failure);
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      if (store.jobReleaseDrained(c, List.of(job)).isEmpty()) {
        return; // no longer this worker's (released by the drain, rescued): nothing to say
      }
      StopLog.log(
          LOG,
          System.Logger.Level.WARNING,
          "{0} failed while its engine stopped ({1}); released it back to available without"
              + " spending an attempt",
          named(job),
          cause);
    } catch (SQLException e) {
      StopLog.log(
          LOG,
          System.Logger.Level.WARNING,
          "{0} failed while its engine stopped ({1}) and could not be released ({2}); the stop"
              + " or the next rescue returns it",
          named(job),
          cause,
          e.getMessage());
    }
  }

  /** Hands back a job that was claimed but never started. */
  void release(ClaimedJob job) {
    try (Connection c = dataSource.getConnection()) {
      store.jobRelease(c, job);
    } catch (SQLException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not hand back job {0}: {1}; lease rescue will return it",
          job.id(),
          e.getMessage());
    }
  }

  /** What an attempt led to: the job's new state, and when it is due again (retry, snooze). */
  record Settled(Outcome.Kind kind, Instant dueAgain) {}

  /** The watchdog of this runner's attempts: which jobs this JVM runs and vouches for. */
  Watchdog watchdog() {
    return watchdog;
  }

  /**
   * Calls the handler under the watchdog; a timed-out attempt throws whatever it returned. {@code
   * c} is the job's transaction, or null for a handler that runs in its own.
   */
  Outcome handle(Connection c, ClaimedJob sealed, Duration timeout) throws Exception {
    ClaimedJob job;
    try {
      job = cipher.open(sealed);
    } catch (PgbusException e) {
      // pgbus's own words, never the payload's: the stored error is sealed, so say it here.
      LOG.log(System.Logger.Level.WARNING, "{0}: {1}", named(sealed), e.getMessage());
      throw e;
    }
    RunningJob running = new RunningJob(job, cipher);
    Watchdog.Attempt attempt = watchdog.watch(running, timeout, c);
    if (heardEarly.take(job.id(), job.attempt())) {
      // Cancelled between its claim and now: the handler starts interrupted and flagged.
      confirm(Map.of(new CancelRequest(job.id(), job.attempt()), attempt));
    }
    Outcome outcome;
    JobProgress progress = running.reports();
    progress.attach(report -> writeProgress(job, report));
    running.open(c);
    try {
      outcome = function.run(running, c);
    } catch (Throwable t) {
      if (attempt.end()) {
        throw stopped(job, attempt, timeout, t);
      }
      throw t;
    } finally {
      running.close();
      progress.flush();
      progress.detach();
    }
    if (attempt.end()) {
      // It returned after the interrupt: too late, and maybe having cut its work short.
      throw stopped(job, attempt, timeout, null);
    }
    return outcome;
  }

  /**
   * Writes a progress report in a transaction of its own (a pooled connection, never the handler's
   * transaction: operators see it while the job runs, and a rollback keeps it). A failure is logged
   * and never reaches the handler.
   */
  private void writeProgress(ClaimedJob job, JobProgress.Report report) {
    try {
      transactions.inNewTransaction(c -> store.jobProgress(c, job, report));
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not store the progress of {0}: {1}; the job runs on",
          named(job),
          e.getMessage());
    }
  }

  /** Why the watchdog interrupted an attempt: an operator's cancel wins over the timeout. */
  private Exception stopped(
      ClaimedJob job, Watchdog.Attempt attempt, Duration timeout, Throwable handlerFailure) {
    boolean own = ownsTransactions(job);
    if (attempt.released()) {
      return new JobReleasedException(job, own, handlerFailure);
    }
    return attempt.cancelled()
        ? new JobCancelledException(job, own, handlerFailure)
        : new JobTimeoutException(job, timeout, own, handlerFailure);
  }

  /** Whether completing a job deletes it rather than keeping it for retention. */
  boolean deletesCompleted() {
    return deleteCompleted;
  }

  /** Applies a handler's outcome inside the job transaction; throws when the lease was lost. */
  Settled settle(Connection c, ClaimedJob job, Outcome outcome) throws Exception {
    Outcome o = outcome == null ? Outcome.complete() : outcome;
    switch (o.kind()) {
      case COMPLETE -> {
        if (o.hasResult() && !deleteCompleted) {
          if (!store.jobCompleteWithResult(c, job, sealedResult(job, o))) {
            throw new LeaseLostException(job);
          }
          return new Settled(Outcome.Kind.COMPLETE, null);
        }
        if (o.hasResult()) {
          resultJson(job, o); // checked even when the row (and so the result) is deleted at once
        }
        if (!store.jobComplete(c, job, deleteCompleted)) {
          throw new LeaseLostException(job);
        }
        return new Settled(Outcome.Kind.COMPLETE, null);
      }
      case SNOOZE -> {
        Instant due = store.jobSnooze(c, job, o.delay());
        if (due == null) {
          throw new LeaseLostException(job);
        }
        return new Settled(Outcome.Kind.SNOOZE, due);
      }
      case CANCEL -> {
        if (!store.jobCancelRunning(c, job, sealedError(job, o.reason()))) {
          throw new LeaseLostException(job);
        }
        return new Settled(Outcome.Kind.CANCEL, null);
      }
      case RETRY -> {
        JobStore.FailResult r = store.jobFail(c, job, sealedError(job, o.reason()), backoff(job));
        if (r == null) {
          throw new LeaseLostException(job);
        }
        return new Settled(r.dead() ? null : Outcome.Kind.RETRY, r.retryAt());
      }
      default -> throw new IllegalStateException("unknown outcome " + o);
    }
  }

  /** The result as stored: sealed when the job's queue encrypts, and then checked again. */
  private String sealedResult(ClaimedJob job, Outcome o) {
    String json = resultJson(job, o);
    if (!cipher.encrypts(job.queue())) {
      return json;
    }
    String sealed = cipher.sealResult(job.queue(), job.id(), json);
    if (sealed.length() > Outcome.MAX_RESULT_BYTES) {
      throw resultTooLarge(
          job,
          sealed.length(),
          " bytes once encrypted (queue '"
              + job.queue()
              + "' encrypts; sealing adds about a third)");
    }
    return sealed;
  }

  /**
   * An error text as stored: for a queue that encrypts, cut to what fits {@link
   * JobStore#ERROR_TEXT_LIMIT} once sealed, and sealed (so the store never cuts a token).
   */
  String sealedError(ClaimedJob job, String text) {
    if (!cipher.encrypts(job.queue())) {
      return text;
    }
    String t = text == null ? "" : text;
    int budget = (JobStore.ERROR_TEXT_LIMIT - 100) * 3 / 4 - 16;
    int bytes = 0;
    int end = 0;
    while (end < t.length()) {
      int cp = t.codePointAt(end);
      int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
      if (bytes + n > budget - 3) {
        t = t.substring(0, end) + "...";
        break;
      }
      bytes += n;
      end += Character.charCount(cp);
    }
    return cipher.sealError(job.queue(), job.id(), t);
  }

  /**
   * The outcome's result as JSON text, within {@link Outcome#MAX_RESULT_BYTES}; throws (failing the
   * attempt, nothing written) when it is larger or is an object the engine cannot map.
   */
  static String resultJson(ClaimedJob job, Outcome o) {
    String json = o.resultJson();
    if (json == null) {
      throw new PgbusException(
          job.queue(),
          job.id(),
          "pgbus: job "
              + job.id()
              + " returned a result object of "
              + o.result().getClass().getName()
              + ", which only the Jakarta runtime maps to JSON; return Outcome.completeJson(json)",
          null);
    }
    int bytes = json.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > Outcome.MAX_RESULT_BYTES) {
      throw resultTooLarge(job, bytes, " bytes of JSON");
    }
    return json;
  }

  private static PgbusException resultTooLarge(ClaimedJob job, int bytes, String what) {
    return new PgbusException(
        job.queue(),
        job.id(),
        "pgbus: job "
            + job.id()
            + " result is "
            + bytes
            + what
            + ", over the limit of "
            + Outcome.MAX_RESULT_BYTES
            + " bytes (64 KiB, Outcome.MAX_RESULT_BYTES); store large data elsewhere and"
            + " return a reference",
        null);
  }

  /**
   * Records a failed attempt in a transaction of its own; null when that was not possible. While
   * the database is away (a restart, a failover: the handler's failure is often that very loss), it
   * tries again with a growing wait, up to {@link #RECORD_RETRY_FOR}: a job the worker knows has
   * failed is then retryable, with its real error, moments after the database is back, instead of
   * staying running until its lease runs out. The fence (id, attempt, running) keeps every try
   * safe: a job rescued meanwhile is not touched.
   */
  Settled recordFailure(ClaimedJob job, String error) {
    return recordFailure(job, error, false);
  }

  /**
   * {@link #recordFailure(ClaimedJob, String)}; with {@code last} the job is dead at once, whatever
   * attempts it has left: a failure no retry can mend ({@link RunAsUnavailableException}).
   */
  Settled recordFailure(ClaimedJob job, String error, boolean last) {
    Duration backoff = backoff(job);
    long deadline = System.nanoTime() + RECORD_RETRY_FOR.toNanos();
    ErrorBackoff waits = ErrorBackoff.waits(RECORD_RETRY_FIRST, RECORD_RETRY_MAX_WAIT);
    while (true) {
      // A transaction of its own, not auto-commit: a last attempt's death and its report to the
      // job's batch and dependents (pgbus.job_finished) are two statements that must commit
      // together, or a crash between them leaves the dependents waiting on a dead job for good.
      try {
        return transactions.inNewTransaction(c -> recordFailure(c, job, error, backoff, last));
      } catch (Exception e) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (!ErrorBackoff.connectionError(e) || left <= 0 || abandoned) {
          LOG.log(
              System.Logger.Level.WARNING,
              "pgbus could not record the failure of job {0}: {1}; lease rescue will retry it",
              job.id(),
              e.getMessage());
          return null;
        }
        long sleep = Math.min(left, waits.nextWait());
        LOG.log(
            System.Logger.Level.DEBUG,
            "pgbus could not record the failure of job {0} yet ({1}); trying again in {2} ms",
            job.id(),
            e.getMessage(),
            sleep);
        try {
          Thread.sleep(sleep);
        } catch (InterruptedException stop) {
          Thread.currentThread().interrupt();
          LOG.log(
              System.Logger.Level.WARNING,
              "pgbus stopped recording the failure of job {0}; lease rescue will retry it",
              job.id());
          return null;
        }
      }
    }
  }

  private Settled recordFailure(
      Connection c, ClaimedJob job, String plain, Duration backoff, boolean last)
      throws SQLException {
    JobStore.FailResult r = store.jobFail(c, job, sealedError(job, plain), backoff, last);
    // An encrypting queue's error may quote its payload: it stays in the job, sealed, not here.
    String error =
        cipher.encrypts(job.queue())
            ? "(error text encrypted with the job: queue '" + job.queue() + "' encrypts)"
            : plain;
    if (r == null) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus job {0} failed after its lease was lost; the new holder decides its fate",
          job.id());
      return null;
    }
    if (r.dead()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus job {0} (queue {1}) is dead after attempt {2} of {3}: {4}",
          job.id(),
          job.queue(),
          job.attempt(),
          job.maxAttempts(),
          firstLine(error));
      return new Settled(null, null);
    }
    // One line per failed attempt, without the stack (the job's errors keep it): the container no
    // longer logs a throwing handler (JobTransactionBoundary), so this is where operators see it.
    LOG.log(
        System.Logger.Level.INFO,
        "pgbus job {0} (queue {1}) failed attempt {2} of {3}; next try at {4}: {5}",
        job.id(),
        job.queue(),
        job.attempt(),
        job.maxAttempts(),
        r.retryAt(),
        firstLine(error));
    return new Settled(Outcome.Kind.RETRY, r.retryAt());
  }

  /**
   * The engine stops and its drain is over: a failure still waiting for the database to record is
   * left to lease rescue, so no worker keeps trying after the application is gone.
   */
  /** After the drain released the held jobs: interrupts the handlers that still run them. */
  int interruptReleased() {
    return watchdog.interruptReleased();
  }

  void abandonRetries() {
    abandoned = true;
  }

  /**
   * The exception to record: the innermost cause, past the container's wrappers (EJBException, a
   * rollback), but never past pgbus's own: its message is what pgbus knows (the payload of job N
   * does not map to a type), and the stack trace keeps its cause below it (issue #29).
   */
  static Throwable rootCause(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      if (c instanceof LeaseLostException
          || c instanceof JobReleasedException
          || c instanceof JobTimeoutException
          || c instanceof JobCancelledException
          || c instanceof PgbusException) {
        return c;
      }
      c = c.getCause();
    }
    return c;
  }

  /** The error text stored with the job, as much of it as pgbus.errors.detail allows. */
  String describe(Throwable t) {
    return errorDetail.describe(t);
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
