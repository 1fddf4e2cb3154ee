package io.pgbus.bench;

import java.util.Locale;

/**
 * What a statement seen in pg_stat_statements is for, recognised by its normalised text. The
 * leader's duties (renewing its lease, rescue, retention) are kept apart from what every engine
 * pays, because the idle targets count them apart.
 */
enum StatementKind {
  ENQUEUE("enqueue"),
  CLAIM("claim"),
  COMPLETE("complete"),
  BEGIN("BEGIN"),
  COMMIT("COMMIT"),
  SETTLE_OTHER("fail, snooze, cancel, release"),
  // pgbus.tick: the poll, with the heartbeat, the self-probe and the leader check riding on it.
  POLL("poll/tick (queue heads, heartbeat, probe, leader check)"),
  NEXT_DUE("next due"),
  PROBE("listener self-probe"),
  LISTEN("listener setup"),
  CONNECT("new connection (SET application_name)"),
  ELECTION_READ("election: candidate read"),
  ELECTION_WRITE("election: elect"),
  LEADER_RENEW("leader: renew lease"),
  LEADER_RESIGN("leader: resign"),
  RESCUE("leader: rescue"),
  PRUNE("leader: retention"),
  SCHEDULES("leader: schedules"),
  OTHER("other");

  final String label;

  StatementKind(String label) {
    this.label = label;
  }

  /**
   * BEGIN and COMMIT: transaction control, not work; pgjdbc sends BEGIN with the next statement.
   */
  boolean transactionControl() {
    return this == BEGIN || this == COMMIT;
  }

  /**
   * Work only the elected leader does; excluded from the per-JVM idle figure. In an idle window
   * only the leader opens transactions (its rescue runs in one), and every other statement is an
   * auto-commit tick, so BEGIN and COMMIT count as the leader's too.
   */
  boolean leaderDuty() {
    return transactionControl()
        || this == SCHEDULES
        || this == ELECTION_WRITE
        || this == LEADER_RENEW
        || this == LEADER_RESIGN
        || this == RESCUE
        || this == PRUNE;
  }

  static StatementKind of(String query) {
    String q = query.toLowerCase(Locale.ROOT).replaceAll("\\s+", " ").trim();
    if (q.equals("begin")) {
      return BEGIN;
    }
    if (q.equals("commit")) {
      return COMMIT;
    }
    if (q.contains("scheduled_tasks")) {
      return dbScheduler(q);
    }
    if (q.contains("pgbus.enqueue") || q.contains("insert into raw_job")) {
      return ENQUEUE;
    }
    if (q.contains("pgbus.claim") || q.contains("update raw_job")) {
      return CLAIM;
    }
    // Constants are normalised to $n, so the completion is told apart by its shape: it sets
    // finalized_at and, unlike a cancel, writes no error.
    if (q.startsWith("delete from pgbus.job") && q.contains("attempt")) {
      return COMPLETE; // pgbus.retention.completed=0: completing deletes, fenced on the attempt
    }
    if (q.startsWith("update pgbus.job")
            && q.contains("finalized_at = now()")
            && !q.contains("errors")
        || q.contains("delete from raw_job")) {
      return COMPLETE;
    }
    if (q.startsWith("update pgbus.job")) {
      return SETTLE_OTHER;
    }
    if (q.contains("as q(queue)") || q.contains("pgbus.tick")) {
      return POLL;
    }
    // The leader's schedule tick (ScheduleEnqueuer): the database's now, the due schedules.
    if (q.equals("select now()") || q.contains("from pgbus.schedule")) {
      return SCHEDULES;
    }
    if (q.contains("min(run_at)")) {
      return NEXT_DUE;
    }
    if (q.startsWith("select pg_notify")) {
      return PROBE;
    }
    // pgjdbc sends the ApplicationName of every new connection as this statement, so it counts a
    // connection opened (a pool growing, say), not the listener's setup.
    if (q.startsWith("set application_name")) {
      return CONNECT;
    }
    if (q.contains("pgbus.listen") || q.contains("application_name") || q.startsWith("listen")) {
      return LISTEN;
    }
    if (q.contains("from pgbus.leader")) {
      // The resign deletes its row and NOTIFYs pgbus-leader in one statement (WITH gone AS ...).
      return q.contains("delete from pgbus.leader") ? LEADER_RESIGN : ELECTION_READ;
    }
    if (q.startsWith("delete from pgbus.node") && q.contains("seen_at")) {
      return PRUNE; // the leader prunes the rows of JVMs long dead (NodeStore.PRUNE)
    }
    if (q.contains("insert into pgbus.leader")) {
      return ELECTION_WRITE;
    }
    if (q.contains("update pgbus.leader")) {
      return LEADER_RENEW;
    }
    if (q.contains("lease_expires_at < now()")) {
      return RESCUE;
    }
    if (q.contains("delete from pgbus.job")) {
      return PRUNE;
    }
    return OTHER;
  }

  /** db-scheduler's statements on its scheduled_tasks table. */
  private static StatementKind dbScheduler(String q) {
    if (q.startsWith("insert")) {
      return ENQUEUE;
    }
    if (q.startsWith("delete")) {
      return COMPLETE; // a one-time task's row goes when it completes
    }
    if (q.contains("update scheduled_tasks") && q.contains("skip locked")) {
      return CLAIM; // lock-and-fetch: WITH locked_executions AS (UPDATE ... SKIP LOCKED ...)
    }
    if (q.startsWith("update")) {
      return SETTLE_OTHER; // heartbeats, reschedules
    }
    return POLL;
  }
}
