package io.pgbus.engine;

/**
 * Every name pgbus uses on LISTEN/NOTIFY, in one place: the channels the listener hears, and the
 * {@code application_name} of its connection. A queue's channel is {@code pgbus_<queue>} (the SQL
 * function {@code pgbus.channel}); every other channel has a '-', which no queue name has, so none
 * can be taken for a queue's. The SQL that sends them spells them too: {@code pgbus.notify}
 * (R__notify.sql), the change triggers of V24 ({@code pgbus.tell_engines}), the cancel of V9 and
 * {@link JobStore}, {@link ScheduleStore} and {@link LeaderStore}, which take them from here.
 *
 * <p>Every channel is untrusted: any login may NOTIFY any channel. So a payload is parsed strictly
 * or ignored, and a notification only ever brings a rate-limited read of the database forward.
 */
public final class Channels {

  /** The {@code application_name} of the listener's backend, so operators can find it. */
  public static final String LISTENER_APPLICATION_NAME = "pgbus-listener";

  /** A queue's channel is this prefix and the queue's name ({@code pgbus.channel(queue)}). */
  static final String QUEUE_PREFIX = "pgbus_";

  /**
   * Cancels of running attempts ({@code <id>:<attempt>}, parsed by {@link CancelRequest}), sent by
   * {@code Jobs.cancel} at commit; the runner checks each against the table before it acts.
   */
  static final String CANCEL = "pgbus-cancel";

  /**
   * A change of a queue's limits or pause (V24: the triggers on pgbus.queue_limit and
   * pgbus.queue_pause, whoever wrote the row), so that every engine re-reads them at once instead
   * of at its next poll ceiling. The payload is empty and means nothing: a notification only asks
   * for a rate-limited re-read, see {@link Ticker#tickSoon}.
   */
  static final String QUEUES = "pgbus-queues";

  /**
   * A schedule change, at its commit, so that the leader re-reads the schedules at once instead of
   * at its next poll ceiling. The payload is empty and means nothing; the read it brings forward is
   * rate-limited ({@link Maintainer#schedulesChanged}).
   */
  static final String SCHEDULE = "pgbus-schedule";

  /** A clean resignation of the maintenance leader ({@link Elector}): followers look at once. */
  static final String LEADER = "pgbus-leader";

  /**
   * The listener's self-probe goes to a channel of its own (this prefix and a random suffix), so
   * that no other JVM hears it.
   */
  static final String PROBE_PREFIX = "pgbusprobe_";

  private Channels() {}

  /** The channel of {@code queue}: the same text as the SQL function {@code pgbus.channel}. */
  static String queue(String queue) {
    return QUEUE_PREFIX + queue;
  }
}
