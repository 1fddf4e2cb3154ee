package io.pgbus.engine;

/** What the one LISTEN connection of this JVM is doing; capsules poll fast unless DELIVERING. */
public enum ListenerState {
  /** Not connected yet, or the first self-probe has not come back. */
  STARTING,
  /** Connected, and the last self-probe came back in time. */
  DELIVERING,
  /** Connected, but a self-probe did not come back: notifications may be lost (a pooler?). */
  DEGRADED,
  /** The connection failed; waiting to reconnect with backoff. */
  RECONNECTING,
  /**
   * The listener cannot work in this deployment and does not retry: a class it needs is missing,
   * typically pgjdbc's {@code org.postgresql.PGConnection} when the application does not see the
   * driver module (a jboss-deployment-structure.xml inside an EAR's WAR, which WildFly ignores).
   * Capsules poll, so jobs still run, each up to the poll interval late.
   */
  FAILED,
  /** Stopped on purpose. */
  STOPPED;

  /** Whether capsules may rely on notifications and poll only at the ceiling. */
  public boolean delivering() {
    return this == DELIVERING;
  }
}
