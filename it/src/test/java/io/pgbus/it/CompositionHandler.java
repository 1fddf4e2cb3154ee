package io.pgbus.it;

import io.pgbus.BatchSummary;
import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The handler of {@link BatchesIT}: members complete with a result; a batch callback notes its
 * counts, and a dependent notes its dependencies' results, in memory, by job id.
 */
@ApplicationScoped
@Handles({"it_group", "it_group_done", "it_after"})
public class CompositionHandler implements JobHandler<Marker> {

  /** Counts seen by batch callbacks, by callback job id. */
  public static final Map<Long, BatchSummary> CALLBACKS = new ConcurrentHashMap<>();

  /** Dependency results seen by dependents, by dependent job id. */
  public static final Map<Long, Map<Long, String>> DEPENDENTS = new ConcurrentHashMap<>();

  @Override
  public Outcome handle(Marker marker, JobContext context) {
    switch (context.queue()) {
      case "it_group_done" -> CALLBACKS.put(context.id(), context.batch().orElseThrow());
      case "it_after" -> DEPENDENTS.put(context.id(), context.dependencyResults());
      default -> {
        // a member
      }
    }
    return Outcome.completeJson("{\"text\":\"" + marker.text + "\"}");
  }
}
