package io.pgbus.engine;

/**
 * A limited queue as the database has it now: its limits, its running jobs, and its due jobs split
 * by what they wait for.
 *
 * @param queue the queue
 * @param globalConcurrency its limit across the fleet, or null for none
 * @param keyConcurrency its limit per concurrency key
 * @param running its executions now, in every JVM: the distinct lanes of its running jobs, what the
 *     global limit counts (a worker slot's claimed group is one lane, its jobs run one after
 *     another; a job claimed without lanes is one of its own)
 * @param waitingOnLimit due jobs that no claim may take now: the queue is at its global limit, or
 *     their key is at its limit
 * @param waitingOnWorker due jobs a claim may take, waiting for a free worker
 */
public record QueueLimitStatus(
    String queue,
    Integer globalConcurrency,
    int keyConcurrency,
    long running,
    long waitingOnLimit,
    long waitingOnWorker) {}
