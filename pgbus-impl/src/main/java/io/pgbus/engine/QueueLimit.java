package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.util.List;

/**
 * A queue's flow control across the fleet: at most {@code globalConcurrency} of its jobs running at
 * once on the database, and at most {@code keyConcurrency} per concurrency key. Read from {@code
 * pgbus.queue.<name>.global-concurrency} and {@code .key-concurrency}; null parts are not set. The
 * claim enforces the limits the database holds in {@code pgbus.queue_limit}, which an engine writes
 * at start for every queue its capsules read ({@link QueueLimitStore}): see docs/schema.md, "Flow
 * control".
 *
 * @param queue the queue
 * @param globalConcurrency running jobs of the queue across every JVM; null: no limit
 * @param keyConcurrency running jobs per concurrency key; null: 1
 */
public record QueueLimit(String queue, Integer globalConcurrency, Integer keyConcurrency) {

  /** The largest limit, as pgbus.queue_limit_set checks it in SQL. */
  public static final int MAX = 100_000;

  /** The suffixes of a queue's flow-control keys. */
  public static final List<String> SUFFIXES = List.of("global-concurrency", "key-concurrency");

  public QueueLimit {
    QueueNames.require(queue);
    within(globalConcurrency(queue), globalConcurrency, "remove the key for no limit");
    within(keyConcurrency(queue), keyConcurrency, "remove the key for 1 per key");
  }

  private static void within(Setting<Integer> s, Integer n, String otherwise) {
    if (n != null && (n < 1 || n > MAX)) {
      throw new InvalidConfigException(
          s.key(),
          s.key() + "=" + n + " is invalid: use 1 to " + MAX + " running jobs (" + otherwise + ")");
    }
  }

  public static Setting<Integer> globalConcurrency(String queue) {
    return Setting.integer(QueuePolicy.KEY_PREFIX + queue + ".global-concurrency", 1, 1, MAX);
  }

  public static Setting<Integer> keyConcurrency(String queue) {
    return Setting.integer(QueuePolicy.KEY_PREFIX + queue + ".key-concurrency", 1, 1, MAX);
  }

  /** The queue's limits as the source has them; parts it does not set are null. */
  public static QueueLimit from(String queue, SettingSource s) {
    return new QueueLimit(queue, s.value(globalConcurrency(queue)), s.value(keyConcurrency(queue)));
  }

  /** Whether it sets no limit. */
  public boolean isEmpty() {
    return globalConcurrency == null && keyConcurrency == null;
  }
}
