package io.pgbus;

import java.util.List;

/** What {@link JobQueue#enqueueBatch} wrote: the batch's id and its members' job ids in order. */
public record EnqueuedBatch(long batchId, List<Long> jobIds) {
  public EnqueuedBatch {
    jobIds = List.copyOf(jobIds);
  }
}
