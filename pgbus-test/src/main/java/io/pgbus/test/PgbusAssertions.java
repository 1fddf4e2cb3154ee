package io.pgbus.test;

import java.sql.Connection;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Assertions on what was enqueued, in the spirit of River's {@code rivertest.RequireInserted}.
 *
 * <p>Given a {@link Connection}, they read inside its transaction: they see the jobs that
 * transaction enqueued before it commits (and the committed ones), which is how a test proves that
 * an enqueue joined the business transaction. Given a {@link DataSource}, they read committed jobs
 * only. The payload is mapped to JSON as {@code JobQueue.enqueue} maps it (JSON-B; a {@link
 * RawJson} as its text) and compared as {@code jsonb}: key order and spacing do not matter.
 *
 * <pre>{@code
 * EnqueuedJob job = requireEnqueued(connection, "invoices", new Invoice(42));
 * requireNotEnqueued(dataSource, "emails");
 * }</pre>
 *
 * A failure is an {@link AssertionError} that lists the jobs the queue does have. The payloads of
 * encrypting queues are sealed in the database: assert on them with {@link
 * PgbusTestKit#assertions()} or {@link #decrypting(Map)}, which hold the keys.
 */
public final class PgbusAssertions {

  private PgbusAssertions() {}

  /**
   * These assertions with the payloads and errors of encrypting queues opened, in a plain test: the
   * {@code settings} are those of the deployment's {@code microprofile-config.properties} that name
   * the queues that encrypt and their keys ({@code pgbus.queue.<name>.encrypt}, {@code
   * pgbus.encryption.*}; docs/configuration.md). In a container, use {@link
   * PgbusTestKit#assertions()}.
   *
   * @throws IllegalArgumentException naming a setting that is wrong, as deployment would
   */
  public static JobAssertions decrypting(Map<String, String> settings) {
    return new JobAssertions(Ciphers.of(settings));
  }

  /**
   * Exactly one job of {@code queue} has this payload; returns it.
   *
   * @throws AssertionError when none has, or more than one
   */
  public static EnqueuedJob requireEnqueued(Connection c, String queue, Object payload) {
    return JobAssertions.PLAIN.requireEnqueued(c, queue, payload);
  }

  /** As {@link #requireEnqueued(Connection, String, Object)}, and the job meets {@code expect}. */
  public static EnqueuedJob requireEnqueued(
      Connection c, String queue, Object payload, Expect expect) {
    return JobAssertions.PLAIN.requireEnqueued(c, queue, payload, expect);
  }

  /** Committed jobs only: see the class comment. */
  public static EnqueuedJob requireEnqueued(DataSource ds, String queue, Object payload) {
    return JobAssertions.PLAIN.requireEnqueued(ds, queue, payload);
  }

  /** Committed jobs only: see the class comment. */
  public static EnqueuedJob requireEnqueued(
      DataSource ds, String queue, Object payload, Expect expect) {
    return JobAssertions.PLAIN.requireEnqueued(ds, queue, payload, expect);
  }

  /**
   * No job of {@code queue} has this payload.
   *
   * @throws AssertionError naming the jobs that do
   */
  public static void requireNotEnqueued(Connection c, String queue, Object payload) {
    JobAssertions.PLAIN.requireNotEnqueued(c, queue, payload);
  }

  /** Committed jobs only: see the class comment. */
  public static void requireNotEnqueued(DataSource ds, String queue, Object payload) {
    JobAssertions.PLAIN.requireNotEnqueued(ds, queue, payload);
  }

  /**
   * The queue has no job at all.
   *
   * @throws AssertionError naming the jobs it has
   */
  public static void requireNotEnqueued(Connection c, String queue) {
    JobAssertions.PLAIN.requireNotEnqueued(c, queue);
  }

  /** Committed jobs only: see the class comment. */
  public static void requireNotEnqueued(DataSource ds, String queue) {
    JobAssertions.PLAIN.requireNotEnqueued(ds, queue);
  }

  /** Every job of {@code queue}, oldest first, in any state. */
  public static List<EnqueuedJob> enqueued(Connection c, String queue) {
    return JobAssertions.PLAIN.enqueued(c, queue);
  }

  /** Committed jobs only: see the class comment. */
  public static List<EnqueuedJob> enqueued(DataSource ds, String queue) {
    return JobAssertions.PLAIN.enqueued(ds, queue);
  }

  /** The job with this id as it is now; fails when there is none. */
  public static EnqueuedJob job(DataSource ds, long id) {
    return JobAssertions.PLAIN.job(ds, id);
  }
}
