package io.pgbus.jakarta;

import io.pgbus.engine.Wake;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

/**
 * Delivers the listener's CDI wake events to the capsules that read one of the notified queues,
 * and to no other: waking unrelated capsules would make them claim for nothing.
 */
@ApplicationScoped
public class WakeRouter {

  @Inject PgbusRuntime runtime;

  void route(@Observes Wake wake) {
    runtime.engine().wake(wake);
  }
}
