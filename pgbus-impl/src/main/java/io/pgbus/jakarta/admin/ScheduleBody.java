package io.pgbus.jakarta.admin;

import io.pgbus.InvalidScheduleException;
import io.pgbus.MisfirePolicy;
import io.pgbus.OverlapPolicy;
import io.pgbus.ScheduleDefinition;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.util.Locale;
import java.util.Set;

/**
 * The body of {@code POST schedules} and {@code POST schedules/{name}} (docs/admin-api.md,
 * "Schedules") read into a {@link ScheduleDefinition}. Strict: unknown fields and wrong types are
 * refused with the field named, before anything is written.
 */
final class ScheduleBody {

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
          "catchUpLimit",
          "overlap");

  private ScheduleBody() {}

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
    String overlap = string(o, "overlap", name);
    return overlap == null ? d : d.withOverlap(overlap(overlap, name));
  }

  private static OverlapPolicy overlap(String text, String name) {
    for (OverlapPolicy p : OverlapPolicy.values()) {
      if (p.name().toLowerCase(Locale.ROOT).equals(text)) {
        return p;
      }
    }
    throw bad(name, "unknown overlap '" + text + "': use allow, skip, queue or cancel_previous");
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
}
