package io.pgbus.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * Everything the engine is told, one small validated record per role, each validated once at
 * construction. Build one with {@link #builder()}; every setting has a named default in the record
 * that owns it. The Jakarta adapter fills it from MicroProfile Config (keys in
 * docs/configuration.md), and every error names the keys the user wrote.
 *
 * <p>Adding a setting: declare its {@link Setting} in the record of the role that reads it, add the
 * component and its line in that record's {@code from}, and list the key in docs/configuration.md.
 * The Jakarta adapter, the misspelling check and the builder pick it up from {@link #SETTINGS}.
 *
 * @param workerId names this JVM in {@code attempted_by}; defaults to host:pid
 * @param capsules the worker groups, each reading its queues
 * @param execution what every capsule shares: lease, job timeout, drain, retry
 * @param ticker the poll intervals
 * @param listener the listener's self-probe and reconnects
 * @param elector the maintenance leader's lease
 * @param maintainer the periods of the maintenance tasks
 * @param retention how long finished jobs and audit entries are kept
 * @param maxPayloadBytes the largest JSON payload accepted at enqueue
 * @param wakeMode how an enqueuing transaction wakes the workers ({@link WakeMode})
 * @param crons periodic jobs the maintenance leader enqueues (see {@link CronJob})
 * @param queuePolicies what single queues override of {@code execution} ({@link QueuePolicy}), by
 *     queue; a queue without one keeps the globals
 * @param queueLimits the flow control of single queues ({@link QueueLimit}), by queue; written to
 *     the database at start for the queues the capsules read
 * @param fairShares the fair share between tenants of single queues ({@link FairShare}), by queue;
 *     written to the database with the limits
 */
public record EngineConfig(
    String workerId,
    List<CapsuleConfig> capsules,
    ExecutionConfig execution,
    TickerConfig ticker,
    ListenerConfig listener,
    ElectorConfig elector,
    MaintainerConfig maintainer,
    RetentionConfig retention,
    int maxPayloadBytes,
    WakeMode wakeMode,
    List<CronJob> crons,
    Map<String, QueuePolicy> queuePolicies,
    Map<String, QueueLimit> queueLimits,
    Map<String, FairShare> fairShares) {

  public static final Setting<Integer> MAX_PAYLOAD_BYTES =
      Setting.integer("pgbus.max-payload-bytes", 1024 * 1024, 2, 256 * 1024 * 1024);
  public static final Setting<WakeMode> WAKE_MODE =
      Setting.choice("pgbus.wake-mode", WakeMode.class, WakeMode.COALESCED);

  /** Every setting of every role. */
  public static final List<Setting<?>> SETTINGS =
      Stream.of(
              ExecutionConfig.SETTINGS,
              RetryPolicy.SETTINGS,
              TickerConfig.SETTINGS,
              ListenerConfig.SETTINGS,
              ElectorConfig.SETTINGS,
              MaintainerConfig.SETTINGS,
              RetentionConfig.SETTINGS,
              List.<Setting<?>>of(MAX_PAYLOAD_BYTES, WAKE_MODE))
          .flatMap(List::stream)
          .toList();

  public EngineConfig {
    Objects.requireNonNull(workerId, "workerId");
    WorkerIds.check(workerId);
    capsules = List.copyOf(capsules);
    var names = new HashMap<String, CapsuleConfig>();
    for (CapsuleConfig c : capsules) {
      if (names.put(c.name(), c) != null) {
        String problem = "two capsules are named '" + c.name() + "'";
        throw new InvalidConfigException("pgbus.capsules", "pgbus.capsules: " + problem, problem);
      }
    }
    Objects.requireNonNull(execution, "execution");
    Objects.requireNonNull(ticker, "ticker");
    Objects.requireNonNull(listener, "listener");
    Objects.requireNonNull(elector, "elector");
    Objects.requireNonNull(maintainer, "maintainer");
    Objects.requireNonNull(retention, "retention");
    MAX_PAYLOAD_BYTES.atLeast(maxPayloadBytes, MAX_PAYLOAD_BYTES.min());
    Objects.requireNonNull(wakeMode, "wakeMode");
    crons = List.copyOf(crons);
    var cronNames = new HashMap<String, CronJob>();
    for (CronJob c : crons) {
      if (cronNames.put(c.name(), c) != null) {
        String problem = "two crons are named '" + c.name() + "'";
        throw new InvalidConfigException(
            CronJob.NAMES_KEY, CronJob.NAMES_KEY + ": " + problem, problem);
      }
    }
    queuePolicies = Map.copyOf(queuePolicies);
    for (var e : queuePolicies.entrySet()) {
      if (!e.getKey().equals(e.getValue().queue())) {
        throw new IllegalArgumentException("policy of " + e.getValue().queue() + " under " + e);
      }
      e.getValue().resolve(execution); // refuses a bad one now, naming its key
    }
    queueLimits = Map.copyOf(queueLimits);
    fairShares = Map.copyOf(fairShares);
  }

  /** The queue's fair share as configured here; null: none (oldest first). */
  public FairShare fairShare(String queue) {
    return fairShares.get(queue);
  }

  /** The queue's flow control as configured here: none set means no limit. */
  public QueueLimit queueLimit(String queue) {
    QueueLimit l = queueLimits.get(queue);
    return l != null ? l : new QueueLimit(queue, null, null);
  }

  /** The effective execution of a queue: its policy over the globals. */
  QueuePolicy.Resolved policy(String queue) {
    QueuePolicy p = queuePolicies.get(queue);
    return p == null
        ? new QueuePolicy.Resolved(execution.jobTimeout(), null, execution.retry())
        : p.resolve(execution);
  }

  /**
   * How long a handler of {@code queue} may run: its pgbus.queue.*.job-timeout, else the global.
   */
  public Duration jobTimeout(String queue) {
    return policy(queue).jobTimeout();
  }

  /** The backoff of {@code queue}'s failed attempts. */
  public RetryPolicy retry(String queue) {
    return policy(queue).retry();
  }

  /**
   * The start-by window of a job enqueued to {@code queue} without its own deadline ({@code
   * pgbus.queue.<name>.max-wait}); null: none.
   */
  public Duration maxWait(String queue) {
    QueuePolicy p = queuePolicies.get(queue);
    return p == null ? null : p.maxWait();
  }

  /** The attempts of a job enqueued to {@code queue} without its own; null: the enqueue default. */
  public Integer maxAttempts(String queue) {
    QueuePolicy p = queuePolicies.get(queue);
    return p == null ? null : p.maxAttempts();
  }

  /**
   * This config with {@code defaults} laid under its queue policies, part by part: what a queue's
   * own policy sets wins (in the server, MicroProfile Config over the attributes of {@code
   * Handles}). Refuses a bad result, naming the key.
   */
  public EngineConfig withPolicyDefaults(List<QueuePolicy> defaults) {
    var merged = new HashMap<>(queuePolicies);
    for (QueuePolicy d : defaults) {
      merged.merge(d.queue(), d, (mine, under) -> mine.over(under));
    }
    return new EngineConfig(
        workerId,
        capsules,
        execution,
        ticker,
        listener,
        elector,
        maintainer,
        retention,
        maxPayloadBytes,
        wakeMode,
        crons,
        merged,
        queueLimits,
        fairShares);
  }

  /**
   * How long a candidate for leadership waits for a tick to show it the leader's lease before it
   * reads the lease itself: two of the longer of the poll ceiling (an idle JVM's tick) and the
   * leader TTL, so a tick late by a whole period still stands in for the read.
   */
  public Duration leaseReadSilence() {
    Duration ceiling = ticker.ceiling();
    Duration ttl = elector.ttl();
    return (ceiling.compareTo(ttl) >= 0 ? ceiling : ttl).multipliedBy(2);
  }

  /**
   * Whether the ticker's ticks carry the listener's self-probe: only when ticks come at least as
   * often as probes are due. A probe interval set below the poll ceiling (faster detection of a
   * deaf listener) keeps the listener's own probes.
   */
  public boolean probesRideOnTicks() {
    return ticker.ceiling().compareTo(listener.probeInterval()) <= 0;
  }

  /**
   * The threads an engine's executor needs so that no job waits: a thread per slot, and, when the
   * loops run on the executor too, the listener, the ticker, the leader, the maintenance loop, the
   * job-timeout watchdog (while jobs run) and a claim loop per capsule.
   */
  public int executorThreadsNeeded(boolean loopsOnExecutor) {
    int slots = capsules.stream().mapToInt(CapsuleConfig::concurrency).sum();
    return loopsOnExecutor ? 5 + capsules.size() + slots : slots;
  }

  /** Every queue some capsule reads, in first-seen order. */
  public List<String> queues() {
    var all = new ArrayList<String>();
    for (CapsuleConfig c : capsules) {
      for (String q : c.queues()) {
        if (!all.contains(q)) {
          all.add(q);
        }
      }
    }
    return all;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Defaults, overridable one by one: any setting with {@link #set}, the common ones by name, or
   * all at once from a {@link #settings source}.
   */
  public static final class Builder {
    private String workerId = WorkerIds.local();
    private final List<CapsuleConfig> capsules = new ArrayList<>();
    private final List<CronJob> crons = new ArrayList<>();
    private final Map<String, QueuePolicy> policies = new HashMap<>();
    private final Map<String, QueueLimit> limits = new HashMap<>();
    private final Map<String, FairShare> fairs = new HashMap<>();
    private final Map<Setting<?>, Object> values = new HashMap<>();
    private SettingSource base = SettingSource.DEFAULTS;

    private final SettingSource source =
        new SettingSource() {
          @Override
          public <T extends Comparable<? super T>> T value(Setting<T> setting) {
            return values.containsKey(setting)
                ? setting.type().cast(values.get(setting))
                : base.value(setting);
          }
        };

    private Builder() {}

    /** Sets one setting; null unsets it (its default, or the {@link #settings source}'s value). */
    public <T extends Comparable<? super T>> Builder set(Setting<T> setting, T value) {
      if (value == null) {
        values.remove(setting);
      } else {
        values.put(setting, setting.type().cast(value));
      }
      return this;
    }

    /** Where settings not {@link #set} here come from (default: none, so the defaults). */
    public Builder settings(SettingSource v) {
      base = Objects.requireNonNull(v);
      return this;
    }

    public Builder workerId(String v) {
      workerId = v;
      return this;
    }

    public Builder capsule(CapsuleConfig v) {
      capsules.add(v);
      return this;
    }

    public Builder capsule(String name, int concurrency, String... queues) {
      return capsule(new CapsuleConfig(name, List.of(queues), concurrency));
    }

    /** A periodic job for the maintenance leader to enqueue. */
    public Builder cron(CronJob v) {
      crons.add(v);
      return this;
    }

    /** What one queue overrides of the execution settings; replaces its earlier policy. */
    public Builder queuePolicy(QueuePolicy v) {
      policies.put(v.queue(), v);
      return this;
    }

    /** A queue's flow control across the fleet; replaces its earlier one. */
    public Builder queueLimit(QueueLimit v) {
      limits.put(v.queue(), v);
      return this;
    }

    /** A queue's fair share between tenants; replaces its earlier one. */
    public Builder fairShare(FairShare v) {
      fairs.put(v.queue(), v);
      return this;
    }

    public Builder pollInterval(Duration v) {
      return set(TickerConfig.INTERVAL, v);
    }

    public Builder pollCeiling(Duration v) {
      return set(TickerConfig.CEILING, v);
    }

    public Builder lease(Duration v) {
      return set(ExecutionConfig.LEASE, v);
    }

    /** Defaults to {@link ExecutionConfig#defaultJobTimeout 90 %} of the lease. */
    public Builder jobTimeout(Duration v) {
      return set(ExecutionConfig.JOB_TIMEOUT, v);
    }

    public Builder drainTimeout(Duration v) {
      return set(ExecutionConfig.DRAIN_TIMEOUT, v);
    }

    public Builder retry(RetryPolicy v) {
      return set(RetryPolicy.BASE, v.base())
          .set(RetryPolicy.CAP, v.cap())
          .set(RetryPolicy.JITTER, v.jitter());
    }

    public Builder probeInterval(Duration v) {
      return set(ListenerConfig.PROBE_INTERVAL, v);
    }

    public Builder probeTimeout(Duration v) {
      return set(ListenerConfig.PROBE_TIMEOUT, v);
    }

    public Builder reconnectMin(Duration v) {
      return set(ListenerConfig.RECONNECT_MIN, v);
    }

    public Builder reconnectMax(Duration v) {
      return set(ListenerConfig.RECONNECT_MAX, v);
    }

    public Builder leaderTtl(Duration v) {
      return set(ElectorConfig.TTL, v);
    }

    public Builder rescueInterval(Duration v) {
      return set(MaintainerConfig.RESCUE_INTERVAL, v);
    }

    public Builder pruneInterval(Duration v) {
      return set(MaintainerConfig.PRUNE_INTERVAL, v);
    }

    public Builder completedRetention(Duration v) {
      return set(RetentionConfig.COMPLETED, v);
    }

    public Builder deadRetention(Duration v) {
      return set(RetentionConfig.DEAD, v);
    }

    public Builder auditRetention(Duration v) {
      return set(RetentionConfig.AUDIT, v);
    }

    public Builder horizonWarn(Duration v) {
      return set(MaintainerConfig.HORIZON_WARN, v);
    }

    public Builder pruneBatch(int v) {
      return set(RetentionConfig.BATCH, v);
    }

    public Builder maxPayloadBytes(int v) {
      return set(MAX_PAYLOAD_BYTES, v);
    }

    public Builder wakeMode(WakeMode v) {
      return set(WAKE_MODE, v);
    }

    public EngineConfig build() {
      return new EngineConfig(
          workerId,
          capsules,
          ExecutionConfig.from(source),
          TickerConfig.from(source),
          ListenerConfig.from(source),
          ElectorConfig.from(source),
          MaintainerConfig.from(source),
          RetentionConfig.from(source),
          source.valueOrDefault(MAX_PAYLOAD_BYTES),
          source.valueOrDefault(WAKE_MODE),
          crons,
          policies,
          limits,
          fairs);
    }
  }
}
