package io.pgbus.engine;

import io.pgbus.AuditEntry;
import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.EnqueuedBatch;
import io.pgbus.EnqueuedWorkflow;
import io.pgbus.InvalidJobException;
import io.pgbus.JobBatch;
import io.pgbus.JobQueue;
import io.pgbus.QueueNames;
import io.pgbus.Workflow;
import io.pgbus.admin.Explanation;
import io.pgbus.admin.QueueBlockers;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * The job operations: enqueue, pause and resume, cancel and replay, and the audit trail, each in
 * the caller's connection and transaction. It needs no running engine, no thread and no listener:
 * only the settings that shape an enqueue. An {@link Engine} hands out its own ({@link
 * Engine#jobs()}), with its tracing.
 */
public final class Jobs {

  private final JobStore store = new JobStore();
  private final QueueStore queueStore = new QueueStore();
  private final AuditStore auditStore = new AuditStore();
  private final LinkStore linkStore = new LinkStore();
  private final ExplainStore explainStore = new ExplainStore();
  private final String workerId;
  private final int maxPayloadBytes;
  private final JobTracing tracing;
  private final Function<String, Integer> queueMaxAttempts;
  private final AfterCommit afterCommit;
  private final JobCipher cipher;
  private final Function<String, Duration> queueMaxWait;

  /**
   * @param workerId recorded as who paused a queue
   * @param maxPayloadBytes the largest JSON payload accepted at enqueue
   * @param tracing captures the enqueuer's trace for the handler's span
   */
  public Jobs(String workerId, int maxPayloadBytes, JobTracing tracing) {
    this(workerId, maxPayloadBytes, tracing, queue -> null);
  }

  /**
   * @param queueMaxAttempts a queue's configured attempts ({@code pgbus.queue.<name>.max-attempts})
   *     for jobs enqueued without their own, or null for {@link
   *     EnqueueOptions#DEFAULT_MAX_ATTEMPTS}
   */
  Jobs(
      String workerId,
      int maxPayloadBytes,
      JobTracing tracing,
      Function<String, Integer> queueMaxAttempts) {
    this(workerId, maxPayloadBytes, tracing, queueMaxAttempts, AfterCommit.NONE);
  }

  /**
   * @param afterCommit who wakes the workers after an enqueue commits; {@link AfterCommit#NONE}:
   *     the database, inside the transaction
   */
  Jobs(
      String workerId,
      int maxPayloadBytes,
      JobTracing tracing,
      Function<String, Integer> queueMaxAttempts,
      AfterCommit afterCommit) {
    this(workerId, maxPayloadBytes, tracing, queueMaxAttempts, afterCommit, JobCipher.NONE);
  }

  /**
   * @param cipher seals the payloads of the queues that encrypt ({@link JobCipher})
   */
  Jobs(
      String workerId,
      int maxPayloadBytes,
      JobTracing tracing,
      Function<String, Integer> queueMaxAttempts,
      AfterCommit afterCommit,
      JobCipher cipher) {
    this(workerId, maxPayloadBytes, tracing, queueMaxAttempts, afterCommit, cipher, queue -> null);
  }

  /**
   * @param queueMaxWait a queue's start-by window ({@code pgbus.queue.<name>.max-wait}), or null
   *     for none: a job enqueued without its own deadline gets one that long after it is due
   */
  Jobs(
      String workerId,
      int maxPayloadBytes,
      JobTracing tracing,
      Function<String, Integer> queueMaxAttempts,
      AfterCommit afterCommit,
      JobCipher cipher,
      Function<String, Duration> queueMaxWait) {
    this.queueMaxWait = Objects.requireNonNull(queueMaxWait, "queueMaxWait");
    this.cipher = Objects.requireNonNull(cipher, "cipher");
    this.afterCommit = Objects.requireNonNull(afterCommit, "afterCommit");
    this.workerId = Objects.requireNonNull(workerId, "workerId");
    this.maxPayloadBytes = maxPayloadBytes;
    this.tracing = Objects.requireNonNull(tracing, "tracing");
    this.queueMaxAttempts = Objects.requireNonNull(queueMaxAttempts, "queueMaxAttempts");
  }

  /** The operations for an engine configured so (its queue policies included), without tracing. */
  public Jobs(EngineConfig config) {
    this(config, JobCipher.NONE);
  }

  /** As {@link #Jobs(EngineConfig)}, sealing the payloads of the queues {@code cipher} encrypts. */
  public Jobs(EngineConfig config, JobCipher cipher) {
    this(
        config.workerId(),
        config.maxPayloadBytes(),
        JobTracing.NONE,
        config::maxAttempts,
        AfterCommit.NONE,
        cipher,
        config::maxWait);
  }

  /**
   * The job as it is stored: its queue's attempts, and its payload sealed when the queue encrypts,
   * before any check or statement sees it (the payload bound applies to the sealed form).
   */
  private NewJob prepared(NewJob given) {
    return sealed(withQueueAttempts(given));
  }

  /**
   * The job with its payload sealed when its queue encrypts; as it is otherwise. For jobs that
   * reach the store another way than these operations (a schedule's runs).
   */
  NewJob sealed(NewJob job) {
    if (!cipher.encrypts(job.queue())) {
      return job;
    }
    return new NewJob(
        job.queue(),
        cipher.sealPayload(job.queue(), job.payloadJson()),
        job.options(),
        job.enqueuedBy(),
        job.parentJobId(),
        job.runAs(),
        job.workflowId());
  }

  /** The cipher of these operations' queues. */
  public JobCipher cipher() {
    return cipher;
  }

  /** The job with its queue's configured attempts, unless its options chose their own. */
  private NewJob withQueueAttempts(NewJob job) {
    if (job.options().maxAttemptsChosen()) {
      return job;
    }
    Integer attempts = queueMaxAttempts.apply(job.queue());
    return attempts == null ? job : job.withOptions(job.options().withMaxAttempts(attempts));
  }

  /**
   * Inserts a job in the connection's current transaction and returns its id; for a job whose
   * unique key a waiting or running job already has, that job's id (see {@link #enqueueIfAbsent}).
   */
  public long enqueue(Connection c, NewJob job) {
    return enqueueIfAbsent(c, job).id();
  }

  /**
   * Inserts a job in the connection's current transaction unless its unique key is taken by a
   * waiting or running job of its queue; a duplicate inserts and notifies nothing and leaves the
   * transaction usable.
   */
  public Enqueued enqueueIfAbsent(Connection c, NewJob given) {
    Instant now = Instant.now();
    NewJob job = StartBy.withQueueMaxWait(prepared(given), queueMaxWait, now);
    checkPayload(job);
    checkRunAt(job, now);
    StartBy.check(job, now);
    UniqueEnqueue.check(job);
    if (!job.options().afterJobs().isEmpty()) {
      return enqueueAfter(c, job);
    }
    if (job.options().hasUniqueRule()) {
      return enqueueUnique(c, job);
    }
    PendingWake wake = pendingWake(c, job.queue());
    Enqueued e =
        sql(
            job.queue(),
            "enqueue a job",
            () -> {
              Enqueued inserted = store.jobInsertIfAbsent(c, job, tracing.capture(), wake != null);
              StartBy.write(c, store, job, inserted);
              joinWorkflow(c, job, inserted);
              return inserted;
            });
    if (wake != null && e.inserted()) {
      wake.add(job.queue(), due(job, Instant.now()));
      wake.statementDone();
    }
    return e;
  }

  /**
   * A job whose unique key has a period, replace or debounce (pgbus.enqueue_unique): apart from the
   * plain path, which stays one statement of its own. A job inserted, or a waiting one replaced,
   * gets its wake as an inserted one does (the database sends it for a replaced one due sooner,
   * unless the Java API wakes after its commit).
   */
  private Enqueued enqueueUnique(Connection c, NewJob job) {
    PendingWake wake = pendingWake(c, job.queue());
    UniqueEnqueue.Done done =
        sql(
            job.queue(),
            "enqueue a job with unique key '" + job.options().uniqueKey() + "'",
            () -> {
              UniqueEnqueue.Done d = UniqueEnqueue.run(c, job, tracing.capture(), wake != null);
              StartBy.write(c, store, job, d.enqueued());
              joinWorkflow(c, job, d.enqueued());
              return d;
            });
    Enqueued.Result r = done.enqueued().result();
    if (wake != null && (r == Enqueued.Result.INSERTED || r == Enqueued.Result.REPLACED)) {
      wake.add(job.queue(), done.due());
      wake.statementDone();
    }
    return done.enqueued();
  }

  /**
   * A job enqueued from the handler of a workflow's member joins the workflow (fan-out): one more
   * statement, only then; a plain enqueue pays nothing.
   */
  private void joinWorkflow(Connection c, NewJob job, Enqueued e) throws SQLException {
    if (job.workflowId() != null && e.inserted()) {
      linkStore.joinWorkflow(c, job.workflowId(), List.of(e.id()));
    }
  }

  /** Where an enqueue on {@code c} leaves its wake; null: the database wakes. */
  private PendingWake pendingWake(Connection c, String queue) {
    return sql(queue, "read the transaction of an enqueue", () -> afterCommit.pending(c));
  }

  /** When a job becomes due, from its options; null: now. */
  private static Instant due(NewJob job, Instant now) {
    EnqueueOptions o = job.options();
    if (o.runAt() != null) {
      return o.runAt();
    }
    return o.delay() == null || o.delay().isZero() ? null : now.plus(o.delay());
  }

  /**
   * A job that waits on others (pgbus.enqueue_after, R__links.sql): apart from the plain path, so
   * that an enqueue without dependencies stays one statement of its own. A unique key that a
   * waiting or running job holds yields that job's id, as a duplicate.
   */
  private Enqueued enqueueAfter(Connection c, NewJob job) {
    EnqueueOptions o = job.options();
    if (o.runAt() != null || o.delay() != null) {
      throw new InvalidJobException(
          job.queue(),
          "a job for queue '"
              + job.queue()
              + "' that waits on other jobs (afterJobs) runs when they complete: drop runAt/delay"
              + " ("
              + o
              + "), or let the job snooze itself");
    }
    PendingWake wake = pendingWake(c, job.queue());
    Enqueued e =
        sql(
            job.queue(),
            "enqueue a job after jobs " + o.afterJobs().keySet(),
            () -> {
              Enqueued inserted = linkStore.enqueueAfter(c, job, tracing.capture(), wake != null);
              StartBy.write(c, store, job, inserted);
              joinWorkflow(c, job, inserted);
              return inserted;
            });
    if (wake != null && e.inserted()) {
      // Runnable now only when the jobs it waits on are done already: one claim finds out.
      wake.add(job.queue(), null);
      wake.statementDone();
    }
    return e;
  }

  /**
   * Inserts a batch and its members in one statement (pgbus.enqueue_batch): see {@link
   * io.pgbus.JobBatch}. The callback job is enqueued later, by the transaction that finishes the
   * last member.
   */
  public EnqueuedBatch enqueueBatch(Connection c, List<NewJob> members, NewJob callback) {
    if (members.isEmpty() || members.size() > JobBatch.MAX_SIZE) {
      throw new InvalidJobException(
          callback.queue(),
          "a batch of "
              + members.size()
              + " jobs (callback queue '"
              + callback.queue()
              + "') is out of range: a batch has 1 to "
              + JobBatch.MAX_SIZE
              + " members; split a larger one, or chain batches through their callbacks");
    }
    StartBy.refuseInBulk(members, "a batch");
    StartBy.refuseInBulk(List.of(callback), "a batch's callback");
    UniqueEnqueue.refuseInBulk(members, "a batch");
    UniqueEnqueue.refuseInBulk(List.of(callback), "a batch's callback");
    NewJob cb = prepared(callback);
    checkPayload(cb);
    List<NewJob> jobs = members.stream().map(this::prepared).toList();
    for (NewJob job : jobs) {
      checkPayload(job);
    }
    PendingWake wake = pendingWake(c, callback.queue());
    EnqueuedBatch b =
        sql(
            callback.queue(),
            "enqueue a batch of " + jobs.size() + " jobs",
            () -> {
              EnqueuedBatch inserted =
                  linkStore.enqueueBatch(c, jobs, cb, tracing.capture(), wake != null);
              if (cb.workflowId() != null) {
                linkStore.joinWorkflow(c, cb.workflowId(), inserted.jobIds());
              }
              return inserted;
            });
    if (wake != null) {
      jobs.forEach(j -> wake.add(j.queue(), null)); // the callback waits for the members
      wake.statementDone();
    }
    return b;
  }

  /**
   * Inserts a workflow in one statement (pgbus.enqueue_workflow, R__workflow.sql): its row, a job
   * per node and the edges. {@code jobs} are the nodes' jobs in the workflow's order (payloads as
   * JSON, who enqueues); the spec gives the names and edges. Checked here first ({@link
   * Workflow#validate}) and again by the database, with the same messages.
   */
  public EnqueuedWorkflow enqueueWorkflow(Connection c, Workflow workflow, List<NewJob> given) {
    workflow.validate();
    if (given.size() != workflow.nodes().size()) {
      throw new IllegalArgumentException(
          "workflow '" + workflow.name() + "': one job per node, in the nodes' order");
    }
    List<NewJob> jobs = given.stream().map(this::prepared).toList();
    for (NewJob job : jobs) {
      checkPayload(job);
    }
    String queue = jobs.get(0).queue();
    PendingWake wake = pendingWake(c, queue);
    EnqueuedWorkflow w =
        sql(
            queue,
            "enqueue workflow '" + workflow.name() + "' of " + jobs.size() + " jobs",
            () -> linkStore.enqueueWorkflow(c, workflow, jobs, tracing.capture(), wake != null));
    if (wake != null) {
      for (int k = 0; k < jobs.size(); k++) {
        if (workflow.nodes().get(k).edges().isEmpty()) {
          wake.add(jobs.get(k).queue(), null);
        }
      }
      wake.statementDone();
    }
    return w;
  }

  /**
   * Cancels workflow {@code id} (pgbus.cancel_workflow), audited as {@code actor} ({@code null}:
   * the database role): how many members were cancelled or asked to stop; empty for no such
   * workflow.
   */
  public OptionalInt cancelWorkflow(Connection c, long id, String actor) {
    return sql(null, "cancel workflow " + id, () -> linkStore.workflowAct(c, id, false, actor));
  }

  /**
   * Retries workflow {@code id} (pgbus.retry_workflow), audited as {@code actor}: how many members
   * were replayed or revived; empty for no such workflow.
   */
  public OptionalInt retryWorkflow(Connection c, long id, String actor) {
    return sql(null, "retry workflow " + id, () -> linkStore.workflowAct(c, id, true, actor));
  }

  /**
   * Inserts many jobs in one statement; ids in input order. A job whose unique key is taken gets
   * the existing job's id.
   */
  public List<Long> enqueueAll(Connection c, List<NewJob> given) {
    if (given.isEmpty()) {
      return List.of();
    }
    if (given.size() > JobQueue.MAX_BATCH_SIZE) {
      String queue = given.get(0).queue();
      throw new InvalidJobException(
          queue,
          "a batch of "
              + given.size()
              + " jobs for queue '"
              + queue
              + "' is over the limit of "
              + JobQueue.MAX_BATCH_SIZE
              + " jobs per enqueueAll: split it into batches of at most "
              + JobQueue.MAX_BATCH_SIZE);
    }
    if (given.stream().anyMatch(j -> !j.options().afterJobs().isEmpty())) {
      throw new InvalidJobException(
          given.get(0).queue(),
          "enqueueAll does not take afterJobs: enqueue a job that waits on others with enqueue,"
              + " or wait on a batch's callback");
    }
    StartBy.refuseInBulk(given, "enqueueAll");
    UniqueEnqueue.refuseInBulk(given, "enqueueAll");
    List<NewJob> jobs = given.stream().map(this::prepared).toList();
    Instant now = Instant.now();
    for (NewJob job : jobs) {
      checkPayload(job);
      checkRunAt(job, now);
    }
    PendingWake wake = pendingWake(c, jobs.get(0).queue());
    List<Long> ids =
        sql(
            jobs.get(0).queue(),
            "enqueue " + jobs.size() + " jobs",
            () -> {
              List<Long> inserted = store.jobInsertMany(c, jobs, tracing.capture(), wake != null);
              if (jobs.get(0).workflowId() != null) {
                linkStore.joinWorkflow(c, jobs.get(0).workflowId(), inserted);
              }
              return inserted;
            });
    if (wake != null) {
      for (NewJob job : jobs) {
        wake.add(job.queue(), due(job, now));
      }
      wake.statementDone();
    }
    return ids;
  }

  /**
   * Pauses a queue in the connection's transaction: from its commit on, no engine on the database
   * claims the queue's jobs; enqueue goes on, and running jobs finish. Returns false when the queue
   * was paused already.
   */
  public boolean pause(Connection c, String queue) {
    return pause(c, queue, null);
  }

  /**
   * {@link #pause(Connection, String)}, audited as {@code actor} (the caller principal's name;
   * {@code null}: the database role).
   */
  public boolean pause(Connection c, String queue, String actor) {
    QueueNames.require(queue);
    return sql(
        queue,
        "pause queue '" + queue + "'",
        () -> queueStore.queuePause(c, queue, workerId, actor));
  }

  /**
   * Resumes a paused queue in the connection's transaction; at commit, its channel gets a wake-up
   * so every engine claims the waiting jobs at once. Returns false when it was not paused.
   */
  public boolean resume(Connection c, String queue) {
    return resume(c, queue, null);
  }

  /** {@link #resume(Connection, String)}, audited as {@code actor} ({@code null}: the role). */
  public boolean resume(Connection c, String queue, String actor) {
    QueueNames.require(queue);
    return sql(
        queue, "resume queue '" + queue + "'", () -> queueStore.queueResume(c, queue, actor));
  }

  public boolean isPaused(Connection c, String queue) {
    QueueNames.require(queue);
    return sql(
        queue, "read the pause of queue '" + queue + "'", () -> queueStore.queueIsPaused(c, queue));
  }

  /** Every paused queue of the database, by name. */
  public List<String> pausedQueues(Connection c) {
    return sql(null, "read the paused queues", () -> queueStore.queuesPaused(c));
  }

  public boolean cancel(Connection c, long jobId) {
    return cancel(c, jobId, null);
  }

  /**
   * Cancels a waiting job, or asks the JVM that runs a running one to stop it (NOTIFY at commit;
   * see {@link JobStore#jobCancel}), audited as {@code actor} ({@code null}: the database role).
   * False when the job has finished or does not exist.
   */
  public boolean cancel(Connection c, long jobId, String actor) {
    return sql(null, "cancel job " + jobId, () -> store.jobCancel(c, jobId, actor));
  }

  public boolean replay(Connection c, long jobId) {
    return replay(c, jobId, null);
  }

  /** Replays a dead job, audited as {@code actor} ({@code null}: the database role). */
  public boolean replay(Connection c, long jobId, String actor) {
    return sql(null, "replay job " + jobId, () -> store.jobReplayDead(c, jobId, actor));
  }

  /** The audit trail of a job, oldest first. */
  public List<AuditEntry> history(Connection c, long jobId) {
    return sql(null, "read the audit trail of job " + jobId, () -> auditStore.auditOfJob(c, jobId));
  }

  /** The latest {@code limit} audit entries of a queue, newest first. */
  public List<AuditEntry> history(Connection c, String queue, int limit) {
    QueueNames.require(queue);
    if (limit < 1 || limit > 1000) {
      throw new IllegalArgumentException(
          "audit history limit " + limit + " is out of range: use 1 to 1000");
    }
    return sql(
        queue,
        "read the audit trail of queue '" + queue + "'",
        () -> auditStore.auditOfQueue(c, queue, limit));
  }

  /** One statement of the stores. */
  @FunctionalInterface
  private interface Statement<T> {
    T run() throws SQLException;
  }

  /** Runs a statement; a failure names the queue (null: none) and what was being done. */
  /**
   * Why the job is in its state (JobAdmin.explain; docs/explain.md), in the caller's transaction;
   * empty when there is no such job.
   */
  public Optional<Explanation> explain(Connection c, long jobId) {
    return sql(null, "explain job " + jobId, () -> explainStore.explain(c, jobId));
  }

  /**
   * Waiting, runnable-now and blocked-by-cause counts of one queue, or of every queue that has
   * waiting jobs, is paused or has limits when {@code queue} is null (JobAdmin.blockers).
   */
  public List<QueueBlockers> blockers(Connection c, String queue) {
    if (queue != null) {
      QueueNames.require(queue);
    }
    return sql(
        queue,
        queue == null
            ? "read the blockers of the queues"
            : "read the blockers of queue '" + queue + "'",
        () -> explainStore.blockers(c, queue));
  }

  private static <T> T sql(String queue, String action, Statement<T> statement) {
    try {
      return statement.run();
    } catch (SQLException e) {
      throw Failures.of(queue, action, e);
    }
  }

  private void checkPayload(NewJob job) {
    String p = job.payloadJson();
    int limit = maxPayloadBytes;
    if (p.length() > limit / 3 && p.getBytes(StandardCharsets.UTF_8).length > limit) {
      throw new InvalidJobException(
          job.queue(),
          "payload for queue '"
              + job.queue()
              + "' is "
              + p.getBytes(StandardCharsets.UTF_8).length
              + " bytes, over the limit of "
              + limit
              + " bytes"
              + (cipher.encrypts(job.queue())
                  ? " encrypted (the queue encrypts: sealed, a payload grows by about a third)"
                  : "")
              + ": store large data in your own table and enqueue its key, or raise"
              + " pgbus.max-payload-bytes");
    }
  }

  /**
   * A runAt is absolute, so only here, against the clock, can it be held to the schedule horizon
   * (the delay is checked where it is set, in EnqueueOptions).
   */
  static void checkRunAt(NewJob job, Instant now) {
    Instant runAt = job.options().runAt();
    if (runAt != null
        && Duration.between(now, runAt).compareTo(EnqueueOptions.MAX_SCHEDULE_AHEAD) > 0) {
      throw new InvalidJobException(
          job.queue(),
          "runAt "
              + runAt
              + " for queue '"
              + job.queue()
              + "' is too far ahead: at most "
              + EnqueueOptions.MAX_SCHEDULE_AHEAD.toDays()
              + " days (100 years, EnqueueOptions.MAX_SCHEDULE_AHEAD) after now; to park a job"
              + " for good, cancel it, or keep the date in your own table and enqueue nearer the"
              + " time");
    }
  }
}
