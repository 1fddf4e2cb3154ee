package io.pgbus.admin;

import java.util.List;
import java.util.Objects;

/**
 * Why a job is in its state ({@link JobAdmin#explain}): for a waiting job, what holds it back, most
 * blocking first ({@link Reason#RUNNABLE_NOW} when nothing does); for a running one, where and
 * since when; for a finished one, why and when.
 *
 * @param job the job's id
 * @param queue its queue
 * @param state its state when explained
 * @param reasons at least one, most blocking first
 */
public record Explanation(long job, String queue, JobState state, List<Reason> reasons) {
  public Explanation {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(state, "state");
    reasons = List.copyOf(reasons);
  }

  /** The codes of the reasons, in order. */
  public List<String> codes() {
    return reasons.stream().map(Reason::code).toList();
  }

  /** This explanation without error texts, as shown to callers for whom payloads are masked. */
  public Explanation withoutErrors() {
    return new Explanation(job, queue, state, reasons.stream().map(Reason::withoutError).toList());
  }
}
