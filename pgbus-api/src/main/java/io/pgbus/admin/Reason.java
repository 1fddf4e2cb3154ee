package io.pgbus.admin;

import java.time.Instant;
import java.util.Objects;

/**
 * One reason of an {@link Explanation}: why a job waits, runs or ended. The codes are stable and
 * listed in docs/explain.md; the constants here name them.
 *
 * @param code a stable lower_snake code, such as {@value #QUEUE_PAUSED}
 * @param sentence one line for a person
 * @param evidence what the reason rests on (ids, times, counts, who), as a JSON object
 * @param action what would unblock it, or null when nothing needs doing
 * @param resolvesAt when it ends by itself, or null when it will not (or that is not known)
 * @param error the error text it rests on (the job's last error, a FIFO blocker's), or null; never
 *     repeated in the sentence or the evidence, so that masking it masks it everywhere
 */
public record Reason(
    String code,
    String sentence,
    String evidence,
    String action,
    Instant resolvesAt,
    String error) {

  /** Waits for jobs it depends on (their states and the hold/cancel rule in the evidence). */
  public static final String WAITING_ON_DEPENDENCIES = "waiting_on_dependencies";

  /** Not due yet: delayed or snoozed. */
  public static final String DUE_LATER = "due_later";

  /** Failed an attempt and waits out its backoff. */
  public static final String RETRY_BACKOFF = "retry_backoff";

  /** Its queue is paused. */
  public static final String QUEUE_PAUSED = "queue_paused";

  /** No live JVM of the fleet has a capsule that reads its queue. */
  public static final String NO_LIVE_READER = "no_live_reader";

  /** Every slot of the live capsules that read its queue is busy. */
  public static final String READERS_BUSY = "readers_busy";

  /** Its queue's rate window is spent. */
  public static final String RATE_WINDOW_SPENT = "rate_window_spent";

  /** Its queue runs as many executions as its global limit allows. */
  public static final String GLOBAL_LIMIT = "global_limit";

  /** Its concurrency key runs as many jobs as the key limit allows. */
  public static final String KEY_LIMIT = "key_limit";

  /** Under FIFO per key, an older job of its key comes first. */
  public static final String FIFO_HEAD_BLOCKED = "fifo_head_blocked";

  /**
   * In a fair queue, its tenant (concurrency key) has due jobs ahead of it or has been served ahead
   * of the others: the other tenants' jobs come first.
   */
  public static final String WAITING_FOR_TURN = "waiting_for_turn";

  /** Claims run above floors while a long transaction slows them, and may pass it for a while. */
  public static final String CLAIM_FLOORS = "claim_floors";

  /** Due, and nothing holds it back: the next claim of a reader takes it. */
  public static final String RUNNABLE_NOW = "runnable_now";

  /** Runs on a live JVM. */
  public static final String RUNNING = "running";

  /** Was claimed by a JVM that is gone; the rescue takes it back. */
  public static final String RUNNING_DEAD_NODE = "running_dead_node";

  /** A member of a batch whose callback waits for members. */
  public static final String BATCH_CALLBACK_WAITING = "batch_callback_waiting";

  /** Completed. */
  public static final String COMPLETED = "completed";

  /** Failed its last attempt. */
  public static final String DEAD = "dead";

  /** Moved aside (dead) by the claim: its payload is over the payload limit. */
  public static final String OVERSIZED = "oversized";

  /** Cancelled (by whom, in the evidence). */
  public static final String CANCELLED = "cancelled";

  public Reason {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(sentence, "sentence");
    Objects.requireNonNull(evidence, "evidence");
  }

  /** This reason without its error text. */
  public Reason withoutError() {
    return new Reason(code, sentence, evidence, action, resolvesAt, null);
  }
}
