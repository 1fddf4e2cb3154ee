package io.pgbus.admin;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * One queue at a glance.
 *
 * @param queue the queue's name
 * @param counts jobs per state: the finished jobs in the history exactly, the live ones up to
 *     {@link JobAdmin#COUNT_CAP} (100,000), where their count stops (see {@code capped})
 * @param capped the states with more live jobs than the cap: their count is the cap plus the
 *     history's exact count, and there are more
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
