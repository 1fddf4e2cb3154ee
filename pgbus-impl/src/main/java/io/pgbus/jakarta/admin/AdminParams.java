package io.pgbus.jakarta.admin;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobState;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Function;

/**
 * The admin API's query and path parameters, parsed: each bad one is an {@link
 * InvalidFilterException} that names it, which {@link AdminResource} answers with a 400. Public for
 * the command line (pgbus-cli), whose filter flags carry the same names and bounds.
 */
public final class AdminParams {

  /** The default limit of a bulk action. */
  public static final int DEFAULT_BULK = 1000;

  private AdminParams() {}

  /**
   * The filter of a search or bulk action from its named parameters ({@code id}, {@code ids},
   * {@code error}, {@code queue}, {@code state}, {@code uniqueKey}, {@code payload}, {@code
   * createdFrom}, {@code createdTo}); {@code param} gives null for one that is not set.
   */
  public static JobFilter filter(Function<String, String> param) {
    JobFilter f = JobFilter.all();
    String v;
    if ((v = param.apply("id")) != null) {
      f = f.withId(id(v));
    }
    if ((v = param.apply("ids")) != null) {
      f = f.withIds(ids(v));
    }
    if ((v = param.apply("error")) != null) {
      f = f.withErrorContaining(v);
    }
    if ((v = param.apply("queue")) != null) {
      f = f.withQueue(v);
    }
    if ((v = param.apply("state")) != null) {
      var states = EnumSet.noneOf(JobState.class);
      if (v.length() > 200) {
        throw new InvalidFilterException("state", v, "use at most the 7 state names");
      }
      for (String s : v.split(",", -1)) {
        states.add(JobState.parse(s.strip()));
      }
      f = f.withStates(states);
    }
    if ((v = param.apply("uniqueKey")) != null) {
      f = f.withUniqueKey(v);
    }
    if ((v = param.apply("payload")) != null) {
      f = f.withPayloadContaining(v);
    }
    Instant from = instant("createdFrom", param.apply("createdFrom"));
    Instant to = instant("createdTo", param.apply("createdTo"));
    if (from != null || to != null) {
      f = f.withCreated(from, to);
    }
    return f;
  }

  /** A comma list of job ids: a page's selection, at most {@link JobFilter#MAX_IDS}. */
  static List<Long> ids(String v) {
    // Checked before it is split: a list of 200 ids of up to 19 digits and their commas.
    if (v.length() > JobFilter.MAX_IDS * 20) {
      throw new InvalidFilterException(
          "ids", v.substring(0, 40) + "...", "give 1 to " + JobFilter.MAX_IDS + " job ids");
    }
    var ids = new ArrayList<Long>();
    for (String s : v.split(",", -1)) {
      ids.add(id(s.strip()));
    }
    return ids;
  }

  /** A job id: a positive whole number. */
  public static long id(String v) {
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

  /** A positive whole number, or {@code fallback} when {@code v} is null. */
  public static int positive(String field, String v, int fallback) {
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
