package io.pgbus;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;

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

  /**
   * For a batch callback: its batch's id and counts per outcome; empty for any other job. Call it
   * from the handler's thread; it reads the database in the handler's transaction.
   */
  default Optional<BatchSummary> batch() {
    return Optional.empty();
  }

  /** The most results one {@link #batchResults} call returns. */
  int MAX_RESULTS_PAGE = 1000;

  /**
   * For a batch callback: the JSON results ({@link Outcome#complete(Object)}) of its members that
   * returned one and are still kept ({@code pgbus.retention.completed}), by job id in id order,
   * after {@code afterJobId} (0 for the first page), at most {@code limit}. Empty for any other
   * job. From the handler's thread.
   *
   * @param limit 1 to {@value #MAX_RESULTS_PAGE}
   */
  default SortedMap<Long, String> batchResults(long afterJobId, int limit) {
    if (limit < 1 || limit > MAX_RESULTS_PAGE) {
      throw new IllegalArgumentException(
          "pgbus batchResults limit " + limit + " is out of range: use 1 to " + MAX_RESULTS_PAGE);
    }
    return Collections.emptySortedMap();
  }

  /**
   * For a job enqueued with {@link EnqueueOptions#afterJobs}: the JSON results of its dependencies
   * that returned one, by job id (at most {@value EnqueueOptions#MAX_DEPENDENCIES} of at most
   * {@value Outcome#MAX_RESULT_BYTES} bytes each). Taken when each dependency completed, so a
   * pruned dependency's result is still here; a dependency deleted on completion ({@code
   * pgbus.retention.completed=0}) stores none. Empty for any other job. From the handler's thread.
   */
  default Map<Long, String> dependencyResults() {
    return Map.of();
  }

  /**
   * The workflow this job belongs to ({@link JobQueue#enqueueWorkflow}): a node, or a job a
   * member's handler enqueued. Empty for any other job. Known from the claim, no read.
   */
  default OptionalLong workflowId() {
    return OptionalLong.empty();
  }
}
