package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.OtlpMetrics;
import io.pgbus.it.support.OtlpReceiver;
import io.pgbus.it.support.Protobuf;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * With pgbus.metrics=otel, the server's OpenTelemetry SDK (MicroProfile Telemetry, configured for
 * this application only through its microprofile-config.properties) exports pgbus's meters over
 * OTLP/HTTP, and a stand-in collector in the test sees the counters move.
 */
@ExtendWith(ArquillianExtension.class)
class OtelMetricsIT {

  private static final String QUEUE = "it_otel";

  @Deployment
  static WebArchive deployment() {
    int port = OtlpReceiver.freePort();
    var config =
        new java.util.ArrayList<>(
            List.of(
                "pgbus.metrics=otel",
                "pgbus.capsules=otel",
                "pgbus.capsule.otel.queues=" + QUEUE,
                "pgbus.capsule.otel.concurrency=2"));
    config.addAll(OtlpReceiver.config(port));
    return PgbusWars.of("otel-metrics", config.toArray(String[]::new))
        .addClasses(OtlpReceiver.class, OtlpMetrics.class, Protobuf.class)
        // The port chosen here, on the client, for the receiver the test starts in the server.
        .addAsResource(new StringAsset(Integer.toString(port)), "otlp-port");
  }

  @Inject JobQueue jobs;

  @Test
  void anOtlpExportShowsTheCountersMoving() throws Exception {
    int port;
    try (var in = OtelMetricsIT.class.getClassLoader().getResourceAsStream("otlp-port")) {
      port = Integer.parseInt(new String(in.readAllBytes(), StandardCharsets.US_ASCII));
    }
    try (OtlpReceiver receiver = new OtlpReceiver(port)) {
      String run = UUID.randomUUID().toString();
      jobs.enqueueAll(
          QUEUE,
          List.of(new Marker(run + "-1", false), new Marker(run + "-2", false)),
          EnqueueOptions.defaults());
      long[] seen = {-1};
      Await.until(
          "an export with two completions on " + QUEUE,
          Duration.ofSeconds(60),
          () -> (seen[0] = latest(receiver, "pgbus.jobs.completed")) >= 2);
      long before = seen[0];

      jobs.enqueueAll(
          QUEUE,
          List.of(
              new Marker(run + "-3", false),
              new Marker(run + "-4", false),
              new Marker(run + "-5", false)),
          EnqueueOptions.defaults());
      Await.until(
          "a later export with three more completions",
          Duration.ofSeconds(60),
          () -> latest(receiver, "pgbus.jobs.completed") >= before + 3);
      Await.until(
          "five enqueues exported",
          Duration.ofSeconds(30),
          () -> latest(receiver, "pgbus.jobs.enqueued") >= 5);

      String all = new String(concat(receiver.bodies()), StandardCharsets.UTF_8);
      for (String meter :
          List.of(
              "pgbus.job.duration",
              "pgbus.job.wake.latency",
              "pgbus.queue.depth",
              "pgbus.listener.delivering",
              "pgbus.claims",
              "capsule",
              "state")) {
        assertTrue(all.contains(meter), meter + " in the OTLP export");
      }
    }
  }

  private static long latest(OtlpReceiver receiver, String name) {
    return OtlpMetrics.latest(receiver.bodies(), name, QUEUE);
  }

  private static byte[] concat(List<byte[]> bodies) {
    var out = new java.io.ByteArrayOutputStream();
    bodies.forEach(out::writeBytes);
    return out.toByteArray();
  }
}
