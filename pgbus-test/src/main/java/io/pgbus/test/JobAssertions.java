package io.pgbus.test;

import io.pgbus.QueueNames;
import io.pgbus.engine.JobCipher;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;
import javax.sql.DataSource;

/**
 * {@link PgbusAssertions} that also read the jobs of encrypting queues ({@code
 * pgbus.queue.<name>.encrypt=true}): their payloads and errors are opened with the deployment's
 * keys before they are compared or returned. Get one from {@link PgbusTestKit#assertions()} in a
 * container, or {@link PgbusAssertions#decrypting(Map)} with the deployment's encryption settings.
 * The methods and their messages are those of {@link PgbusAssertions}.
 */
public final class JobAssertions {

  /** The most jobs a failure message lists. */
  private static final int LISTED = 10;

  /** No keys: a sealed payload is refused with the way to assert on it. */
  static final JobAssertions PLAIN = new JobAssertions(JobCipher.NONE);

  private final JobCipher cipher;

  JobAssertions(JobCipher cipher) {
    this.cipher = Objects.requireNonNull(cipher, "cipher");
  }

  /**
   * Exactly one job of {@code queue} has this payload; returns it.
   *
   * @throws AssertionError when none has, or more than one
   */
  public EnqueuedJob requireEnqueued(Connection c, String queue, Object payload) {
    return requireEnqueued(c, queue, payload, Expect.any());
  }

  /** As {@link #requireEnqueued(Connection, String, Object)}, and the job meets {@code expect}. */
  public EnqueuedJob requireEnqueued(Connection c, String queue, Object payload, Expect expect) {
    QueueNames.require(queue);
    List<JobRows.Match> jobs = read(c, queue, Json.of(queue, payload));
    List<EnqueuedJob> matching =
        jobs.stream()
            .filter(m -> m.payloadEquals() && expect.differences(m.job()).isEmpty())
            .map(JobRows.Match::job)
            .toList();
    if (matching.size() == 1) {
      return matching.get(0);
    }
    String wanted =
        "a job in queue '"
            + queue
            + "' with payload "
            + Json.of(queue, payload)
            + (expect == Expect.any() ? "" : " and " + expect);
    if (matching.size() > 1) {
      throw new AssertionError(
          "expected one "
              + wanted.substring(2)
              + ", found "
              + matching.size()
              + ": "
              + list(matching)
              + "; check them all with enqueued(...)");
    }
    List<String> near =
        jobs.stream()
            .filter(JobRows.Match::payloadEquals)
            .map(m -> m.job() + " differs: " + String.join(", ", expect.differences(m.job())))
            .toList();
    throw new AssertionError(
        "expected "
            + wanted
            + ", found none"
            + (near.isEmpty() ? "" : "; with that payload: " + String.join("; ", near))
            + "; the queue has "
            + describe(jobs.stream().map(JobRows.Match::job).toList()));
  }

  /** Committed jobs only: see the class comment. */
  public EnqueuedJob requireEnqueued(DataSource ds, String queue, Object payload) {
    return requireEnqueued(ds, queue, payload, Expect.any());
  }

  /** Committed jobs only: see the class comment. */
  public EnqueuedJob requireEnqueued(DataSource ds, String queue, Object payload, Expect expect) {
    try (Connection c = ds.getConnection()) {
      return requireEnqueued(c, queue, payload, expect);
    } catch (SQLException e) {
      throw unreadable(queue, e);
    }
  }

  /**
   * No job of {@code queue} has this payload.
   *
   * @throws AssertionError naming the jobs that do
   */
  public void requireNotEnqueued(Connection c, String queue, Object payload) {
    QueueNames.require(queue);
    List<EnqueuedJob> matching =
        read(c, queue, Json.of(queue, payload)).stream()
            .filter(JobRows.Match::payloadEquals)
            .map(JobRows.Match::job)
            .toList();
    if (!matching.isEmpty()) {
      throw new AssertionError(
          "expected no job in queue '"
              + queue
              + "' with payload "
              + Json.of(queue, payload)
              + ", found "
              + list(matching));
    }
  }

  /** Committed jobs only: see the class comment. */
  public void requireNotEnqueued(DataSource ds, String queue, Object payload) {
    try (Connection c = ds.getConnection()) {
      requireNotEnqueued(c, queue, payload);
    } catch (SQLException e) {
      throw unreadable(queue, e);
    }
  }

  /**
   * The queue has no job at all.
   *
   * @throws AssertionError naming the jobs it has
   */
  public void requireNotEnqueued(Connection c, String queue) {
    QueueNames.require(queue);
    List<EnqueuedJob> jobs = enqueued(c, queue);
    if (!jobs.isEmpty()) {
      throw new AssertionError("expected no job in queue '" + queue + "', found " + describe(jobs));
    }
  }

  /** Committed jobs only: see the class comment. */
  public void requireNotEnqueued(DataSource ds, String queue) {
    try (Connection c = ds.getConnection()) {
      requireNotEnqueued(c, queue);
    } catch (SQLException e) {
      throw unreadable(queue, e);
    }
  }

  /** Every job of {@code queue}, oldest first, in any state. */
  public List<EnqueuedJob> enqueued(Connection c, String queue) {
    QueueNames.require(queue);
    return read(c, queue, null).stream().map(JobRows.Match::job).toList();
  }

  /** Committed jobs only: see the class comment. */
  public List<EnqueuedJob> enqueued(DataSource ds, String queue) {
    try (Connection c = ds.getConnection()) {
      return enqueued(c, queue);
    } catch (SQLException e) {
      throw unreadable(queue, e);
    }
  }

  /** The job with this id as it is now; fails when there is none. */
  public EnqueuedJob job(DataSource ds, long id) {
    try (Connection c = ds.getConnection()) {
      EnqueuedJob job = JobRows.byId(c, id, cipher);
      if (job == null) {
        throw new AssertionError(
            "expected job " + id + " in pgbus.job, found none (never committed, or pruned)");
      }
      return job;
    } catch (SQLException e) {
      throw new IllegalStateException("pgbus-test could not read job " + id + ": " + e, e);
    }
  }

  private List<JobRows.Match> read(Connection c, String queue, String payloadJson) {
    try {
      return JobRows.inQueue(c, queue, payloadJson, cipher);
    } catch (SQLException e) {
      throw unreadable(queue, e);
    }
  }

  private static IllegalStateException unreadable(String queue, SQLException e) {
    return new IllegalStateException(
        "pgbus-test could not read the jobs of queue '"
            + queue
            + "': "
            + e.getMessage()
            + " (is the pgbus schema there? PgbusTest.migrate(dataSource) installs it)",
        e);
  }

  private static String describe(List<EnqueuedJob> jobs) {
    return jobs.isEmpty() ? "no job" : jobs.size() + " job(s): " + list(jobs);
  }

  private static String list(List<EnqueuedJob> jobs) {
    String shown =
        jobs.stream().limit(LISTED).map(EnqueuedJob::toString).collect(Collectors.joining("; "));
    return jobs.size() > LISTED ? shown + "; ... " + (jobs.size() - LISTED) + " more" : shown;
  }
}
