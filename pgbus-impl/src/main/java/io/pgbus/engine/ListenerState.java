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
  /** Stopped on purpose. */
  STOPPED;

  /** Whether capsules may rely on notifications and poll only at the ceiling. */
  public boolean delivering() {
    return this == DELIVERING;
  }
}
