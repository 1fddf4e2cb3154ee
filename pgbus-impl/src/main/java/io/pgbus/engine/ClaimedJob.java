package io.pgbus.engine;

import io.pgbus.JobContext;
import java.time.Instant;

/**
 * A job this worker holds: claimed, {@code running}, leased to it. {@code attempt} is the fence:
 * every state change after the claim matches on (id, attempt, state = running), so a worker whose
 * lease was rescued and reclaimed elsewhere can no longer change the job. {@code runAt} is when
 * the job became due (its enqueue time, unless delayed or retried), for wake-latency metrics.
 */
public record ClaimedJob(
    long id,
    String queue,
    int priority,
    String payload,
    int attempt,
    int maxAttempts,
    Instant createdAt,
    Instant runAt)
    implements JobContext {}
