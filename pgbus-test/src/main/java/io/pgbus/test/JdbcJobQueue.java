package io.pgbus.test;

import io.pgbus.AuditEntry;
import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.EnqueuedBatch;
import io.pgbus.EnqueuedWorkflow;
import io.pgbus.InvalidJobException;
import io.pgbus.JobBatch;
import io.pgbus.JobQueue;
import io.pgbus.Workflow;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.NewJob;
import io.pgbus.jakarta.HandledJob;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * {@link JobQueue} on plain JDBC for code under test outside a container: each call takes a
 * connection from the DataSource, so a connection that is in a transaction (see {@link
 * PgbusTest#jobQueue(Connection)}) enqueues in it. The job operations are the engine's own ({@link
 * Jobs}), which need no running engine; payloads map with JSON-B as in {@code JtaJobQueue}. As
 * there, a job enqueued from a handler names the handled job as its parent ({@link HandledJob}).
 */
final class JdbcJobQueue implements JobQueue {

  private final DataSource dataSource;
  private final Jobs jobs;

  JdbcJobQueue(DataSource dataSource) {
    this.dataSource = dataSource;
    this.jobs = new Jobs(EngineConfig.builder().workerId("pgbus-test").build());
  }

  @Override
  public long enqueue(String queue, Object payload, EnqueueOptions options) {
    return on(c -> jobs.enqueueIfAbsent(c, job(queue, Json.of(queue, payload), options))).id();
  }

  @Override
  public Enqueued enqueueIfAbsent(String queue, Object payload, EnqueueOptions options) {
    if (options.uniqueKey() == null) {
      throw new InvalidJobException(
          queue, "enqueueIfAbsent to queue '" + queue + "' needs a unique key, as in production");
    }
    return on(c -> jobs.enqueueIfAbsent(c, job(queue, Json.of(queue, payload), options)));
  }

  @Override
  public List<Long> enqueueAll(String queue, List<?> payloads, EnqueueOptions options) {
    if (options.uniqueKey() != null) {
      throw new InvalidJobException(
          queue, "enqueueAll to queue '" + queue + "' refuses a unique key, as in production");
    }
    var batch = new ArrayList<NewJob>(payloads.size());
    for (Object p : payloads) {
      batch.add(job(queue, Json.of(queue, p), options));
    }
    return on(c -> jobs.enqueueAll(c, batch));
  }

  @Override
  public EnqueuedBatch enqueueBatch(JobBatch batch) {
    var members = new ArrayList<NewJob>(batch.members().size());
    for (JobBatch.Member m : batch.members()) {
      members.add(job(m.queue(), Json.of(m.queue(), m.payload()), m.options()));
    }
    NewJob callback =
        job(
            batch.callbackQueue(),
            Json.of(batch.callbackQueue(), batch.callbackPayload()),
            batch.callbackOptions());
    return on(c -> jobs.enqueueBatch(c, members, callback));
  }

  @Override
  public EnqueuedWorkflow enqueueWorkflow(Workflow workflow) {
    var nodes = new ArrayList<NewJob>(workflow.nodes().size());
    for (Workflow.Node n : workflow.nodes()) {
      nodes.add(
          new NewJob(
              n.queue(), Json.of(n.queue(), n.payload()), n.options(), null, HandledJob.id()));
    }
    return on(c -> jobs.enqueueWorkflow(c, workflow, nodes));
  }

  @Override
  public OptionalInt cancelWorkflow(long workflowId) {
    return on(c -> jobs.cancelWorkflow(c, workflowId, null));
  }

  @Override
  public OptionalInt retryWorkflow(long workflowId) {
    return on(c -> jobs.retryWorkflow(c, workflowId, null));
  }

  @Override
  public boolean cancel(long jobId) {
    return on(c -> jobs.cancel(c, jobId));
  }

  @Override
  public boolean replay(long jobId) {
    return on(c -> jobs.replay(c, jobId));
  }

  @Override
  public boolean pause(String queue) {
    return on(c -> jobs.pause(c, queue));
  }

  @Override
  public boolean resume(String queue) {
    return on(c -> jobs.resume(c, queue));
  }

  @Override
  public boolean isPaused(String queue) {
    return on(c -> jobs.isPaused(c, queue));
  }

  @Override
  public List<AuditEntry> history(long jobId) {
    return on(c -> jobs.history(c, jobId));
  }

  @Override
  public List<AuditEntry> history(String queue, int limit) {
    return on(c -> jobs.history(c, queue, limit));
  }

  /** A job to enqueue, from the handler running on this thread, if any. */
  private static NewJob job(String queue, String json, EnqueueOptions options) {
    return new NewJob(queue, json, options, null, HandledJob.id(), null, HandledJob.workflowId());
  }

  private <T> T on(Function<Connection, T> work) {
    try (Connection c = dataSource.getConnection()) {
      return work.apply(c);
    } catch (SQLException e) {
      throw new IllegalStateException("pgbus-test could not get a connection: " + e, e);
    }
  }
}
