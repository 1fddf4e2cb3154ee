package io.pgbus.admin;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * One queue at a glance.
 *
 * @param queue the queue's name
 * @param counts jobs per state: the finished jobs in the history exactly; the live ones exactly up
 *     to {@link JobAdmin#COUNT_CAP} where the database's statistics put them at most there, else
 *     the statistics' estimate (see {@code estimated} and {@code capped})
 * @param capped the states the statistics had small but with more live jobs than the cap: their
 *     count is the cap plus the history's exact count, and there are more
 * @param estimated the states whose live jobs were not counted: their count is the planner's
 *     estimate (as fresh as the last ANALYZE of the table) plus the history's exact count
 * @param oldestWaiting how long the queue's oldest due job has waited since its run_at; zero when
 *     no job is due
 * @param paused whether the queue is paused
 */
public record QueueStats(
    String queue,
    Map<JobState, Long> counts,
    Set<JobState> capped,
    Set<JobState> estimated,
    Duration oldestWaiting,
    boolean paused) {
  public QueueStats {
    counts = Map.copyOf(counts);
    capped = Set.copyOf(capped);
    estimated = Set.copyOf(estimated);
  }

  /** Counts without estimates, as before {@code estimated} (every count exact or capped). */
  public QueueStats(
      String queue,
      Map<JobState, Long> counts,
      Set<JobState> capped,
      Duration oldestWaiting,
      boolean paused) {
    this(queue, counts, capped, Set.of(), oldestWaiting, paused);
  }
}
