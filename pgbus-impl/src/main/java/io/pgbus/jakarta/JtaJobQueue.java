package io.pgbus.jakarta;

import io.pgbus.AuditEntry;
import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.EnqueuedBatch;
import io.pgbus.EnqueuedWorkflow;
import io.pgbus.InvalidJobException;
import io.pgbus.JobBatch;
import io.pgbus.JobQueue;
import io.pgbus.PgbusException;
import io.pgbus.QueueNames;
import io.pgbus.Workflow;
import io.pgbus.engine.NewJob;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.security.Principal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * {@link JobQueue} on the JTA datasource. A connection taken inside the caller's transaction is
 * enlisted in it, so the INSERT commits or rolls back with the caller's own writes. Without a
 * transaction, each call commits on its own. The wake goes out after the commit ({@code
 * pgbus.wake-mode=coalesced}, {@link JtaAfterCommit}) or inside the transaction ({@code
 * in-transaction}); never for a rollback.
 *
 * <p>Who: every enqueue records the caller principal (CDI's built-in {@link Principal} bean, which
 * is the EJB/servlet caller) in {@code pgbus.job.enqueued_by}, and cancel, replay, pause and resume
 * write it to the audit trail. Without an authenticated caller the database role is recorded
 * instead. An enqueue from inside a handler names the handled job as its parent ({@link
 * HandledJob}), whose correlation id the new job inherits unless it has its own. For a queue whose
 * handler runs as the enqueuer ({@link RunAsQueues}) the caller is also recorded in {@code
 * pgbus.job.run_as}, and an enqueue without an authenticated caller is refused.
 */
@ApplicationScoped
public class JtaJobQueue implements JobQueue {

  @Inject PgbusRuntime runtime;
  @Inject PgbusResources resources;
  @Inject CallerTransaction callerTransaction;
  @Inject Instance<Principal> principal;

  private Jsonb jsonb;

  @PostConstruct
  void init() {
    jsonb = JsonbBuilder.create();
  }

  @PreDestroy
  void close() {
    JsonbRelease.release(jsonb);
  }

  @Override
  public long enqueue(String queue, Object payload, EnqueueOptions options) {
    return insert(queue, payload, options).id();
  }

  @Override
  public Enqueued enqueueIfAbsent(String queue, Object payload, EnqueueOptions options) {
    if (options.uniqueKey() == null) {
      throw new InvalidJobException(
          queue,
          "enqueueIfAbsent to queue '"
              + queue
              + "' needs a unique key: pass"
              + " EnqueueOptions.defaults().withUniqueKey(\"...\"), or use enqueue");
    }
    return insert(queue, payload, options);
  }

  /**
   * Enqueues in the caller's transaction; a duplicate of a unique key inserts (and counts) none.
   */
  private Enqueued insert(String queue, Object payload, EnqueueOptions options) {
    NewJob job =
        new NewJob(
            queue,
            toJson(queue, payload),
            options,
            caller(),
            HandledJob.id(),
            runAs(List.of(queue)),
            HandledJob.workflowId());
    Enqueued result =
        withConnection(
            "enqueue to queue '" + queue + "'", c -> runtime.jobs().enqueueIfAbsent(c, job));
    if (result.inserted()) {
      runtime.metrics().enqueued(queue, 1);
    }
    return result;
  }

  @Override
  public List<Long> enqueueAll(String queue, List<?> payloads, EnqueueOptions options) {
    QueueNames.require(queue);
    if (options.uniqueKey() != null) {
      throw new InvalidJobException(
          queue,
          "enqueueAll to queue '"
              + queue
              + "' got unique key '"
              + options.uniqueKey()
              + "' for every job, which would make all but the first a duplicate: enqueue keyed"
              + " jobs one by one with enqueueIfAbsent");
    }
    var jobs = new ArrayList<NewJob>(payloads.size());
    String by = caller();
    Long parent = HandledJob.id();
    Long workflow = HandledJob.workflowId();
    String runAs = runAs(List.of(queue));
    for (Object p : payloads) {
      jobs.add(new NewJob(queue, toJson(queue, p), options, by, parent, runAs, workflow));
    }
    List<Long> ids =
        withConnection(
            "enqueue " + jobs.size() + " jobs to queue '" + queue + "'",
            c -> runtime.jobs().enqueueAll(c, jobs));
    runtime.metrics().enqueued(queue, ids.size());
    return ids;
  }

  @Override
  public EnqueuedBatch enqueueBatch(JobBatch batch) {
    String by = caller();
    Long parent = HandledJob.id();
    var queues = new ArrayList<String>();
    batch.members().forEach(m -> queues.add(m.queue()));
    queues.add(batch.callbackQueue());
    // One statement inserts the batch, so one run-as user for all its jobs: the caller's when any
    // of their queues runs as the enqueuer (the others ignore it).
    String runAs = runAs(queues);
    var members = new ArrayList<NewJob>(batch.members().size());
    for (JobBatch.Member m : batch.members()) {
      members.add(
          new NewJob(m.queue(), toJson(m.queue(), m.payload()), m.options(), by, parent, runAs));
    }
    // The members join the handled job's workflow (the callback, enqueued later, does not).
    NewJob callback =
        new NewJob(
            batch.callbackQueue(),
            toJson(batch.callbackQueue(), batch.callbackPayload()),
            batch.callbackOptions(),
            by,
            parent,
            runAs,
            HandledJob.workflowId());
    EnqueuedBatch enqueued =
        withConnection(
            "enqueue a batch of " + members.size() + " jobs",
            c -> runtime.jobs().enqueueBatch(c, members, callback));
    for (JobBatch.Member m : batch.members()) {
      runtime.metrics().enqueued(m.queue(), 1);
    }
    return enqueued;
  }

