package io.pgbus.jakarta;

import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import io.pgbus.engine.RunAsUnavailableException;
import io.pgbus.engine.RunningJob;
import jakarta.ejb.EJBAccessException;
import java.util.concurrent.Callable;

/**
 * Runs the handler of a job whose queue runs as the enqueuer ({@link RunAsQueues}) as the user its
 * row names ({@code pgbus.job.run_as}, V44), through the server's {@link RunAsIdentity}; any other
 * job as before. A job without that user, or whose user the server no longer gives, fails closed:
 * the handler does not run, and {@link RunAsUnavailableException} makes the job dead at once. So
 * does a handler an EJB refused for want of a role ({@link EJBAccessException}): the user's roles
 * do not change between retries.
 */
final class RunAsEnqueuer {

  private final RunAsQueues queues;
  private final RunAsIdentity identity;

  private RunAsEnqueuer(RunAsQueues queues, RunAsIdentity identity) {
    this.queues = queues;
    this.identity = identity;
  }

  /**
   * For {@code queues}, on the server whose API {@code loader} sees; the deployment fails when a
   * queue runs as its enqueuer on a server pgbus cannot assert identities on.
   */
  static RunAsEnqueuer of(RunAsQueues queues, ClassLoader loader) {
    if (queues.isEmpty()) {
      return new RunAsEnqueuer(queues, null);
    }
    RunAsIdentity found = RunAsIdentity.forThisServer(loader);
    if (found == null) {
      String q = queues.queues().iterator().next();
      throw new PgbusException(
          "pgbus: pgbus.queue."
              + q
              + ".run-as=enqueuer, but this server offers neither Open Liberty's security API"
              + " (com.ibm.websphere.security.auth.WSSubject: enable the feature appSecurity) nor"
              + " WildFly Elytron's (org.wildfly.security.auth.server.SecurityDomain): run the"
              + " queue's handlers as the container (remove the key) or deploy on one of them");
    }
    return new RunAsEnqueuer(queues, found);
  }

  /** {@code handler} for {@code job}, as its enqueuer when its queue runs as one. */
  Outcome run(RunningJob job, Callable<Outcome> handler) throws Exception {
    if (!queues.runsAsEnqueuer(job.queue())) {
      return handler.call();
    }
    String user = job.claimed().runAs();
    if (user == null) {
      throw new RunAsUnavailableException(
          job.queue(),
          job.id(),
          "the job records no enqueuer to run as (it was enqueued through SQL without setting"
              + " pgbus.run_as, by a schedule, or before pgbus.queue."
              + job.queue()
              + ".run-as=enqueuer was set); enqueue it again through JobQueue as an authenticated"
              + " user",
          null);
    }
    try {
      return identity.call(user, handler);
    } catch (RunAsIdentity.Refused e) {
      throw new RunAsUnavailableException(job.queue(), job.id(), e.getMessage(), e.getCause());
    } catch (Exception e) {
      EJBAccessException denied = denied(e);
      if (denied == null) {
        throw e;
      }
      // The user lacks a role: every retry would be refused the same way until an operator
      // grants it, so the job fails closed now (replay it after the grant).
      throw new RunAsUnavailableException(
          job.queue(),
          job.id(),
          "user '"
              + user
              + "' lacks a role the handler needs ("
              + denied.getMessage()
              + "): grant it in the server's registry or role mapping, then replay the job",
          e);
    }
  }

  /** The EJB container's role refusal in {@code e}'s causes, or null. */
  private static EJBAccessException denied(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof EJBAccessException a) {
        return a;
      }
    }
    return null;
  }
}
