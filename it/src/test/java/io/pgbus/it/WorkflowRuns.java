package io.pgbus.it;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** How many times each job of {@link WorkflowIT} was handed to a handler, in this JVM. */
final class WorkflowRuns {
  private static final Map<Long, AtomicInteger> RUNS = new ConcurrentHashMap<>();

  private WorkflowRuns() {}

  static void ran(long jobId) {
    RUNS.computeIfAbsent(jobId, id -> new AtomicInteger()).incrementAndGet();
  }

  /** {"41":1,"42":1}: job id to runs, as JSON. */
  static String json() {
    StringBuilder b = new StringBuilder("{");
    new TreeMap<>(RUNS)
        .forEach(
            (id, n) ->
                b.append(b.length() > 1 ? "," : "")
                    .append('"')
                    .append(id)
                    .append("\":")
                    .append(n.get()));
    return b.append('}').toString();
  }
}
