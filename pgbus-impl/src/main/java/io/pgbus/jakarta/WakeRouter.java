package io.pgbus.jakarta;

import io.pgbus.engine.Engine;
import io.pgbus.engine.Wake;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Delivers the listener's CDI wake events to the capsules that read one of the notified queues, and
 * to no other: waking unrelated capsules would make them claim for nothing.
 *
 * <p>The runtime hands over its engine once, at start-up: asking the runtime EJB for it on every
 * wake cost a container call (about half a millisecond) on the path from NOTIFY to handler.
 *
 * <p>Who observes the {@link Wake} event: this class, and nothing else. Nothing in pgbus does, and
 * an application cannot by design: it compiles against {@code pgbus-api}, which has no {@code
 * Wake}. The event is synchronous, fired on the listener's thread ({@code Event.fire}), so the
 * route costs a CDI notification and no thread hop. It stays an event, not a direct call, as the
 * adapter's way to cross from the engine (which knows no CDI) to the container; an observer added
 * later (a test, a diagnostic) runs on the listener's thread and must return at once.
 */
@ApplicationScoped
public class WakeRouter {

  private volatile Engine engine;

  /** Called by the runtime before its engine starts, so no wake comes before it. */
  void attach(Engine engine) {
    this.engine = engine;
  }

  void route(@Observes Wake wake) {
    Engine e = engine;
    if (e != null) {
      e.wake(wake);
    }
  }

  /**
   * An enqueuing transaction committed ({@code pgbus.wake-mode=coalesced}, {@link JtaAfterCommit}):
   * this JVM's capsules hear of it in-process, the other JVMs through the engine's sender. A direct
   * call, not an event: it runs on the caller's thread inside its transaction's completion.
   */
  void committed(Wake wake) {
    Engine e = engine;
    if (e != null) {
      e.committed(wake);
    }
  }
}
