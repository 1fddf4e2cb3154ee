package io.pgbus;

import java.time.Instant;

/** What a handler knows about the job it runs. */
public interface JobContext {

  long id();

  String queue();

  /** 1 on the first run, incremented on every claim (snoozes do not count). */
  int attempt();

  int maxAttempts();

  Instant createdAt();

  /**
   * Whether an operator cancelled this job while it runs ({@link JobQueue#cancel} from any JVM).
   * pgbus has then interrupted the handler's thread as well; a cooperative handler that does not
   * block checks this at safe points and stops, by returning or throwing. Whatever it returns, the
   * job ends {@code cancelled} and the handler's transaction rolls back (a {@link
   * JobTransaction#HANDLER} handler's own committed transactions stay). A handler that ignores both
   * runs on until its job timeout, as before.
   *
   * @return {@code false} unless a cancel of this very attempt was requested and heard
   */
  default boolean cancellationRequested() {
    return false;
  }

  /** The longest progress message, in characters. */
  int PROGRESS_MESSAGE_MAX = 200;

  /**
   * Reports how far the handler got, for operators: the admin API and the console show the latest
   * report while the job runs, and after. Cheap to call often: pgbus writes at most about one
   * report a second per job (the latest; one made sooner is held and written with a later report,
   * or when the handler returns), in a short statement of its own, outside the handler's
   * transaction, so it is visible at once and survives a rollback. A report that cannot be written
   * is logged and never fails the job; one made after the handler returned is not written.
   *
   * @param percent 0 to 100
   * @param message what it is doing, at most {@value #PROGRESS_MESSAGE_MAX} characters; may be null
   * @throws IllegalArgumentException when percent or message is out of bounds
   */
  default void progress(int percent, String message) {
    if (percent < 0 || percent > 100) {
      throw new IllegalArgumentException(
          "pgbus progress percent " + percent + " is out of range: use 0 to 100");
    }
    if (message != null && message.length() > PROGRESS_MESSAGE_MAX) {
      throw new IllegalArgumentException(
          "pgbus progress message of "
              + message.length()
              + " characters is too long: use at most "
              + PROGRESS_MESSAGE_MAX
              + " (it starts \""
              + message.substring(0, 40)
              + "\")");
    }
  }
}
