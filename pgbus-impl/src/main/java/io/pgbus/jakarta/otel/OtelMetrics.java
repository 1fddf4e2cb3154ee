package io.pgbus.jakarta.otel;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.metrics.DoubleHistogram;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import io.pgbus.Outcome;
import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.JobEvents;
import io.pgbus.jakarta.PgbusMetrics;
import io.pgbus.jakarta.metrics.BlockersCache;
import io.pgbus.jakarta.metrics.DepthCache;
import jakarta.enterprise.inject.spi.Unmanaged;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.sql.DataSource;

/**
 * The same meters as the MP Metrics adapter, through the OpenTelemetry metrics API. OpenTelemetry
 * names carry no {@code _total} and no unit; its Prometheus export adds them back from the
 * instrument kind and unit, so a scrape shows the same series: counter {@code pgbus.jobs.completed}
 * (unit {@code {job}}) is {@code pgbus_jobs_completed_total}, histogram {@code pgbus.job.duration}
 * (unit {@code s}) is {@code pgbus_job_duration_seconds}. Gauges carry no unit, because unit {@code
 * 1} would make the Prometheus name end in {@code _ratio}.
 */
public final class OtelMetrics implements PgbusMetrics {

  private static final AttributeKey<String> QUEUE = AttributeKey.stringKey("queue");
  private static final AttributeKey<String> STATE = AttributeKey.stringKey("state");
  private static final AttributeKey<String> CAPSULE = AttributeKey.stringKey("capsule");
  private static final AttributeKey<String> CAUSE = AttributeKey.stringKey("cause");
  private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("outcome");
  private static final String[] DEPTH_STATES = {
    "available", "scheduled", "running", "retryable", "dead"
  };

  private final Meter meter;
  private final LongCounter enqueued;
  private final LongCounter completed;
  private final LongCounter failed;
  private final LongCounter dead;
  private final LongCounter snoozed;
  private final LongCounter cancelled;
  private final DoubleHistogram duration;
  private final DoubleHistogram wakeLatency;
  private final List<AutoCloseable> gauges = new CopyOnWriteArrayList<>();

  public OtelMetrics() {
    this(openTelemetry());
  }

  OtelMetrics(OpenTelemetry openTelemetry) {
    meter = openTelemetry.meterBuilder("io.pgbus").build();
    enqueued = counter("pgbus.jobs.enqueued", "jobs enqueued through JobQueue");
    completed = counter("pgbus.jobs.completed", "jobs whose handler completed");
    failed = counter("pgbus.jobs.failed", "failed attempts (retried or dead)");
    dead = counter("pgbus.jobs.dead", "jobs dead after their last attempt");
    snoozed = counter("pgbus.jobs.snoozed", "attempts that snoozed the job");
    cancelled = counter("pgbus.jobs.cancelled", "attempts that cancelled the job");
    duration =
        meter
            .histogramBuilder("pgbus.job.duration")
            .setDescription("handler and settle time")
            .setUnit("s")
            .build();
    wakeLatency =
        meter
            .histogramBuilder("pgbus.job.wake.latency")
            .setDescription("from when the job became due to handler start")
            .setUnit("s")
            .build();
  }

  /**
   * The server's OpenTelemetry bean (MicroProfile Telemetry; WildFly's opentelemetry subsystem),
   * else the global one, which is a no-op unless something installed an SDK.
   */
  private static OpenTelemetry openTelemetry() {
    try {
      OpenTelemetry injected =
          new Unmanaged<>(OtelHolder.class).newInstance().produce().inject().get().openTelemetry;
      if (injected != null) {
        return injected;
      }
    } catch (RuntimeException e) {
      System.getLogger(OtelMetrics.class.getName())
          .log(
              System.Logger.Level.INFO,
              "pgbus: no OpenTelemetry bean ({0}); using GlobalOpenTelemetry",
              e.toString());
    }
    return GlobalOpenTelemetry.get();
  }

  private LongCounter counter(String name, String description) {
    return meter.counterBuilder(name).setDescription(description).setUnit("{job}").build();
  }

  @Override
  public void enqueued(String queue, int count) {
    enqueued.add(count, Attributes.of(QUEUE, queue));
  }

