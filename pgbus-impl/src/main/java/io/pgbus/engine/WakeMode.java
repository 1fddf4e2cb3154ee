package io.pgbus.engine;

/**
 * How an enqueuing transaction wakes the workers, set by {@code pgbus.wake-mode}
 * (docs/architecture.md, "Wakes"; docs/configuration.md).
 *
 * <p>PostgreSQL takes one lock for the whole instance at the commit of every transaction that has
 * called NOTIFY, and holds it through the commit's WAL flush; every enqueuing commit that notifies
 * waits its turn behind every other one in the database.
 */
public enum WakeMode {
  /**
   * The default: no enqueuing transaction takes the notification lock in the common case. The Java
   * API wakes after the commit (in-process for this JVM's capsules, one coalesced NOTIFY for the
   * others); the SQL functions notify at commit only when no wake for the queue went out recently.
   */
  COALESCED,
  /** Every enqueuing transaction sends its NOTIFY inside the transaction, as pgbus 0.1.0 did. */
  IN_TRANSACTION
}
