package io.pgbus.engine;

import io.pgbus.BatchSummary;
import io.pgbus.DependencyFailure;
import io.pgbus.Enqueued;
import io.pgbus.EnqueuedBatch;
import io.pgbus.EnqueuedWorkflow;
import io.pgbus.Workflow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The SQL of batches and dependencies ({@code pgbus.batch}, {@code pgbus.job_dependency}, V16; the
 * functions in R__links.sql). Enqueue runs in the caller's transaction; the reads in the handler's.
 * How a finished job reaches its batch and dependents is in {@link JobStore} (FINISHED).
 */
final class LinkStore {

  // Who enqueues, as JobStore.ENQUEUE: the settings the job's column defaults read are set in the
  // same statement, before the LATERAL function call that inserts.
  private static final String WHO =
      """
        FROM (SELECT ?::text AS queue,
                     pg_catalog.set_config('pgbus.principal', coalesce(?::text, ''), true) AS p,
                     pg_catalog.set_config('pgbus.run_as', coalesce(?::text, ''), true) AS r,
                     pg_catalog.set_config('pgbus.correlation_id',
                       coalesce(?::text, (SELECT h.correlation_id FROM pgbus.job h WHERE h.id = ?::bigint), ''),
                       true) AS c
              OFFSET 0) s,
      """;

  private static final String ENQUEUE_AFTER =
      "SELECT e.id, e.duplicate"
          + WHO
          + """
             LATERAL pgbus.enqueue_after(s.queue, ?::jsonb, ?::bigint[], ?::text[], ?::int, ?::int,
                                         ?::text, ?::text, ?::text) e
          """;

  private static final String ENQUEUE_BATCH =
      "SELECT e.batch_id, e.job_ids"
          + WHO
          + """
             LATERAL pgbus.enqueue_batch(?::text[], ?::text[]::jsonb[], ?::int[], ?::int[], s.queue,
                                         ?::jsonb, ?::int, ?::int, ?::text[], ?::text[]) e
          """;

  // A workflow (pgbus.enqueue_workflow, R__workflow.sql): the nodes and edges come as arrays and
  // are shaped here into the function's jsonb, the edges grouped by child first (one pass, not a
  // scan of the edges per node). WHO's queue parameter carries the workflow's name.
  private static final String ENQUEUE_WORKFLOW =
      """
      WITH edges AS (
             SELECT g.child,
                    pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                      'node', g.parent, 'kind', g.kind, 'onFailure', g.on_failure,
                      'predicate', g.predicate) ORDER BY g.ord) AS after
               FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
                    WITH ORDINALITY AS g(child, parent, kind, on_failure, predicate, ord)
              GROUP BY g.child),
           spec AS (
             SELECT pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
                      'node', n.node, 'queue', n.queue, 'payload', n.payload::jsonb,
                      'priority', n.priority, 'maxAttempts', n.attempts,
                      'concurrencyKey', n.ckey, 'after', coalesce(e.after, '[]'::jsonb))
                      ORDER BY n.ord) AS nodes
               FROM unnest(?::text[], ?::text[], ?::text[], ?::int[], ?::int[], ?::text[])
                    WITH ORDINALITY AS n(node, queue, payload, priority, attempts, ckey, ord)
               LEFT JOIN edges e ON e.child = n.node)
      SELECT w.workflow_id, w.job_ids
      """
          + WHO
          + """
             LATERAL pgbus.enqueue_workflow(s.queue, (SELECT x.nodes FROM spec x), ?::text, ?::text) w
          """;

  private static final String JOIN_WORKFLOW = "SELECT pgbus.join_workflow(?::bigint, ?::bigint[])";

  private static final String CANCEL_WORKFLOW =
      "SELECT known, cancelled + stopping FROM pgbus.cancel_workflow(?::bigint, ?::text)";

  private static final String RETRY_WORKFLOW =
      "SELECT known, replayed + revived FROM pgbus.retry_workflow(?::bigint, ?::text)";

