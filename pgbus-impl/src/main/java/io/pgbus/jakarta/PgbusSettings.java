package io.pgbus.jakarta;

import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import io.pgbus.engine.CapsuleConfig;
import io.pgbus.engine.CronJob;
import io.pgbus.engine.DeployCheck;
import io.pgbus.engine.Durations;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.ErrorDetail;
import io.pgbus.engine.FairShare;
import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.QueueLimit;
import io.pgbus.engine.QueuePolicy;
import io.pgbus.engine.SchemaName;
import io.pgbus.engine.Setting;
import io.pgbus.engine.SettingSource;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.stream.JsonParser;
import java.io.StringReader;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Every {@code pgbus.*} configuration key, read in one place and validated once. A bad value fails
 * deployment with a message that names the key, the value and what is allowed. The keys and
 * defaults are listed in docs/configuration.md.
 */
record PgbusSettings(
    EngineConfig engine,
    String dataSource,
    String listenerDataSource,
    String listenerUrl,
    String listenerUser,
    String listenerPassword,
    String executor,
    String threadFactory,
    boolean migrate,
    Duration stallThreshold,
    ErrorDetail errorDetail,
    String metrics,
    boolean adminMaskPayloads,
    DeployCheck.Mode deployCheck,
    SchemaName schema) {

  /** The deploy gate's mode: off, warn (the default) or fail (docs/operations.md). */
  static final String DEPLOY_CHECK_KEY = "pgbus.deploy-check";

  static final String DEFAULT_DATASOURCE = "jdbc/pgbus";
  static final String DEFAULT_LISTENER_DATASOURCE = "jdbc/pgbusListener";
  static final String DEFAULT_EXECUTOR = "java:comp/DefaultManagedExecutorService";
  static final String DEFAULT_THREAD_FACTORY = "java:comp/DefaultManagedThreadFactory";
  static final String DEFAULT_CRON_ZONE = "UTC";
  static final String DEFAULT_CRON_PAYLOAD = "{}";

  /**
   * The only duration key of the adapter's own; the engine's are in {@link EngineConfig#SETTINGS}.
   */
  static final Setting<Duration> STALL_THRESHOLD =
      Setting.duration(
          "pgbus.liveness.stall-threshold",
          Duration.ofSeconds(60),
          Duration.ofSeconds(1),
          Duration.ofDays(1));

  /**
   * A bad configuration value, which fails the deployment: {@code keyed} names the key, the value
   * and what is allowed; the message says it is pgbus's. One type with the engine's refusals, which
   * reach the deployment as {@link #refused(InvalidConfigException)}.
   */
  static InvalidConfigException refused(String key, String keyed) {
    return new InvalidConfigException(key, keyed, "pgbus: " + keyed);
  }

  /** An engine's refusal as the deployment reports it. */
  static InvalidConfigException refused(InvalidConfigException e) {
    return refused(e.key(), e.keyedMessage());
  }

  /** Reads the settings from a key lookup (MicroProfile Config in a container, a map in tests). */
  static PgbusSettings read(Function<String, Optional<String>> source) {
    return read(source, List.of());
  }

  /**
   * Reads the settings; {@code keys} are every configuration key there is, so that a {@code
   * pgbus.cron.<name>.*} key whose name is missing from {@code pgbus.crons} is reported rather than
   * silently ignored.
   */
  static PgbusSettings read(Function<String, Optional<String>> source, Iterable<String> keys) {
    String unknown = SettingKeys.unknown(keys);
    if (unknown != null) {
      throw refused("pgbus.*", unknown);
    }
    var r = new Reader(source);
    EngineConfig.Builder b = EngineConfig.builder().settings(r);
    r.string("pgbus.worker-id").ifPresent(b::workerId);
    var capsuleOfQueue = new HashMap<String, String>();
    for (String name : r.list("pgbus.capsules", List.of())) {
      String prefix = "pgbus.capsule." + name + ".";
      List<String> queues = r.list(prefix + "queues", null);
      if (queues == null) {
        throw refused(
            prefix + "queues",
            "capsule '"
                + name
                + "' is listed in pgbus.capsules but "
                + prefix
                + "queues is not set; set it to a comma-separated list of queue names in"
                + " priority order, e.g. "
                + prefix
                + "queues=urgent,default");
      }
      for (String q : queues) {
        String other = capsuleOfQueue.putIfAbsent(q, name);
        if (other != null && !other.equals(name)) {
          // Two capsules would claim the queue's jobs with two limits and two priorities.
          throw refused(
              prefix + "queues",
              "queue '"
                  + q
                  + "' is in pgbus.capsule."
                  + other
                  + ".queues and in "
                  + prefix
                  + "queues; a queue belongs to one capsule: remove it from one of them");
        }
      }
      int concurrency = r.valueOrDefault(Setting.integer(prefix + "concurrency", 4, 1, 1000));
      int perTransaction = jobsPerTransaction(r, prefix + "jobs-per-transaction");
      try {
        b.capsule(new CapsuleConfig(name, queues, concurrency, perTransaction));
      } catch (RuntimeException e) {
        throw refused(prefix + "*", prefix + "*: " + e.getMessage());
      }
    }
    List<String> cronNames = r.list(CronJob.NAMES_KEY, List.of());
    for (String name : cronNames) {
      b.cron(cron(r, name));
    }
    unlistedCrons(keys, cronNames);
    for (String queue : policyQueues(keys, capsuleOfQueue.keySet())) {
      QueuePolicy p = queuePolicy(queue, r);
      if (!p.isEmpty()) {
        b.queuePolicy(p);
      }
      QueueLimit l;
      try {
        l = QueueLimit.from(queue, r);
      } catch (InvalidConfigException e) {
        throw refused(e);
      }
      if (!l.isEmpty()) {
        b.queueLimit(l);
      }
      FairShare fair;
      try {
        fair =
            FairShare.parse(
                queue,
                r.string(FairShare.keyKey(queue)).orElse(null),
                r.string(FairShare.weightsKey(queue)).orElse(null));
      } catch (InvalidConfigException e) {
        throw refused(e);
      }
      if (fair != null) {
        b.fairShare(fair);
      }
    }
    EngineConfig engine;
    try {
      engine = b.build();
      engine.listener().requireProbeTimeoutWithinInterval();
    } catch (InvalidConfigException e) {
      throw refused(e);
    } catch (IllegalArgumentException e) {
      throw refused("pgbus.*", "invalid configuration: " + e.getMessage());
    }
    return new PgbusSettings(
        engine,
        r.string("pgbus.datasource").orElse(DEFAULT_DATASOURCE),
        r.string("pgbus.listener.datasource").orElse(DEFAULT_LISTENER_DATASOURCE),
        r.string("pgbus.listener.url").orElse(null),
        r.string("pgbus.listener.user").orElse(null),
        r.string("pgbus.listener.password").orElse(null),
        r.string("pgbus.executor").orElse(DEFAULT_EXECUTOR),
        r.string("pgbus.thread-factory").orElse(DEFAULT_THREAD_FACTORY),
        r.bool("pgbus.migrate", true),
        r.valueOrDefault(STALL_THRESHOLD),
        r.errorDetail("pgbus.errors.detail", ErrorDetail.STACK),
        metrics(r.string("pgbus.metrics").orElse("auto")),
        r.bool("pgbus.admin.mask-payloads", true),
        r.deployCheck(DEPLOY_CHECK_KEY, DeployCheck.Mode.WARN),
        schema(r.string(SchemaName.KEY).orElse(null)));
  }

  private static SchemaName schema(String value) {
    try {
      return value == null ? SchemaName.DEFAULT : SchemaName.of(value);
    } catch (InvalidConfigException e) {
      throw refused(e);
    }
  }

  /**
   * The queues that may have pgbus.queue.<name>.* keys: every capsule's, and every name such a key
   * carries (a JVM that only enqueues applies max-attempts too). A name that is no queue name is
   * refused, naming the key.
   */
  private static Set<String> policyQueues(Iterable<String> keys, Set<String> capsuleQueues) {
    var queues = new TreeSet<>(capsuleQueues);
    for (String key : keys) {
      if (!key.startsWith(QueuePolicy.KEY_PREFIX)) {
        continue;
      }
      String rest = key.substring(QueuePolicy.KEY_PREFIX.length());
      String queue = rest.indexOf('.') < 0 ? rest : rest.substring(0, rest.indexOf('.'));
      try {
        queues.add(QueueNames.require(queue));
      } catch (InvalidJobException e) {
        throw refused(key, key + ": " + e.getMessage());
      }
    }
    return queues;
  }

  /**
   * A queue's policy from its pgbus.queue.<name>.* keys in {@code source}, each value checked
   * against the range of its global key, the key named in every error.
   */
  static QueuePolicy queuePolicy(String queue, Function<String, Optional<String>> source) {
    return queuePolicy(queue, new Reader(source));
  }

  private static QueuePolicy queuePolicy(String queue, Reader r) {
    try {
      return QueuePolicy.from(queue, r);
    } catch (InvalidConfigException e) {
      throw refused(e);
    }
  }

  /** Which metrics adapter: see {@link PgbusMetrics#load}. */
  /**
   * A capsule's jobs-per-transaction: {@code auto} (the default, {@link CapsuleConfig#AUTO}) or a
   * whole number from 1 (never group) to {@link CapsuleConfig#MAX_JOBS_PER_TRANSACTION}.
   */
  private static int jobsPerTransaction(Reader r, String key) {
    String v = r.string(key).orElse("auto").strip();
    if (v.equalsIgnoreCase("auto")) {
      return CapsuleConfig.AUTO;
    }
    try {
      int n = Integer.parseInt(v);
      if (n >= 1 && n <= CapsuleConfig.MAX_JOBS_PER_TRANSACTION) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw refused(
        key,
        key
            + "="
            + v
            + " is invalid: use auto (one job per transaction, more under a backlog) or a whole"
            + " number from 1 (never group) to "
            + CapsuleConfig.MAX_JOBS_PER_TRANSACTION
            + " (default auto)");
  }

  private static String metrics(String v) {
    String mode = v.trim().toLowerCase(Locale.ROOT);
    if (!Set.of("auto", "mp", "otel", "none").contains(mode)) {
      throw refused(
          "pgbus.metrics",
          "pgbus.metrics="
              + v
              + " is invalid: use auto (MicroProfile Metrics if the server"
              + " has it, else OpenTelemetry), mp, otel or none; default auto");
    }
    return mode;
  }

  /** One cron from pgbus.cron.<name>.*, every value checked with its key named. */
  /** The cron's key {@code prefix + suffix}, or an error that says what to set it to. */
  private static String required(
      Reader r, String name, String prefix, String suffix, String whatToSet) {
    return r.string(prefix + suffix)
        .orElseThrow(
            () ->
                refused(
                    prefix + suffix,
                    "cron '%s' is listed in pgbus.crons but %s%s is not set; set it to %s"
                        .formatted(name, prefix, suffix, whatToSet)));
  }

  private static CronJob cron(Reader r, String name) {
    String prefix = CronJob.KEY_PREFIX + name + ".";
    String schedule =
        required(
            r,
            name,
            prefix,
            "schedule",
            "a cron expression, e.g. " + prefix + "schedule=0 3 * * * (03:00 every day)");
    String queue =
        required(
            r, name, prefix, "queue", "the queue its jobs go to, e.g. " + prefix + "queue=reports");
    try {
      QueueNames.require(queue);
    } catch (InvalidJobException e) {
      throw refused(prefix + "queue", prefix + "queue=" + queue + " is invalid: " + e.getMessage());
    }
    String zoneText = r.string(prefix + "zone").orElse(DEFAULT_CRON_ZONE);
    ZoneId zone;
    try {
      zone = ZoneId.of(zoneText);
    } catch (DateTimeException e) {
      throw refused(
          prefix + "zone",
          prefix
              + "zone="
              + zoneText
              + " is invalid ("
              + e.getMessage()
              + "): use a"
              + " time zone id such as UTC, Europe/Berlin or America/New_York (default "
              + DEFAULT_CRON_ZONE
              + ")");
    }
    String payload = r.string(prefix + "payload").orElse(DEFAULT_CRON_PAYLOAD);
    String jsonProblem = jsonProblem(payload);
    if (jsonProblem != null) {
      throw refused(
          prefix + "payload",
          prefix
              + "payload="
              + payload
              + " is invalid: "
              + jsonProblem
              + "; use a"
              + " JSON value such as {\"report\": \"daily\"} (default "
              + DEFAULT_CRON_PAYLOAD
              + ")");
    }
    try {
      CronJob job = new CronJob(name, schedule, zone, queue, payload);
      String misfire = r.string(prefix + CronJob.MISFIRE_KEY).orElse(null);
      job = misfire == null ? job : job.withMisfire(misfire);
      String overlap = r.string(prefix + CronJob.OVERLAP_KEY).orElse(null);
      return overlap == null ? job : job.withOverlap(overlap);
    } catch (InvalidConfigException e) {
      throw refused(e);
    }
  }

  /** Null when {@code text} is one JSON value other than null, else what is wrong with it. */
  private static String jsonProblem(String text) {
    try (JsonParser p = Json.createParser(new StringReader(text))) {
      int depth = 0;
      int values = 0;
      while (p.hasNext()) {
        JsonParser.Event e = p.next();
        if (depth == 0) {
          values++;
          if (e == JsonParser.Event.VALUE_NULL) {
            return "it is JSON null";
          }
        }
        if (e == JsonParser.Event.START_OBJECT || e == JsonParser.Event.START_ARRAY) {
          depth++;
        } else if (e == JsonParser.Event.END_OBJECT || e == JsonParser.Event.END_ARRAY) {
          depth--;
        }
      }
      return values == 1 ? null : "it is not one JSON value";
    } catch (JsonException e) {
      return "it is not JSON (" + e.getMessage() + ")";
    }
  }

  /** Refuses pgbus.cron.<name>.* keys whose name pgbus.crons does not list. */
  private static void unlistedCrons(Iterable<String> keys, List<String> listed) {
    Set<String> unlisted = new LinkedHashSet<>();
    for (String key : keys) {
      if (key.startsWith(SettingKeys.CRON_PREFIX)) {
        String rest = key.substring(SettingKeys.CRON_PREFIX.length());
        int dot = rest.indexOf('.');
        String name = dot < 0 ? rest : rest.substring(0, dot);
        if (!listed.contains(name)) {
          unlisted.add(name);
        }
      }
    }
    if (!unlisted.isEmpty()) {
      String first = unlisted.iterator().next();
      throw refused(
          SettingKeys.CRON_PREFIX + first + ".*",
          SettingKeys.CRON_PREFIX
              + first
              + ".* is set but '"
              + first
              + "' is not listed in"
              + " pgbus.crons"
              + (listed.isEmpty() ? "" : "=" + String.join(",", listed))
              + ", so it would never run; add it: pgbus.crons="
              + String.join(",", concat(listed, unlisted)));
    }
  }

  private static List<String> concat(List<String> a, Set<String> b) {
    var all = new ArrayList<String>(a);
    all.addAll(b);
    return all;
  }

  /**
   * Typed lookups that name the key and the value when they fail. As the engine's {@link
   * SettingSource}, it refuses a value outside its setting's range.
   */
  private static final class Reader implements SettingSource {
    private final Function<String, Optional<String>> source;

    Reader(Function<String, Optional<String>> source) {
      this.source = source;
    }

    Optional<String> string(String key) {
      return source.apply(key).map(String::strip).filter(s -> !s.isEmpty());
    }

    List<String> list(String key, List<String> fallback) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      var items = new ArrayList<String>();
      Arrays.stream(v.get().split(","))
          .map(String::strip)
          .filter(s -> !s.isEmpty())
          .forEach(items::add);
      return items;
    }

    @Override
    public <T extends Comparable<? super T>> T value(Setting<T> setting) {
      Optional<String> v = string(setting.key());
      if (v.isEmpty()) {
        return null;
      }
      Object parsed;
      String allowed;
      if (setting.type() == Duration.class) {
        boolean zeroAllowed = ((Duration) setting.min()).isZero();
        parsed = zeroAllowed && v.get().equals("0") ? Duration.ZERO : Durations.parse(v.get());
        allowed =
            (zeroAllowed ? "0 (delete at once) or a duration" : "a duration")
                + " from "
                + Durations.format((Duration) setting.min())
                + " to "
                + Durations.format((Duration) setting.max())
                + ", written as 500ms, 30s, 5m, 2h, 14d or PT30S";
      } else if (setting.type() == Boolean.class) {
        String t = v.get().strip();
        parsed =
            t.equalsIgnoreCase("true")
                ? Boolean.TRUE
                : t.equalsIgnoreCase("false") ? Boolean.FALSE : null;
        allowed = "true or false";
      } else if (setting.type().isEnum()) {
        parsed = null;
        var names = new java.util.ArrayList<String>();
        for (Object c : setting.type().getEnumConstants()) {
          String name = Setting.text((Enum<?>) c);
          names.add(name);
          if (name.equalsIgnoreCase(v.get().strip())) {
            parsed = c;
          }
        }
        allowed = String.join(" or ", names);
      } else if (setting.type() == Integer.class) {
        parsed = parseOrNull(v.get(), Integer::valueOf);
        allowed = "a whole number from " + setting.min() + " to " + setting.max();
      } else {
        parsed = parseOrNull(v.get(), Double::valueOf);
        allowed = "a number from " + setting.min() + " to " + setting.max();
      }
      if (parsed == null || !setting.allows(setting.type().cast(parsed))) {
        throw refused(
            setting.key(),
            setting.key()
                + "="
                + v.get()
                + " is invalid: use "
                + allowed
                + " (default "
                + setting.fallbackText()
                + ")");
      }
      return setting.type().cast(parsed);
    }

    private static Object parseOrNull(String text, Function<String, Object> parse) {
      try {
        return parse.apply(text);
      } catch (NumberFormatException e) {
        return null; // reported by the caller
      }
    }

    DeployCheck.Mode deployCheck(String key, DeployCheck.Mode fallback) {
      return choice(
          key,
          DeployCheck.Mode.class,
          fallback,
          "off (no check), warn (findings to the log and the doctor) or fail (a blocking"
              + " finding also keeps readiness DOWN and the engine stopped)");
    }

    ErrorDetail errorDetail(String key, ErrorDetail fallback) {
      return choice(
          key,
          ErrorDetail.class,
          fallback,
          "stack (the exception with its stack trace), message (class and message only) or"
              + " class (the class only)");
    }

    /** One of an enum's constants, written in any case; {@code allowed} says which. */
    private <E extends Enum<E>> E choice(String key, Class<E> type, E fallback, String allowed) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      try {
        return Enum.valueOf(type, v.get().trim().toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw refused(
            key,
            key
                + "="
                + v.get()
                + " is invalid: use "
                + allowed
                + "; default "
                + fallback.name().toLowerCase(Locale.ROOT));
      }
    }

    boolean bool(String key, boolean fallback) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      return switch (v.get().toLowerCase(Locale.ROOT)) {
        case "true" -> true;
        case "false" -> false;
        default ->
            throw refused(
                key,
                key + "=" + v.get() + " is invalid: use true or false (default " + fallback + ")");
      };
    }
  }
}
