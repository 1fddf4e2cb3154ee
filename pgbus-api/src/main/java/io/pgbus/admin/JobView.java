package io.pgbus.admin;

import java.time.Instant;

/**
 * One job as an operator sees it: a row of {@code pgbus.job}.
 *
 * @param attempt attempts started so far (a running job's current attempt)
 * @param maxAttempts the attempt budget, counted like {@code attempt}: a replay gives the job the
 *     budget it was enqueued with again, from {@code attemptsBeforeReplay} on
 * @param runAt when a waiting job runs (next), or when it ran (last)
 * @param attemptedBy the worker ({@code host:pid}) that holds a running job, or ran it last
 * @param leaseExpiresAt until when a running job's worker holds it; null when not running
 * @param payload the payload as JSON text; null in search results (read the job for it), and {@code
 *     null} where payloads are masked for the caller
 * @param errors the latest errors as a JSON array, newest first ({@code [{"attempt":1,"at":...,
 *     "error":"..."}]}); null in search results
 * @param result what the handler returned with its completion ({@code Outcome.complete(result)}),
 *     as JSON text; null when it returned none, in search results, and where payloads are masked
 * @param enqueuedBy who enqueued it (caller principal or database role)
 * @param progress the latest progress report as JSON ({@code {"percent":40,"message":"...",
 *     "at":...,"attempt":2}}), or null when its handler reported none
 * @param batchId the batch the job belongs to ({@code JobQueue.enqueueBatch}); null when none, when
 *     a replay took it out of its batch, and in search results
 * @param dependencies the jobs it waits on ({@code EnqueueOptions.afterJobs}) as a JSON array,
 *     {@code [{"job":41,"state":"waiting","onFailure":"cancel"}]} (state waiting, completed, or
 *     failed: the dependency died or was cancelled and this job is held); null when none (also once
 *     the job completed or was cancelled), and in search results
 * @param attemptsBeforeReplay the attempts spent before the job's last replay (0: never replayed):
 *     the current run is at attempt {@code attempt - attemptsBeforeReplay} of {@code maxAttempts -
 *     attemptsBeforeReplay}, and its backoff grows from the first step again
 * @param startBy its start-by deadline ({@code EnqueueOptions.startBy}, or its queue's max-wait):
 *     not claimed by then, it never runs; null when none, and in search results
 * @param workflowId the workflow the job belongs to ({@code JobQueue.enqueueWorkflow}, or a job a
 *     member's handler enqueued); null when none, and in search results
 */
public record JobView(
    long id,
    String queue,
    JobState state,
    int priority,
    int attempt,
    int maxAttempts,
    Instant runAt,
    Instant createdAt,
    Instant attemptedAt,
    Instant finalizedAt,
    String attemptedBy,
    Instant leaseExpiresAt,
    String uniqueKey,
    String enqueuedBy,
    String correlationId,
    String lastError,
    String payload,
    String errors,
    String progress,
    String result,
    Long batchId,
    String dependencies,
    int attemptsBeforeReplay,
    Instant startBy,
    Long workflowId) {

  /** A view without a workflow (as before V52). */
  public JobView(
      long id,
      String queue,
      JobState state,
      int priority,
      int attempt,
      int maxAttempts,
      Instant runAt,
      Instant createdAt,
      Instant attemptedAt,
      Instant finalizedAt,
      String attemptedBy,
      Instant leaseExpiresAt,
      String uniqueKey,
      String enqueuedBy,
      String correlationId,
      String lastError,
      String payload,
      String errors,
      String progress,
      String result,
      Long batchId,
      String dependencies,
      int attemptsBeforeReplay,
      Instant startBy) {
    this(
        id,
        queue,
        state,
        priority,
        attempt,
        maxAttempts,
        runAt,
        createdAt,
        attemptedAt,
        finalizedAt,
        attemptedBy,
        leaseExpiresAt,
        uniqueKey,
        enqueuedBy,
        correlationId,
        lastError,
        payload,
        errors,
        progress,
        result,
        batchId,
        dependencies,
        attemptsBeforeReplay,
        startBy,
        null);
  }

  /** A view without a start-by deadline (as before V43). */
  public JobView(
      long id,
      String queue,
      JobState state,
      int priority,
      int attempt,
      int maxAttempts,
      Instant runAt,
      Instant createdAt,
      Instant attemptedAt,
      Instant finalizedAt,
      String attemptedBy,
      Instant leaseExpiresAt,
      String uniqueKey,
      String enqueuedBy,
      String correlationId,
      String lastError,
      String payload,
      String errors,
      String progress,
      String result,
      Long batchId,
      String dependencies,
      int attemptsBeforeReplay) {
    this(
        id,
        queue,
        state,
        priority,
        attempt,
        maxAttempts,
        runAt,
        createdAt,
        attemptedAt,
        finalizedAt,
        attemptedBy,
        leaseExpiresAt,
        uniqueKey,
        enqueuedBy,
        correlationId,
        lastError,
        payload,
        errors,
        progress,
        result,
        batchId,
        dependencies,
        attemptsBeforeReplay,
        null);
  }

  /** A view of a job never replayed: the components of 0.1.0, {@code attemptsBeforeReplay} 0. */
  public JobView(
      long id,
      String queue,
      JobState state,
      int priority,
      int attempt,
      int maxAttempts,
      Instant runAt,
      Instant createdAt,
      Instant attemptedAt,
      Instant finalizedAt,
      String attemptedBy,
      Instant leaseExpiresAt,
      String uniqueKey,
      String enqueuedBy,
      String correlationId,
      String lastError,
      String payload,
      String errors,
      String progress,
      String result,
      Long batchId,
      String dependencies) {
    this(
        id,
        queue,
        state,
        priority,
        attempt,
        maxAttempts,
        runAt,
        createdAt,
        attemptedAt,
        finalizedAt,
        attemptedBy,
        leaseExpiresAt,
        uniqueKey,
        enqueuedBy,
        correlationId,
        lastError,
        payload,
        errors,
        progress,
        result,
        batchId,
        dependencies,
        0);
  }

  /** This view without payload and result, as shown to callers for whom payloads are masked. */
  public JobView withoutPayload() {
    return new JobView(
        id,
        queue,
        state,
        priority,
        attempt,
        maxAttempts,
        runAt,
        createdAt,
        attemptedAt,
        finalizedAt,
        attemptedBy,
        leaseExpiresAt,
        uniqueKey,
        enqueuedBy,
        correlationId,
        lastError,
        null,
        errors,
        progress,
        null,
        batchId,
        dependencies,
        attemptsBeforeReplay);
  }
}
