package io.pgbus.jakarta.admin;

import io.pgbus.engine.Capsule;
import io.pgbus.engine.Engine;
import io.pgbus.engine.ListenerState;
import java.util.List;

/**
 * What the admin API reads of this JVM's engine, taken once per request: its worker id, whether it
 * leads, its listener and its capsules. The narrowest read the resources need, built in one place
 * ({@link #of}), so that they never hold the engine's roles.
 */
record EngineView(
    String workerId, boolean leader, ListenerState listener, List<CapsuleView> capsules) {

  /** One capsule of this JVM: its configuration and its slots busy now. */
  record CapsuleView(String name, List<String> queues, int concurrency, int inFlight) {}

  static EngineView of(Engine engine) {
    return new EngineView(
        engine.config().workerId(),
        engine.leader(),
        engine.listenerState(),
        engine.capsules().stream().map(EngineView::capsule).toList());
  }

  private static CapsuleView capsule(Capsule c) {
    return new CapsuleView(
        c.config().name(), c.config().queues(), c.config().concurrency(), c.inFlight());
  }
}