  @Override
  public EnqueuedWorkflow enqueueWorkflow(Workflow workflow) {
    workflow.validate();
    String by = caller();
    Long parent = HandledJob.id();
    // One statement inserts the workflow, so one run-as user for all its jobs, as a batch's.
    String runAs = runAs(workflow.nodes().stream().map(Workflow.Node::queue).toList());
    var jobs = new ArrayList<NewJob>(workflow.nodes().size());
    for (Workflow.Node n : workflow.nodes()) {
      jobs.add(
          new NewJob(n.queue(), toJson(n.queue(), n.payload()), n.options(), by, parent, runAs));
    }
    EnqueuedWorkflow enqueued =
        withConnection(
            "enqueue workflow '" + workflow.name() + "'",
            c -> runtime.jobs().enqueueWorkflow(c, workflow, jobs));
    for (Workflow.Node n : workflow.nodes()) {
      runtime.metrics().enqueued(n.queue(), 1);
    }
    return enqueued;
  }

  @Override
  public OptionalInt cancelWorkflow(long workflowId) {
    String by = caller();
    try {
      return callerTransaction.run(c -> runtime.jobs().cancelWorkflow(c, workflowId, by));
    } catch (SQLException e) {
      throw unreachable("cancel workflow " + workflowId, e);
    }
  }

  @Override
  public OptionalInt retryWorkflow(long workflowId) {
    String by = caller();
    try {
      return callerTransaction.run(c -> runtime.jobs().retryWorkflow(c, workflowId, by));
    } catch (SQLException e) {
      throw unreachable("retry workflow " + workflowId, e);
    }
  }

  @Override
  public boolean cancel(long jobId) {
    // Two statements for a job in a batch or with dependents: one transaction, the caller's or
    // its own (CallerTransaction).
    String by = caller();
    try {
      return callerTransaction.run(c -> runtime.jobs().cancel(c, jobId, by));
    } catch (SQLException e) {
      throw unreachable("cancel job " + jobId, e);
    }
  }

  @Override
  public boolean replay(long jobId) {
    return withConnection("replay job " + jobId, c -> runtime.jobs().replay(c, jobId, caller()));
  }

  @Override
  public boolean pause(String queue) {
    QueueNames.require(queue);
    return withConnection(
        "pause queue '" + queue + "'", c -> runtime.jobs().pause(c, queue, caller()));
  }

  @Override
  public boolean resume(String queue) {
    QueueNames.require(queue);
    return withConnection(
        "resume queue '" + queue + "'", c -> runtime.jobs().resume(c, queue, caller()));
  }

  @Override
  public boolean isPaused(String queue) {
    QueueNames.require(queue);
    return withConnection(
        "read the pause of queue '" + queue + "'", c -> runtime.jobs().isPaused(c, queue));
  }

  @Override
  public List<AuditEntry> history(long jobId) {
    return withConnection(
        "read the audit trail of job " + jobId, c -> runtime.jobs().history(c, jobId));
  }

  @Override
  public List<AuditEntry> history(String queue, int limit) {
    QueueNames.require(queue);
    return withConnection(
        "read the audit trail of queue '" + queue + "'",
        c -> runtime.jobs().history(c, queue, limit));
  }

  /**
   * The caller principal's name, or {@code null} (the database records its role) when there is
   * none, it is the container's unauthenticated placeholder, or the container cannot tell here.
   */
  private String caller() {
    return CallerNames.name(principal);
  }

  /**
   * Whom the handlers of jobs enqueued now to {@code queues} run as: the caller, uncut, when one of
   * the queues runs as the enqueuer (refused without an authenticated caller); else null.
   */
  private String runAs(List<String> queues) {
    RunAsQueues runAs = resources.runAsQueues();
    for (String q : queues) {
      if (runAs.runsAsEnqueuer(q)) {
        return runAs.runAs(q, CallerNames.fullName(principal));
      }
    }
    return null;
  }

  private String toJson(String queue, Object payload) {
    if (payload == null) {
      throw new InvalidJobException(
          queue, "payload for queue '" + queue + "' is null: pass an object, or {} for no data");
    }
    try {
      return jsonb.toJson(payload);
    } catch (RuntimeException e) {
      throw new InvalidJobException(
          queue,
          "payload of type "
              + payload.getClass().getName()
              + " for queue '"
              + queue
              + "' cannot be mapped to JSON with JSON-B: "
              + e.getMessage());
    }
  }

  private <T> T withConnection(String action, Function<Connection, T> work) {
    try (Connection c = resources.dataSource().getConnection()) {
      return work.apply(c);
    } catch (SQLException e) {
      throw unreachable(action, e);
    }
  }

  private static PgbusException unreachable(String action, SQLException e) {
    return new PgbusException(
        "pgbus could not " + action + ": the database cannot be reached (" + e.getMessage() + ")",
        e);
  }
}
