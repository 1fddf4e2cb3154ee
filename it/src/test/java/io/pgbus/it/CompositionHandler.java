package io.pgbus.it;

import io.pgbus.BatchSummary;
import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.JobQueue;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The handler of {@link BatchesIT}: members complete with a result; a batch callback notes its
 * counts, and a dependent notes its dependencies' results, in memory, by job id. A parent enqueues
 * a member, which inherits the parent's correlation id.
 */
@ApplicationScoped
@Handles({"it_group", "it_group_done", "it_after", "it_parent"})
public class CompositionHandler implements JobHandler<Marker> {

  /** Counts seen by batch callbacks, by callback job id. */
  public static final Map<Long, BatchSummary> CALLBACKS = new ConcurrentHashMap<>();

  /** Dependency results seen by dependents, by dependent job id. */
  public static final Map<Long, Map<Long, String>> DEPENDENTS = new ConcurrentHashMap<>();

  @Inject JobQueue jobs;

  @Override
  public Outcome handle(Marker marker, JobContext context) {
    switch (context.queue()) {
      case "it_parent" -> jobs.enqueue("it_group", new Marker(marker.text + "-child", false));
      case "it_group_done" -> CALLBACKS.put(context.id(), context.batch().orElseThrow());
      case "it_after" -> DEPENDENTS.put(context.id(), context.dependencyResults());
      default -> {
        // a member
      }
    }
    return Outcome.completeJson("{\"text\":\"" + marker.text + "\"}");
  }
}
