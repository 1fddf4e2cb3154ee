package io.pgbus.jakarta;

import io.pgbus.EnqueueOptions;
import io.pgbus.PgbusException;
import io.pgbus.admin.Explanation;
import io.pgbus.admin.HistoryPoint;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobPage;
import io.pgbus.admin.JobView;
import io.pgbus.admin.QueueBlockers;
import io.pgbus.admin.QueueStats;
import io.pgbus.admin.Throughput;
import io.pgbus.engine.HistoryStore;
import io.pgbus.engine.JobAdminStore;
import io.pgbus.engine.JobAdminStore.Action;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.security.Principal;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * {@link JobAdmin} on the JTA datasource, like {@link JtaJobQueue}: a call inside the caller's
 * transaction runs on its enlisted connection and commits with it; without one, each call commits
 * on its own. Actions are audited with the caller principal.
 */
@ApplicationScoped
public class JtaJobAdmin implements JobAdmin {

  private static final HistoryStore HISTORY = new HistoryStore();

  @Inject PgbusRuntime runtime;
  @Inject PgbusResources resources;
  @Inject CallerTransaction callerTransaction;
  @Inject Instance<Principal> principal;

  @Override
  public Optional<JobView> job(long id) {
    return withConnection("read job " + id, null, (s, c) -> s.jobView(c, id));
  }

  @Override
  public JobPage search(JobFilter filter, Long before, int limit) {
    refuseSearchOfSealed(filter);
    return withConnection("search jobs", filter, (s, c) -> s.jobSearch(c, filter, before, limit));
  }

  /**
   * A payload or error search of a queue that encrypts cannot match: PostgreSQL holds only its
   * ciphertext. Refused as a bad filter (400) that says why, without echoing the searched text.
   */
  private void refuseSearchOfSealed(JobFilter filter) {
    if (filter == null || filter.queue() == null || !resources.cipher().encrypts(filter.queue())) {
      return;
    }
    String field =
        filter.payloadContains() != null
            ? "payloadContains"
            : filter.errorContains() != null ? "errorContains" : null;
    if (field != null) {
      throw new InvalidFilterException(
          field,
          "(not shown)",
          "queue '"
              + filter.queue()
              + "' encrypts its payloads, results and errors (pgbus.queue."
              + filter.queue()
              + ".encrypt=true), so the database cannot search their content; search by id,"
              + " unique key, state or time instead");
    }
  }

  @Override
  public OptionalInt cancelWorkflow(long workflowId) {
    return workflowAct(workflowId, false);
  }

  @Override
  public OptionalInt retryWorkflow(long workflowId) {
    return workflowAct(workflowId, true);
  }

  /** A whole workflow's cancel or retry, in the caller's transaction or one of its own. */
  private OptionalInt workflowAct(long workflowId, boolean retry) {
    String caller = CallerNames.name(principal);
    try {
      return callerTransaction.run(
          c ->
              retry
                  ? runtime.engine().jobs().retryWorkflow(c, workflowId, caller)
                  : runtime.engine().jobs().cancelWorkflow(c, workflowId, caller));
    } catch (SQLException e) {
      throw failed((retry ? "retry" : "cancel") + " workflow " + workflowId, null, e);
    }
  }

  @Override
  public int replayDead(JobFilter filter, int limit) {
    return act(Action.REPLAY, filter, limit);
  }

  @Override
  public int retryNow(JobFilter filter, int limit) {
    return act(Action.RETRY, filter, limit);
  }

  @Override
  public int cancelWaiting(JobFilter filter, int limit) {
    return act(Action.CANCEL, filter, limit);
  }

  @Override
  public int deleteFinished(JobFilter filter, int limit) {
    return act(Action.DELETE, filter, limit);
  }

