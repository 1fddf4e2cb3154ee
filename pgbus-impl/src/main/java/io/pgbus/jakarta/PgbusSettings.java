package io.pgbus.jakarta;

import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import io.pgbus.engine.CapsuleConfig;
import io.pgbus.engine.CronJob;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.RetryPolicy;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.stream.JsonParser;
import java.io.StringReader;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Every {@code pgbus.*} configuration key, read in one place and validated once. A bad value
 * fails deployment with a message that names the key, the value and what is allowed. The keys
 * and defaults are listed in docs/configuration.md.
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
    Duration stallThreshold) {

  static final String DEFAULT_DATASOURCE = "jdbc/pgbus";
  static final String DEFAULT_LISTENER_DATASOURCE = "jdbc/pgbusListener";
  static final String DEFAULT_EXECUTOR = "java:comp/DefaultManagedExecutorService";
  static final String DEFAULT_THREAD_FACTORY = "java:comp/DefaultManagedThreadFactory";
  static final Duration DEFAULT_STALL_THRESHOLD = Duration.ofSeconds(60);
  static final String DEFAULT_CRON_ZONE = "UTC";
  static final String DEFAULT_CRON_PAYLOAD = "{}";
  private static final String CRON_PREFIX = "pgbus.cron.";

  /** Thrown for a bad configuration value; fails the deployment. */
  static final class InvalidSettingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InvalidSettingException(String message) {
      super(message);
    }
  }

  /** Reads the settings from a key lookup (MicroProfile Config in a container, a map in tests). */
  static PgbusSettings read(Function<String, Optional<String>> source) {
    return read(source, List.of());
  }

  /**
   * Reads the settings; {@code keys} are every configuration key there is, so that a {@code
   * pgbus.cron.<name>.*} key whose name is missing from {@code pgbus.crons} is reported rather
   * than silently ignored.
   */
  static PgbusSettings read(Function<String, Optional<String>> source, Iterable<String> keys) {
    var r = new Reader(source);
    EngineConfig.Builder b = EngineConfig.builder();
    r.string("pgbus.worker-id").ifPresent(b::workerId);
    for (String name : r.list("pgbus.capsules", List.of())) {
      String prefix = "pgbus.capsule." + name + ".";
      List<String> queues = r.list(prefix + "queues", null);
      if (queues == null) {
        throw new InvalidSettingException(
            "pgbus: capsule '" + name + "' is listed in pgbus.capsules but " + prefix
                + "queues is not set; set it to a comma-separated list of queue names in"
                + " priority order, e.g. " + prefix + "queues=urgent,default");
      }
      int concurrency = r.integer(prefix + "concurrency", 4, 1, 1000);
      int perTransaction =
          r.integer(
              prefix + "jobs-per-transaction", 1, 1, CapsuleConfig.MAX_JOBS_PER_TRANSACTION);
      try {
        b.capsule(new CapsuleConfig(name, queues, concurrency, perTransaction));
      } catch (RuntimeException e) {
        throw new InvalidSettingException("pgbus: " + prefix + "*: " + e.getMessage());
      }
    }
    List<String> cronNames = r.list("pgbus.crons", List.of());
    for (String name : cronNames) {
      b.cron(cron(r, name));
    }
    unlistedCrons(keys, cronNames);
    b.pollInterval(r.duration("pgbus.poll-interval", EngineConfig.Builder.DEFAULT_POLL_INTERVAL))
        .pollCeiling(r.duration("pgbus.poll-ceiling", EngineConfig.Builder.DEFAULT_POLL_CEILING))
        .lease(r.duration("pgbus.lease", EngineConfig.Builder.DEFAULT_LEASE))
        .probeInterval(
            r.duration("pgbus.listener.probe-interval", EngineConfig.Builder.DEFAULT_PROBE_INTERVAL))
        .probeTimeout(
            r.duration("pgbus.listener.probe-timeout", EngineConfig.Builder.DEFAULT_PROBE_TIMEOUT))
        .reconnectMin(
            r.duration("pgbus.listener.reconnect-min", EngineConfig.Builder.DEFAULT_RECONNECT_MIN))
        .reconnectMax(
            r.duration("pgbus.listener.reconnect-max", EngineConfig.Builder.DEFAULT_RECONNECT_MAX))
        .rescueInterval(
            r.duration("pgbus.rescue-interval", EngineConfig.Builder.DEFAULT_RESCUE_INTERVAL))
        .pruneInterval(r.duration("pgbus.prune-interval", EngineConfig.Builder.DEFAULT_PRUNE_INTERVAL))
        .completedRetention(
            r.retention("pgbus.retention.completed", EngineConfig.Builder.DEFAULT_COMPLETED_RETENTION))
        .deadRetention(r.duration("pgbus.retention.dead", EngineConfig.Builder.DEFAULT_DEAD_RETENTION))
        .pruneBatch(r.integer("pgbus.prune-batch", EngineConfig.Builder.DEFAULT_PRUNE_BATCH, 1, 100_000))
        .drainTimeout(r.duration("pgbus.drain-timeout", EngineConfig.Builder.DEFAULT_DRAIN_TIMEOUT))
        .leaderTtl(r.duration("pgbus.leader.ttl", EngineConfig.Builder.DEFAULT_LEADER_TTL))
        .jobTimeout(r.durationOrNull("pgbus.job-timeout", "90% of pgbus.lease"))
        .maxPayloadBytes(
            r.integer(
                "pgbus.max-payload-bytes",
                EngineConfig.Builder.DEFAULT_MAX_PAYLOAD_BYTES,
                2,
                256 * 1024 * 1024));
    Duration retryBase = r.duration("pgbus.retry.base", RetryPolicy.DEFAULT.base());
    Duration retryCap = r.duration("pgbus.retry.cap", RetryPolicy.DEFAULT.cap());
    double jitter = r.decimal("pgbus.retry.jitter", RetryPolicy.DEFAULT.jitter(), 0, 0.99);
    EngineConfig engine;
    try {
      b.retry(new RetryPolicy(retryBase, retryCap, jitter));
      engine = b.build();
    } catch (IllegalArgumentException e) {
      throw new InvalidSettingException("pgbus: invalid configuration: " + e.getMessage());
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
        r.duration("pgbus.liveness.stall-threshold", DEFAULT_STALL_THRESHOLD));
  }

  /** One cron from pgbus.cron.<name>.*, every value checked with its key named. */
  private static CronJob cron(Reader r, String name) {
    String prefix = CRON_PREFIX + name + ".";
    String schedule =
        r.string(prefix + "schedule")
            .orElseThrow(
                () ->
                    new InvalidSettingException(
                        "pgbus: cron '" + name + "' is listed in pgbus.crons but " + prefix
                            + "schedule is not set; set it to a cron expression, e.g. " + prefix
                            + "schedule=0 3 * * * (03:00 every day)"));
    String queue =
        r.string(prefix + "queue")
            .orElseThrow(
                () ->
                    new InvalidSettingException(
                        "pgbus: cron '" + name + "' is listed in pgbus.crons but " + prefix
                            + "queue is not set; set it to the queue its jobs go to, e.g. "
                            + prefix + "queue=reports"));
    try {
      QueueNames.require(queue);
    } catch (InvalidJobException e) {
      throw new InvalidSettingException(
          "pgbus: " + prefix + "queue=" + queue + " is invalid: " + e.getMessage());
    }
    String zoneText = r.string(prefix + "zone").orElse(DEFAULT_CRON_ZONE);
    ZoneId zone;
    try {
      zone = ZoneId.of(zoneText);
    } catch (DateTimeException e) {
      throw new InvalidSettingException(
          "pgbus: " + prefix + "zone=" + zoneText + " is invalid (" + e.getMessage() + "): use a"
              + " time zone id such as UTC, Europe/Berlin or America/New_York (default "
              + DEFAULT_CRON_ZONE + ")");
    }
    String payload = r.string(prefix + "payload").orElse(DEFAULT_CRON_PAYLOAD);
    String jsonProblem = jsonProblem(payload);
    if (jsonProblem != null) {
      throw new InvalidSettingException(
          "pgbus: " + prefix + "payload=" + payload + " is invalid: " + jsonProblem + "; use a"
              + " JSON value such as {\"report\": \"daily\"} (default " + DEFAULT_CRON_PAYLOAD + ")");
    }
    try {
      return new CronJob(name, schedule, zone, queue, payload);
    } catch (IllegalArgumentException e) {
      String message = e.getMessage();
      if (message.contains("invalid cron name")) {
        throw new InvalidSettingException("pgbus: pgbus.crons: " + message);
      }
      throw new InvalidSettingException(
          "pgbus: " + prefix + "schedule=" + schedule + " is invalid: "
              + message.replaceFirst("^cron '[^']*': ", ""));
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
      if (key.startsWith(CRON_PREFIX)) {
        String rest = key.substring(CRON_PREFIX.length());
        int dot = rest.indexOf('.');
        String name = dot < 0 ? rest : rest.substring(0, dot);
        if (!listed.contains(name)) {
          unlisted.add(name);
        }
      }
    }
    if (!unlisted.isEmpty()) {
      String first = unlisted.iterator().next();
      throw new InvalidSettingException(
          "pgbus: " + CRON_PREFIX + first + ".* is set but '" + first + "' is not listed in"
              + " pgbus.crons" + (listed.isEmpty() ? "" : "=" + String.join(",", listed))
              + ", so it would never run; add it: pgbus.crons="
              + String.join(",", concat(listed, unlisted)));
    }
  }

  private static List<String> concat(List<String> a, Set<String> b) {
    var all = new ArrayList<String>(a);
    all.addAll(b);
    return all;
  }

  /** Typed lookups that name the key and the value when they fail. */
  private static final class Reader {
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
      Arrays.stream(v.get().split(",")).map(String::strip).filter(s -> !s.isEmpty()).forEach(items::add);
      return items;
    }

    int integer(String key, int fallback, int min, int max) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      try {
        int n = Integer.parseInt(v.get());
        if (n >= min && n <= max) {
          return n;
        }
      } catch (NumberFormatException ignored) {
        // reported below
      }
      throw new InvalidSettingException(
          "pgbus: " + key + "=" + v.get() + " is invalid: use a whole number from " + min + " to "
              + max + " (default " + fallback + ")");
    }

    double decimal(String key, double fallback, double min, double max) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      try {
        double d = Double.parseDouble(v.get());
        if (d >= min && d <= max) {
          return d;
        }
      } catch (NumberFormatException ignored) {
        // reported below
      }
      throw new InvalidSettingException(
          "pgbus: " + key + "=" + v.get() + " is invalid: use a number from " + min + " to " + max
              + " (default " + fallback + ")");
    }

    Duration duration(String key, Duration fallback) {
      Duration d = parsedDuration(key, String.valueOf(fallback), false);
      return d == null ? fallback : d;
    }

    /** A duration that may also be zero ("0" or "0s"): a retention that keeps nothing. */
    Duration retention(String key, Duration fallback) {
      Duration d = parsedDuration(key, String.valueOf(fallback), true);
      return d == null ? fallback : d;
    }

    /** A duration, or null when the key is unset (the engine then derives a default). */
    Duration durationOrNull(String key, String defaultText) {
      return parsedDuration(key, defaultText, false);
    }

    /** The key's duration, null when unset; refused when negative, or zero unless allowed. */
    private Duration parsedDuration(String key, String defaultText, boolean zeroAllowed) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return null;
      }
      Duration d =
          zeroAllowed && v.get().strip().equals("0") ? Duration.ZERO : Durations.parse(v.get());
      if (d == null || d.isNegative() || (d.isZero() && !zeroAllowed)) {
        throw new InvalidSettingException(
            "pgbus: " + key + "=" + v.get() + " is invalid: use "
                + (zeroAllowed ? "0 (delete at once) or a duration" : "a positive duration")
                + " such as 500ms, 30s, 5m, 2h, 14d or PT30S (default " + defaultText + ")");
      }
      return d;
    }

    boolean bool(String key, boolean fallback) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      return switch (v.get().toLowerCase(java.util.Locale.ROOT)) {
        case "true" -> true;
        case "false" -> false;
        default -> throw new InvalidSettingException(
            "pgbus: " + key + "=" + v.get() + " is invalid: use true or false (default " + fallback + ")");
      };
    }
  }
}
