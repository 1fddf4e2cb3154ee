package io.pgbus.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Objects;

/**
 * Everything the engine is told, validated once at construction. Build one with {@link #builder()};
 * every setting has a named default. The Jakarta adapter fills it from MicroProfile Config (keys in
 * docs/configuration.md).
 *
 * @param workerId names this JVM in {@code attempted_by}; defaults to host:pid
 * @param pollInterval how often capsules poll while the listener is not delivering
 * @param pollCeiling how often capsules poll while the listener delivers (a safety net)
 * @param lease how long a claim holds a job before rescue may take it back
 * @param probeInterval how often a delivering listener checks itself with a self-NOTIFY
 * @param probeTimeout how long a self-NOTIFY may take before the listener counts as degraded
 * @param reconnectMin first wait before reconnecting the listener
 * @param reconnectMax longest wait between listener reconnects
 * @param rescueInterval base period of the lease rescue task
 * @param pruneInterval base period of the retention task
 * @param completedRetention how long completed and cancelled jobs are kept; zero deletes a job in
 *     the transaction that completes it
 * @param deadRetention how long dead jobs are kept
 * @param auditRetention how long audit entries (pgbus.audit, V7) are kept
 * @param pruneBatch rows deleted per retention statement
 * @param drainTimeout how long a stop waits for running handlers
 * @param maxPayloadBytes the largest JSON payload accepted at enqueue
 * @param leaderTtl how long a maintenance leader's lease lasts without renewal
 * @param jobTimeout how long a handler may run before its worker thread is interrupted and the
 *     attempt fails; shorter than the lease, which stays the backstop for handlers that ignore the
 *     interrupt
 * @param crons periodic jobs the maintenance leader enqueues (see {@link CronJob})
 */
