package io.pgbus.jakarta;

import io.pgbus.AuditEntry;
import io.pgbus.InvalidScheduleException;
import io.pgbus.MisfirePolicy;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The admin API's JSON for schedules (docs/admin-api.md, "Schedules"): a request body read into a
 * {@link ScheduleDefinition}, a {@link Schedule} written as a map. Strict: unknown fields and wrong
 * types are refused with the field named, before anything is written.
 */
final class ScheduleJson {

  /** The largest body read: the payload bound plus room for the other fields. */
  static final int MAX_BODY_CHARS = ScheduleDefinition.MAX_PAYLOAD_BYTES + 4096;

  private static final Set<String> FIELDS =
      Set.of(
          "name",
          "cron",
          "zone",
          "queue",
          "payload",
          "priority",
          "maxAttempts",
          "misfire",
          "catchUpLimit");

  private ScheduleJson() {}

  /**
   * Reads a definition; {@code pathName} (null for a create) is the name from the URL, which a body
   * may repeat but not contradict.
   */
  static ScheduleDefinition definition(String body, String pathName) {
    if (body == null || body.isBlank()) {
      throw bad(pathName, "the request has no body: send a JSON object with cron and queue");
    }
    if (body.length() > MAX_BODY_CHARS) {
      throw bad(
          pathName,
          "the request body has " + body.length() + " characters: send at most " + MAX_BODY_CHARS);
    }
    JsonObject o;
    try (JsonReader r = Json.createReader(new StringReader(body))) {
      o = r.readObject();
    } catch (JsonException | IllegalStateException e) {
      throw bad(pathName, "the request body is not a JSON object: " + e.getMessage());
    }
    for (String k : o.keySet()) {
      if (!FIELDS.contains(k)) {
        throw bad(pathName, "unknown field '" + k + "': use one of " + FIELDS);
      }
    }
    String name = string(o, "name", pathName);
    if (pathName != null && name != null && !name.equals(pathName)) {
      throw bad(pathName, "the body names '" + name + "' but the URL '" + pathName + "'");
    }
    name = name != null ? name : pathName;
    ScheduleDefinition d =
        ScheduleDefinition.of(name, string(o, "cron", name), string(o, "queue", name));
    String zone = string(o, "zone", name);
    if (zone != null) {
      d = d.inZone(zone);
    }
    JsonValue payload = o.get("payload");
    if (payload != null) {
      d = d.withPayloadJson(payload.toString());
    }
    Integer priority = integer(o, "priority", name);
    if (priority != null) {
      d = d.withPriority(priority);
    }
    Integer attempts = integer(o, "maxAttempts", name);
    if (attempts != null) {
      d = d.withMaxAttempts(attempts);
    }
    String misfire = string(o, "misfire", name);
    Integer limit = integer(o, "catchUpLimit", name);
    MisfirePolicy policy = misfire == null ? MisfirePolicy.RUN_ONCE : policy(misfire, name);
    if (policy == MisfirePolicy.CATCH_UP) {
      if (limit == null) {
        throw bad(
            name,
            "misfire catch_up needs catchUpLimit (1 to " + ScheduleDefinition.MAX_CATCH_UP + ")");
      }
      d = d.catchingUp(limit);
    } else {
      if (limit != null) {
        throw bad(name, "catchUpLimit is only for misfire catch_up");
      }
      d = d.withMisfire(policy);
    }
    return d;
  }

  /**
   * A schedule as the API shows it; the payload is left out when {@code masked}. A stored row that
   * cannot run ({@link Schedule#problem}) is shown with its values as stored, {@code error} {@code
   * "unreadable"} and the {@code problem}; both are null for the others.
   */
  static Map<String, Object> toMap(Schedule s, boolean masked) {
    ScheduleDefinition d = s.definition();
    var m = new LinkedHashMap<String, Object>();
    m.put("name", d.name());
    m.put("cron", d.cron());
    m.put("zone", d.zone());
    m.put("queue", d.queue());
    m.put("payload", masked ? null : d.payloadJson());
    m.put("payloadMasked", masked);
    m.put("priority", d.priority());
    m.put("maxAttempts", d.maxAttempts());
    m.put("misfire", d.misfire() == null ? null : d.misfire().name().toLowerCase(Locale.ROOT));
    m.put("catchUpLimit", d.catchUpLimit());
    m.put("paused", s.paused());
    m.put("lastRun", text(s.lastRun()));
    m.put("nextRun", text(s.nextRun()));
    m.put("source", s.source());
    m.put("updatedAt", text(s.updatedAt()));
    m.put("updatedBy", s.updatedBy());
    m.put("error", s.readable() ? null : "unreadable");
    m.put("problem", s.problem());
    return m;
  }

  /** A schedule's audit entries (newest first), as the admin API shows them on the schedule. */
  static List<Map<String, Object>> history(List<AuditEntry> entries) {
    var out = new ArrayList<Map<String, Object>>(entries.size());
    for (AuditEntry e : entries) {
      var m = new LinkedHashMap<String, Object>();
      m.put("at", text(e.at()));
      m.put("actor", e.actor());
      m.put("action", e.action());
      m.put("queue", e.queue());
      m.put("jobId", e.jobId() == null ? null : String.valueOf(e.jobId()));
      out.add(m);
    }
    return out;
  }

  private static MisfirePolicy policy(String text, String name) {
    for (MisfirePolicy p : MisfirePolicy.values()) {
      if (p.name().toLowerCase(Locale.ROOT).equals(text)) {
        return p;
      }
    }
    throw bad(name, "unknown misfire '" + text + "': use skip, run_once or catch_up");
  }

  private static String string(JsonObject o, String field, String name) {
    JsonValue v = o.get(field);
    if (v == null || v == JsonValue.NULL) {
      return null;
    }
    if (v instanceof JsonString s) {
      return s.getString();
    }
    throw bad(name, "field '" + field + "' must be a string");
  }

  private static Integer integer(JsonObject o, String field, String name) {
    JsonValue v = o.get(field);
    if (v == null || v == JsonValue.NULL) {
      return null;
    }
    if (v instanceof JsonNumber n && n.isIntegral()) {
      try {
        return n.intValueExact();
      } catch (ArithmeticException e) {
        // falls through to the refusal
      }
    }
    throw bad(name, "field '" + field + "' must be a whole number");
  }

  private static InvalidScheduleException bad(String name, String message) {
    return new InvalidScheduleException(name, message);
  }

  private static String text(Instant at) {
    return at == null ? null : at.toString();
  }
}
