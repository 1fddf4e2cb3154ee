package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.engine.ListenerState;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Http;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import java.net.URL;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * On Liberty, /metrics shows pgbus counters moving as jobs run, and the doctor answers users in the
 * role pgbus-admin, and them only (the test server's basicRegistry).
 */
@ExtendWith(ArquillianExtension.class)
class MetricsAndDoctorIT {

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
            "metrics-doctor",
            "pgbus.capsules=metrics",
            "pgbus.capsule.metrics.queues=it_metrics",
            "pgbus.capsule.metrics.concurrency=2")
        .addClasses(ItRestApplication.class, ItDoctor.class, Http.class);
  }

  @Inject JobQueue jobs;
  @Inject PgbusRuntime runtime;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @ArquillianResource URL url;

  @Test
  void metricsCountJobsAsTheyRun() throws Exception {
    Await.until(
        "the listener to deliver",
        Duration.ofSeconds(30),
        () -> runtime.engine().status().listener().state() == ListenerState.DELIVERING);
    String metrics = Http.root(url) + "/metrics?scope=application";
    double completedBefore = value(Http.get(metrics).body(), "pgbus_jobs_completed_total");
    double enqueuedBefore = value(Http.get(metrics).body(), "pgbus_jobs_enqueued_total");

    String run = UUID.randomUUID().toString();
    jobs.enqueueAll(
        "it_metrics",
        List.of(
            new Marker(run + "-1", false),
            new Marker(run + "-2", false),
            new Marker(run + "-3", false)),
        EnqueueOptions.defaults());

    String[] body = {null};
    Await.until(
        "three completions in /metrics",
        Duration.ofSeconds(30),
        () -> {
          body[0] = Http.get(metrics).body();
          return value(body[0], "pgbus_jobs_completed_total") >= completedBefore + 3;
        });
    assertEquals(enqueuedBefore + 3, value(body[0], "pgbus_jobs_enqueued_total"), 0.0, body[0]);
    assertTrue(body[0].contains("pgbus_job_duration_seconds"), body[0]);
    assertTrue(body[0].contains("pgbus_job_wake_latency_seconds"), body[0]);
    assertTrue(body[0].contains("pgbus_listener_delivering"), body[0]);
    assertTrue(body[0].contains("pgbus_claims_empty"), body[0]);
    assertTrue(body[0].contains("pgbus_queue_depth"), body[0]);
  }

  @Test
  void doctorReportsTheConnectionBudgetFromTheServerConfiguration() throws Exception {
    Http.Response r = Http.get(doctor(), "admin", "admin-secret");
    assertEquals(200, r.status(), r.body());
    // liberty-config/pgbus-datasources.xml declares a JTA pool of 20; plus the one listener.
    assertTrue(r.body().contains("\"perJvm\":21"), r.body());
    assertTrue(r.body().contains("\"listenerPerJvm\":1"), r.body());
    assertTrue(r.body().contains("for N JVMs: N x 21"), r.body());
  }

  @Test
  void doctorRefusesAnAnonymousCaller() throws Exception {
    Http.Response r = Http.get(doctor());
    assertEquals(401, r.status(), r.body());
    assertFalse(r.body().contains("PostgreSQL"), r.body());
  }

  @Test
  void doctorRefusesAUserWithoutTheRole() throws Exception {
    Http.Response r = Http.get(doctor(), "someone", "someone-secret");
    assertEquals(403, r.status(), r.body());
    assertFalse(r.body().contains("PostgreSQL"), r.body());
  }

  @Test
  void doctorReportsAreCachedSoRepeatedCallsDoNotQueryTheDatabase() {
    assertSame(runtime.doctor(), runtime.doctor());
  }

  private String doctor() {
    return Http.root(url) + url.getPath() + "api/pgbus/doctor";
  }

  /** The value of the first sample of {@code name} with queue="it_metrics", or 0 when absent. */
  private static double value(String text, String name) {
    for (String line : text.split("\n")) {
      if (line.startsWith(name + "{") && line.contains("queue=\"it_metrics\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return 0;
  }
}
