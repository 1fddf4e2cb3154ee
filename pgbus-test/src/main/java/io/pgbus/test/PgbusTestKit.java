package io.pgbus.test;

import io.pgbus.jakarta.HandlerRegistry;
import io.pgbus.jakarta.JobTransactions;
import io.pgbus.jakarta.PgbusResources;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import javax.sql.DataSource;

/**
 * The kit inside a container, for Arquillian tests: {@code @Inject PgbusTestKit kit;}. Its worker
 * runs jobs through the deployment's own handler beans (the runtime's {@link HandlerRegistry}), in
 * the container's REQUIRES_NEW JTA transactions, with the deployment's {@code pgbus.retry.*} and
 * {@code pgbus.job-timeout}; its clock and assertions work on {@code jdbc/pgbus}.
 *
 * <pre>{@code
 * @Inject PgbusTestKit kit;
 * @Inject JobQueue jobs;
 *
 * @Test
 * void sendsTheWelcomeMail() {
 *   signup.register(user);                               // enqueues to "emails"
 *   requireEnqueued(kit.dataSource(), "emails", new Welcome(user.id()));
 *   kit.worker().build().drain("emails");
 * }
 * }</pre>
 *
 * Give the queues a test drives no capsule in the test deployment's configuration: the running
 * engine's capsules would compete for their jobs.
 */
@ApplicationScoped
public class PgbusTestKit {

  @Inject PgbusRuntime runtime;
  @Inject PgbusResources resources;
  @Inject HandlerRegistry handlers;
  @Inject JobTransactions transactions;

  /** A worker builder with the deployment's handlers; add a clock and crons, then build. */
  public TestWorker.Builder worker() {
    return TestWorker.inContainer(
        resources.dataSource(),
        new TestWorker.Container(
            runtime.engine().config(),
            transactions,
            (job, tx) -> handlers.invoke(job),
            handlers.queues(),
            resources.cipher()));
  }

  /**
   * {@link PgbusAssertions} with the deployment's keys: the payloads and errors of its encrypting
   * queues ({@code pgbus.queue.<name>.encrypt=true}) are opened before they are compared.
   */
  public JobAssertions assertions() {
    return new JobAssertions(resources.cipher());
  }

  /** A clock standing at the database's now(); see {@link TestClock}. */
  public TestClock clock() {
    return TestClock.of(resources.dataSource());
  }

  /** The JTA datasource ({@code jdbc/pgbus}), for {@link PgbusAssertions}. */
  public DataSource dataSource() {
    return resources.dataSource();
  }
}