  // Retention of workflows: one goes once none of its members is left in pgbus.job_all (each was
  // pruned, deleted, or its day partition dropped); its member rows go with it (ON DELETE
  // CASCADE), and then DEPENDENCY_PRUNE takes its edges. Walks the workflows in id order and probes
  // workflow_job_workflow_idx and the primary keys per workflow, but only the workflows older than
  // the shorter of the two retentions: a finished member is kept at least that long, so a younger
  // workflow cannot be empty but by an operator's delete, and probing every workflow of the
  // retention window each round took 4.5 s at 200,000 workflows (the younger ones now cost a
  // comparison each: id order is creation order).
  private static final String WORKFLOW_PRUNE =
      """
      WITH picked AS MATERIALIZED (
             SELECT f.id FROM pgbus.workflow f
              WHERE f.created_at < now() - ?::float8 * interval '1 millisecond'
                AND NOT EXISTS (SELECT 1 FROM pgbus.workflow_job m
                                  JOIN pgbus.job_all j ON j.id = m.job_id
                                 WHERE m.workflow_id = f.id)
              ORDER BY f.id
              LIMIT ?
              FOR UPDATE SKIP LOCKED)
      DELETE FROM pgbus.workflow w
       WHERE w.id IN (SELECT p.id FROM picked p)
         AND NOT EXISTS (SELECT 1 FROM pgbus.workflow_job m
                           JOIN pgbus.job_all j ON j.id = m.job_id
                          WHERE m.workflow_id = w.id)
      """;

  private static final String ENQUEUE_WORKFLOW_CLIENT_WAKE = JobStore.clientWake(ENQUEUE_WORKFLOW);
  private static final String ENQUEUE_AFTER_CLIENT_WAKE = JobStore.clientWake(ENQUEUE_AFTER);
  private static final String ENQUEUE_BATCH_CLIENT_WAKE = JobStore.clientWake(ENQUEUE_BATCH);

  private static final String BATCH_OF_CALLBACK =
      """
      SELECT b.id, b.size, b.completed, b.dead, b.cancelled
        FROM pgbus.batch b WHERE b.callback_job_id = ?::bigint
      """;

  // Members that left the batch by a replay have no batch_id any more, and are not listed.
  private static final String BATCH_RESULTS =
      """
      SELECT j.id, j.result::text
        FROM pgbus.job_all j
       WHERE j.batch_id = (SELECT b.id FROM pgbus.batch b WHERE b.callback_job_id = ?::bigint)
         AND j.id > ?::bigint AND j.result IS NOT NULL
       ORDER BY j.id
       LIMIT ?::int
      """;

  private static final String DEPENDENCY_RESULTS =
      """
      SELECT d.depends_on, d.result::text
        FROM pgbus.job_dependency d
       WHERE d.job_id = ?::bigint AND d.result IS NOT NULL
       ORDER BY d.depends_on
      """;

  // Retention of batches: a batch is done with once its callback was enqueued (so no member is
  // pending), no member row is left (pruned, deleted on completion, deleted by an operator, or
  // replayed out of the batch: a member never joins a batch later), and its callback no longer
  // needs it (JobContext.batch() reads it by the callback's id): the callback is gone, completed
  // or cancelled. A dead callback keeps its batch, since a replay runs it again; once the dead
  // callback is pruned, the batch goes. Walks batch_callback_idx in id order and probes
  // job_batch_idx and the primary key per batch; a batch changes no more once its callback is
  // set, so the outer predicate only rechecks a row that another prune took meanwhile. Members
  // moved into pgbus.job_history (V33) keep their batch until their partition is dropped. Only
  // batches older than the shorter retention are probed (as WORKFLOW_PRUNE: members are created
  // with their batch and kept at least that long): 3.3 s a round at 200,000 batches, now 0.16 s.
  private static final String BATCH_PRUNE =
      """
      WITH picked AS MATERIALIZED (
             SELECT f.id FROM pgbus.batch f
              WHERE f.callback_job_id IS NOT NULL
                AND f.created_at < now() - ?::float8 * interval '1 millisecond'
                AND NOT EXISTS (SELECT 1 FROM pgbus.job_all m WHERE m.batch_id = f.id)
                AND NOT EXISTS (SELECT 1 FROM pgbus.job cb
                                 WHERE cb.id = f.callback_job_id
                                   AND cb.state OPERATOR(pg_catalog.<>) ALL ('{completed,cancelled}'))
              ORDER BY f.id
              LIMIT ?
              FOR UPDATE SKIP LOCKED)
      DELETE FROM pgbus.batch b
       WHERE b.id IN (SELECT p.id FROM picked p)
         AND b.callback_job_id IS NOT NULL
      """;

