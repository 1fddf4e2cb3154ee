package io.pgbus.engine;

import io.pgbus.PgbusException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
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
