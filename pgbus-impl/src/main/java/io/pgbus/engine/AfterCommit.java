package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Port: who wakes the workers after an enqueue commits, when {@code pgbus.wake-mode} is {@code
 * coalesced} (docs/architecture.md, "Wakes"). PostgreSQL serialises the commits of every
 * transaction that called NOTIFY on one instance-wide lock; an enqueue whose wake is taken over
 * here sets {@code pgbus.wake = 'client'} in its own statement so that the database sends none, and
 * the wake goes out after the commit instead: in-process to this JVM's capsules, and coalesced to
 * the others ({@link Engine#committed}).
 *
 * <p>Java SE uses the engine's own ({@link JdbcTransactions} and auto-commit connections); a
 * container hooks into its transaction manager.
 */
@FunctionalInterface
public interface AfterCommit {

  /** Takes over nothing: the database wakes the workers, inside the enqueuing transaction. */
  AfterCommit NONE = c -> null;

  /**
   * Where an enqueue on {@code c} leaves its wake: a {@link PendingWake} delivered when the
   * transaction of {@code c} commits (at once when {@code c} commits each statement), never when it
   * rolls back; or null when this cannot know when {@code c} commits, and the database must wake.
   * Called before the enqueue's statement; cheap, no statement of its own.
   */
  PendingWake pending(Connection c) throws SQLException;
}
