package io.pgbus;

import java.util.List;
import java.util.OptionalInt;

/**
 * Enqueues jobs. Inside a Jakarta EE container the insert and its wake-up notification join the
 * caller's JTA transaction: they commit with the caller's business rows, and a rollback leaves
 * nothing behind.
 *
 * <p>Payloads are mapped to JSON with JSON-B. Queue names are identifiers: a lower-case letter
 * followed by lower-case letters, digits or underscores, at most {@value QueueNames#MAX_LENGTH}
 * characters.
 *
 * <p>Who: each job records the caller principal that enqueued it and an optional correlation id
 * ({@link EnqueueOptions#withCorrelationId}); {@link #cancel}, {@link #replay}, {@link #pause} and
 * {@link #resume} write an {@linkplain AuditEntry audit entry} with the caller and the time, in the
 * caller's transaction, readable with {@link #history(long)} and {@link #history(String, int)}.
 */
public interface JobQueue {

  /** Enqueues one job to run as soon as a worker is free and returns its id. */
  default long enqueue(String queue, Object payload) {
    return enqueue(queue, payload, EnqueueOptions.defaults());
  }

  /**
   * Enqueues one job with the given options and returns its id. With a {@linkplain
   * EnqueueOptions#withUniqueKey unique key} that a waiting or running job of the queue already
   * has, inserts nothing and returns that job's id; use {@link #enqueueIfAbsent} to tell the two
   * apart.
   */
  long enqueue(String queue, Object payload, EnqueueOptions options);

  /**
   * Enqueues a job unless one with the same queue and unique key is waiting or running (states
   * scheduled, available, running, retryable). A duplicate is not an error: nothing is inserted, no
   * notification is sent, the caller's transaction goes on, and the result carries the existing
   * job's id with {@link Enqueued#duplicate()} set.
   *
   * <pre>{@code
   * Enqueued e = jobs.enqueueIfAbsent("invoices", invoice, EnqueueOptions.defaults().withUniqueKey("order-42"));
   * if (e.duplicate()) { ... job e.id() is already on its way ... }
   * }</pre>
   *
   * <p>Inside a transaction, a concurrent enqueue of the same key waits for this transaction: it
   * becomes a duplicate if this one commits and inserts if this one rolls back.
   *
   * <p>With {@link EnqueueOptions#forPeriod} the key is held for the period, finished jobs included
   * ({@link EnqueueOptions#amongStates}); with {@link EnqueueOptions#replacing} or {@link
   * EnqueueOptions#debounce} a waiting duplicate is changed in place ({@link
   * Enqueued.Result#REPLACED}) and a running one never is ({@link Enqueued.Result#NOT_REPLACED}).
   *
   * @throws InvalidJobException when {@code options} carries no unique key
   */
  Enqueued enqueueIfAbsent(String queue, Object payload, EnqueueOptions options);

  /**
   * Enqueues many jobs of one queue in a single statement and returns their ids in input order. The
   * batch sends one notification per queue, not one per job. A unique key in {@code options} is
   * refused, since it would make every job after the first a duplicate; enqueue keyed jobs one by
   * one.
   *
   * @throws InvalidJobException when {@code payloads} holds more than {@link #MAX_BATCH_SIZE} jobs
   *     (split the batch), or a unique key is given
   */
  List<Long> enqueueAll(String queue, List<?> payloads, EnqueueOptions options);

  /**
   * The most jobs one {@link #enqueueAll} (and one {@code pgbus.enqueue_many} call in SQL) takes.
   * One statement carries the whole batch in arrays; beyond this, a batch holds its locks and its
   * memory for longer than a request should, and nears PostgreSQL's 1 GB limit on one array value.
   */
  int MAX_BATCH_SIZE = 10_000;

  /**
   * Enqueues a batch: its members and, once every member has finished (completed, dead or
   * cancelled), its callback, exactly once, in the transaction that finishes the last member. See
   * {@link JobBatch}. Joins the caller's transaction like enqueue: a rollback leaves no batch and
   * no member behind.
   *
   * @throws InvalidJobException when the batch is empty or over {@link JobBatch#MAX_SIZE}, or a
   *     payload is invalid; nothing is written then
   */
  EnqueuedBatch enqueueBatch(JobBatch batch);

