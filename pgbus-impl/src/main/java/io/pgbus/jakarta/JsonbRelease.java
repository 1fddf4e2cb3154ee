package io.pgbus.jakarta;

import jakarta.json.bind.Jsonb;

/**
 * Closes a bean's {@link Jsonb} at {@code @PreDestroy}. {@link Jsonb#close()} declares {@code
 * Exception}, and a lifecycle callback may not (Weld warns WELD-001471 on every deploy), so the
 * callback calls this instead. A failure is logged, never thrown: it must not fail an undeploy.
 */
final class JsonbRelease {

  private static final System.Logger LOG = System.getLogger(JsonbRelease.class.getName());

  private JsonbRelease() {}

  static void release(Jsonb jsonb) {
    if (jsonb == null) {
      return;
    }
    try {
      jsonb.close();
    } catch (Exception e) {
      LOG.log(System.Logger.Level.WARNING, "pgbus could not close its JSON-B instance; ignored", e);
    }
  }
}
