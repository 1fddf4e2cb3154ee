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
 * Batches and dependency edges as an operator reads them (the admin API's {@code GET batches/{id}}
 * and {@code GET jobs/{id}/links}, the console's batch page and a job's parents and children): one
 * read model over {@code pgbus.batch} and {@code pgbus.job_dependency} (V16), each read on one
 * connection of its own. Every read is one index range: a batch's members on {@code job_batch_idx},
 * a job's parents on {@code job_dependency_job_idx}, its children on the edge's primary key ({@code
 * depends_on, job_id}); each stops at a page.
 */
public final class JobLinks {

  /** The most members, parents or children one read returns. */
  public static final int MAX_PAGE = 200;

  /**
   * A batch: its counters (V16: {@code completed + dead + cancelled + pending = size}), its
   * callback and, once enqueued, the callback job and its state.
   */
  public record Batch(
      long id,
      int size,
      int pending,
      int completed,
      int dead,
      int cancelled,
      String callbackQueue,
      String callbackPayload,
      Long callbackJobId,
      String callbackState,
      Instant createdAt,
      Instant finishedAt,
      List<Member> members,
      Long next) {}

  /** A member of a batch, as its list shows it. */
  public record Member(
      long id, String queue, String state, int attempt, Instant createdAt, Instant finalizedAt) {}

  /**
   * One dependency edge seen from one of its ends.
   *
   * @param job the job at the other end
   * @param queue its queue, or null when it is gone (a finished dependency may be pruned)
   * @param state its state, or null when it is gone
   * @param edge the edge's state: {@code waiting}, {@code completed} or {@code failed}
   * @param onFailure {@code hold} or {@code cancel}
   */
  public record Edge(long job, String queue, String state, String edge, String onFailure) {}

  /**
   * A job's links.
   *
   * @param job the job
   * @param batchId its batch, or null
   * @param parents the jobs it waits on, by id, at most {@link #MAX_PAGE}
   * @param children the jobs that wait on it, by id, at most {@link #MAX_PAGE}
   * @param moreChildren whether more wait on it than {@code children} lists
   */
  public record Links(
      long job, Long batchId, List<Edge> parents, List<Edge> children, boolean moreChildren) {}

  private static final String BATCH =
      """
      SELECT b.id, b.size, b.pending, b.completed, b.dead, b.cancelled, b.callback_queue::text,
             b.callback_payload::text, b.callback_job_id,
             (SELECT c.state::text FROM pgbus.job c WHERE c.id = b.callback_job_id),
             b.created_at, b.finished_at
        FROM pgbus.batch b WHERE b.id = ?::bigint
      """;

  private static final String MEMBERS =
      """
      SELECT j.id, j.queue::text, j.state::text, j.attempt, j.created_at, j.finalized_at
        FROM pgbus.job j
       WHERE j.batch_id = ?::bigint AND j.id > ?::bigint
       ORDER BY j.id LIMIT ?
      """;

  private static final String JOB = "SELECT j.batch_id FROM pgbus.job j WHERE j.id = ?::bigint";

  private static final String PARENTS =
      """
      SELECT d.depends_on, p.queue::text, p.state::text, d.state, d.on_failure
        FROM pgbus.job_dependency d LEFT JOIN pgbus.job p ON p.id = d.depends_on
       WHERE d.job_id = ?::bigint ORDER BY d.depends_on LIMIT ?
      """;

  private static final String CHILDREN =
      """
      SELECT d.job_id, c.queue::text, c.state::text, d.state, d.on_failure
        FROM pgbus.job_dependency d LEFT JOIN pgbus.job c ON c.id = d.job_id
       WHERE d.depends_on = ?::bigint ORDER BY d.job_id LIMIT ?
      """;

  private final DataSource dataSource;

  public JobLinks(DataSource dataSource) {
    this.dataSource = dataSource;
  }

  /**
   * The batch with its members after {@code after} (0: from the first), at most {@code limit} (1 to
   * {@link #MAX_PAGE}); null when there is no such batch. {@code next} is the {@code after} of the
   * next page, or null.
   */
  public Batch batch(long id, long after, int limit) {
    int page = Math.min(Math.max(limit, 1), MAX_PAGE);
    try (Connection c = dataSource.getConnection()) {
      Batch b;
      try (PreparedStatement ps = c.prepareStatement(BATCH)) {
        ps.setLong(1, id);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return null;
          }
          long callback = rs.getLong(9);
          Long callbackJob = rs.wasNull() ? null : callback;
          b =
              new Batch(
                  rs.getLong(1),
                  rs.getInt(2),
                  rs.getInt(3),
                  rs.getInt(4),
                  rs.getInt(5),
                  rs.getInt(6),
                  rs.getString(7),
                  rs.getString(8),
                  callbackJob,
                  rs.getString(10),
                  instant(rs.getTimestamp(11)),
                  instant(rs.getTimestamp(12)),
                  List.of(),
                  null);
        }
      }
      var members = new ArrayList<Member>();
      try (PreparedStatement ps = c.prepareStatement(MEMBERS)) {
        ps.setLong(1, id);
        ps.setLong(2, after);
        ps.setInt(3, page + 1);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            members.add(
                new Member(
                    rs.getLong(1),
                    rs.getString(2),
                    rs.getString(3),
                    rs.getInt(4),
                    instant(rs.getTimestamp(5)),
                    instant(rs.getTimestamp(6))));
          }
        }
      }
      Long next = null;
      if (members.size() > page) {
        members.remove(page);
        next = members.get(page - 1).id();
      }
      return new Batch(
          b.id(),
          b.size(),
          b.pending(),
          b.completed(),
          b.dead(),
          b.cancelled(),
          b.callbackQueue(),
          b.callbackPayload(),
          b.callbackJobId(),
          b.callbackState(),
          b.createdAt(),
          b.finishedAt(),
          List.copyOf(members),
          next);
    } catch (SQLException e) {
      throw Failures.of(null, "read batch " + id, e);
    }
  }

  /** The job's batch, parents and children; null when there is no such job. */
  public Links links(long jobId) {
    try (Connection c = dataSource.getConnection()) {
      Long batch;
      try (PreparedStatement ps = c.prepareStatement(JOB)) {
        ps.setLong(1, jobId);
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return null;
          }
          long b = rs.getLong(1);
          batch = rs.wasNull() ? null : b;
        }
      }
      List<Edge> parents = edges(c, PARENTS, jobId, MAX_PAGE);
      List<Edge> children = edges(c, CHILDREN, jobId, MAX_PAGE + 1);
      boolean more = children.size() > MAX_PAGE;
      return new Links(
          jobId, batch, parents, more ? children.subList(0, MAX_PAGE) : children, more);
    } catch (SQLException e) {
      throw Failures.of(null, "read the links of job " + jobId, e);
    }
  }

  private static List<Edge> edges(Connection c, String sql, long jobId, int limit)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, jobId);
      ps.setInt(2, limit);
      var out = new ArrayList<Edge>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(
              new Edge(
                  rs.getLong(1),
                  rs.getString(2),
                  rs.getString(3),
                  rs.getString(4),
                  rs.getString(5)));
        }
      }
      return List.copyOf(out);
    }
  }

  private static Instant instant(Timestamp t) {
    return t == null ? null : t.toInstant();
  }
}