  // Retention of dependency edges: an edge whose dependent is gone (pruned or deleted while dead,
  // the one final state that keeps its incoming edges for a replay) serves no one. An edge whose
  // dependency is gone stays while its dependent exists: it holds the dependency's state and
  // result. The completion or cancel of a dependent deletes its edges itself (pgbus.job_finished),
  // so what is left is the edges of waiting, running and dead dependents, and among them the few
  // orphans. A round reads one window of them, the next `window` edges after a cursor in
  // job_dependency_job_idx order (every edge of a dependent in the same window), probes the job's
  // primary key for each, and deletes up to `batch` orphans; the leader keeps the cursor and
  // starts over after the last edge. A round that read every edge cost 0.29 s at 300,000 waiting
  // dependents (a hash anti-join of both tables, spilling to disk) and grew with them; a window
  // costs the same at any size. A workflow member's edges stay while its workflow does (its
  // graph; archived members included): WORKFLOW_PRUNE deletes the member rows first. The
  // DELETE's NOT EXISTS is the recheck on the row it deletes (an edge is inserted only with its
  // dependent, in one transaction, so a dependent that is gone never comes back).
  private static final String DEPENDENCY_PRUNE =
      """
      WITH w AS MATERIALIZED (
             SELECT o.job_id FROM pgbus.job_dependency o
              WHERE o.job_id > ?::bigint
              ORDER BY o.job_id
              LIMIT ?::int),
           g AS MATERIALIZED (
             SELECT o.depends_on, o.job_id FROM pgbus.job_dependency o
              WHERE o.job_id IN (SELECT w.job_id FROM w)
                AND NOT EXISTS (SELECT 1 FROM pgbus.job j WHERE j.id = o.job_id)
                AND NOT EXISTS (SELECT 1 FROM pgbus.workflow_job m WHERE m.job_id = o.job_id)
              LIMIT ?::int
              FOR UPDATE OF o SKIP LOCKED),
           d AS (
             DELETE FROM pgbus.job_dependency d
              USING g
              WHERE d.depends_on = g.depends_on AND d.job_id = g.job_id
                AND NOT EXISTS (SELECT 1 FROM pgbus.job j WHERE j.id = d.job_id)
             RETURNING 1)
      SELECT (SELECT pg_catalog.count(*) FROM d)::int,
             (SELECT pg_catalog.count(*) FROM w)::int,
             (SELECT pg_catalog.max(w.job_id) FROM w)
      """;

  /**
   * Where a walk of the dependency edges starts: before the first edge (job ids may be negative).
   */
  static final long EDGES_FROM_START = Long.MIN_VALUE;

  /**
   * One round of the dependency edges' retention (DEPENDENCY_PRUNE).
   *
   * @param deleted the orphaned edges deleted
   * @param next the cursor for the next round: {@link #EDGES_FROM_START} once the walk read the
   *     last edge; the same cursor again when the round stopped at its batch with orphans maybe
   *     left in its window
   */
  record EdgeRound(int deleted, long next) {}

