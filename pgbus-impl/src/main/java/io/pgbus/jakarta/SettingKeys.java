package io.pgbus.jakarta;

import io.pgbus.engine.CronJob;
import io.pgbus.engine.EncryptionKeys;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.QueuePolicy;
import io.pgbus.engine.SchemaName;
import io.pgbus.engine.Setting;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Every {@code pgbus.*} key pgbus reads, so that a misspelled one fails deployment instead of being
 * ignored: {@code pgbus.capsule.mail.concurency=4} would otherwise leave the capsule at its default
 * concurrency without a word. A key is refused, with the nearest known key suggested, when it is
 * {@code pgbus.<word>} or lies under one of pgbus's own families ({@code pgbus.capsule.}, {@code
 * pgbus.listener.}, ...). Keys under other prefixes ({@code pgbus.it.*}, a server's own variables)
 * are left alone.
 */
final class SettingKeys {

  /**
   * Every fixed key: the engine's settings ({@link EngineConfig#SETTINGS}) and the adapter's own. A
   * key the adapter adds to PgbusSettings or PgbusResources belongs in {@link #ADAPTER}.
   */
  static final List<String> ADAPTER =
      List.of(
          "pgbus.worker-id",
          "pgbus.capsules",
          CronJob.NAMES_KEY,
          "pgbus.listener.datasource",
          "pgbus.listener.url",
          "pgbus.listener.user",
          "pgbus.listener.password",
          "pgbus.datasource",
          PgbusResources.POOL_SIZE_KEY,
          "pgbus.executor",
          "pgbus.thread-factory",
          "pgbus.migrate",
          SchemaName.KEY,
          PgbusSettings.DEPLOY_CHECK_KEY,
          PgbusSettings.STALL_THRESHOLD.key(),
          "pgbus.errors.detail",
          "pgbus.metrics",
          "pgbus.admin.mask-payloads",
          // Read by pgbus-console (io.pgbus.console.ConsoleConfig), checked here for misspellings.
          "pgbus.console.enabled",
          "pgbus.console.path",
          "pgbus.console.api",
          "pgbus.console.refresh",
          // Read by pgbus-cli (io.pgbus.cli.CliConfig), which shares a deployment's keys.
          "pgbus.cli.url",
          "pgbus.cli.user",
          "pgbus.cli.password",
          "pgbus.cli.password-file");

  static final Set<String> FIXED =
      Stream.of(
              ADAPTER.stream(),
              EncryptionKeys.SETTINGS.stream(),
              EngineConfig.SETTINGS.stream().map(Setting::key))
          .flatMap(s -> s)
          .collect(Collectors.toUnmodifiableSet());

  static final String CAPSULE_PREFIX = "pgbus.capsule.";
  static final String CRON_PREFIX = CronJob.KEY_PREFIX;
  static final List<String> CAPSULE_KEYS = List.of("queues", "concurrency", "jobs-per-transaction");
  static final List<String> CRON_KEYS =
      List.of("schedule", "queue", "zone", "payload", CronJob.MISFIRE_KEY, CronJob.OVERLAP_KEY);

  private SettingKeys() {}

  /**
   * The first key pgbus does not know, with the fix; null when all are known. A capsule or cron
   * name is taken from the key itself: whether it is listed is checked elsewhere.
   */
  static String unknown(Iterable<String> keys) {
    for (String key : keys) {
      if (!key.startsWith("pgbus.")
          || FIXED.contains(key)
          || key.startsWith(EncryptionKeys.KEY_PREFIX)) { // pgbus.encryption.key.<id>
        continue;
      }
      String suggestion = suggestion(key);
      if (suggestion != null) {
        return key
            + " is not a pgbus key; did you mean "
            + suggestion
            + "? (every key is listed"
            + " in docs/configuration.md)";
      }
    }
    return null;
  }

  /** The known key nearest to an unknown {@code key}, or null when the key is not pgbus's. */
  private static String suggestion(String key) {
    for (var family :
        List.of(
            new Family(CAPSULE_PREFIX, CAPSULE_KEYS),
            new Family(CRON_PREFIX, CRON_KEYS),
            new Family(QueuePolicy.KEY_PREFIX, QueuePolicy.SUFFIXES))) {
      if (key.startsWith(family.prefix)) {
        String rest = key.substring(family.prefix.length());
        int dot = rest.indexOf('.');
        if (dot > 0 && family.keys.contains(rest.substring(dot + 1))) {
          return null;
        }
        String name = dot > 0 ? rest.substring(0, dot) : "<name>";
        String leaf = dot > 0 ? rest.substring(dot + 1) : rest;
        return family.prefix + name + "." + nearest(leaf, family.keys);
      }
    }
    String rest = key.substring("pgbus.".length());
    int dot = rest.indexOf('.');
    String first = dot < 0 ? rest : rest.substring(0, dot);
    boolean ours =
        dot < 0
            || first.equals("capsules")
            || first.equals("crons")
            || FIXED.stream().anyMatch(k -> k.startsWith("pgbus." + first + "."));
    if (!ours) {
      return null; // pgbus.it.*, a server's variables: not ours to judge
    }
    var candidates = new ArrayList<>(FIXED);
    candidates.add(CAPSULE_PREFIX + "<name>.queues");
    candidates.add(CRON_PREFIX + "<name>.schedule");
    candidates.add(QueuePolicy.KEY_PREFIX + "<name>.job-timeout");
    return nearest(key, candidates);
  }

  private record Family(String prefix, List<String> keys) {}

  private static String nearest(String word, Iterable<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String c : candidates) {
      int d = distance(word.toLowerCase(Locale.ROOT), c);
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    return best;
  }

  /** Levenshtein distance. */
  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
