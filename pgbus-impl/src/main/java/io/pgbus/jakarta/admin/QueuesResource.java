package io.pgbus.jakarta.admin;

import io.pgbus.JobQueue;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobState;
import io.pgbus.admin.QueueBlockers;
import io.pgbus.admin.QueueStats;
import io.pgbus.admin.Throughput;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.NodeStore;
import io.pgbus.engine.QueueLimitStatus;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * {@code queues}: every queue with its counts, flow control and readers ({@code GET queues}), a
 * pause or resume for every JVM ({@code POST queues/{queue}/pause|resume}, {@link JobQueue#pause}),
 * what holds each queue's waiting jobs back ({@code GET queues/blockers}), and the jobs finished
 * per minute ({@code GET throughput}). Counts and throughput come from {@link JobAdmin}, the
 * readers from this engine and the fleet's nodes. Public only because JAX-RS and JSON-B reach it by
 * reflection; {@link AdminResource#queues} makes one per request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class QueuesResource {

  /** The window of {@code GET throughput}, as {@link JobAdmin#throughput} reads it. */
  static final int THROUGHPUT_MINUTES = 60;

  private final AdminCall call;
  private final JobAdmin admin;
  private final JobQueue queue;
  private final Supplier<EngineStatus> engine;
  private final Supplier<List<QueueLimitStatus>> limits;
  private final Supplier<List<NodeStore.Node>> nodes;

  QueuesResource(
      AdminCall call,
      JobAdmin admin,
      JobQueue queue,
      Supplier<EngineStatus> engine,
      Supplier<List<QueueLimitStatus>> limits,
      Supplier<List<NodeStore.Node>> nodes) {
    this.call = call;
    this.admin = admin;
    this.queue = queue;
    this.engine = engine;
    this.limits = limits;
    this.nodes = nodes;
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response list() {
    return call.read(
        () -> {
          EngineStatus self = engine.get();
          List<NodeStore.Node> fleet = nodes.get();
          var byQueue = new HashMap<String, QueueLimitStatus>();
          limits.get().forEach(l -> byQueue.put(l.queue(), l));
          var out = new ArrayList<QueueJson>();
          for (QueueStats s : admin.queues()) {
            out.add(
                new QueueJson(
                    s.queue(),
                    CountsJson.of(s.counts()),
                    s.capped().stream().map(JobState::sqlName).sorted().toList(),
                    s.estimated().stream().map(JobState::sqlName).sorted().toList(),
                    s.oldestWaiting().toMillis(),
                    s.paused(),
                    LimitJson.of(byQueue.get(s.queue())),
                    readers(self, fleet, s.queue())));
          }
          return AdminCall.ok(new QueuesJson(JobAdmin.COUNT_CAP, out));
        });
  }

  /**
   * Pauses or resumes a queue for every JVM: {@code
   * {"queue":"mail","action":"pause","changed":true,"paused":true}}, where {@code changed} says
   * whether it changed anything.
   */
  /**
   * {@code GET queues/blockers[?queue=q]}: per queue, its waiting jobs, how many a free slot would
   * claim now, and how many each cause holds back ({@link JobAdmin#blockers}; docs/explain.md).
   */
  @GET
  @Path("blockers")
  @Produces(MediaType.APPLICATION_JSON)
  public Response blockers(@QueryParam("queue") String name) {
    return call.read(
        () -> {
          if (name != null) {
            JobFilter.all().withQueue(name); // the same bound and message as a search's
          }
          return AdminCall.ok(
              new BlockersJson(admin.blockers(name).stream().map(BlockerJson::of).toList()));
        });
  }

  /** {@code GET queues/blockers}: one entry per queue, by name. */
  public record BlockersJson(List<BlockerJson> queues) {}

  /**
   * One queue's blockers: {@code blockedBy} maps a cause (a reason code) to its jobs, causes in the
   * order docs/explain.md gives; {@code waiting = runnableNow +} their sum.
   */
  @JsonbPropertyOrder({"queue", "waiting", "runnableNow", "blockedBy"})
  public record BlockerJson(
      String queue, long waiting, long runnableNow, Map<String, Long> blockedBy) {
    static BlockerJson of(QueueBlockers b) {
      return new BlockerJson(b.queue(), b.waiting(), b.runnableNow(), b.blockedBy());
    }
  }

  @POST
  @Path("{queue}/{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response pauseOrResume(
      @PathParam("queue") String name, @PathParam("action") String action) {
    return call.act(
        () -> {
          JobFilter.all().withQueue(name); // the same bound and message as a search's
          boolean changed =
              switch (action) {
                case "pause" -> queue.pause(name);
                case "resume" -> queue.resume(name);
                default ->
                    throw new InvalidFilterException("action", action, "use pause or resume");
              };
          return AdminCall.ok(new PauseJson(name, action, changed, action.equals("pause")));
        });
  }

  /** {@code GET throughput}: jobs completed and dead per queue and minute, oldest first. */
  Response throughput() {
    return call.read(
        () ->
            AdminCall.ok(
                new ThroughputJson(
                    THROUGHPUT_MINUTES, admin.throughput().stream().map(PointJson::of).toList())));
  }

  /** The capsules that read a queue: this JVM's, and each capsule of every other connected node. */
  private static List<ReaderJson> readers(
      EngineStatus self, List<NodeStore.Node> nodes, String queue) {
    var readers = new ArrayList<ReaderJson>();
    for (EngineStatus.CapsuleStatus c : self.capsules()) {
      if (c.queues().contains(queue)) {
        readers.add(new ReaderJson(c.name(), self.workerId()));
      }
    }
    for (NodeStore.Node n : nodes) {
      if (!n.connected() || n.workerId().equals(self.workerId())) {
        continue;
      }
      for (NodeStore.NodeCapsule c : n.capsules()) {
        if (c.queues().contains(queue)) {
          readers.add(new ReaderJson(c.name(), n.workerId()));
        }
      }
    }
    return readers;
  }

  @JsonbPropertyOrder({"countCap", "queues"})
  public record QueuesJson(long countCap, List<QueueJson> queues) {}

  /** A queue; {@code limit} is null (written) when it has no flow control. */
  @JsonbNillable
  @JsonbPropertyOrder({
    "queue",
    "counts",
    "countsCapped",
    "countsEstimated",
    "oldestWaitingMs",
    "paused",
    "limit",
    "readers"
  })
  public record QueueJson(
      String queue,
      CountsJson counts,
      List<String> countsCapped,
      List<String> countsEstimated,
      long oldestWaitingMs,
      boolean paused,
      LimitJson limit,
      List<ReaderJson> readers) {}

  /**
   * A queue's jobs per state, the live ones counted up to {@link JobAdmin#COUNT_CAP}, estimated
   * past it (the queue's {@code countsEstimated}).
   */
  @JsonbPropertyOrder({
    "scheduled",
    "available",
    "running",
    "retryable",
    "completed",
    "dead",
    "cancelled"
  })
  public record CountsJson(
      long scheduled,
      long available,
      long running,
      long retryable,
      long completed,
      long dead,
      long cancelled) {

    static CountsJson of(Map<JobState, Long> counts) {
      return new CountsJson(
          counts.getOrDefault(JobState.SCHEDULED, 0L),
          counts.getOrDefault(JobState.AVAILABLE, 0L),
          counts.getOrDefault(JobState.RUNNING, 0L),
          counts.getOrDefault(JobState.RETRYABLE, 0L),
          counts.getOrDefault(JobState.COMPLETED, 0L),
          counts.getOrDefault(JobState.DEAD, 0L),
          counts.getOrDefault(JobState.CANCELLED, 0L));
    }
  }

  /**
   * A queue's flow control (V14): its limits, its running jobs, and its due jobs waiting on a limit
   * or on a worker. {@code globalConcurrency} is written as null when there is none; {@code
   * keyFifo} and {@code keyFifoSkipDead} only with FIFO per key, and {@code rateLimit}, {@code
   * rateWindowMs} and {@code startsInWindow} only with a rate limit (left out, not null).
   */
  @JsonbPropertyOrder({
    "globalConcurrency",
    "keyConcurrency",
    "keyFifo",
    "keyFifoSkipDead",
    "running",
    "waitingOnLimit",
    "waitingOnWorker",
    "rateLimit",
    "rateWindowMs",
    "startsInWindow"
  })
  // Nillable as a type: Yasson decides whether a null of this type is written (QueueJson.limit)
  // by the type's annotation; the fields that must be left out say so one by one.
  @JsonbNillable
  public record LimitJson(
      Integer globalConcurrency,
      int keyConcurrency,
      @JsonbNillable(false) Boolean keyFifo,
      @JsonbNillable(false) Boolean keyFifoSkipDead,
      long running,
      long waitingOnLimit,
      long waitingOnWorker,
      @JsonbNillable(false) Integer rateLimit,
      @JsonbNillable(false) Long rateWindowMs,
      @JsonbNillable(false) Long startsInWindow) {

    static LimitJson of(QueueLimitStatus l) {
      if (l == null) {
        return null;
      }
      boolean rated = l.rateLimit() != null;
      return new LimitJson(
          l.globalConcurrency(),
          l.keyConcurrency(),
          l.keyFifo() ? true : null,
          l.keyFifo() ? l.keyFifoSkipDead() : null,
          l.running(),
          l.waitingOnLimit(),
          l.waitingOnWorker(),
          l.rateLimit(),
          rated ? l.rateWindow().toMillis() : null,
          rated ? l.startsInWindow() : null);
    }
  }

  /** A capsule that reads the queue, and the JVM it runs in. */
  @JsonbPropertyOrder({"capsule", "worker"})
  public record ReaderJson(String capsule, String worker) {}

  @JsonbPropertyOrder({"queue", "action", "changed", "paused"})
  public record PauseJson(String queue, String action, boolean changed, boolean paused) {}

  @JsonbPropertyOrder({"windowMinutes", "points"})
  public record ThroughputJson(int windowMinutes, List<PointJson> points) {}

  /** One queue's finished jobs in one minute. */
  @JsonbPropertyOrder({"queue", "minute", "completed", "dead"})
  public record PointJson(String queue, String minute, long completed, long dead) {

    static PointJson of(Throughput t) {
      return new PointJson(t.queue(), t.minute().toString(), t.completed(), t.dead());
    }
  }
}
