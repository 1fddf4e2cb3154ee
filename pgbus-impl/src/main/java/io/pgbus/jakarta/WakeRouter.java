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
}
