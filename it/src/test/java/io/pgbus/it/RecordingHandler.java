package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * Records every run in it_handled through the JTA datasource, so the row commits only with the
 * job's completion; fails after writing when the marker asks for it. Also notes the handler start
 * time in memory for latency measurements.
 */
@ApplicationScoped
@Handles({
  "it_tx",
  "it_business",
  "it_left",
  "it_right",
  "it_latency",
  "it_l1",
  "it_l2",
  "it_l3",
  "it_l4",
  "it_l5",
  "it_l6",
  "it_ready",
  "it_metrics",
  "it_batch",
  "it_paused",
  "it_unique",
  "it_cron",
  "it_otel",
  "it_kit",
  "it_kit_sealed"
})
public class RecordingHandler implements JobHandler<Marker> {

  /** Handler start times (System.nanoTime) by marker text. */
  public static final Map<String, Long> STARTED = new ConcurrentHashMap<>();

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    STARTED.putIfAbsent(marker.text, System.nanoTime());
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO it_handled(text, job_id, queue, attempt) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, marker.text);
      ps.setLong(2, context.id());
      ps.setString(3, context.queue());
      ps.setInt(4, context.attempt());
      ps.execute();
    }
    if (marker.fail) {
      throw new IllegalStateException("handler asked to fail for " + marker.text);
    }
    return Outcome.complete();
  }
}
