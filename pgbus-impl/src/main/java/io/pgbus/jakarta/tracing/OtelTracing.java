package io.pgbus.jakarta.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.pgbus.Outcome;
import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.JobFunction;
import io.pgbus.engine.JobTracing;
import io.pgbus.engine.TraceContext;
import jakarta.enterprise.inject.spi.CDI;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Tracing through OpenTelemetry (MicroProfile Telemetry on Liberty, WildFly's opentelemetry
 * subsystem). At enqueue it stores the current span's W3C context with the job; each attempt's
 * handler runs in a CONSUMER span that is a child of that context: one trace per business
 * operation, each attempt (retries, snoozes) a span of its own in it. Public for the reflective
 * load in {@link io.pgbus.jakarta.PgbusTracing}.
 */
public final class OtelTracing implements JobTracing {

  static final AttributeKey<String> SYSTEM = AttributeKey.stringKey("messaging.system");
  static final AttributeKey<String> DESTINATION =
      AttributeKey.stringKey("messaging.destination.name");
  static final AttributeKey<String> MESSAGE_ID = AttributeKey.stringKey("messaging.message.id");
  static final AttributeKey<String> OPERATION = AttributeKey.stringKey("messaging.operation");
  static final AttributeKey<Long> ATTEMPT = AttributeKey.longKey("pgbus.job.attempt");
  static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("pgbus.job.outcome");

  private static final TextMapGetter<TraceContext> STORED =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(TraceContext carrier) {
          return List.of("traceparent", "tracestate");
        }

        @Override
        public String get(TraceContext carrier, String key) {
          if (carrier == null) {
            return null;
          }
          return switch (key) {
            case "traceparent" -> carrier.traceParent();
            case "tracestate" -> carrier.traceState();
            default -> null;
          };
        }
      };

  private final Tracer tracer;

  private OtelTracing(Tracer tracer) {
    this.tracer = tracer;
  }

  /**
   * The adapter on the server's OpenTelemetry, or {@link JobTracing#NONE} when it is the no-op (no
   * SDK, or {@code otel.sdk.disabled=true}): then nothing is captured and no span is made.
   */
  public static JobTracing create() {
    return on(serverOpenTelemetry());
  }

  /** The adapter on {@code otel}, or {@link JobTracing#NONE} when that is the no-op. */
  static JobTracing on(OpenTelemetry otel) {
    if (otel.getTracerProvider() == TracerProvider.noop()) {
      return JobTracing.NONE;
    }
    return new OtelTracing(otel.getTracer("io.pgbus"));
  }

  // MicroProfile Telemetry (Liberty's mpTelemetry, WildFly's opentelemetry subsystem) offers the
  // application's OpenTelemetry as a CDI bean. GlobalOpenTelemetry is not asked: where nothing
  // set it, get() would fix it to the no-op for the whole JVM, and a later set() by the
  // application or an agent would then fail.
  private static OpenTelemetry serverOpenTelemetry() {
    try {
      var bean = CDI.current().select(OpenTelemetry.class);
      if (bean.isResolvable()) {
        return bean.get();
      }
    } catch (RuntimeException | LinkageError noCdi) {
      // No CDI here: no OpenTelemetry to use.
    }
    return OpenTelemetry.noop();
  }

  @Override
  public TraceContext capture() {
    // The cheap test first: outside any span there is nothing to store.
    if (!Span.current().getSpanContext().isValid()) {
      return null;
    }
    Map<String, String> headers = new HashMap<>(4);
    W3CTraceContextPropagator.getInstance().inject(Context.current(), headers, Map::put);
    return TraceContext.of(headers.get("traceparent"), headers.get("tracestate"));
  }

  @Override
  public JobFunction around(JobFunction jobs) {
    return (job, connection) -> {
      Span span = start(job.claimed());
      Outcome outcome;
      try (Scope ignored = span.makeCurrent()) {
        outcome = jobs.run(job, connection);
      } catch (Throwable t) {
        span.setAttribute(OUTCOME, "failure");
        span.recordException(t);
        span.setStatus(StatusCode.ERROR, String.valueOf(t.getMessage()));
        span.end();
        throw t;
      }
      Outcome.Kind kind = outcome == null ? Outcome.Kind.COMPLETE : outcome.kind();
      span.setAttribute(OUTCOME, kind.name().toLowerCase(Locale.ROOT));
      span.end();
      return outcome;
    };
  }

  private Span start(ClaimedJob job) {
    // Child of the enqueuer's span: the handler's work belongs to the operation that asked for
    // it, and a retry is one more span of the same trace. Without a stored context, a new trace.
    Context parent =
        job.trace() == null
            ? Context.root()
            : W3CTraceContextPropagator.getInstance().extract(Context.root(), job.trace(), STORED);
    return tracer
        .spanBuilder(job.queue() + " process")
        .setParent(parent)
        .setSpanKind(SpanKind.CONSUMER)
        .setAttribute(SYSTEM, "pgbus")
        .setAttribute(OPERATION, "process")
        .setAttribute(DESTINATION, job.queue())
        .setAttribute(MESSAGE_ID, Long.toString(job.id()))
        .setAttribute(ATTEMPT, (long) job.attempt())
        .startSpan();
  }
}
