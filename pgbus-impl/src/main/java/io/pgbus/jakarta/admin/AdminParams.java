package io.pgbus.jakarta.admin;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobState;
import jakarta.ws.rs.core.MultivaluedMap;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.EnumSet;

/**
 * The admin API's query and path parameters, parsed: each bad one is an {@link
 * InvalidFilterException} that names it, which {@link AdminResource} answers with a 400.
 */
final class AdminParams {

  private AdminParams() {}

  /** The filter of a search or bulk action, from its query parameters. */
  static JobFilter filter(MultivaluedMap<String, String> q) {
    JobFilter f = JobFilter.all();
    String v;
    if ((v = q.getFirst("id")) != null) {
      f = f.withId(id(v));
    }
    if ((v = q.getFirst("queue")) != null) {
      f = f.withQueue(v);
    }
    if ((v = q.getFirst("state")) != null) {
      var states = EnumSet.noneOf(JobState.class);
      if (v.length() > 200) {
        throw new InvalidFilterException("state", v, "use at most the 7 state names");
      }
      for (String s : v.split(",", -1)) {
        states.add(JobState.parse(s.strip()));
      }
      f = f.withStates(states);
    }
    if ((v = q.getFirst("uniqueKey")) != null) {
      f = f.withUniqueKey(v);
    }
    if ((v = q.getFirst("payload")) != null) {
      f = f.withPayloadContaining(v);
    }
    Instant from = instant("createdFrom", q.getFirst("createdFrom"));
    Instant to = instant("createdTo", q.getFirst("createdTo"));
    if (from != null || to != null) {
      f = f.withCreated(from, to);
    }
    return f;
  }

  static long id(String v) {
    Long id = number("id", v);
    if (id == null || id < 1) {
      throw new InvalidFilterException("id", v, "use a job id, a positive number");
    }
    return id;
  }

  static Long number(String field, String v) {
    if (v == null) {
      return null;
    }
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new InvalidFilterException(field, v, "use a positive whole number");
    }
  }

  static int positive(String field, String v, int fallback) {
    Long n = number(field, v);
    if (n == null) {
      return fallback;
    }
    if (n < 1 || n > Integer.MAX_VALUE) {
      throw new InvalidFilterException(field, v, "use a positive whole number");
    }
    return n.intValue();
  }

  static Instant instant(String field, String v) {
    if (v == null) {
      return null;
    }
    try {
      return Instant.parse(v);
    } catch (DateTimeParseException e) {
      throw new InvalidFilterException(
          field, v, "use an ISO-8601 instant such as 2026-12-01T03:00:00Z");
    }
  }
}
