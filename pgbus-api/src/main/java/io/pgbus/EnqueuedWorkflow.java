package io.pgbus;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@link JobQueue#enqueueWorkflow} wrote: the workflow's id and each node's job id, by node
 * name, in the order the nodes were added.
 */
public record EnqueuedWorkflow(long workflowId, Map<String, Long> jobIds) {
  public EnqueuedWorkflow {
    jobIds = Collections.unmodifiableMap(new LinkedHashMap<>(jobIds));
  }

  /** The job id of node {@code node}. */
  public long jobId(String node) {
    Long id = jobIds.get(node);
    if (id == null) {
      throw new IllegalArgumentException("no node '" + node + "' in workflow " + workflowId);
    }
    return id;
  }
}
