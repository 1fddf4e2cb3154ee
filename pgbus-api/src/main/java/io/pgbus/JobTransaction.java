package io.pgbus;

/**
 * Which transaction a handler runs in, declared with {@link Handles#transaction()}.
 *
 * <p>{@link #CONTAINER}, the default, fits almost every job: the handler's writes and the job's
 * completion commit together or not at all. {@link #HANDLER} is for jobs that run longer than a
 * transaction may last (the JTA transaction timeout: 120 s by default on Open Liberty, 300 s on
 * WildFly): reports, exports, imports, re-indexing.
 */
public enum JobTransaction {
  /**
   * One container-managed transaction per attempt: the handler runs in it, and the job's completion
   * (or snooze, or cancel) commits in it too, so a completed job's writes are always committed and
   * a failed, timed-out or cancelled attempt's writes are always rolled back. The attempt must end
   * within the transaction timeout.
   */
  CONTAINER,

  /**
   * The handler runs in no transaction of pgbus's: it opens its own ({@code UserTransaction},
   * {@code @Transactional}, a {@code REQUIRES_NEW} EJB method) as often as it likes, or none. The
   * job's completion, snooze, cancel or failure is then fenced on the attempt and committed in a
   * short transaction of its own. The job timeout still bounds the run and an operator's cancel
   * still interrupts it, but nothing the handler committed is rolled back.
   *
   * <p>The trade-off: completion is no longer atomic with the handler's writes. A crash, a lost
   * lease or a failure to record the completion after the handler committed reruns the job, so such
   * a handler must be idempotent. Jobs of these queues never share a transaction with others: a
   * capsule that reads them needs {@code jobs-per-transaction} 1.
   */
  HANDLER
}