  @Override
  public boolean replaceWaiting(long id, Instant runAt, Integer priority) {
    if (runAt == null && priority == null) {
      throw new InvalidFilterException(
          "runAt", null, "give runAt, priority or both: what to change in job " + id);
    }
    if (priority != null
        && (priority < EnqueueOptions.MIN_PRIORITY || priority > EnqueueOptions.MAX_PRIORITY)) {
      throw new InvalidFilterException(
          "priority",
          priority,
          "use "
              + EnqueueOptions.MIN_PRIORITY
              + " to "
              + EnqueueOptions.MAX_PRIORITY
              + " (lower runs first)");
    }
    String caller = CallerNames.name(principal);
    try {
      return callerTransaction.run(
          c -> runtime.engine().adminStore().jobReplace(c, id, runAt, priority, caller));
    } catch (SQLException e) {
      // 55000 object_not_in_prerequisite_state: running or finished; 22023: a run time out of
      // bounds. Both name the value and the fix (R__unique.sql); the rest is the database's.
      String state = e.getSQLState();
      if ("55000".equals(state) || "22023".equals(state)) {
        boolean notWaiting = "55000".equals(state);
        throw new InvalidFilterException(
            notWaiting ? "id" : "runAt", notWaiting ? id : runAt, databaseRule(e));
      }
      throw failed("replace job " + id, null, e);
    }
  }

  /** The database's message without its level, prefix and context: the value and the fix. */
  private static String databaseRule(SQLException e) {
    String m = String.valueOf(e.getMessage()).lines().findFirst().orElse("");
    m = m.startsWith("ERROR: ") ? m.substring("ERROR: ".length()) : m;
    return m.startsWith("pgbus: ") ? m.substring("pgbus: ".length()) : m;
  }

  @Override
  public List<QueueStats> queues() {
    List<String> known = runtime.engine().config().queues();
    return withConnection(
        "read the queues", null, (s, c) -> s.queueStats(c, known, JobAdmin.COUNT_CAP));
  }

  @Override
  public List<Throughput> throughput() {
    return withConnection("read the throughput", null, (s, c) -> s.throughput(c));
  }

  @Override
  public List<HistoryPoint> history(String queue, Instant from, Instant to, int stepMinutes) {
    return withConnection(
        "read the history", null, (s, c) -> HISTORY.history(c, queue, from, to, stepMinutes));
  }

  @Override
  public Optional<Explanation> explain(long id) {
    return withConnection(c -> runtime.engine().jobs().explain(c, id), "explain job " + id);
  }

  @Override
  public List<QueueBlockers> blockers(String queue) {
    return withConnection(
        c -> runtime.engine().jobs().blockers(c, queue), "read the blockers of the queues");
  }

  private <T> T withConnection(Function<Connection, T> work, String action) {
    try (Connection c = resources.dataSource().getConnection()) {
      return work.apply(c);
    } catch (SQLException e) {
      throw failed(action, null, e);
    }
  }

  private int act(Action action, JobFilter filter, int limit) {
    refuseSearchOfSealed(filter);
    String caller = CallerNames.name(principal);
    // A cancel of jobs in batches or with dependents is two statements: one transaction, the
    // caller's or its own (CallerTransaction).
    try {
      return callerTransaction.run(
          c -> runtime.engine().adminStore().jobAct(c, action, filter, limit, caller));
    } catch (SQLException e) {
      throw failed(action.auditName() + " jobs", filter, e);
    }
  }

  @FunctionalInterface
  private interface Work<T> {
    T run(JobAdminStore store, Connection c) throws SQLException;
  }

  private <T> T withConnection(String action, JobFilter filter, Work<T> work) {
    try (Connection c = resources.dataSource().getConnection()) {
      return work.run(runtime.engine().adminStore(), c);
    } catch (SQLException e) {
      throw failed(action, filter, e);
    }
  }

  private static RuntimeException failed(String action, JobFilter filter, SQLException e) {
    // 22P02 invalid_text_representation: the payload filter is not JSON (the only text the
    // database parses here).
    if ("22P02".equals(e.getSQLState()) && filter != null && filter.payloadContains() != null) {
      return new InvalidFilterException(
          "payload", filter.payloadContains(), "is not JSON (" + e.getMessage() + ")");
    }
    return new PgbusException("pgbus could not " + action + ": " + e.getMessage(), e);
  }
}
