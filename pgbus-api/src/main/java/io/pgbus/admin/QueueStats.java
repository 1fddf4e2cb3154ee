package io.pgbus.admin;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * One queue at a glance.
 *
 * @param queue the queue's name
 * @param counts jobs per state; a count stops at {@link JobAdmin#COUNT_CAP} (see {@code capped})
 * @param capped the states whose count reached the cap: there are at least that many
 * @param oldestWaiting how long the queue's oldest due job has waited since its run_at; zero when
 *     no job is due
 * @param paused whether the queue is paused
 */
public record QueueStats(
    String queue,
    Map<JobState, Long> counts,
    Set<JobState> capped,
    Duration oldestWaiting,
    boolean paused) {
  public QueueStats {
    counts = Map.copyOf(counts);
    capped = Set.copyOf(capped);
  }
}
