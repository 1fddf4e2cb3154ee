package io.pgbus;

import java.util.Locale;

/**
 * A state a job ends in: which of them keep holding a unique key for its period ({@link
 * EnqueueOptions#amongStates}). Waiting and running jobs always hold it.
 */
public enum FinishedState {
  /** The handler completed it. */
  COMPLETED,
  /** Its attempts ran out, or it was buried. */
  DEAD,
  /** Cancelled, or expired before it started. */
  CANCELLED;

  /** The name in SQL ({@code pgbus.job_state}). */
  public String sqlName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