  @Override
  public JobEvents jobEvents() {
    return new JobEvents() {
      @Override
      public void started(ClaimedJob job) {
        long lag = Duration.between(job.runAt(), Instant.now()).toNanos();
        wakeLatency.record(Math.max(0, lag) / 1e9, Attributes.of(QUEUE, job.queue()));
      }

      @Override
      public void finished(ClaimedJob job, Outcome.Kind kind, long nanos) {
        Attributes queue = Attributes.of(QUEUE, job.queue());
        duration.record(nanos / 1e9, queue);
        if (kind == null) {
          // Dead after the last attempt, or the lease was lost (then the new holder reports).
          if (job.attempt() < job.maxAttempts()) {
            return;
          }
          failed.add(1, queue);
          dead.add(1, queue);
          return;
        }
        LongCounter counter =
            switch (kind) {
              case COMPLETE -> completed;
              case RETRY -> failed;
              case SNOOZE -> snoozed;
              case CANCEL -> cancelled;
            };
        counter.add(1, queue);
      }
    };
  }

  @Override
  public void bind(Engine engine, DataSource dataSource) {
    gauges.add(
        meter
            .gaugeBuilder("pgbus.listener.delivering")
            .setDescription("1 while the LISTEN connection delivers (self-probe OK), else 0")
            .ofLongs()
            .buildWithCallback(
                m -> m.record(engine.status().listener().state().delivering() ? 1 : 0)));
    gauges.add(
        meter
            .gaugeBuilder("pgbus.jobs.expired")
            .setDescription(
                "jobs this JVM's maintenance leader cancelled, never started, for their start-by"
                    + " deadline, since start")
            .ofLongs()
            .buildWithCallback(m -> m.record(engine.status().expired())));
    gauges.add(
        meter
            .gaugeBuilder("pgbus.claims")
            .setDescription("claim statements since start")
            .ofLongs()
            .buildWithCallback(
                m -> {
                  for (EngineStatus.CapsuleStatus c : engine.status().capsules()) {
                    m.record(c.claims(), Attributes.of(CAPSULE, c.name()));
                  }
                }));
    gauges.add(
        meter
            .gaugeBuilder("pgbus.claims.empty")
            .setDescription("claim statements that found nothing, since start: polling waste")
            .ofLongs()
            .buildWithCallback(
                m -> {
                  for (EngineStatus.CapsuleStatus c : engine.status().capsules()) {
                    m.record(c.emptyClaims(), Attributes.of(CAPSULE, c.name()));
                  }
                }));
    BlockersCache blockers =
        new BlockersCache(dataSource, engine.config().queues(), Duration.ofSeconds(5));
    gauges.add(
        meter
            .gaugeBuilder("pgbus.queue.runnable")
            .setDescription(
                "waiting jobs a free slot would claim now (pgbus.queue_blockers), refreshed at most"
                    + " every 5 s: the autoscaling signal")
            .ofLongs()
            .buildWithCallback(
                m -> {
                  for (String q : engine.config().queues()) {
                    m.record(blockers.runnableNow(q), Attributes.of(QUEUE, q));
                  }
                }));
    gauges.add(
        meter
            .gaugeBuilder("pgbus.queue.blocked")
            .setDescription(
                "waiting jobs held back, by cause (pgbus.queue_blockers), refreshed at most every"
                    + " 5 s")
            .ofLongs()
            .buildWithCallback(
                m -> {
                  for (String q : engine.config().queues()) {
                    for (String cause : BlockersCache.CAUSES) {
                      m.record(blockers.blocked(q, cause), Attributes.of(QUEUE, q, CAUSE, cause));
                    }
                  }
                }));
    gauges.add(
        meter
            .gaugeBuilder("pgbus.wakes")
            .setDescription(WAKES_DESCRIPTION)
            .ofLongs()
            .buildWithCallback(
                m -> {
                  EngineStatus.Wakes w = engine.status().wakes();
                  m.record(w.local(), Attributes.of(OUTCOME, "local"));
                  m.record(w.sent(), Attributes.of(OUTCOME, "sent"));
                  m.record(w.coalesced(), Attributes.of(OUTCOME, "coalesced"));
                  m.record(w.failed(), Attributes.of(OUTCOME, "failed"));
                }));
    DepthCache depth = new DepthCache(dataSource, engine.config().queues(), Duration.ofSeconds(30));
    gauges.add(
        meter
            .gaugeBuilder("pgbus.queue.depth")
            .setDescription("jobs per queue and state, refreshed at most every 30 s")
            .ofLongs()
            .buildWithCallback(
                m -> {
                  for (String q : engine.config().queues()) {
                    for (String state : DEPTH_STATES) {
                      m.record(depth.depth(q, state), Attributes.of(QUEUE, q, STATE, state));
                    }
                  }
                }));
  }

  @Override
  public void close() {
    for (AutoCloseable g : gauges) {
      try {
        g.close();
      } catch (Exception e) {
        // The SDK is going away too; nothing left to unregister from.
      }
    }
    gauges.clear();
  }
}
