package io.pgbus.jakarta;

import io.pgbus.InvalidJobException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The queues whose handler runs as the user who enqueued the job ({@code
 * pgbus.queue.<name>.run-as=enqueuer}), read once from MicroProfile Config; a bad value fails the
 * deployment with its key. The default ({@code container}) is how handlers always ran: without a
 * caller of their own. See docs/configuration.md, "Running a handler as the enqueuer".
 */
final class RunAsQueues {

  static final String SUFFIX = ".run-as";
  static final String ENQUEUER = "enqueuer";
  static final String CONTAINER = "container";

  /** No queue runs as its enqueuer. */
  static final RunAsQueues NONE = new RunAsQueues(Set.of());

  private final Set<String> queues;

  private RunAsQueues(Set<String> queues) {
    this.queues = Set.copyOf(queues);
  }

  /** Reads every {@code pgbus.queue.<name>.run-as} key of {@code keys}. */
  static RunAsQueues read(Function<String, Optional<String>> source, Iterable<String> keys) {
    var queues = new TreeSet<String>();
    for (var e : QueueKeys.values(SUFFIX, source, keys).entrySet()) {
      String key = QueueKeys.key(e.getKey(), SUFFIX);
      String value = e.getValue();
      if (!value.equals(ENQUEUER) && !value.equals(CONTAINER)) {
        throw PgbusSettings.refused(
            key,
            key
                + "="
                + value
                + " is not a run-as mode: set it to "
                + ENQUEUER
                + " (the handler runs as the user who enqueued the job) or "
                + CONTAINER
                + " (the default: as the container runs it)");
      }
      if (value.equals(ENQUEUER)) {
        queues.add(e.getKey());
      }
    }
    return queues.isEmpty() ? NONE : new RunAsQueues(queues);
  }

  boolean isEmpty() {
    return queues.isEmpty();
  }

  /** Whether {@code queue}'s handler runs as its enqueuer. */
  boolean runsAsEnqueuer(String queue) {
    return queues.contains(queue);
  }

  /** The queues that do, sorted. */
  Set<String> queues() {
    return new TreeSet<>(queues);
  }

  /**
   * The user a job of {@code queue} enqueued by {@code caller} (null: unauthenticated) records:
   * null for a queue that runs as the container; the caller for one that runs as its enqueuer,
   * whose enqueue is refused without one.
   */
  String runAs(String queue, String caller) {
    if (!runsAsEnqueuer(queue)) {
      return null;
    }
    if (caller == null) {
      throw new InvalidJobException(
          queue,
          "queue '"
              + queue
              + "' runs its handler as the user who enqueued the job (pgbus.queue."
              + queue
              + ".run-as=enqueuer), but this enqueue has no authenticated caller: enqueue from an"
              + " authenticated request or EJB call (an EJB with @RunAs gives a background caller"
              + " one), or set pgbus.queue."
              + queue
              + ".run-as=container");
    }
    return caller;
  }
}
