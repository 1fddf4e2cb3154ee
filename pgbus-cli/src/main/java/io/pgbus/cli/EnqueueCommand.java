package io.pgbus.cli;

import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.QueueNames;
import io.pgbus.engine.Durations;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.NewJob;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Set;

/**
 * {@code pgbus enqueue <queue> <json>}: one job through the engine's {@link Jobs}, with the bounds
 * of {@code JobQueue.enqueue} (payload size, run-at horizon, priority, keys) and the OS user and
 * role recorded as who enqueued it.
 */
final class EnqueueCommand implements Command {

  @Override
  public String name() {
    return "enqueue";
  }

  @Override
  public String summary() {
    return "enqueue one job";
  }

  @Override
  public String usageLine() {
    return "pgbus enqueue <queue> <json payload> [--run-at <instant> | --delay <duration>]"
        + " [--priority <n>] [--unique-key <key>] ...";
  }

  @Override
  public String help() {
    return """
        Enqueues one job, as JobQueue.enqueue does, recorded as enqueued by the OS user and the
        database role (cli:<user> (role <role>)). A unique key that a waiting or running job of
        the queue holds enqueues nothing and names that job (exit 0).
          --run-at <instant>          when it may run, e.g. 2026-12-01T03:00:00Z
          --delay <duration>          or how long from now: 500ms, 30s, 5m, 2h, 14d
          --priority <n>              %d (first) to %d; default 0
          --max-attempts <n>          default the queue's pgbus.queue.<name>.max-attempts, else %d
          --unique-key <key>          at most %d characters
          --concurrency-key <key>     the key of the queue's per-key limit
          --correlation-id <id>       at most %d characters
        The payload is one JSON value other than null, within pgbus.max-payload-bytes.
        """
        .formatted(
            EnqueueOptions.MIN_PRIORITY,
            EnqueueOptions.MAX_PRIORITY,
            EnqueueOptions.DEFAULT_MAX_ATTEMPTS,
            EnqueueOptions.MAX_UNIQUE_KEY_LENGTH,
            EnqueueOptions.MAX_CORRELATION_ID_LENGTH);
  }

  @Override
  public Set<String> valueFlags() {
    return Set.of(
        "run-at",
        "delay",
        "priority",
        "max-attempts",
        "unique-key",
        "concurrency-key",
        "correlation-id");
  }

  @Override
  public int run(Invocation in) throws SQLException {
    List<String> p = in.args().exactly(this, "queue", "json payload");
    String queue = QueueNames.require(p.get(0));
    String payload = p.get(1);
    requireJson(payload);
    EnqueueOptions options = options(in.args());
    Jobs jobs = new Jobs(in.settings().engine(), in.settings().cipher());
    Database db = in.database();
    NewJob job = new NewJob(queue, payload, options, db.actor());
    Enqueued e = db.inTransaction(c -> jobs.enqueueIfAbsent(c, job));
    if (in.out().json()) {
      in.out()
          .json(
              Json.createObjectBuilder()
                  .add("id", String.valueOf(e.id()))
                  .add("queue", queue)
                  .add("duplicate", e.duplicate())
                  .build());
    } else if (e.duplicate()) {
      in.out()
          .line(
              "job "
                  + e.id()
                  + " of queue '"
                  + queue
                  + "' holds unique key '"
                  + options.uniqueKey()
                  + "' and waits or runs: nothing enqueued");
    } else {
      in.out().line("enqueued job " + e.id() + " on queue '" + queue + "'");
    }
    return 0;
  }

  private static void requireJson(String payload) {
    try (JsonReader r = Json.createReader(new StringReader(payload))) {
      JsonValue v = r.readValue();
      if (v == JsonValue.NULL) {
        throw CliException.usage("the payload is JSON null: pass an object, or {} for no data");
      }
    } catch (JsonException e) {
      throw CliException.usage(
          "the payload "
              + shorten(payload)
              + " is not one JSON value ("
              + e.getMessage()
              + "): quote it for the shell, e.g. '{\"to\": \"a@example.com\"}'");
    }
  }

  private static String shorten(String s) {
    return s.length() <= 80 ? s : s.substring(0, 80) + "...";
  }

  private static EnqueueOptions options(Args args) {
    EnqueueOptions o = EnqueueOptions.defaults();
    String v;
    if ((v = args.value("run-at")) != null) {
      try {
        o = o.withRunAt(Instant.parse(v));
      } catch (DateTimeParseException e) {
        throw CliException.usage(
            "--run-at "
                + v
                + " is not an instant: write it as 2026-12-01T03:00:00Z (ISO-8601, UTC)");
      }
    }
    if ((v = args.value("delay")) != null) {
      Duration d = Durations.parse(v);
      if (d == null) {
        throw CliException.usage(
            "--delay " + v + " is not a duration: write 500ms, 30s, 5m, 2h, 14d or PT30S");
      }
      o = o.withDelay(d);
    }
    if ((v = args.value("priority")) != null) {
      o = o.withPriority(number("priority", v));
    }
    if ((v = args.value("max-attempts")) != null) {
      o = o.withMaxAttempts(number("max-attempts", v));
    }
    if ((v = args.value("unique-key")) != null) {
      o = o.withUniqueKey(v);
    }
    if ((v = args.value("concurrency-key")) != null) {
      o = o.withConcurrencyKey(v);
    }
    if ((v = args.value("correlation-id")) != null) {
      o = o.withCorrelationId(v);
    }
    return o;
  }

  private static int number(String flag, String v) {
    try {
      return Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      throw CliException.usage("--" + flag + " " + v + " is not a whole number");
    }
  }
}
