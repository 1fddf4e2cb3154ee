package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.engine.ListenerState;
import io.pgbus.it.support.Await;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.time.Duration;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * On Liberty with MicroProfile Telemetry on: a job enqueued inside a span runs its handler in a
 * span of the same trace, a child of the enqueuer's; the retry of a failed attempt is another span
 * of that trace. Checked in the container, with no exporter.
 */
@ExtendWith(ArquillianExtension.class)
class TracingIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "tracing",
            "pgbus.capsules=trace",
            "pgbus.capsule.trace.queues=it_trace",
            "pgbus.retry.base=10ms",
            "pgbus.retry.cap=50ms",
            // OpenTelemetry on for this application only (the server's SDK stays off, see
            // server.xml); spans are checked in the container, not exported.
            "otel.sdk.disabled=false",
            "otel.traces.exporter=none",
            "otel.metrics.exporter=none",
            "otel.logs.exporter=none")
        .addClasses(TracingHandler.class);
  }

  @Inject JobQueue jobs;
  @Inject Tracer tracer;
  @Inject UserTransaction tx;
  @Inject PgbusRuntime runtime;

  @Test
  void theHandlerContinuesTheEnqueuersTraceAndARetryIsAnotherSpanOfIt() throws Exception {
    Await.until(
        "the listener to deliver",
        Duration.ofSeconds(30),
        () -> runtime.engine().status().listener().state() == ListenerState.DELIVERING);
    TracingHandler.SEEN.clear();
    Span enqueuer = tracer.spanBuilder("place order").startSpan();
    try (Scope ignored = enqueuer.makeCurrent()) {
      tx.begin();
      jobs.enqueue("it_trace", new Marker("traced", false), EnqueueOptions.defaults());
      tx.commit();
    } finally {
      enqueuer.end();
    }
    SpanContext origin = enqueuer.getSpanContext();
    assertTrue(origin.isValid(), "OpenTelemetry is on in the test server: " + origin);

    Await.until(
        "two traced attempts", Duration.ofSeconds(30), () -> TracingHandler.SEEN.size() >= 2);
    SpanContext first = TracingHandler.SEEN.get(0);
    SpanContext retry = TracingHandler.SEEN.get(1);
    assertEquals(origin.getTraceId(), first.getTraceId());
    assertEquals(origin.getTraceId(), retry.getTraceId());
    assertNotEquals(origin.getSpanId(), first.getSpanId());
    assertNotEquals(first.getSpanId(), retry.getSpanId());
  }
}
