package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.pgbus.JobQueue;
import io.pgbus.engine.ListenerState;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.OtlpReceiver;
import io.pgbus.it.support.OtlpSpans;
import io.pgbus.it.support.OtlpSpans.ExportedSpan;
import io.pgbus.it.support.Protobuf;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.inject.Inject;
import jakarta.transaction.UserTransaction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What a collector receives: the server's OpenTelemetry SDK (MicroProfile Telemetry, configured for
 * this application only) exports its spans over OTLP/HTTP to a stand-in collector in the test, and
 * the test reads the trace from there. A job enqueued inside a span and failing once makes two
 * CONSUMER spans, each a child of the enqueuer's span, with the job id, queue, attempt and outcome.
 */
@ExtendWith(ArquillianExtension.class)
class TraceExportIT {

  private static final String QUEUE = "it_trace_export";

  @Deployment
  static WebArchive deployment() {
    int port = OtlpReceiver.freePort();
    var config =
        new ArrayList<>(
            List.of(
                "pgbus.capsules=export",
                "pgbus.capsule.export.queues=" + QUEUE,
                "pgbus.retry.base=10ms",
                "pgbus.retry.cap=50ms"));
    config.addAll(OtlpReceiver.tracesConfig(port));
    return PgbusWars.of("trace-export", config.toArray(String[]::new))
        .addClasses(TracingHandler.class)
        .addClasses(OtlpReceiver.class, OtlpSpans.class, ExportedSpan.class, Protobuf.class)
        // The port chosen here, on the client, for the receiver the test starts in the server.
        .addAsResource(new StringAsset(Integer.toString(port)), "otlp-port");
  }

  @Inject JobQueue jobs;
  @Inject Tracer tracer;
  @Inject UserTransaction tx;
  @Inject PgbusRuntime runtime;

  @Test
  void theExportedTraceHasTheEnqueuerAndOneConsumerSpanPerAttemptAsItsChildren() throws Exception {
    int port;
    try (var in = TraceExportIT.class.getClassLoader().getResourceAsStream("otlp-port")) {
      port = Integer.parseInt(new String(in.readAllBytes(), StandardCharsets.US_ASCII));
    }
    try (OtlpReceiver receiver = new OtlpReceiver(port)) {
      Await.until(
          "the listener to deliver",
          Duration.ofSeconds(30),
          () -> runtime.engine().status().listener().state() == ListenerState.DELIVERING);
      Span enqueuer = tracer.spanBuilder("place order").startSpan();
      long id;
      try (Scope ignored = enqueuer.makeCurrent()) {
        tx.begin();
        id = jobs.enqueue(QUEUE, new Marker(UUID.randomUUID().toString(), false));
        tx.commit();
      } finally {
        enqueuer.end();
      }
      SpanContext origin = enqueuer.getSpanContext();
      assertTrue(origin.isValid(), "OpenTelemetry is on for this application: " + origin);

      String jobId = Long.toString(id);
      var attempts = new AtomicReference<List<ExportedSpan>>(List.of());
      Await.until(
          "two exported attempts of job " + id + " and the enqueuer's span",
          Duration.ofSeconds(60),
          () -> {
            List<ExportedSpan> all = OtlpSpans.all(receiver.traces());
            attempts.set(
                all.stream()
                    .filter(s -> jobId.equals(s.attributes().get("messaging.message.id")))
                    .sorted(Comparator.comparing(s -> s.attributes().get("pgbus.job.attempt")))
                    .toList());
            return attempts.get().size() >= 2
                && all.stream().anyMatch(s -> s.spanId().equals(origin.getSpanId()));
          });

      List<ExportedSpan> spans = attempts.get();
      assertEquals(2, spans.size(), spans.toString());
      ExportedSpan first = spans.get(0);
      ExportedSpan retry = spans.get(1);
      for (ExportedSpan s : spans) {
        assertEquals(origin.getTraceId(), s.traceId(), "same trace as the enqueuer: " + s);
        assertEquals(origin.getSpanId(), s.parentSpanId(), "child of the enqueuer's span: " + s);
        assertEquals(OtlpSpans.CONSUMER, s.kind(), s.toString());
        assertEquals(QUEUE + " process", s.name(), s.toString());
        assertEquals("pgbus", s.attributes().get("messaging.system"), s.toString());
        assertEquals(QUEUE, s.attributes().get("messaging.destination.name"), s.toString());
      }
      assertNotEquals(first.spanId(), retry.spanId(), "the retry is a span of its own");
      assertEquals(
          Map.of("pgbus.job.attempt", "1", "pgbus.job.outcome", "failure"),
          pick(first.attributes()));
      assertEquals(OtlpSpans.ERROR, first.statusCode(), first.toString());
      assertEquals(
          Map.of("pgbus.job.attempt", "2", "pgbus.job.outcome", "complete"),
          pick(retry.attributes()));
      assertNotEquals(OtlpSpans.ERROR, retry.statusCode(), retry.toString());
    }
  }

  private static Map<String, String> pick(Map<String, String> attributes) {
    return Map.of(
        "pgbus.job.attempt", String.valueOf(attributes.get("pgbus.job.attempt")),
        "pgbus.job.outcome", String.valueOf(attributes.get("pgbus.job.outcome")));
  }
}
