package io.pgbus.engine;

import io.pgbus.PgbusException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;

/**
 * Bounds how long a migration waits for a table lock: {@code SET LOCAL lock_timeout} at the start
 * of each migration's own transaction (Flyway runs this callback inside it), so that a migration
 * that cannot get its lock gives up and rolls back instead of queueing every writer behind it, and
 * {@link Schema#migrate} runs it again a moment later.
 *
 * <p>Why: a migration locks a table the running release reads (V27 alters {@code pgbus.setting}),
 * then waits for {@code pgbus.job}, which an enqueue of the previous release holds while it goes on
 * to read {@code pgbus.setting}: a deadlock, which PostgreSQL breaks after {@code deadlock_timeout}
 * (1 s) by failing one of them, the application's enqueue or the deployment's migration (measured:
 * docs/operations.md, "Upgrading a large database under load"). And every statement on a table a
 * migration waits for queues behind its lock request, for as long as the transaction it waits for
 * runs (a handler's, minutes). With the timeout under {@code deadlock_timeout}, the migration is
 * always the one that yields, within {@link #TIMEOUT}.
 *
 * <p>A migration outside a transaction (V40's {@code DROP INDEX CONCURRENTLY}) keeps the session's
 * setting: it takes no lock that stops writers, and a failed one is recorded as failed by Flyway.
 */
final class MigrationLockTimeout implements Callback {

  /** Under PostgreSQL's default deadlock_timeout (1 s), so a migration never deadlocks a client. */
  static final Duration TIMEOUT = Duration.ofMillis(500);

  /**
   * Locks a migration takes before its first statement, so that it locks in the order the previous
   * release's statements do. V27 alters pgbus.setting and then creates a trigger on pgbus.job;
   * 0.1.0's enqueue holds pgbus.job and then reads pgbus.setting: under 500 jobs/s an enqueue was
   * always between the two, so the timeout alone made V27 give up at every attempt (the bench's
   * UPGRADE: 30 attempts in a minute). Taking pgbus.job first (the mode its CREATE TRIGGER takes)
   * waits only for the enqueues in flight and holds writers for V27's few milliseconds. Here and
   * not in V27 itself: an applied migration's file stays as it is (its checksum).
   */
  static final Map<String, String> LOCK_FIRST =
      Map.of("27", "LOCK TABLE pgbus.job IN SHARE ROW EXCLUSIVE MODE");

  @Override
  public boolean supports(Event event, Context context) {
    return event == Event.BEFORE_EACH_MIGRATE;
  }

  @Override
  public boolean canHandleInTransaction(Event event, Context context) {
    return true;
  }

  @Override
  public void handle(Event event, Context context) {
    Connection c = context.getConnection();
    try {
      if (c.getAutoCommit()) {
        return; // a non-transactional migration: SET LOCAL would not last past this statement
      }
      try (Statement st = c.createStatement()) {
        st.execute("SET LOCAL lock_timeout = '" + TIMEOUT.toMillis() + "ms'");
        var info = context.getMigrationInfo();
        String first =
            info == null || info.getVersion() == null
                ? null
                : LOCK_FIRST.get(info.getVersion().getVersion());
        if (first != null) {
          st.execute(first);
        }
      }
    } catch (SQLException e) {
      throw new PgbusException("pgbus could not bound its migration's lock wait: " + e, e);
    }
  }

  @Override
  public String getCallbackName() {
    return "pgbus-lock-timeout";
  }
}
