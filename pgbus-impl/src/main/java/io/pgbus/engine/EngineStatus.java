package io.pgbus.engine;

import java.time.Duration;
import java.util.List;

/**
 * What one engine is doing, taken at one moment: its listener, its capsules and its counters. The
 * runtime's readiness, the admin API, the metrics and the doctor read this and nothing else of the
 * engine's roles, so the roles stay package-private and free to change. A snapshot is immutable and
 * cheap (a lock per capsule, no statement); take a new one for a new reading.
 *
 * @param workerId this JVM's worker id ({@code pgbus.worker-id})
 * @param running whether the engine is started and not stopped
 * @param leader whether this engine holds the maintenance lease now
 * @param listener the LISTEN connection
 * @param capsules each capsule, in configuration order
 * @param ticks statements of the {@link Ticker} (each polls, beats, probes and reads the lease); 0
 *     without capsules
 * @param electionStatements statements of the leader election
 * @param maintenanceRounds maintenance rounds run while leader
 * @param rescued jobs the maintainer rescued from expired leases
 * @param expired jobs the maintainer cancelled, never started, for their start-by deadline
 * @param scheduleRunsEnqueued schedule runs enqueued while leader
 * @param scheduleWakes schedule ticks that a schedule change's NOTIFY brought forward
 * @param scheduleChangesHeard schedule change notifications heard (0 without a listener)
 * @param queueChangesHeard queue change notifications heard (0 without a listener)
 * @param limitReads re-reads of the limited queues after start
 * @param wakes the wakes this JVM sent after its enqueues committed ({@link WakeMode#COALESCED})
 */
public record EngineStatus(
    String workerId,
    boolean running,
    boolean leader,
    Listener listener,
    List<CapsuleStatus> capsules,
    long ticks,
    long electionStatements,
    long maintenanceRounds,
    long rescued,
    long expired,
    long scheduleRunsEnqueued,
    long scheduleWakes,
    long scheduleChangesHeard,
    long queueChangesHeard,
    long limitReads,
    Wakes wakes) {

  public EngineStatus {
    capsules = List.copyOf(capsules);
  }

  /** The capsule of that name, or null. */
  public CapsuleStatus capsule(String name) {
    for (CapsuleStatus c : capsules) {
      if (c.name().equals(name)) {
        return c;
      }
    }
    return null;
  }

  /**
   * The LISTEN connection of this JVM.
   *
   * @param state its state; {@link ListenerState#DEGRADED} when the engine has none (no capsules,
   *     or no listener connections): capsules then poll, as when it is degraded
   * @param attempts connections tried, failed ones included
   * @param connects connections established (1 after a clean start)
   * @param notifications notifications received, probes excluded
   * @param cancelRequests distinct well-formed cancel requests heard and handed on
   * @param lastError the last connection or probe problem, or null
   * @param backendPid the backend pid of the connection, or null before it first connected
   */
  public record Listener(
      ListenerState state,
      long attempts,
      long connects,
      long notifications,
      long cancelRequests,
      String lastError,
      Integer backendPid) {

    static final Listener NONE = new Listener(ListenerState.DEGRADED, 0, 0, 0, 0, null, null);
  }

  /**
   * The wakes of committed enqueues that this JVM sends itself ({@link WakeMode#COALESCED}); all
   * zero in {@link WakeMode#IN_TRANSACTION}, where the database sends them.
   *
   * @param mode {@code pgbus.wake-mode}
   * @param local committed wakes delivered in-process to this JVM's capsules
   * @param handed queues handed to the sender (one per queue per committed transaction)
   * @param coalesced of those, the ones merged into a wake already waiting to go out
   * @param statements NOTIFY statements the sender ran
   * @param sent queues notified by them
   * @param failed queues whose send failed: the other JVMs find their jobs by the poll
   * @param echoes notifications of the sender's own NOTIFYs that this JVM's listener heard and
   *     dropped: the capsules were woken in-process already ({@link SentWakes})
   */
  public record Wakes(
      WakeMode mode,
      long local,
      long handed,
      long coalesced,
      long statements,
      long sent,
      long failed,
      long echoes) {}

  /**
   * One capsule: its configuration, its claims and its liveness.
   *
   * @param claims claim statements issued, empty ones included
   * @param emptyClaims claim statements that found nothing: polling waste
   * @param claimed jobs claimed in total
   * @param inFlight slots busy now
   * @param executorWait how long the oldest slot handed to the executor has waited for a thread
   * @param sinceLastBeat how long the capsule has shown no progress (zero once stopped on purpose)
   * @param loopEnded whether an Error ended its loop (it claims nothing until a restart)
   * @param failingFor how long its claims have failed in a row, or zero
   */
  public record CapsuleStatus(
      String name,
      List<String> queues,
      int concurrency,
      long claims,
      long emptyClaims,
      long claimed,
      int inFlight,
      Duration executorWait,
      Duration sinceLastBeat,
      boolean loopEnded,
      Duration failingFor) {

    public CapsuleStatus {
      queues = List.copyOf(queues);
    }

    /**
     * Why this capsule is not claiming as it should, as a short category for health data, or null
     * when it is fine: {@code "loop ended"} (an Error ended its loop), {@code "no progress"}
     * ({@link #sinceLastBeat} is over {@code threshold}), or {@code "claims failing"} (every claim
     * for longer than {@code threshold} has failed; the log says why).
     */
    public String stall(Duration threshold) {
      if (loopEnded) {
        return "loop ended";
      }
      if (sinceLastBeat.compareTo(threshold) > 0) {
        return "no progress";
      }
      if (failingFor.compareTo(threshold) > 0) {
        return "claims failing";
      }
      return null;
    }
  }
}
