package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** However many capsules and queues, the JVM holds exactly one LISTEN connection. */
@ExtendWith(ArquillianExtension.class)
class SingleListenerIT {

  private static final String LISTENERS =
      "SELECT count(*) FROM pg_stat_activity"
          + " WHERE application_name = 'pgbus-listener' AND datname = current_database()";

  @Deployment
  static WebArchive deployment() {
    return PgbusWars.of(
        "single-listener",
        "pgbus.capsules=a,b,c",
        "pgbus.capsule.a.queues=it_l1,it_l2",
        "pgbus.capsule.a.concurrency=4",
        "pgbus.capsule.b.queues=it_l3,it_l4",
        "pgbus.capsule.b.concurrency=4",
        "pgbus.capsule.c.queues=it_l5,it_l6",
        "pgbus.capsule.c.concurrency=4");
  }

  @Inject JobQueue jobs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void threeCapsulesOverSixQueuesUnderLoadHoldOneListenerConnection() throws Exception {
    String run = UUID.randomUUID().toString();
    Await.until(
        "the listener to connect", Duration.ofSeconds(30), () -> Sql.count(ds, LISTENERS) == 1);
    for (int q = 1; q <= 6; q++) {
      var batch = new ArrayList<Marker>();
      for (int i = 0; i < 100; i++) {
        batch.add(new Marker(run + "-" + q + "-" + i, false));
      }
      jobs.enqueueAll("it_l" + q, batch, EnqueueOptions.defaults());
    }
    List<Long> samples = new ArrayList<>();
    Await.until(
        "600 jobs to be handled",
        Duration.ofSeconds(120),
        () -> {
          samples.add(Sql.count(ds, LISTENERS));
          return Sql.count(ds, "SELECT count(*) FROM it_handled WHERE text LIKE ?", run + "-%")
              == 600;
        });
    samples.add(Sql.count(ds, LISTENERS));
    for (long s : samples) {
      assertEquals(1, s, "pgbus-listener connections seen while under load: " + samples);
    }
  }
}
