package io.pgbus;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * How a job is enqueued: when it may run, its priority inside its queue, how many attempts it gets,
 * and an optional unique key. Immutable; each {@code with...} method returns a copy.
 *
 * <p>Priority: a <em>lower</em> number runs first inside a queue (0 is the default; the range is
 * {@value #MIN_PRIORITY} to {@value #MAX_PRIORITY}). Across queues, a capsule's queue order wins
 * over priority.
 *
 * <p>Unique key: at most one job per (queue, key) may be waiting or running (states scheduled,
 * available, running, retryable). Enqueueing another one while it is inserts nothing, raises
 * nothing and returns the existing job's id (see {@link JobQueue#enqueueIfAbsent}); once the job is
 * completed, dead or cancelled, the key is free again. The database enforces it, so it holds across
 * JVMs and concurrent transactions.
 */
public final class EnqueueOptions {

  public static final int DEFAULT_MAX_ATTEMPTS = 25;
  public static final int MIN_PRIORITY = -100;
  public static final int MAX_PRIORITY = 100;

  /** The longest unique key, in characters. */
  public static final int MAX_UNIQUE_KEY_LENGTH = 255;

  /** The longest concurrency key, in characters. */
  public static final int MAX_CONCURRENCY_KEY_LENGTH = 255;

  /** The longest correlation id, in characters. */
  public static final int MAX_CORRELATION_ID_LENGTH = 128;

  /**
   * The schedule horizon: a job may be due at most this far (36,500 days, about 100 years) after it
   * is enqueued, snoozed or retried. It applies to {@link #withDelay}, to {@link #withRunAt}
   * (checked against the clock at enqueue), to {@link Outcome#snooze} and to retry backoff, and the
   * database enforces the same bound on {@code pgbus.enqueue}. Nothing real waits longer, and a
   * bound keeps every due time a number that timers and arithmetic can hold.
   */
  public static final Duration MAX_SCHEDULE_AHEAD = Duration.ofDays(36_500);

  /** maxAttempts when none was chosen: the queue's configured attempts, else the default. */
  private static final int UNCHOSEN = 0;

  private static final EnqueueOptions DEFAULTS =
      new EnqueueOptions(null, null, 0, UNCHOSEN, null, null, null, Map.of(), null, Unique.NONE);

  private final Instant runAt;
  private final Duration delay;
  private final int priority;
  private final int maxAttempts;
  private final String uniqueKey;
  private final String correlationId;
  private final String concurrencyKey;
  private final Map<Long, DependencyFailure> afterJobs; // in the order given; empty: none
  private final Instant startBy; // null: no deadline
  private final Unique unique; // what the unique key holds beyond "one waiting or running"

  /**
   * The most jobs one job may wait on ({@link #afterJobs}); the database holds the same bound. To
   * wait on more, wait on a batch's callback.
   */
  public static final int MAX_DEPENDENCIES = 100;

  private EnqueueOptions(
      Instant runAt,
      Duration delay,
      int priority,
      int maxAttempts,
      String uniqueKey,
      String correlationId,
      String concurrencyKey,
      Map<Long, DependencyFailure> afterJobs,
      Instant startBy,
      Unique unique) {
    this.runAt = runAt;
    this.delay = delay;
    this.priority = priority;
    this.maxAttempts = maxAttempts;
    this.uniqueKey = uniqueKey;
    this.correlationId = correlationId;
    this.concurrencyKey = concurrencyKey;
    this.afterJobs = afterJobs;
    this.startBy = startBy;
    this.unique = unique;
  }

  /** Run now, priority 0, {@value #DEFAULT_MAX_ATTEMPTS} attempts. */
  public static EnqueueOptions defaults() {
    return DEFAULTS;
  }

  /**
   * Runs no earlier than {@code runAt}. Replaces any delay. At enqueue, {@code runAt} may be at
   * most {@link #MAX_SCHEDULE_AHEAD} ahead of the clock, or the enqueue fails.
   */
  public EnqueueOptions withRunAt(Instant runAt) {
    return new EnqueueOptions(
        Objects.requireNonNull(runAt, "runAt"),
        null,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        concurrencyKey,
        afterJobs,
        startBy,
        unique);
  }

  /** Runs no earlier than {@code delay} after the database's clock at enqueue. Replaces runAt. */
  public EnqueueOptions withDelay(Duration delay) {
    Objects.requireNonNull(delay, "delay");
    if (delay.isNegative()) {
      throw new InvalidJobException(null, "delay must not be negative, was " + delay);
    }
    requireWithinHorizon("delay", delay);
    return new EnqueueOptions(
        null,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        concurrencyKey,
        afterJobs,
        startBy,
        unique);
  }

  public EnqueueOptions withPriority(int priority) {
    if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
      throw new InvalidJobException(
          null,
          "priority "
              + priority
              + " is out of range: use "
              + MIN_PRIORITY
              + " to "
              + MAX_PRIORITY
              + " (lower runs first)");
    }
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        concurrencyKey,
        afterJobs,
        startBy,
        unique);
  }

  public EnqueueOptions withMaxAttempts(int maxAttempts) {
    if (maxAttempts < 1 || maxAttempts > 1000) {
      throw new InvalidJobException(
          null, "maxAttempts " + maxAttempts + " is out of range: use 1 to 1000");
    }
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        concurrencyKey,
        afterJobs,
        startBy,
        unique);
  }

  /**
   * At most one job of the queue with this key may be waiting or running; see the class comment.
   * Use a key that names the work, such as {@code "order-42"} or {@code "report:2026-11"}.
   *
   * @param key 1 to {@value #MAX_UNIQUE_KEY_LENGTH} characters, not only blanks, no control
   *     characters
   */
  public EnqueueOptions withUniqueKey(String key) {
    if (key == null || key.isBlank()) {
      throw new InvalidJobException(
          null,
          "unique key must not be "
              + (key == null ? "null" : "blank")
              + ": name the work, for example withUniqueKey(\"order-42\")");
    }
    if (key.length() > MAX_UNIQUE_KEY_LENGTH) {
      throw new InvalidJobException(
          null,
          "unique key '"
              + key.substring(0, 40)
              + "...' is "
              + key.length()
              + " characters long: use at most "
              + MAX_UNIQUE_KEY_LENGTH
              + " (a hash of a longer key works)");
    }
    if (key.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidJobException(
          null,
          "unique key '"
              + key.replaceAll("\\p{Cntrl}", "?")
              + "' contains a control character: use printable characters only");
    }
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        key,
        correlationId,
        concurrencyKey,
        afterJobs,
        startBy,
        unique);
  }

  /**
   * Limits how many jobs of the queue with this key run at once, across every JVM: by default one
   * (a mutex per customer, account or document), or {@code pgbus.queue.<name>.key-concurrency}. The
   * other jobs of the key wait, and jobs of other keys run meanwhile. The claim enforces it in the
   * database (see docs/schema.md, "Flow control").
   *
   * @param key 1 to {@value #MAX_CONCURRENCY_KEY_LENGTH} characters, not only blanks, no control
   *     characters
   */
  public EnqueueOptions withConcurrencyKey(String key) {
    if (key == null || key.isBlank()) {
      throw new InvalidJobException(
          null,
          "concurrency key must not be "
              + (key == null ? "null" : "blank")
              + ": name what must not run twice at once, for example"
              + " withConcurrencyKey(\"customer-7\")");
    }
    if (key.length() > MAX_CONCURRENCY_KEY_LENGTH) {
      throw new InvalidJobException(
          null,
          "concurrency key '"
              + key.substring(0, 40)
              + "...' is "
              + key.length()
              + " characters long: use at most "
              + MAX_CONCURRENCY_KEY_LENGTH
              + " (a hash of a longer key works)");
    }
    if (key.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidJobException(
          null,
          "concurrency key '"
              + key.replaceAll("\\p{Cntrl}", "?")
              + "' contains a control character: use printable characters only");
    }
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        key,
        afterJobs,
        startBy,
        unique);
  }

  /**
   * Tags the job with a correlation id that ties it to the request or business process that caused
   * it, stored in {@code pgbus.job.correlation_id}. Without one, a job enqueued by a handler
   * inherits the correlation id of the job being handled; otherwise it has none.
   *
   * @param id 1 to {@value #MAX_CORRELATION_ID_LENGTH} characters, not only blanks, no control
   *     characters
   */
  public EnqueueOptions withCorrelationId(String id) {
    if (id == null || id.isBlank()) {
      throw new InvalidJobException(
          null,
          "correlation id must not be "
              + (id == null ? "null" : "blank")
              + ": pass the id of the request or process, for example withCorrelationId(\"order-42\")");
    }
    if (id.length() > MAX_CORRELATION_ID_LENGTH) {
      throw new InvalidJobException(
          null,
          "correlation id '"
              + id.substring(0, 40)
              + "...' is "
              + id.length()
              + " characters long: use at most "
              + MAX_CORRELATION_ID_LENGTH);
    }
    if (id.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidJobException(
          null,
          "correlation id '"
              + id.replaceAll("\\p{Cntrl}", "?")
              + "' contains a control character: use printable characters only");
    }
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        id,
        concurrencyKey,
        afterJobs,
        startBy,
        unique);
  }

  /**
   * Runs only after every one of these jobs completed (a dependency): until then the job waits,
   * unseen by the claim, and in the transaction that completes the last of them it becomes
   * available (with a wake-up), so it may run at once on any JVM. When a dependency dies or is
   * cancelled, this job is cancelled ({@link DependencyFailure#CANCEL}); use {@link
   * #afterJobs(DependencyFailure, long...)} to hold it instead. Calls add up: each dependency keeps
   * the policy it was given with. A dependency that completed already counts as done.
   *
   * <p>The handler reads its dependencies' results with {@link JobContext#dependencyResults()}.
   * Each id must be a job that exists when this one is enqueued (the enqueue fails with a clear
   * error and writes nothing otherwise; a job deleted on completion, {@code
   * pgbus.retention.completed=0}, or pruned, no longer exists). Not combined with {@link
   * #withRunAt}, {@link #withDelay} or {@link JobQueue#enqueueAll}.
   *
   * @param ids 1 to {@value #MAX_DEPENDENCIES} job ids in all
   */
  public EnqueueOptions afterJobs(long... ids) {
    return afterJobs(DependencyFailure.CANCEL, ids);
  }

  /**
   * As {@link #afterJobs(long...)}, with what a dependency that dies or is cancelled does to this
   * job.
   */
  public EnqueueOptions afterJobs(DependencyFailure onFailure, long... ids) {
    Objects.requireNonNull(onFailure, "onFailure");
    Objects.requireNonNull(ids, "ids");
    if (ids.length == 0) {
      throw new InvalidJobException(null, "afterJobs needs at least one job id");
    }
    var all = new LinkedHashMap<>(afterJobs);
    for (long id : ids) {
      if (id < 1) {
        throw new InvalidJobException(
            null, "dependency job id " + id + " is not a job id: pass ids that enqueue returned");
      }
      all.put(id, onFailure);
    }
    if (all.size() > MAX_DEPENDENCIES) {
      throw new InvalidJobException(
          null,
          "a job may wait on at most "
              + MAX_DEPENDENCIES
              + " jobs, not "
              + all.size()
              + ": put the jobs in a batch and enqueue this one as its callback");
    }
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        concurrencyKey,
        Collections.unmodifiableMap(all),
        startBy,
        unique);
  }

  /**
   * A start-by deadline: a job not claimed by {@code startBy} never runs. The claim refuses it from
   * that instant on (no attempt starts later, a retry's included), and the maintenance leader
   * cancels it soon after with the error {@code expired: not started by <startBy>} (explain code
   * {@code expired}). It must be after the clock at enqueue and after the job's run_at or delay, or
   * the enqueue fails naming it. A queue may set one for every job it gets ({@code
   * pgbus.queue.<name>.max-wait}, counted from when the job is due); this one wins. A debounce or
   * replace never moves the job's run time to or past it. Not for a batch's callback.
   */
  public EnqueueOptions startBy(Instant startBy) {
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        concurrencyKey,
        afterJobs,
        Objects.requireNonNull(startBy, "startBy"),
        unique);
  }

  /**
   * The unique key holds for {@code period} from the enqueue that takes it, whatever becomes of its
   * job: "one report per order per hour". A later enqueue with the key inside the period inserts
   * nothing and returns that job's id while the job is waiting or running, or finished in one of
   * the {@link #amongStates} (by default {@link FinishedState#COMPLETED}: a dead or cancelled job
   * frees the key so the work can be done again). The database enforces it with a claim row per key
   * ({@code pgbus.unique_claim}), taken in the enqueue's transaction, so it holds across JVMs and
   * concurrent transactions. The enqueue that takes the claim sets its period and states; the
   * enqueues that meet it are held to them. Call after {@link #withUniqueKey}.
   *
   * @param period over zero, at most {@link #MAX_SCHEDULE_AHEAD}
   */
  public EnqueueOptions forPeriod(Duration period) {
    requireUniqueKey("forPeriod(" + period + ")");
    Objects.requireNonNull(period, "period");
    if (period.isNegative() || period.isZero()) {
      throw new InvalidJobException(
          null,
          "unique period "
              + period
              + " is not positive: give a period over zero, such as"
              + " forPeriod(Duration.ofHours(1)), or drop forPeriod for one waiting or running job"
              + " per key");
    }
    requireWithinHorizon("unique period", period);
    return with(
        new Unique(
            period, unique.states, unique.replacing, unique.debounce, unique.debounceMaxWait));
  }

  /**
   * The finished states in which the job that took the key still holds it for the period (see
   * {@link #forPeriod}), such as {@code amongStates(COMPLETED, DEAD, CANCELLED)} for "once per
   * period, whatever happened". Waiting and running jobs always hold it. Call after {@link
   * #forPeriod}.
   */
  public EnqueueOptions amongStates(FinishedState... states) {
    Objects.requireNonNull(states, "states");
    if (unique.period == null) {
      throw new InvalidJobException(
          null,
          "amongStates"
              + Arrays.toString(states)
              + " needs a period: call withUniqueKey(key).forPeriod(period) first");
    }
    if (states.length == 0) {
      throw new InvalidJobException(
          null,
          "amongStates needs at least one state: for example amongStates(FinishedState.COMPLETED)");
    }
    EnumSet<FinishedState> finished = EnumSet.noneOf(FinishedState.class);
    for (FinishedState s : states) {
      finished.add(Objects.requireNonNull(s, "state"));
    }
    return with(
        new Unique(
            unique.period,
            Collections.unmodifiableSet(finished),
            unique.replacing,
            unique.debounce,
            unique.debounceMaxWait));
  }

  /**
   * When a job with the same key is waiting (scheduled, available or retryable), these of its
   * fields are replaced in place with this enqueue's, and the enqueue returns its id with {@link
   * Enqueued.Result#REPLACED} (audited as {@code replace}). A running job is never changed: the
   * enqueue inserts nothing and returns its id with {@link Enqueued.Result#NOT_REPLACED}; enqueue
   * again once it is done if the new values must run. Call after {@link #withUniqueKey}.
   */
  public EnqueueOptions replacing(ReplaceField... fields) {
    Objects.requireNonNull(fields, "fields");
    requireUniqueKey("replacing" + Arrays.toString(fields));
    if (fields.length == 0) {
      throw new InvalidJobException(
          null, "replacing needs at least one field: for example replacing(ReplaceField.PAYLOAD)");
    }
    EnumSet<ReplaceField> set = EnumSet.noneOf(ReplaceField.class);
    for (ReplaceField f : fields) {
      set.add(Objects.requireNonNull(f, "field"));
    }
    if (unique.debounce != null && set.contains(ReplaceField.RUN_AT)) {
      throw debounceSetsRunAt();
    }
    return with(
        new Unique(
            unique.period,
            unique.states,
            Collections.unmodifiableSet(set),
            unique.debounce,
            unique.debounceMaxWait));
  }

  /**
   * Debounce by unique key: the job runs {@code window} after the last enqueue of its key, but
   * never later than {@code maxWait} after the first, so a steady stream of enqueues cannot hold it
   * back for ever. The first enqueue inserts it due in {@code window}; each enqueue while it waits
   * pushes its run_at to {@code min(now + window, its creation + maxWait)} (never earlier) and
   * returns its id with {@link Enqueued.Result#REPLACED}. Add {@code
   * replacing(ReplaceField.PAYLOAD)} for "the last payload wins". A running job is never changed
   * ({@link Enqueued.Result#NOT_REPLACED}). Not with {@link #withRunAt} or {@link #withDelay}: the
   * debounce sets the run time. Call after {@link #withUniqueKey}.
   *
   * @param window over zero, at most {@code maxWait}
   * @param maxWait over zero, at most {@link #MAX_SCHEDULE_AHEAD}
   */
  public EnqueueOptions debounce(Duration window, Duration maxWait) {
    Objects.requireNonNull(window, "window");
    Objects.requireNonNull(maxWait, "maxWait");
    requireUniqueKey("debounce(" + window + ", " + maxWait + ")");
    if (window.isNegative() || window.isZero() || maxWait.isNegative() || maxWait.isZero()) {
      throw new InvalidJobException(
          null,
          "debounce window "
              + window
              + " and max wait "
              + maxWait
              + " must be positive: for example debounce(Duration.ofSeconds(5),"
              + " Duration.ofMinutes(1))");
    }
    if (window.compareTo(maxWait) > 0) {
      throw new InvalidJobException(
          null,
          "debounce window "
              + window
              + " is over its max wait "
              + maxWait
              + ": the job must run by maxWait after its first enqueue; give a window of at most"
              + " maxWait, or a longer maxWait");
    }
    requireWithinHorizon("debounce max wait", maxWait);
    if (unique.replacing.contains(ReplaceField.RUN_AT)) {
      throw debounceSetsRunAt();
    }
    return with(new Unique(unique.period, unique.states, unique.replacing, window, maxWait));
  }

  private static InvalidJobException debounceSetsRunAt() {
    return new InvalidJobException(
        null,
        "debounce sets the run time itself: drop ReplaceField.RUN_AT from replacing, or debounce");
  }

  private void requireUniqueKey(String what) {
    if (uniqueKey == null) {
      throw new InvalidJobException(
          null, what + " needs a unique key: call withUniqueKey(key) first");
    }
  }

  private EnqueueOptions with(Unique u) {
    return new EnqueueOptions(
        runAt,
        delay,
        priority,
        maxAttempts,
        uniqueKey,
        correlationId,
        concurrencyKey,
        afterJobs,
        startBy,
        u);
  }

  /**
   * The unique key's period ({@link #forPeriod}), or {@code null} for "while waiting or running".
   */
  public Duration uniquePeriod() {
    return unique.period;
  }

  /**
   * The finished states that hold the key for the period ({@link #amongStates}); empty for the
   * default, completed.
   */
  public Set<FinishedState> uniqueStates() {
    return unique.states;
  }

  /** The fields a waiting duplicate gets replaced ({@link #replacing}); empty for none. */
  public Set<ReplaceField> replacing() {
    return unique.replacing;
  }

  /** The debounce window ({@link #debounce}), or {@code null} for none. */
  public Duration debounceWindow() {
    return unique.debounce;
  }

  /** The debounce's max wait after the first enqueue, or {@code null} for none. */
  public Duration debounceMaxWait() {
    return unique.debounceMaxWait;
  }

  /** Whether the unique key has more than "one waiting or running": a period, replace, debounce. */
  public boolean hasUniqueRule() {
    return unique != Unique.NONE;
  }

  /** What the unique key holds beyond "one waiting or running"; NONE: nothing more. */
  private record Unique(
      Duration period,
      Set<FinishedState> states,
      Set<ReplaceField> replacing,
      Duration debounce,
      Duration debounceMaxWait) {
    static final Unique NONE = new Unique(null, Set.of(), Set.of(), null, null);
  }

  /** The start-by deadline, or {@code null} for none. */
  public Instant startBy() {
    return startBy;
  }

  /**
   * The jobs this one waits on, with what each one's failure does, in the order given; empty for a
   * job that waits on none.
   */
  public Map<Long, DependencyFailure> afterJobs() {
    return afterJobs;
  }

  /**
   * Throws {@link InvalidJobException} when {@code wait} (named {@code what} in the message) is
   * beyond {@link #MAX_SCHEDULE_AHEAD}.
   */
  static void requireWithinHorizon(String what, Duration wait) {
    if (wait.compareTo(MAX_SCHEDULE_AHEAD) > 0) {
      throw new InvalidJobException(
          null,
          what
              + " "
              + wait
              + " is too far ahead: at most "
              + MAX_SCHEDULE_AHEAD.toDays()
              + " days (100 years, EnqueueOptions.MAX_SCHEDULE_AHEAD); to park a job for good,"
              + " cancel it, or keep the date in your own table and enqueue nearer the time");
    }
  }

  /** The absolute start time, or {@code null}. */
  public Instant runAt() {
    return runAt;
  }

  /** The delay relative to the database clock, or {@code null}. */
  public Duration delay() {
    return delay;
  }

  public int priority() {
    return priority;
  }

  /**
   * The attempts chosen with {@link #withMaxAttempts}, else {@value #DEFAULT_MAX_ATTEMPTS}. A queue
   * may configure its own default ({@code pgbus.queue.<name>.max-attempts}, or {@code
   * Handles#maxAttempts}), which applies when none was chosen: see {@link #maxAttemptsChosen}.
   */
  public int maxAttempts() {
    return maxAttempts == UNCHOSEN ? DEFAULT_MAX_ATTEMPTS : maxAttempts;
  }

  /**
   * Whether {@link #withMaxAttempts} was called: a queue's configured attempts then do not apply.
   */
  public boolean maxAttemptsChosen() {
    return maxAttempts != UNCHOSEN;
  }

  /** The unique key, or {@code null} for an ordinary job. */
  public String uniqueKey() {
    return uniqueKey;
  }

  /** The concurrency key, or {@code null} for a job no key limit counts. */
  public String concurrencyKey() {
    return concurrencyKey;
  }

  /** The correlation id, or {@code null} to inherit the handled job's (or have none). */
  public String correlationId() {
    return correlationId;
  }

  @Override
  public String toString() {
    return "EnqueueOptions[runAt="
        + runAt
        + ", delay="
        + delay
        + ", priority="
        + priority
        + ", maxAttempts="
        + (maxAttemptsChosen() ? Integer.toString(maxAttempts) : "default")
        + (uniqueKey == null ? "" : ", uniqueKey=" + uniqueKey)
        + (correlationId == null ? "" : ", correlationId=" + correlationId)
        + (concurrencyKey == null ? "" : ", concurrencyKey=" + concurrencyKey)
        + (afterJobs.isEmpty() ? "" : ", afterJobs=" + afterJobs)
        + (startBy == null ? "" : ", startBy=" + startBy)
        + (unique == Unique.NONE ? "" : ", unique=" + unique)
        + "]";
  }
}
