package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.time.Duration;
import java.util.List;

/**
 * A queue's flow control across the fleet: at most {@code globalConcurrency} of its jobs executing
 * at once on the database (worker slots running its jobs), at most {@code keyConcurrency} running
 * per concurrency key, and at most {@code rateLimit} job starts per {@code rateWindow}. Read from
 * {@code pgbus.queue.<name>.global-concurrency}, {@code .key-concurrency}, {@code .rate-limit} and
 * {@code .rate-window}; null parts are not set. The claim enforces the limits the database holds in
 * {@code pgbus.queue_limit}, which an engine writes at start for every queue its capsules read
 * ({@link QueueLimitStore}): see docs/schema.md, "Flow control".
 *
 * @param queue the queue
 * @param globalConcurrency running jobs of the queue across every JVM; null: no limit
 * @param keyConcurrency running jobs per concurrency key; null: 1
 * @param rateLimit job starts per window across every JVM; null: no rate limit
 * @param rateWindow the window of {@code rateLimit}, windows laid end to end from the epoch; set
 *     exactly when {@code rateLimit} is
 * @param keyFifo true: a key's jobs start in enqueue order, one at a time ({@code key-fifo}); null
 *     or false: any order, up to {@code keyConcurrency} at once
 * @param keyFifoSkipDead under {@code keyFifo}, true: a dead job no longer holds its key's later
 *     jobs; null or false: it holds them until replayed or deleted ({@code key-fifo-skip-dead})
 */
public record QueueLimit(
    String queue,
    Integer globalConcurrency,
    Integer keyConcurrency,
    Integer rateLimit,
    Duration rateWindow,
    Boolean keyFifo,
    Boolean keyFifoSkipDead) {

  /** The largest limit, as pgbus.queue_limit_set checks it in SQL. */
  public static final int MAX = 100_000;

  /** The largest rate limit, as pgbus.queue_limit_set checks it in SQL. */
  public static final int MAX_RATE = 1_000_000;

  /** The shortest and the longest rate window, as pgbus.queue_limit_set checks them in SQL. */
  public static final Duration MIN_RATE_WINDOW = Duration.ofMillis(1);

  public static final Duration MAX_RATE_WINDOW = Duration.ofDays(1);

  /** The suffixes of a queue's flow-control keys. */
  public static final List<String> SUFFIXES =
      List.of(
          "global-concurrency",
          "key-concurrency",
          "rate-limit",
          "rate-window",
          "key-fifo",
          "key-fifo-skip-dead");

  public QueueLimit {
    QueueNames.require(queue);
    within(globalConcurrency(queue), globalConcurrency, "remove the key for no limit");
    within(keyConcurrency(queue), keyConcurrency, "remove the key for 1 per key");
    Setting<Integer> rate = rateLimit(queue);
    Setting<Duration> window = rateWindow(queue);
    if (rateLimit != null && (rateLimit < 1 || rateLimit > MAX_RATE)) {
      throw new InvalidConfigException(
          rate.key(),
          rate.key()
              + "="
              + rateLimit
              + " is invalid: use 1 to "
              + MAX_RATE
              + " job starts per window (remove the key for no rate limit)");
    }
    if (rateWindow != null
        && (rateWindow.compareTo(MIN_RATE_WINDOW) < 0
            || rateWindow.compareTo(MAX_RATE_WINDOW) > 0)) {
      throw new InvalidConfigException(
          window.key(),
          window.key() + "=" + Durations.format(rateWindow) + " is invalid: use 1ms to 1d");
    }
    if (rateLimit != null && rateWindow == null) {
      throw new InvalidConfigException(
          window.key(),
          rate.key()
              + "="
              + rateLimit
              + " has no window: set "
              + window.key()
              + " too (for example 1m: at most "
              + rateLimit
              + " job starts a minute)");
    }
    if (Boolean.TRUE.equals(keyFifoSkipDead) && !Boolean.TRUE.equals(keyFifo)) {
      Setting<Boolean> fifo = keyFifo(queue);
      Setting<Boolean> skip = keyFifoSkipDead(queue);
      throw new InvalidConfigException(
          skip.key(),
          skip.key()
              + "=true needs "
              + fifo.key()
              + "=true: without FIFO per key a dead job holds nothing back");
    }
    if (Boolean.TRUE.equals(keyFifo) && keyConcurrency != null && keyConcurrency != 1) {
      throw new InvalidConfigException(
          keyConcurrency(queue).key(),
          keyConcurrency(queue).key()
              + "="
              + keyConcurrency
              + " contradicts "
              + keyFifo(queue).key()
              + "=true, which starts a key's jobs one at a time: remove one of them");
    }
    if (rateWindow != null && rateLimit == null) {
      throw new InvalidConfigException(
          rate.key(),
          window.key()
              + "="
              + Durations.format(rateWindow)
              + " has no rate: set "
              + rate.key()
              + " too (the job starts allowed per window)");
    }
  }

  /** Concurrency limits only. */
  public QueueLimit(String queue, Integer globalConcurrency, Integer keyConcurrency) {
    this(queue, globalConcurrency, keyConcurrency, null, null);
  }

  /** Concurrency and rate limits, no FIFO per key. */
  public QueueLimit(
      String queue,
      Integer globalConcurrency,
      Integer keyConcurrency,
      Integer rateLimit,
      Duration rateWindow) {
    this(queue, globalConcurrency, keyConcurrency, rateLimit, rateWindow, null, null);
  }

  /** Whether a key's jobs start in enqueue order. */
  public boolean fifo() {
    return Boolean.TRUE.equals(keyFifo);
  }

  /** Whether, under FIFO, a dead job lets its key's later jobs pass. */
  public boolean fifoSkipsDead() {
    return Boolean.TRUE.equals(keyFifoSkipDead);
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

  public static Setting<Integer> rateLimit(String queue) {
    return Setting.integer(QueuePolicy.KEY_PREFIX + queue + ".rate-limit", 1, 1, MAX_RATE);
  }

  public static Setting<Duration> rateWindow(String queue) {
    return Setting.derivedDuration(
        QueuePolicy.KEY_PREFIX + queue + ".rate-window", "none", MIN_RATE_WINDOW, MAX_RATE_WINDOW);
  }

  public static Setting<Boolean> keyFifo(String queue) {
    return Setting.flag(QueuePolicy.KEY_PREFIX + queue + ".key-fifo", false);
  }

  public static Setting<Boolean> keyFifoSkipDead(String queue) {
    return Setting.flag(QueuePolicy.KEY_PREFIX + queue + ".key-fifo-skip-dead", false);
  }

  /** The queue's limits as the source has them; parts it does not set are null. */
  public static QueueLimit from(String queue, SettingSource s) {
    return new QueueLimit(
        queue,
        s.value(globalConcurrency(queue)),
        s.value(keyConcurrency(queue)),
        s.value(rateLimit(queue)),
        s.value(rateWindow(queue)),
        s.value(keyFifo(queue)),
        s.value(keyFifoSkipDead(queue)));
  }

  /** Whether it sets no limit. */
  public boolean isEmpty() {
    return globalConcurrency == null
        && keyConcurrency == null
        && rateLimit == null
        && rateWindow == null
        && !Boolean.TRUE.equals(keyFifo)
        && !Boolean.TRUE.equals(keyFifoSkipDead);
  }
}
