package io.pgbus.jakarta.metrics;

import io.pgbus.Outcome;
import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.JobEvents;
import io.pgbus.jakarta.PgbusMetrics;
import jakarta.enterprise.inject.spi.Unmanaged;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.ToLongFunction;
import javax.sql.DataSource;
import org.eclipse.microprofile.metrics.Metadata;
import org.eclipse.microprofile.metrics.MetricRegistry;
import org.eclipse.microprofile.metrics.MetricUnits;
import org.eclipse.microprofile.metrics.Tag;

/**
 * pgbus metrics in the application registry, with absolute, stable names:
 *
 * <ul>
 *   <li>counters {@code pgbus.jobs.enqueued|completed|failed|dead|snoozed|cancelled}, tag queue
 *   <li>timers {@code pgbus.job.duration} (handler and settle) and {@code pgbus.job.wake.latency}
 *       (from when the job became due to handler start), tag queue
 *   <li>gauges {@code pgbus.queue.depth} (tags queue, state; cached, see {@link DepthCache}),
 *       {@code pgbus.queue.runnable} (tag queue) and {@code pgbus.queue.blocked} (tags queue,
 *       cause; both cached 5 s, see {@link BlockersCache}), {@code pgbus.listener.delivering} (1 or
 *       0), {@code pgbus.claims} and {@code pgbus.claims.empty} (totals since start, tag capsule:
 *       the second shows polling waste)
 * </ul>
 */
public final class MpMetrics implements PgbusMetrics {

  /** How long runnable-now and blocked-by-cause are reused between scrapes. */
  static final Duration BLOCKERS_MAX_AGE = Duration.ofSeconds(5);

  private static final String[] DEPTH_STATES = {
    "available", "scheduled", "running", "retryable", "dead"
  };

  private volatile MetricRegistry registry;
  private boolean warned;
  private Engine pendingEngine;
  private DataSource pendingDataSource;

  public MpMetrics() {}

  /**
   * The application registry, or null while the server has not made it yet: during a startup
   * singleton's @PostConstruct, Liberty's producer can still return null. Gauges are registered the
   * first time it is there.
   */
  private MetricRegistry registry() {
    MetricRegistry r = registry;
    if (r != null) {
      return r;
    }
    synchronized (this) {
      if (registry == null) {
        MetricRegistry found;
        try {
          found =
              new Unmanaged<>(RegistryHolder.class).newInstance().produce().inject().get().registry;
        } catch (RuntimeException e) {
          found = null;
          if (!warned) {
            warned = true;
            System.getLogger(MpMetrics.class.getName())
                .log(
                    System.Logger.Level.WARNING,
                    "pgbus: no MetricRegistry yet ({0}); metrics start"
                        + " when the server provides one",
                    e.toString());
          }
        }
        if (found == null) {
          return null;
        }
        registry = found;
        if (pendingEngine != null) {
          registerGauges(found, pendingEngine, pendingDataSource);
          pendingEngine = null;
          pendingDataSource = null;
        }
      }
      return registry;
    }
  }

  @Override
  public void enqueued(String queue, int count) {
    MetricRegistry r = registry();
    if (r != null) {
      r.counter("pgbus.jobs.enqueued", new Tag("queue", queue)).inc(count);
    }
  }

  @Override
  public JobEvents jobEvents() {
    return new JobEvents() {
      @Override
      public void started(ClaimedJob job) {
        MetricRegistry registry = registry();
        if (registry == null) {
          return;
        }
        Instant due = job.runAt();
        long lag = Duration.between(due, Instant.now()).toNanos();
        registry
            .timer("pgbus.job.wake.latency", new Tag("queue", job.queue()))
            .update(Duration.ofNanos(Math.max(0, lag)));
      }

      @Override
      public void finished(ClaimedJob job, Outcome.Kind kind, long nanos) {
        MetricRegistry registry = registry();
        if (registry == null) {
          return;
        }
        Tag queue = new Tag("queue", job.queue());
        registry.timer("pgbus.job.duration", queue).update(Duration.ofNanos(nanos));
        String counter;
        if (kind == null) {
          // Dead after the last attempt, or the lease was lost (then the new holder reports).
          if (job.attempt() < job.maxAttempts()) {
            return;
          }
          registry.counter("pgbus.jobs.failed", queue).inc();
          counter = "pgbus.jobs.dead";
        } else {
          counter =
              switch (kind) {
                case COMPLETE -> "pgbus.jobs.completed";
                case RETRY -> "pgbus.jobs.failed";
                case SNOOZE -> "pgbus.jobs.snoozed";
                case CANCEL -> "pgbus.jobs.cancelled";
              };
        }
        registry.counter(counter, queue).inc();
      }
    };
  }

