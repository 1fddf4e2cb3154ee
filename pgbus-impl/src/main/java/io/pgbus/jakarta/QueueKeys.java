package io.pgbus.jakarta;

import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import io.pgbus.engine.QueuePolicy;
import java.util.Locale;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Function;

/** The values of one per-queue key ({@code pgbus.queue.<name><suffix>}) across all queues. */
final class QueueKeys {

  private QueueKeys() {}

  /**
   * Each queue's value of {@code pgbus.queue.<name><suffix>}, stripped and lower-cased, by queue; a
   * queue name that is not one fails the deployment naming the key.
   */
  static SortedMap<String, String> values(
      String suffix, Function<String, Optional<String>> source, Iterable<String> keys) {
    var values = new TreeMap<String, String>();
    for (String key : keys) {
      if (!key.startsWith(QueuePolicy.KEY_PREFIX) || !key.endsWith(suffix)) {
        continue;
      }
      String queue = key.substring(QueuePolicy.KEY_PREFIX.length(), key.length() - suffix.length());
      try {
        QueueNames.require(queue);
      } catch (InvalidJobException e) {
        throw PgbusSettings.refused(key, key + ": " + e.getMessage());
      }
      values.put(queue, source.apply(key).orElse("").strip().toLowerCase(Locale.ROOT));
    }
    return values;
  }

  /** The key of {@code queue}'s setting {@code suffix}. */
  static String key(String queue, String suffix) {
    return QueuePolicy.KEY_PREFIX + queue + suffix;
  }
}
