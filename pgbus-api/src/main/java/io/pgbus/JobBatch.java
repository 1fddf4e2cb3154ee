package io.pgbus;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A group of jobs enqueued together ({@link JobQueue#enqueueBatch}) with a callback job that pgbus
 * enqueues exactly once, when every member has finished: completed, dead or cancelled. The callback
 * is enqueued by the very transaction that finishes the last member (a counter row updated in each
 * member's finishing transaction), so it holds across JVMs, crashes and rescues. Its handler reads
 * the counts per outcome with {@link JobContext#batch()} and the members' results with {@link
 * JobContext#batchResults}.
 *
 * <pre>{@code
 * EnqueuedBatch b = jobs.enqueueBatch(
 *     JobBatch.withCallback("import-done", new ImportDone(importId))
 *         .addAll("import-row", rows));
 * }</pre>
 *
 * <p>A mutable builder for one call, not thread-safe. Members take a priority and attempts from
 * their options; a run time, a delay, a unique key or dependencies are refused (a member must be
 * able to run, and count, once). A replay of a dead member makes it leave the batch: the batch
 * counted it dead when it died, keeps that count, and never fires its callback again.
 */
public final class JobBatch {

  /** The most members of one batch, as {@link JobQueue#MAX_BATCH_SIZE}. */
  public static final int MAX_SIZE = JobQueue.MAX_BATCH_SIZE;

  /** One member: its queue, payload (mapped with JSON-B) and options. */
  public record Member(String queue, Object payload, EnqueueOptions options) {
    public Member {
      QueueNames.require(queue);
      Objects.requireNonNull(payload, "payload");
      Objects.requireNonNull(options, "options");
    }
  }

  private final String callbackQueue;
  private final Object callbackPayload;
  private EnqueueOptions callbackOptions = EnqueueOptions.defaults();
  private final List<Member> members = new ArrayList<>();

  private JobBatch(String callbackQueue, Object callbackPayload) {
    QueueNames.require(callbackQueue);
    this.callbackQueue = callbackQueue;
    this.callbackPayload = Objects.requireNonNull(callbackPayload, "callbackPayload");
  }

  /** A batch, still empty, whose callback job goes to {@code queue} with {@code payload}. */
  public static JobBatch withCallback(String queue, Object payload) {
    return new JobBatch(queue, payload);
  }

  /** The callback's priority and attempts; other options are refused. */
  public JobBatch callbackOptions(EnqueueOptions options) {
    this.callbackOptions = requireSimple(callbackQueue, "the callback", options);
    return this;
  }

  /** Adds a member with default options. */
  public JobBatch add(String queue, Object payload) {
    return add(queue, payload, EnqueueOptions.defaults());
  }

  /** Adds a member; only its priority and attempts may be set. */
  public JobBatch add(String queue, Object payload, EnqueueOptions options) {
    if (members.size() >= MAX_SIZE) {
      throw new InvalidJobException(
          queue,
          "a batch holds at most "
              + MAX_SIZE
              + " jobs: split the work into several batches, or chain batches through their"
              + " callbacks");
    }
    members.add(new Member(queue, payload, requireSimple(queue, "a batch member", options)));
    return this;
  }

  /** Adds a member per payload, all to {@code queue} with default options. */
  public JobBatch addAll(String queue, List<?> payloads) {
    for (Object p : payloads) {
      add(queue, p);
    }
    return this;
  }

  public String callbackQueue() {
    return callbackQueue;
  }

  public Object callbackPayload() {
    return callbackPayload;
  }

  public EnqueueOptions callbackOptions() {
    return callbackOptions;
  }

  /** The members in the order added; read-only. */
  public List<Member> members() {
    return Collections.unmodifiableList(members);
  }

  private static EnqueueOptions requireSimple(String queue, String what, EnqueueOptions o) {
    Objects.requireNonNull(o, "options");
    if (o.runAt() != null
        || o.delay() != null
        || o.uniqueKey() != null
        || !o.afterJobs().isEmpty()) {
      throw new InvalidJobException(
          queue,
          what
              + " (queue '"
              + queue
              + "') takes only a priority and attempts, not "
              + o
              + ": enqueue delayed, unique or dependent jobs on their own");
    }
    return o;
  }
}
