package io.pgbus.admin;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One queue's waiting jobs by what holds them back ({@link JobAdmin#blockers}): {@code waiting =
 * runnableNow + } the sum of {@code blockedBy}, each job counted under its first cause.
 *
 * @param queue the queue's name
 * @param waiting jobs that wait (scheduled, available, retryable)
 * @param runnableNow of those, how many a free slot that reads the queue would claim this instant:
 *     the number an autoscaler scales on
 * @param blockedBy the rest by cause, a {@link Reason} code (waiting_on_dependencies,
 *     retry_backoff, due_later, queue_paused, key_limit, fifo_head_blocked, rate_window_spent,
 *     global_limit), in that order; causes without a job are left out
 */
public record QueueBlockers(
    String queue, long waiting, long runnableNow, Map<String, Long> blockedBy) {
  public QueueBlockers {
    Objects.requireNonNull(queue, "queue");
    blockedBy = Collections.unmodifiableMap(new LinkedHashMap<>(blockedBy));
  }
}
