package io.pgbus.engine;

import io.pgbus.EnqueueOptions;
import io.pgbus.QueueNames;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A queue's fair share between tenants (issue #30): its claims deal each priority level's due jobs
 * over the jobs' concurrency keys round-robin, {@code weights} times as many for a named tenant (1
 * for any other), instead of oldest first. Read from {@code pgbus.queue.<name>.fair-key} (only
 * {@code concurrency-key}) and {@code .fair-weights} ({@code tenantA:3,tenantB:1}), checked at
 * deployment with the bounds {@code pgbus.queue_fair_set} checks in SQL, and written to the queue's
 * {@code pgbus.queue_limit} row at start with its limits ({@link QueueLimitStore}), where every
 * engine's claim reads it: docs/schema.md, "Fair share".
 *
 * @param queue the queue
 * @param weights each named tenant's weight, 1 to {@link #MAX_WEIGHT}; a tenant not named weighs 1
 */
public record FairShare(String queue, Map<String, Integer> weights) {

  /** The only key source: the jobs' concurrency keys are the tenants. */
  public static final String CONCURRENCY_KEY = "concurrency-key";

  /** The largest weight, as pgbus.queue_fair_set checks it in SQL. */
  public static final int MAX_WEIGHT = 1000;

  /** The most tenants a queue's weights may name. */
  public static final int MAX_WEIGHTS = 1000;

  /** The suffixes of a queue's fair-share keys. */
  public static final List<String> SUFFIXES = List.of("fair-key", "fair-weights");

  public FairShare {
    QueueNames.require(queue);
    weights = Map.copyOf(weights);
  }

  /**
   * The fair share as the doctor, the deploy check and the admin API name it: {@code fair by
   * concurrency-key} and the weights in tenant order ({@code , weights tenantA:3, tenantB:1}).
   */
  public String describe() {
    var parts = new ArrayList<String>();
    new TreeMap<>(weights).forEach((t, w) -> parts.add(t + ":" + w));
    return "fair by "
        + CONCURRENCY_KEY
        + (parts.isEmpty() ? "" : ", weights " + String.join(", ", parts));
  }

  public static String keyKey(String queue) {
    return QueuePolicy.KEY_PREFIX + queue + ".fair-key";
  }

  public static String weightsKey(String queue) {
    return QueuePolicy.KEY_PREFIX + queue + ".fair-weights";
  }

  /**
   * The queue's fair share as configured, or null when {@code key} is not set; a bad value throws,
   * naming the key, the value and what to write instead.
   *
   * @param key the value of {@code fair-key}, or null
   * @param weights the value of {@code fair-weights}, or null
   */
  public static FairShare parse(String queue, String key, String weights) {
    String k = key == null ? null : key.strip();
    if (k == null || k.isEmpty()) {
      if (weights != null && !weights.isBlank()) {
        throw new InvalidConfigException(
            weightsKey(queue),
            weightsKey(queue)
                + "="
                + weights
                + " has no tenants to weigh: set "
                + keyKey(queue)
                + "="
                + CONCURRENCY_KEY
                + " too (the jobs' concurrency keys are the tenants)");
      }
      return null;
    }
    if (!k.equals(CONCURRENCY_KEY)) {
      throw new InvalidConfigException(
          keyKey(queue),
          keyKey(queue)
              + "="
              + key
              + " is invalid: use "
              + CONCURRENCY_KEY
              + " (the jobs' concurrency keys are the tenants; EnqueueOptions.withConcurrencyKey),"
              + " or remove the key to serve the queue oldest first");
    }
    return new FairShare(queue, weights(queue, weights == null ? "" : weights));
  }

  private static Map<String, Integer> weights(String queue, String value) {
    var out = new LinkedHashMap<String, Integer>();
    if (value.isBlank()) {
      return out;
    }
    for (String part : value.split(",", -1)) {
      int colon = part.lastIndexOf(':');
      String tenant = colon < 0 ? "" : part.substring(0, colon).strip();
      Integer w = colon < 0 ? null : weight(part.substring(colon + 1).strip());
      if (w == null
          || tenant.isEmpty()
          || tenant.length() > EnqueueOptions.MAX_CONCURRENCY_KEY_LENGTH) {
        throw badWeights(queue, value, "'" + part.strip() + "' is not tenant:weight");
      }
      if (out.put(tenant, w) != null) {
        throw badWeights(queue, value, "it names " + tenant + " twice");
      }
    }
    if (out.size() > MAX_WEIGHTS) {
      throw badWeights(queue, value, "it names " + out.size() + " tenants");
    }
    return out;
  }

  private static Integer weight(String s) {
    try {
      int w = Integer.parseInt(s);
      return w >= 1 && w <= MAX_WEIGHT ? w : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  private static InvalidConfigException badWeights(String queue, String value, String why) {
    String shown = value.length() > 200 ? value.substring(0, 200) + "..." : value;
    return new InvalidConfigException(
        weightsKey(queue),
        weightsKey(queue)
            + "="
            + shown
            + " is invalid ("
            + why
            + "): use tenant:weight pairs separated by commas, at most "
            + MAX_WEIGHTS
            + ", each tenant a concurrency key of 1 to "
            + EnqueueOptions.MAX_CONCURRENCY_KEY_LENGTH
            + " characters and each weight a whole number from 1 to "
            + MAX_WEIGHT
            + " (for example tenantA:3,tenantB:1; a tenant not named weighs 1)");
  }
}
