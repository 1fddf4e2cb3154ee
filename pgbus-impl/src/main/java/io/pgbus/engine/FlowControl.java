package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Flow control (V14) as one engine takes part in it. At start it publishes the configured limits of
 * the queues its capsules read to {@code pgbus.queue_limit} (the last engine to start that reads a
 * queue decides, as for {@code pgbus.max-payload-bytes}) and reads which of them the database
 * limits. The claim enforces the limits; this class only keeps the engine's view of which queues
 * are limited current, so that a finished job of one of them makes its capsule claim again and,
 * when that capsule may not take the freed capacity, wakes the fleet ({@link #freed}).
 *
 * <p>A change announced on {@value Channels#QUEUES} (untrusted, empty) only marks the view stale
 * ({@link #changed}); the ticker's next tick re-reads it on its own connection ({@link
 * #rereadIfStale}). A listener reconnect marks it stale too: LISTEN never replays.
 */
final class FlowControl {

  private static final System.Logger LOG = System.getLogger(FlowControl.class.getName());

  private final EngineConfig config;
  private final DataSource dataSource;
  private final QueueLimitStore limits = new QueueLimitStore();
  // The capsules' queues that pgbus.queue_limit limits, as read at start (after this engine wrote
  // its own) and again on the tick after a change was announced.
  private volatile Set<String> limited = Set.of();
  private final AtomicBoolean stale = new AtomicBoolean();
  private final AtomicLong reads = new AtomicLong();

  FlowControl(EngineConfig config, DataSource dataSource) {
    this.config = config;
    this.dataSource = dataSource;
  }

  /** Whether the database limits this queue, as last read. */
  boolean limited(String queue) {
    return limited.contains(queue);
  }

  /**
   * Writes the configured flow control of every queue the capsules read, or removes it when none is
   * configured here, unless a newer build wrote the queue's row: the newest build wins, and among
   * JVMs of one build the last to start (V26; docs/schema.md, "Flow control"). Then reads which of
   * them the database limits. A failure is logged: the claims still obey whatever the table holds.
   */
  void publish() {
    List<String> queues = config.queues();
    if (queues.isEmpty()) {
      return;
    }
    BuildVersion build = BuildVersion.current();
    try (Connection c = dataSource.getConnection()) {
      var kept = new LinkedHashMap<String, BuildVersion>();
      LocalTransaction.run(
          c,
          () -> {
            for (String q : queues) {
              BuildVersion newer =
                  limits.queueLimitPublish(
                      c, config.queueLimit(q), config.fairShare(q), build, config.workerId());
              if (newer != null) {
                kept.put(q, newer);
              }
            }
            return null;
          });
      if (!kept.isEmpty()) {
        LOG.log(
            System.Logger.Level.INFO,
            "pgbus engine {0}: keeping the limits newer builds wrote for {1} (this build is {2}):"
                + " the newest build wins; the doctor''s deploy check shows where they differ from"
                + " this configuration",
            config.workerId(),
            kept,
            build);
      }
      limited = Set.copyOf(limits.queuesLimited(c, queues));
    } catch (SQLException e) {
      // Only this engine's own limits and its wake-ups on a freed slot are missing (capsules then
      // claim on the next poll).
      limited = Set.copyOf(queues);
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus engine {0} could not write its queue limits (pgbus.queue.*.global-concurrency,"
              + " key-concurrency) to pgbus.queue_limit: {1}; the claims obey the limits stored"
              + " there. Grant the application's role EXECUTE on pgbus.queue_limit_set",
          config.workerId(),
          e.getMessage());
    }
  }

  /**
   * Someone announced a change of a queue's limits or pause, or the listener reconnected: the next
   * tick re-reads the limited queues. A pause needs nothing more: every claim reads the pauses.
   */
  void changed() {
    stale.set(true);
  }

  /**
   * On the tick's connection (autocommit): which queues are limited, when a change made that stale.
   * A failure leaves them stale for the next tick and does not fail this one.
   */
  void rereadIfStale(Connection c) {
    if (!stale.getAndSet(false)) {
      return;
    }
    try {
      limited = Set.copyOf(limits.queuesLimited(c, config.queues()));
      reads.incrementAndGet();
    } catch (SQLException e) {
      stale.set(true);
      LOG.log(
          System.Logger.Level.DEBUG,
          "pgbus engine {0} could not re-read its limited queues: {1}",
          config.workerId(),
          e.getMessage());
    }
  }

  /** How often the limited queues were re-read after start. */
  long reads() {
    return reads.get();
  }

  /**
   * Jobs of limited queues finished here, and their capsule may not take the capacity they freed:
   * wake every capsule of the fleet that reads them, since one may be waiting on the limit (the
   * claim that hit it went back to sleep). Autocommit, after the jobs' own transaction; a failure
   * only costs the wait until the next poll.
   */
  void freed(Set<String> queues) {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(true);
      limits.queueWake(c, queues);
    } catch (SQLException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "pgbus engine {0} could not send the wake-up of limited queues {1}: {2}",
          config.workerId(),
          queues,
          e.getMessage());
    }
  }

  /** Every limited queue of the database, its limits and what waits on them. */
  List<QueueLimitStatus> statuses(Connection c) throws SQLException {
    return limits.queueLimitStatus(c);
  }
}