  /**
   * Reads up to {@code window} dependency edges after {@code after} (job id order) and deletes up
   * to {@code batch} among them whose dependent job is gone.
   */
  EdgeRound dependencyPrune(Connection c, long after, int window, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DEPENDENCY_PRUNE)) {
      ps.setLong(1, after);
      ps.setInt(2, window);
      ps.setInt(3, batch);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        int deleted = rs.getInt(1);
        int read = rs.getInt(2);
        long last = rs.getLong(3);
        if (deleted >= batch) {
          return new EdgeRound(deleted, after);
        }
        return new EdgeRound(deleted, read < window ? EDGES_FROM_START : last);
      }
    }
  }

  /**
   * Deletes up to {@code batch} finished batches older than {@code minAge} whose members and
   * callback are done with (see BATCH_PRUNE); the number deleted. {@code minAge}: the shortest time
   * a finished job is kept.
   */
  int batchPrune(Connection c, Duration minAge, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BATCH_PRUNE)) {
      ps.setLong(1, minAge.toMillis());
      ps.setInt(2, batch);
      return ps.executeUpdate();
    }
  }

  /**
   * Deletes up to {@code batch} workflows older than {@code minAge} none of whose members is left
   * (WORKFLOW_PRUNE). {@code minAge}: the shortest time a finished job is kept.
   */
  int workflowPrune(Connection c, Duration minAge, int batch) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(WORKFLOW_PRUNE)) {
      ps.setLong(1, minAge.toMillis());
      ps.setInt(2, batch);
      return ps.executeUpdate();
    }
  }

  /**
   * Inserts a workflow: its row, a job per node (in {@code jobs}, the nodes' order) and its edges.
   * {@code spec} gives the names and edges; {@code jobs} the prepared (sealed) jobs, who enqueues
   * and the parent of the first.
   */
  EnqueuedWorkflow enqueueWorkflow(
      Connection c, Workflow spec, List<NewJob> jobs, TraceContext trace, boolean clientWake)
      throws SQLException {
    List<Workflow.Node> nodes = spec.nodes();
    int n = nodes.size();
    var children = new java.util.ArrayList<String>();
    var parents = new java.util.ArrayList<String>();
    var kinds = new java.util.ArrayList<String>();
    var policies = new java.util.ArrayList<String>();
    var predicates = new java.util.ArrayList<String>();
    for (Workflow.Node node : nodes) {
      for (Workflow.Edge e : node.edges()) {
        children.add(node.name());
        parents.add(e.parent());
        kinds.add(e.kind().name().toLowerCase(Locale.ROOT));
        policies.add(e.onFailure().name().toLowerCase(Locale.ROOT));
        predicates.add(e.predicate());
      }
    }
    String[] names = new String[n];
    String[] queues = new String[n];
    String[] payloads = new String[n];
    Integer[] priorities = new Integer[n];
    Integer[] attempts = new Integer[n];
    String[] keys = new String[n];
    for (int k = 0; k < n; k++) {
      NewJob j = jobs.get(k);
      names[k] = nodes.get(k).name();
      queues[k] = j.queue();
      payloads[k] = j.payloadJson();
      priorities[k] = j.options().priority();
      attempts[k] = j.options().maxAttempts();
      keys[k] = j.options().concurrencyKey();
    }
    NewJob first = jobs.get(0);
    try (PreparedStatement ps =
        c.prepareStatement(clientWake ? ENQUEUE_WORKFLOW_CLIENT_WAKE : ENQUEUE_WORKFLOW)) {
      int i = 1;
      ps.setArray(i++, c.createArrayOf("text", children.toArray()));
      ps.setArray(i++, c.createArrayOf("text", parents.toArray()));
      ps.setArray(i++, c.createArrayOf("text", kinds.toArray()));
      ps.setArray(i++, c.createArrayOf("text", policies.toArray()));
      ps.setArray(i++, c.createArrayOf("text", predicates.toArray()));
      ps.setArray(i++, c.createArrayOf("text", names));
      ps.setArray(i++, c.createArrayOf("text", queues));
      ps.setArray(i++, c.createArrayOf("text", payloads));
      ps.setArray(i++, c.createArrayOf("int4", priorities));
      ps.setArray(i++, c.createArrayOf("int4", attempts));
      ps.setArray(i++, c.createArrayOf("text", keys));
      ps.setString(i++, spec.name());
      ps.setString(i++, first.enqueuedBy());
      ps.setString(i++, first.runAs());
      ps.setString(i++, null);
      ps.setObject(i++, first.parentJobId(), Types.BIGINT);
      ps.setString(i++, trace == null ? null : trace.traceParent());
      ps.setString(i, trace == null ? null : trace.traceState());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        Long[] ids = (Long[]) rs.getArray(2).getArray();
        var byNode = new LinkedHashMap<String, Long>();
        for (int k = 0; k < n; k++) {
          byNode.put(names[k], ids[k]);
        }
        return new EnqueuedWorkflow(rs.getLong(1), byNode);
      }
    }
  }

  /** Makes {@code jobIds} members of workflow {@code workflowId} (fan-out; join_workflow). */
  void joinWorkflow(Connection c, long workflowId, List<Long> jobIds) throws SQLException {
    if (jobIds.isEmpty()) {
      return;
    }
    try (PreparedStatement ps = c.prepareStatement(JOIN_WORKFLOW)) {
      ps.setLong(1, workflowId);
      ps.setArray(2, c.createArrayOf("bigint", jobIds.toArray()));
      ps.executeQuery().close();
    }
  }

  /** cancel_workflow or retry_workflow: how many jobs changed; empty for no such workflow. */
  OptionalInt workflowAct(Connection c, long workflowId, boolean retry, String actor)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(retry ? RETRY_WORKFLOW : CANCEL_WORKFLOW)) {
      ps.setLong(1, workflowId);
      ps.setString(2, actor);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getBoolean(1) ? OptionalInt.of(rs.getInt(2)) : OptionalInt.empty();
      }
    }
  }

  /** Inserts a job that waits on {@code job.options().afterJobs()} (see enqueue_after). */
  Enqueued enqueueAfter(Connection c, NewJob job, TraceContext trace, boolean clientWake)
      throws SQLException {
    Map<Long, DependencyFailure> after = job.options().afterJobs();
    Long[] ids = after.keySet().toArray(Long[]::new);
    String[] policies =
        after.values().stream().map(f -> f.name().toLowerCase(Locale.ROOT)).toArray(String[]::new);
    try (PreparedStatement ps =
        c.prepareStatement(clientWake ? ENQUEUE_AFTER_CLIENT_WAKE : ENQUEUE_AFTER)) {
      int i = who(ps, job.queue(), job);
      ps.setString(i++, job.payloadJson());
      ps.setArray(i++, c.createArrayOf("bigint", ids));
      ps.setArray(i++, c.createArrayOf("text", policies));
      ps.setInt(i++, job.options().priority());
      ps.setInt(i++, job.options().maxAttempts());
      ps.setString(i++, job.options().uniqueKey());
      ps.setString(i++, trace == null ? null : trace.traceParent());
      ps.setString(i, trace == null ? null : trace.traceState());
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Enqueued(rs.getLong(1), rs.getBoolean(2));
      }
    }
  }

  /** Inserts a batch: its row and its members; the callback is {@code callback}. */
  EnqueuedBatch enqueueBatch(
      Connection c, List<NewJob> members, NewJob callback, TraceContext trace, boolean clientWake)
      throws SQLException {
    int n = members.size();
    String[] queues = new String[n];
    String[] payloads = new String[n];
    Integer[] priorities = new Integer[n];
    Integer[] attempts = new Integer[n];
    for (int k = 0; k < n; k++) {
      NewJob m = members.get(k);
      queues[k] = m.queue();
      payloads[k] = m.payloadJson();
      priorities[k] = m.options().priority();
      attempts[k] = m.options().maxAttempts();
    }
    try (PreparedStatement ps =
        c.prepareStatement(clientWake ? ENQUEUE_BATCH_CLIENT_WAKE : ENQUEUE_BATCH)) {
      int i = who(ps, callback.queue(), callback);
      ps.setArray(i++, c.createArrayOf("text", queues));
      ps.setArray(i++, c.createArrayOf("text", payloads));
      ps.setArray(i++, c.createArrayOf("int4", priorities));
      ps.setArray(i++, c.createArrayOf("int4", attempts));
      ps.setString(i++, callback.payloadJson());
      ps.setInt(i++, callback.options().priority());
      ps.setInt(i++, callback.options().maxAttempts());
      if (trace == null) {
        ps.setNull(i++, Types.ARRAY);
        ps.setNull(i, Types.ARRAY);
      } else {
        String[] parents = new String[n];
        String[] states = new String[n];
        Arrays.fill(parents, trace.traceParent());
        Arrays.fill(states, trace.traceState());
        ps.setArray(i++, c.createArrayOf("text", parents));
        ps.setArray(i, c.createArrayOf("text", states));
      }
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new EnqueuedBatch(rs.getLong(1), List.of((Long[]) rs.getArray(2).getArray()));
      }
    }
  }

  /** The batch whose callback is job {@code callbackId}, with its counts. */
  Optional<BatchSummary> batchOfCallback(Connection c, long callbackId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BATCH_OF_CALLBACK)) {
      ps.setLong(1, callbackId);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next()
            ? Optional.of(
                new BatchSummary(
                    rs.getLong(1), rs.getInt(2), rs.getInt(3), rs.getInt(4), rs.getInt(5)))
            : Optional.empty();
      }
    }
  }

  /** A page of the results of the members of the batch whose callback is {@code callbackId}. */
  SortedMap<Long, String> batchResults(Connection c, long callbackId, long afterJobId, int limit)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(BATCH_RESULTS)) {
      ps.setLong(1, callbackId);
      ps.setLong(2, afterJobId);
      ps.setInt(3, limit);
      var results = new TreeMap<Long, String>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          results.put(rs.getLong(1), rs.getString(2));
        }
      }
      return results;
    }
  }

  /** The results of the dependencies of job {@code id} that completed with one. */
  Map<Long, String> dependencyResults(Connection c, long id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DEPENDENCY_RESULTS)) {
      ps.setLong(1, id);
      var results = new LinkedHashMap<Long, String>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          results.put(rs.getLong(1), rs.getString(2));
        }
      }
      return results;
    }
  }

  /** Binds WHO's five parameters; the next index. */
  private static int who(PreparedStatement ps, String queue, NewJob job) throws SQLException {
    ps.setString(1, queue);
    ps.setString(2, job.enqueuedBy());
    ps.setString(3, job.runAs());
    ps.setString(4, job.options().correlationId());
    ps.setObject(5, job.parentJobId(), Types.BIGINT);
    return 6;
  }
}
