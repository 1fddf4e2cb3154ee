package io.pgbus.jakarta.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.pgbus.EnqueueOptions;
import io.pgbus.Outcome;
import io.pgbus.engine.Engine;
import io.pgbus.engine.JobTracing;
import io.pgbus.engine.NewJob;
import io.pgbus.engine.RetryPolicy;
import io.pgbus.engine.TraceContext;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The OpenTelemetry adapter on a real SDK and a real engine: the handler's span is a child of the
 * enqueuer's, each attempt is a span of its own in the same trace, the span names the job and
 * records the outcome; outside a span nothing is stored, and a no-op OpenTelemetry turns it off.
 */
class OtelTracingTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
  @RegisterExtension final TestEngines engines = new TestEngines(db);

  /** Keeps every ended span, as a collector would receive it. */
  static final class Recorder implements SpanExporter {
    final List<SpanData> spans = new CopyOnWriteArrayList<>();

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.addAll(batch);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  private final Recorder recorder = new Recorder();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(recorder)).build();
  private final OpenTelemetry otel =
      new OpenTelemetry() {
        @Override
        public io.opentelemetry.api.trace.TracerProvider getTracerProvider() {
          return provider;
        }

        @Override
        public io.opentelemetry.context.propagation.ContextPropagators getPropagators() {
          return io.opentelemetry.context.propagation.ContextPropagators.noop();
        }
      };

  @AfterEach
  void close() {
    provider.close();
  }

  @Test
  void theHandlerRunsInAChildSpanOfTheEnqueuerAndARetryIsAnotherSpanOfTheSameTrace()
      throws Exception {
    JobTracing tracing = OtelTracing.on(otel);
    var seenInHandler = new CopyOnWriteArrayList<String>();
    Engine engine =
        engines.start(
            engines
                .builder(
                    engines
                        .config()
                        .capsule("main", 2, "traced")
                        .retry(new RetryPolicy(Duration.ofMillis(1), Duration.ofMillis(5), 0))
                        .build())
                .tracing(tracing)
                .jobs(
                    (job, tx) -> {
                      seenInHandler.add(Span.current().getSpanContext().getTraceId());
                      if (job.attempt() == 1) {
                        throw new IllegalStateException("first attempt fails");
                      }
                      return Outcome.complete();
                    }));
    TestEngines.awaitDelivering(engine);

    Span enqueuer = otel.getTracer("test").spanBuilder("place order").startSpan();
    long id;
    try (Scope ignored = enqueuer.makeCurrent();
        Connection c = db.connect()) {
      id = engine.jobs().enqueue(c, new NewJob("traced", "{}", EnqueueOptions.defaults()));
    } finally {
      enqueuer.end();
    }

    Await.until("two attempts traced", Duration.ofSeconds(20), () -> recorder.spans.size() >= 3);
    List<SpanData> attempts =
        recorder.spans.stream().filter(s -> s.getKind() == SpanKind.CONSUMER).toList();
    String traceId = enqueuer.getSpanContext().getTraceId();

    assertThat(attempts).hasSize(2);
    assertThat(seenInHandler).containsExactly(traceId, traceId);
    assertThat(attempts)
        .allSatisfy(
            s -> {
              assertThat(s.getTraceId()).isEqualTo(traceId);
              assertThat(s.getParentSpanId()).isEqualTo(enqueuer.getSpanContext().getSpanId());
              assertThat(s.getName()).isEqualTo("traced process");
              assertThat(s.getAttributes().get(OtelTracing.SYSTEM)).isEqualTo("pgbus");
              assertThat(s.getAttributes().get(OtelTracing.DESTINATION)).isEqualTo("traced");
              assertThat(s.getAttributes().get(OtelTracing.MESSAGE_ID))
                  .isEqualTo(Long.toString(id));
            });
    assertThat(attempts.get(0).getSpanId()).isNotEqualTo(attempts.get(1).getSpanId());

    SpanData failed = attempts.get(0);
    assertThat(failed.getAttributes().get(OtelTracing.ATTEMPT)).isEqualTo(1L);
    assertThat(failed.getAttributes().get(OtelTracing.OUTCOME)).isEqualTo("failure");
    assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(failed.getEvents()).anySatisfy(e -> assertThat(e.getName()).isEqualTo("exception"));

    SpanData completed = attempts.get(1);
    assertThat(completed.getAttributes().get(OtelTracing.ATTEMPT)).isEqualTo(2L);
    assertThat(completed.getAttributes().get(OtelTracing.OUTCOME)).isEqualTo("complete");
    assertThat(completed.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
  }

  @Test
  void outsideASpanNothingIsCaptured() {
    assertThat(OtelTracing.on(otel).capture()).isNull();
  }

  @Test
  void insideASpanItsW3cContextIsCaptured() {
    Span span = otel.getTracer("test").spanBuilder("s").startSpan();
    try (Scope ignored = span.makeCurrent()) {
      TraceContext captured = OtelTracing.on(otel).capture();
      assertThat(captured.traceParent())
          .isEqualTo(
              "00-"
                  + span.getSpanContext().getTraceId()
                  + "-"
                  + span.getSpanContext().getSpanId()
                  + "-"
                  + span.getSpanContext().getTraceFlags().asHex());
    } finally {
      span.end();
    }
  }

  @Test
  void aNoopOpenTelemetryTurnsTracingOff() {
    assertThat(OtelTracing.on(OpenTelemetry.noop())).isSameAs(JobTracing.NONE);
  }
}