  /**
   * Enqueues a workflow: a job per node and the edges between them ({@link Workflow}), in one
   * statement that joins the caller's transaction like enqueue (a rollback leaves nothing). Nodes
   * without edges are available at once; the others run when their edges are taken. The jobs a
   * member's handler enqueues through this {@code JobQueue} join the workflow ({@link
   * JobContext#workflowId()}).
   *
   * @throws InvalidJobException when the workflow is empty, has over {@link Workflow#MAX_NODES}
   *     nodes or over {@link Workflow#MAX_PARENTS} parents on a node, an edge names an unknown
   *     node, closes a cycle, or carries a predicate that is not one; the message names it, and
   *     nothing is written
   */
  EnqueuedWorkflow enqueueWorkflow(Workflow workflow);

  /**
   * Cancels a whole workflow: its waiting members are cancelled at once (together, so no failure
   * branch starts because of the cancel), the JVMs running its running members are asked to stop
   * them (as {@link #cancel}), and the workflow reads {@code cancelled}. Audited ({@code
   * workflow_cancel}). Joins the caller's transaction.
   *
   * @return how many members were cancelled or asked to stop; empty when there is no such workflow
   */
  OptionalInt cancelWorkflow(long workflowId);

  /**
   * Retries a whole workflow: its dead members are replayed (as {@link #replay}); its members
   * cancelled because a parent failed are revived to waiting, down the graph, and run when the
   * replayed parents complete. Completed members (a failure branch that ran included), branches not
   * taken and members an operator cancelled (a workflow cancel included) stay as they are. Audited
   * ({@code workflow_retry}). Joins the caller's transaction.
   *
   * @return how many members were replayed or revived; empty when there is no such workflow
   */
  OptionalInt retryWorkflow(long workflowId);

  /**
   * Cancels a job. A job that has not started yet is {@code cancelled} at once. For a running job,
   * the request is recorded and, at commit, the JVM that runs it (any JVM on the database with a
   * working listener) interrupts the handler, whose {@link JobContext#cancellationRequested()} then
   * answers {@code true}; the job ends {@code cancelled} and the handler's writes roll back. A
   * handler that ignores the interrupt runs on until its job timeout. Either way an audit entry is
   * written. Returns {@code false} when the job already finished or does not exist.
   *
   * <p>Inside the caller's transaction the cancel commits or rolls back with it; called outside
   * one, it runs in a transaction of its own, so that a cancelled job's batch and dependents (which
   * it cancels or holds in turn) change in the same commit.
   */
  boolean cancel(long jobId);

  /**
   * Makes a dead job available again with a fresh attempt budget; returns whether it was dead. A
   * dead job with a unique key stays dead while another job with its key is waiting or running.
   */
  boolean replay(long jobId);

  /**
   * Pauses a queue for every JVM on the database: no worker claims its jobs from the commit on (a
   * claim already under way may still take some). Enqueueing goes on and the jobs wait; jobs
   * already running finish normally. Joins the caller's transaction like enqueue. Returns {@code
   * false} when the queue was paused already.
   */
  boolean pause(String queue);

  /**
   * Resumes a paused queue; at commit, every JVM's workers are woken and claim the jobs that
   * waited. Returns {@code false} when the queue was not paused.
   */
  boolean resume(String queue);

  /** Whether the queue is paused now. */
  boolean isPaused(String queue);

  /**
   * The audit trail of one job, oldest first: every cancel and replay of it, with who did it and
   * when. Empty for a job nobody acted on, and for an unknown id.
   */
  List<AuditEntry> history(long jobId);

  /**
   * The latest {@code limit} audit entries of a queue (pause, resume, and the cancels and replays
   * of its jobs), newest first.
   *
   * @param limit 1 to 1000
   */
  List<AuditEntry> history(String queue, int limit);
}
