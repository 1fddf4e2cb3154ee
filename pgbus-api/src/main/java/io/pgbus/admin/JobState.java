package io.pgbus.admin;

import java.util.Locale;

/** The states of a job, as stored in {@code pgbus.job.state}. */
public enum JobState {
  /** Waiting for its run_at (delayed or snoozed). */
  SCHEDULED,
  /** May run now. */
  AVAILABLE,
  /** Claimed by a worker; the lease says until when. */
  RUNNING,
  /** Failed an attempt; runs again at its run_at. */
  RETRYABLE,
  COMPLETED,
  /** Failed its last attempt; its errors tell why, and a replay revives it. */
  DEAD,
  CANCELLED;

  /** The name as stored in the database and used in the REST API: {@code dead}. */
  public String sqlName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Whether the job waits to run: scheduled, available or retryable. */
  public boolean waiting() {
    return this == SCHEDULED || this == AVAILABLE || this == RETRYABLE;
  }

  /** Whether the job is finished: completed, dead or cancelled. */
  public boolean finished() {
    return this == COMPLETED || this == DEAD || this == CANCELLED;
  }

  /**
   * The state of that name ({@code dead} or {@code DEAD}).
   *
   * @throws InvalidFilterException naming the field {@code state} and the allowed names
   */
  public static JobState parse(String name) {
    if (name != null) {
      for (JobState s : values()) {
        if (s.sqlName().equalsIgnoreCase(name)) {
          return s;
        }
      }
    }
    throw new InvalidFilterException(
        "state",
        name,
        "is not a job state: use one of scheduled, available, running, retryable, completed,"
            + " dead, cancelled");
  }
}