  @Override
  public void bind(Engine engine, DataSource dataSource) {
    synchronized (this) {
      pendingEngine = engine;
      pendingDataSource = dataSource;
    }
    registry();
  }

  private static void registerGauges(
      MetricRegistry registry, Engine engine, DataSource dataSource) {
    registry.gauge(
        Metadata.builder()
            .withName("pgbus.listener.delivering")
            .withDescription("1 while the LISTEN connection delivers (self-probe OK), else 0")
            .build(),
        engine,
        e -> e.status().listener().state().delivering() ? 1 : 0);
    registry.gauge(
        Metadata.builder()
            .withName("pgbus.jobs.expired")
            .withDescription(
                "jobs this JVM's maintenance leader cancelled, never started, for their start-by"
                    + " deadline, since start")
            .build(),
        engine,
        e -> e.status().expired());
    for (EngineStatus.CapsuleStatus c : engine.status().capsules()) {
      String name = c.name();
      Tag capsule = new Tag("capsule", name);
      registry.gauge(
          Metadata.builder()
              .withName("pgbus.claims")
              .withDescription("claim statements since start")
              .build(),
          engine,
          e -> e.status().capsule(name).claims(),
          capsule);
      registry.gauge(
          Metadata.builder()
              .withName("pgbus.claims.empty")
              .withDescription("claim statements that found nothing, since start: polling waste")
              .build(),
          engine,
          e -> e.status().capsule(name).emptyClaims(),
          capsule);
    }
    BlockersCache blockers =
        new BlockersCache(dataSource, engine.config().queues(), BLOCKERS_MAX_AGE);
    for (String q : engine.config().queues()) {
      registry.gauge(
          Metadata.builder()
              .withName("pgbus.queue.runnable")
              .withDescription(
                  "waiting jobs a free slot would claim now (pgbus.queue_blockers), refreshed at"
                      + " most every 5 s: the autoscaling signal")
              .withUnit(MetricUnits.NONE)
              .build(),
          blockers,
          b -> b.runnableNow(q),
          new Tag("queue", q));
      for (String cause : BlockersCache.CAUSES) {
        registry.gauge(
            Metadata.builder()
                .withName("pgbus.queue.blocked")
                .withDescription(
                    "waiting jobs held back, by cause (pgbus.queue_blockers), refreshed at most"
                        + " every 5 s")
                .withUnit(MetricUnits.NONE)
                .build(),
            blockers,
            b -> b.blocked(q, cause),
            new Tag("queue", q),
            new Tag("cause", cause));
      }
    }
    Map<String, ToLongFunction<EngineStatus.Wakes>> wakes =
        Map.of(
            "local", EngineStatus.Wakes::local,
            "sent", EngineStatus.Wakes::sent,
            "coalesced", EngineStatus.Wakes::coalesced,
            "failed", EngineStatus.Wakes::failed);
    wakes.forEach(
        (outcome, count) ->
            registry.gauge(
                Metadata.builder()
                    .withName("pgbus.wakes")
                    .withDescription(WAKES_DESCRIPTION)
                    .build(),
                engine,
                e -> count.applyAsLong(e.status().wakes()),
                new Tag("outcome", outcome)));
    DepthCache depth = new DepthCache(dataSource, engine.config().queues(), Duration.ofSeconds(30));
    for (String q : engine.config().queues()) {
      for (String state : DEPTH_STATES) {
        registry.gauge(
            Metadata.builder()
                .withName("pgbus.queue.depth")
                .withDescription("jobs per queue and state, refreshed at most every 30 s")
                .withUnit(MetricUnits.NONE)
                .build(),
            depth,
            d -> d.depth(q, state),
            new Tag("queue", q),
            new Tag("state", state));
      }
    }
  }
}
