package io.pgbus.engine;

import io.pgbus.admin.Explanation;
import io.pgbus.admin.JobState;
import io.pgbus.admin.QueueBlockers;
import io.pgbus.admin.Reason;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The SQL of "why isn't this job running?" (R__explain.sql, docs/explain.md): {@code pgbus.explain}
 * and {@code pgbus.queue_blockers}, read into {@link Explanation} and {@link QueueBlockers}. The
 * decisions live in those functions, so that psql, the CLI, the admin API and the metrics give one
 * answer; here the jsonb is only taken apart, by PostgreSQL (no JSON parser in the engine). Runs
 * only when someone asks.
 */
final class ExplainStore {

  // One row per reason in order, or one row of NULLs when there is no such job. The evidence stays
  // JSON text. OPERATOR(pg_catalog....): nothing here resolves through the caller's search_path.
  private static final String EXPLAIN =
      """
      SELECT e.x OPERATOR(pg_catalog.->>) 'queue', e.x OPERATOR(pg_catalog.->>) 'state',
             r.v OPERATOR(pg_catalog.->>) 'code', r.v OPERATOR(pg_catalog.->>) 'sentence',
             (r.v OPERATOR(pg_catalog.->) 'evidence')::pg_catalog.text,
             r.v OPERATOR(pg_catalog.->>) 'action',
             (r.v OPERATOR(pg_catalog.->>) 'resolves_at')::pg_catalog.timestamptz,
             r.v OPERATOR(pg_catalog.->>) 'error'
        FROM pgbus.explain(?::bigint) AS e(x)
        LEFT JOIN LATERAL pg_catalog.jsonb_array_elements(e.x OPERATOR(pg_catalog.->) 'reasons')
             WITH ORDINALITY AS r(v, n) ON true
       ORDER BY r.n
      """;

  private static final String BLOCKERS =
      """
      SELECT b.queue, b.waiting, b.runnable_now, b.cause, b.jobs
        FROM pgbus.queue_blockers(?::text) b
      """;

  Optional<Explanation> explain(Connection c, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(EXPLAIN)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        String queue = null;
        String state = null;
        var reasons = new ArrayList<Reason>();
        while (rs.next()) {
          queue = rs.getString(1);
          state = rs.getString(2);
          if (rs.getString(3) != null) {
            OffsetDateTime at = rs.getObject(7, OffsetDateTime.class);
            reasons.add(
                new Reason(
                    rs.getString(3),
                    rs.getString(4),
                    rs.getString(5),
                    rs.getString(6),
                    at == null ? null : at.toInstant(),
                    rs.getString(8)));
          }
        }
        return queue == null
            ? Optional.empty()
            : Optional.of(new Explanation(id, queue, JobState.parse(state), reasons));
      }
    }
  }

  /** In the function's order: by queue, each queue's causes in the order of QueueBlockers. */
  List<QueueBlockers> blockers(Connection c, String queue) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BLOCKERS)) {
      ps.setString(1, queue);
      try (ResultSet rs = ps.executeQuery()) {
        var out = new ArrayList<QueueBlockers>();
        String current = null;
        long waiting = 0;
        long runnable = 0;
        Map<String, Long> causes = new LinkedHashMap<>();
        while (rs.next()) {
          String q = rs.getString(1);
          if (!q.equals(current)) {
            if (current != null) {
              out.add(new QueueBlockers(current, waiting, runnable, causes));
            }
            current = q;
            waiting = rs.getLong(2);
            runnable = rs.getLong(3);
            causes = new LinkedHashMap<>();
          }
          String cause = rs.getString(4);
          if (cause != null) {
            causes.put(cause, rs.getLong(5));
          }
        }
        if (current != null) {
          out.add(new QueueBlockers(current, waiting, runnable, causes));
        }
        return out;
      }
    }
  }
}
