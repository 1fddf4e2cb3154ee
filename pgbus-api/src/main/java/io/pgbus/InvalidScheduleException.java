package io.pgbus;

/**
 * A schedule request was refused before anything was written: a bad name, cron expression, zone,
 * queue, payload or option, a name that is taken, or one that does not exist. The message names the
 * value and how to fix it; {@link #schedule()} names the schedule.
 */
public class InvalidScheduleException extends PgbusException {
  private static final long serialVersionUID = 1L;

  private final String schedule;

  public InvalidScheduleException(String schedule, String message) {
    super(message);
    this.schedule = schedule;
  }

  /** The schedule's name as given (may be invalid or null). */
  public String schedule() {
    return schedule;
  }
}