public record EngineConfig(
    String workerId,
    List<CapsuleConfig> capsules,
    Duration pollInterval,
    Duration pollCeiling,
    Duration lease,
    RetryPolicy retry,
    Duration probeInterval,
    Duration probeTimeout,
    Duration reconnectMin,
    Duration reconnectMax,
    Duration rescueInterval,
    Duration pruneInterval,
    Duration completedRetention,
    Duration deadRetention,
    Duration auditRetention,
    int pruneBatch,
    Duration drainTimeout,
    int maxPayloadBytes,
    Duration leaderTtl,
    Duration jobTimeout,
    List<CronJob> crons) {

  public EngineConfig {
    Objects.requireNonNull(workerId, "workerId");
    capsules = List.copyOf(capsules);
    var names = new HashMap<String, CapsuleConfig>();
    for (CapsuleConfig c : capsules) {
      if (names.put(c.name(), c) != null) {
        throw new IllegalArgumentException("two capsules are named '" + c.name() + "'");
      }
    }
    positive("pollInterval", pollInterval);
    positive("pollCeiling", pollCeiling);
    if (pollCeiling.compareTo(pollInterval) < 0) {
      throw new IllegalArgumentException(
          "pollCeiling " + pollCeiling + " must not be shorter than pollInterval " + pollInterval);
    }
    positive("lease", lease);
    Objects.requireNonNull(retry, "retry");
    positive("probeInterval", probeInterval);
    positive("probeTimeout", probeTimeout);
    positive("reconnectMin", reconnectMin);
    positive("reconnectMax", reconnectMax);
    if (reconnectMax.compareTo(reconnectMin) < 0) {
      throw new IllegalArgumentException(
          "reconnectMax "
              + reconnectMax
              + " must not be shorter than reconnectMin "
              + reconnectMin);
    }
    positive("rescueInterval", rescueInterval);
    positive("pruneInterval", pruneInterval);
    Objects.requireNonNull(completedRetention, "completedRetention");
    if (completedRetention.isNegative()) {
      throw new IllegalArgumentException(
          "completedRetention must not be negative, was " + completedRetention);
    }
    positive("deadRetention", deadRetention);
    positive("auditRetention", auditRetention);
    if (pruneBatch < 1) {
      throw new IllegalArgumentException("pruneBatch must be at least 1, was " + pruneBatch);
    }
    Objects.requireNonNull(drainTimeout, "drainTimeout");
    if (maxPayloadBytes < 2) {
      throw new IllegalArgumentException(
          "maxPayloadBytes must be at least 2, was " + maxPayloadBytes);
    }
    positive("leaderTtl", leaderTtl);
    if (leaderTtl.compareTo(Duration.ofSeconds(1)) < 0) {
      throw new IllegalArgumentException("leaderTtl must be at least 1s, was " + leaderTtl);
    }
    positive("jobTimeout", jobTimeout);
    if (jobTimeout.compareTo(lease) >= 0) {
      // Rescue may hand the job to another worker once the lease expires: the handler has to be
      // told to stop before that, or two attempts of one job could run at once.
      throw new IllegalArgumentException(
          "jobTimeout "
              + jobTimeout
              + " must be shorter than lease "
              + lease
              + ", so a handler is interrupted before rescue may run its job elsewhere");
    }
    crons = List.copyOf(crons);
    checkCrons(crons);
  }

  private static void checkCrons(List<CronJob> crons) {
    var names = new HashMap<String, CronJob>();
    for (CronJob c : crons) {
      if (names.put(c.name(), c) != null) {
        throw new IllegalArgumentException("two crons are named '" + c.name() + "'");
      }
    }
  }

  private static void positive(String name, Duration d) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, was " + d);
    }
  }

  /** Whether completing a job deletes it (a completed-job retention of zero). */
  public boolean deletesCompleted() {
    return completedRetention.isZero();
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

  /** Defaults, overridable one by one. */
  public static final class Builder {
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
    public static final Duration DEFAULT_POLL_CEILING = Duration.ofSeconds(60);
    public static final Duration DEFAULT_LEASE = Duration.ofMinutes(5);
    public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofSeconds(60);
    public static final Duration DEFAULT_PROBE_TIMEOUT = Duration.ofSeconds(2);
    public static final Duration DEFAULT_RECONNECT_MIN = Duration.ofMillis(250);
    public static final Duration DEFAULT_RECONNECT_MAX = Duration.ofSeconds(30);
    public static final Duration DEFAULT_RESCUE_INTERVAL = Duration.ofSeconds(30);
    public static final Duration DEFAULT_PRUNE_INTERVAL = Duration.ofMinutes(5);
    public static final Duration DEFAULT_COMPLETED_RETENTION = Duration.ofDays(1);
    public static final Duration DEFAULT_DEAD_RETENTION = Duration.ofDays(14);
    public static final Duration DEFAULT_AUDIT_RETENTION = Duration.ofDays(30);
    public static final int DEFAULT_PRUNE_BATCH = 1000;
    public static final Duration DEFAULT_DRAIN_TIMEOUT = Duration.ofSeconds(30);
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
    public static final Duration DEFAULT_LEADER_TTL = Duration.ofSeconds(60);

    /** Without an explicit job timeout, handlers get this share of the lease (4m30s of 5m). */
    public static Duration defaultJobTimeout(Duration lease) {
      return lease.multipliedBy(9).dividedBy(10);
    }

    private String workerId = WorkerIds.local();
    private final List<CapsuleConfig> capsules = new ArrayList<>();
    private Duration pollInterval = DEFAULT_POLL_INTERVAL;
    private Duration pollCeiling = DEFAULT_POLL_CEILING;
    private Duration lease = DEFAULT_LEASE;
    private RetryPolicy retry = RetryPolicy.DEFAULT;
    private Duration probeInterval = DEFAULT_PROBE_INTERVAL;
    private Duration probeTimeout = DEFAULT_PROBE_TIMEOUT;
    private Duration reconnectMin = DEFAULT_RECONNECT_MIN;
    private Duration reconnectMax = DEFAULT_RECONNECT_MAX;
    private Duration rescueInterval = DEFAULT_RESCUE_INTERVAL;
    private Duration pruneInterval = DEFAULT_PRUNE_INTERVAL;
    private Duration completedRetention = DEFAULT_COMPLETED_RETENTION;
    private Duration deadRetention = DEFAULT_DEAD_RETENTION;
    private Duration auditRetention = DEFAULT_AUDIT_RETENTION;
    private int pruneBatch = DEFAULT_PRUNE_BATCH;
    private Duration drainTimeout = DEFAULT_DRAIN_TIMEOUT;
    private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
    private Duration leaderTtl = DEFAULT_LEADER_TTL;
    private Duration jobTimeout; // null: derived from the lease at build()
    private final List<CronJob> crons = new ArrayList<>();

    private Builder() {}

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

    public Builder pollInterval(Duration v) {
      pollInterval = v;
      return this;
    }

    public Builder pollCeiling(Duration v) {
      pollCeiling = v;
      return this;
    }

    public Builder lease(Duration v) {
      lease = v;
      return this;
    }

    public Builder retry(RetryPolicy v) {
      retry = v;
      return this;
    }

    public Builder probeInterval(Duration v) {
      probeInterval = v;
      return this;
    }

    public Builder probeTimeout(Duration v) {
      probeTimeout = v;
      return this;
    }

    public Builder reconnectMin(Duration v) {
      reconnectMin = v;
      return this;
    }

    public Builder reconnectMax(Duration v) {
      reconnectMax = v;
      return this;
    }

    public Builder rescueInterval(Duration v) {
      rescueInterval = v;
      return this;
    }

    public Builder pruneInterval(Duration v) {
      pruneInterval = v;
      return this;
    }

    public Builder completedRetention(Duration v) {
      completedRetention = v;
      return this;
    }

    public Builder deadRetention(Duration v) {
      deadRetention = v;
      return this;
    }

    public Builder auditRetention(Duration v) {
      auditRetention = v;
      return this;
    }

    public Builder pruneBatch(int v) {
      pruneBatch = v;
      return this;
    }

    public Builder drainTimeout(Duration v) {
      drainTimeout = v;
      return this;
    }

    public Builder maxPayloadBytes(int v) {
      maxPayloadBytes = v;
      return this;
    }

    public Builder leaderTtl(Duration v) {
      leaderTtl = v;
      return this;
    }

    /** Defaults to {@link #defaultJobTimeout 90 %} of the lease. */
    public Builder jobTimeout(Duration v) {
      jobTimeout = v;
      return this;
    }

    /** A periodic job for the maintenance leader to enqueue. */
    public Builder cron(CronJob v) {
      crons.add(v);
      return this;
    }

    public EngineConfig build() {
      return new EngineConfig(
          workerId,
          capsules,
          pollInterval,
          pollCeiling,
          lease,
          retry,
          probeInterval,
          probeTimeout,
          reconnectMin,
          reconnectMax,
          rescueInterval,
          pruneInterval,
          completedRetention,
          deadRetention,
          auditRetention,
          pruneBatch,
          drainTimeout,
          maxPayloadBytes,
          leaderTtl,
          jobTimeout != null || lease == null ? jobTimeout : defaultJobTimeout(lease),
          crons);
    }
  }
}
