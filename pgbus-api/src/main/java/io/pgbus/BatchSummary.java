package io.pgbus;

/**
 * A batch's counts, as its callback sees them ({@link JobContext#batch()}): every member is counted
 * once, by the outcome it first finished with. When the callback runs, {@code completed + dead +
 * cancelled == size}.
 */
public record BatchSummary(long batchId, int size, int completed, int dead, int cancelled) {}
