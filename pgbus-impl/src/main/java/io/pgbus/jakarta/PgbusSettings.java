package io.pgbus.jakarta;

import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import io.pgbus.engine.CapsuleConfig;
import io.pgbus.engine.CronJob;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.ErrorDetail;
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
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
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
    boolean adminMaskPayloads) {

  static final String DEFAULT_DATASOURCE = "jdbc/pgbus";
  static final String DEFAULT_LISTENER_DATASOURCE = "jdbc/pgbusListener";
  static final String DEFAULT_EXECUTOR = "java:comp/DefaultManagedExecutorService";
  static final String DEFAULT_THREAD_FACTORY = "java:comp/DefaultManagedThreadFactory";
  static final String DEFAULT_CRON_ZONE = "UTC";
  static final String DEFAULT_CRON_PAYLOAD = "{}";

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
   * pgbus.cron.<name>.*} key whose name is missing from {@code pgbus.crons} is reported rather than
   * silently ignored.
   */
  static PgbusSettings read(Function<String, Optional<String>> source, Iterable<String> keys) {
    String unknown = SettingKeys.unknown(keys);
    if (unknown != null) {
      throw new InvalidSettingException("pgbus: " + unknown);
    }
    var r = new Reader(source);
    EngineConfig.Builder b = EngineConfig.builder();
    r.string("pgbus.worker-id").ifPresent(b::workerId);
    var capsuleOfQueue = new HashMap<String, String>();
    for (String name : r.list("pgbus.capsules", List.of())) {
      String prefix = "pgbus.capsule." + name + ".";
      List<String> queues = r.list(prefix + "queues", null);
      if (queues == null) {
        throw new InvalidSettingException(
            "pgbus: capsule '"
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
          throw new InvalidSettingException(
              "pgbus: queue '"
                  + q
                  + "' is in pgbus.capsule."
                  + other
                  + ".queues and in "
                  + prefix
                  + "queues; a queue belongs to one capsule: remove it from one of them");
        }
      }
      int concurrency = r.integer(prefix + "concurrency", 4, 1, 1000);
      int perTransaction =
          r.integer(prefix + "jobs-per-transaction", 1, 1, CapsuleConfig.MAX_JOBS_PER_TRANSACTION);
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
    Duration pollInterval = r.duration(Limits.POLL_INTERVAL);
    Duration pollCeiling = r.duration(Limits.POLL_CEILING);
    r.notLonger(Limits.POLL_INTERVAL, pollInterval, Limits.POLL_CEILING, pollCeiling);
    Duration lease = r.duration(Limits.LEASE);
    Duration jobTimeout = r.durationOrNull(Limits.JOB_TIMEOUT, "90% of pgbus.lease");
    if (jobTimeout != null && jobTimeout.compareTo(lease) >= 0) {
      // Rescue may hand the job to another worker once the lease expires: the handler has to be
      // told to stop before that, or two attempts of one job could run at once.
      throw new InvalidSettingException(
          "pgbus: pgbus.job-timeout="
              + Durations.format(jobTimeout)
              + " is invalid: it must be"
              + " shorter than pgbus.lease="
              + Durations.format(lease)
              + ", so a handler is"
              + " interrupted before rescue may run its job elsewhere; shorten pgbus.job-timeout"
              + " or lengthen pgbus.lease");
    }
    Duration probeInterval = r.duration(Limits.PROBE_INTERVAL);
    Duration probeTimeout = r.duration(Limits.PROBE_TIMEOUT);
    r.notLonger(Limits.PROBE_TIMEOUT, probeTimeout, Limits.PROBE_INTERVAL, probeInterval);
    Duration reconnectMin = r.duration(Limits.RECONNECT_MIN);
    Duration reconnectMax = r.duration(Limits.RECONNECT_MAX);
    r.notLonger(Limits.RECONNECT_MIN, reconnectMin, Limits.RECONNECT_MAX, reconnectMax);
    b.pollInterval(pollInterval)
        .pollCeiling(pollCeiling)
        .lease(lease)
        .probeInterval(probeInterval)
        .probeTimeout(probeTimeout)
        .reconnectMin(reconnectMin)
        .reconnectMax(reconnectMax)
        .rescueInterval(r.duration(Limits.RESCUE_INTERVAL))
        .pruneInterval(r.duration(Limits.PRUNE_INTERVAL))
        .completedRetention(r.duration(Limits.COMPLETED_RETENTION))
        .deadRetention(r.duration(Limits.DEAD_RETENTION))
        .auditRetention(r.duration(Limits.AUDIT_RETENTION))
        .pruneBatch(
            r.integer("pgbus.prune-batch", EngineConfig.Builder.DEFAULT_PRUNE_BATCH, 1, 100_000))
        .drainTimeout(r.duration(Limits.DRAIN_TIMEOUT))
        .leaderTtl(r.duration(Limits.LEADER_TTL))
        .jobTimeout(jobTimeout)
        .maxPayloadBytes(
            r.integer(
                "pgbus.max-payload-bytes",
                EngineConfig.Builder.DEFAULT_MAX_PAYLOAD_BYTES,
                2,
                256 * 1024 * 1024));
    Duration retryBase = r.duration(Limits.RETRY_BASE);
    Duration retryCap = r.duration(Limits.RETRY_CAP);
    r.notLonger(Limits.RETRY_BASE, retryBase, Limits.RETRY_CAP, retryCap);
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
        r.duration(Limits.STALL_THRESHOLD),
        r.errorDetail("pgbus.errors.detail", ErrorDetail.STACK),
        metrics(r.string("pgbus.metrics").orElse("auto")),
        r.bool("pgbus.admin.mask-payloads", true));
  }

  /** Which metrics adapter: see {@link PgbusMetrics#load}. */
  private static String metrics(String v) {
    String mode = v.trim().toLowerCase(java.util.Locale.ROOT);
    if (!java.util.Set.of("auto", "mp", "otel", "none").contains(mode)) {
      throw new InvalidSettingException(
          "pgbus: pgbus.metrics="
              + v
              + " is invalid: use auto (MicroProfile Metrics if the server"
              + " has it, else OpenTelemetry), mp, otel or none; default auto");
    }
    return mode;
  }

  /** One cron from pgbus.cron.<name>.*, every value checked with its key named. */
  private static CronJob cron(Reader r, String name) {
    String prefix = SettingKeys.CRON_PREFIX + name + ".";
    String schedule =
        r.string(prefix + "schedule")
            .orElseThrow(
                () ->
                    new InvalidSettingException(
                        "pgbus: cron '"
                            + name
                            + "' is listed in pgbus.crons but "
                            + prefix
                            + "schedule is not set; set it to a cron expression, e.g. "
                            + prefix
                            + "schedule=0 3 * * * (03:00 every day)"));
    String queue =
        r.string(prefix + "queue")
            .orElseThrow(
                () ->
                    new InvalidSettingException(
                        "pgbus: cron '"
                            + name
                            + "' is listed in pgbus.crons but "
                            + prefix
                            + "queue is not set; set it to the queue its jobs go to, e.g. "
                            + prefix
                            + "queue=reports"));
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
          "pgbus: "
              + prefix
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
      throw new InvalidSettingException(
          "pgbus: "
              + prefix
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
      return new CronJob(name, schedule, zone, queue, payload);
    } catch (IllegalArgumentException e) {
      String message = e.getMessage();
      if (message.contains("invalid cron name")) {
        throw new InvalidSettingException("pgbus: pgbus.crons: " + message);
      }
      throw new InvalidSettingException(
          "pgbus: "
              + prefix
              + "schedule="
              + schedule
              + " is invalid: "
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
      throw new InvalidSettingException(
          "pgbus: "
              + SettingKeys.CRON_PREFIX
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
      Arrays.stream(v.get().split(","))
          .map(String::strip)
          .filter(s -> !s.isEmpty())
          .forEach(items::add);
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
          "pgbus: "
              + key
              + "="
              + v.get()
              + " is invalid: use a whole number from "
              + min
              + " to "
              + max
              + " (default "
              + fallback
              + ")");
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
          "pgbus: "
              + key
              + "="
              + v.get()
              + " is invalid: use a number from "
              + min
              + " to "
              + max
              + " (default "
              + fallback
              + ")");
    }

    /** The key's duration within its limits, or its default when unset. */
    Duration duration(Limits.Range range) {
      Duration d = parsedDuration(range, Durations.format(range.fallback()));
      return d == null ? range.fallback() : d;
    }

    /** A duration, or null when the key is unset (the engine then derives a default). */
    Duration durationOrNull(Limits.Range range, String defaultText) {
      return parsedDuration(range, defaultText);
    }

    /** Refuses {@code shorter} when it is longer than {@code longer}, naming both keys. */
    void notLonger(Limits.Range shorter, Duration s, Limits.Range longer, Duration l) {
      if (s.compareTo(l) > 0) {
        throw new InvalidSettingException(
            "pgbus: "
                + shorter.key()
                + "="
                + Durations.format(s)
                + " is longer than "
                + longer.key()
                + "="
                + Durations.format(l)
                + "; "
                + shorter.key()
                + " must not exceed "
                + longer.key()
                + ": shorten the one or lengthen the other");
      }
    }

    /** The key's duration, null when unset; refused outside its range. */
    private Duration parsedDuration(Limits.Range range, String defaultText) {
      String key = range.key();
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return null;
      }
      boolean zeroAllowed = range.min().isZero();
      Duration d =
          zeroAllowed && v.get().strip().equals("0") ? Duration.ZERO : Durations.parse(v.get());
      if (d == null || d.compareTo(range.min()) < 0 || d.compareTo(range.max()) > 0) {
        throw new InvalidSettingException(
            "pgbus: "
                + key
                + "="
                + v.get()
                + " is invalid: use "
                + (zeroAllowed ? "0 (delete at once) or a duration" : "a duration")
                + " from "
                + Durations.format(range.min())
                + " to "
                + Durations.format(range.max())
                + ", written as 500ms, 30s, 5m, 2h, 14d or PT30S"
                + " (default "
                + defaultText
                + ")");
      }
      return d;
    }

    ErrorDetail errorDetail(String key, ErrorDetail fallback) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      try {
        return ErrorDetail.valueOf(v.get().toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new InvalidSettingException(
            "pgbus: "
                + key
                + "="
                + v.get()
                + " is invalid: use stack (the exception with its"
                + " stack trace), message (class and message only) or class (the class only);"
                + " default "
                + fallback.name().toLowerCase(java.util.Locale.ROOT));
      }
    }

    boolean bool(String key, boolean fallback) {
      Optional<String> v = string(key);
      if (v.isEmpty()) {
        return fallback;
      }
      return switch (v.get().toLowerCase(java.util.Locale.ROOT)) {
        case "true" -> true;
        case "false" -> false;
        default ->
            throw new InvalidSettingException(
                "pgbus: "
                    + key
                    + "="
                    + v.get()
                    + " is invalid: use true or false (default "
                    + fallback
                    + ")");
      };
    }
  }
}
