package io.pgbus.admin;

import java.time.Instant;

/**
 * Jobs of one queue that finished in one minute.
 *
 * @param minute the start of the minute (UTC, whole minutes)
 * @param completed jobs that completed in that minute
 * @param dead jobs that died in that minute (their last attempt failed)
 */
public record Throughput(String queue, Instant minute, long completed, long dead) {}
