package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * A workflow as an operator reads it (the admin API's {@code GET workflows/{id}}, the console's
 * graph): one read model over {@code pgbus.workflow}, {@code pgbus.workflow_job} and the edges of
 * {@code pgbus.job_dependency} (V52), four reads on one connection (in the caller's transaction
 * when there is one; else a member may change between the counts and the nodes). The members are
 * read on {@code workflow_job_workflow_idx}, their states by primary key in {@code pgbus.job_all},
 * the edges into the listed members on {@code job_dependency_job_idx}; at most {@link #MAX_NODES}
 * members.
 */
public final class WorkflowGraph {

  /** The most members one read lists (a workflow's nodes are bounded so; fan-out may add more). */
  public static final int MAX_NODES = 1000;

  /** Members per state class: waiting is scheduled, available or retryable. */
  public record Counts(int waiting, int running, int completed, int dead, int cancelled) {}

  /**
   * A member.
   *
   * @param job its job id
   * @param node its node name, or null for a job a member's handler enqueued
   * @param queue its queue
   * @param state its job state, or null when it was pruned
   */
  public record Member(long job, String node, String queue, String state) {}

  /**
   * An edge between two members.
   *
   * @param kind success, failure or result
   * @param predicate a result edge's predicate, else null
   * @param state waiting, completed (taken), failed or not_taken
   * @param onFailure cancel or hold
   */
  public record Link(
      long from, long to, String kind, String predicate, String state, String onFailure) {}

  /**
   * A workflow. {@code state}: cancelled once an operator cancelled it; else running while any
   * member is unfinished; else failed when a member is dead, completed otherwise.
   */
  public record Graph(
      long id,
      String name,
      Instant createdAt,
      String createdBy,
      String state,
      Counts counts,
      List<Member> nodes,
      List<Link> edges,
      boolean more) {}

  private static final String HEAD =
      """
      SELECT w.id, w.name, w.created_at, w.created_by, w.cancelled_at IS NOT NULL
        FROM pgbus.workflow w WHERE w.id = ?::bigint
      """;

  private static final String COUNTS =
      """
      SELECT j.state::text, count(*)
        FROM pgbus.workflow_job m
        JOIN pgbus.job_all j ON j.id = m.job_id
       WHERE m.workflow_id = ?::bigint
       GROUP BY j.state
      """;

  private static final String MEMBERS =
      """
      SELECT m.job_id, m.node, m.queue, j.state::text
        FROM pgbus.workflow_job m
        LEFT JOIN pgbus.job_all j ON j.id = m.job_id
       WHERE m.workflow_id = ?::bigint
       ORDER BY m.job_id
       LIMIT ?::int
      """;

  // Edges into the listed members from members of the same workflow (a fan-out job's afterJobs
  // may name a job outside it: not part of the graph).
  private static final String EDGES =
      """
      SELECT d.depends_on, d.job_id, d.kind, d.predicate::text, d.state, d.on_failure
        FROM pgbus.job_dependency d
       WHERE d.job_id = ANY (?::bigint[])
         AND EXISTS (SELECT 1 FROM pgbus.workflow_job p
                      WHERE p.job_id = d.depends_on AND p.workflow_id = ?::bigint)
       ORDER BY d.job_id, d.depends_on
      """;

  private final DataSource dataSource;

  public WorkflowGraph(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /** The workflow, its members (at most {@link #MAX_NODES}) and edges; null when there is none. */
  public Graph graph(long id) {
    try (Connection c = dataSource.getConnection()) {
      return read(c, id);
    } catch (SQLException e) {
      throw Failures.of(null, "read workflow " + id, e);
    }
  }

  private static Graph read(Connection c, long id) throws SQLException {
    String name;
    Instant createdAt;
    String createdBy;
    boolean cancelled;
    try (PreparedStatement ps = c.prepareStatement(HEAD)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        name = rs.getString(2);
        createdAt = instant(rs.getTimestamp(3));
        createdBy = rs.getString(4);
        cancelled = rs.getBoolean(5);
      }
    }
    int waiting = 0;
    int running = 0;
    int completed = 0;
    int dead = 0;
    int cancelledJobs = 0;
    try (PreparedStatement ps = c.prepareStatement(COUNTS)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int n = rs.getInt(2);
          switch (rs.getString(1)) {
            case "running" -> running += n;
            case "completed" -> completed += n;
            case "dead" -> dead += n;
            case "cancelled" -> cancelledJobs += n;
            default -> waiting += n;
          }
        }
      }
    }
    var members = new ArrayList<Member>();
    try (PreparedStatement ps = c.prepareStatement(MEMBERS)) {
      ps.setLong(1, id);
      ps.setInt(2, MAX_NODES + 1);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          members.add(new Member(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4)));
        }
      }
    }
    boolean more = members.size() > MAX_NODES;
    if (more) {
      members.remove(MAX_NODES);
    }
    var edges = new ArrayList<Link>();
    try (PreparedStatement ps = c.prepareStatement(EDGES)) {
      ps.setArray(1, c.createArrayOf("bigint", members.stream().map(Member::job).toArray()));
      ps.setLong(2, id);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          edges.add(
              new Link(
                  rs.getLong(1),
                  rs.getLong(2),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getString(5),
                  rs.getString(6)));
        }
      }
    }
    String state =
        cancelled
            ? "cancelled"
            : waiting + running > 0 ? "running" : dead > 0 ? "failed" : "completed";
    return new Graph(
        id,
        name,
        createdAt,
        createdBy,
        state,
        new Counts(waiting, running, completed, dead, cancelledJobs),
        List.copyOf(members),
        List.copyOf(edges),
        more);
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
