package io.pgbus.engine;

import io.pgbus.MisfirePolicy;
import io.pgbus.OverlapPolicy;
import io.pgbus.QueueNames;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A periodic job from the configuration ({@code pgbus.cron.<name>.*}): at every run of {@code
 * schedule} (evaluated in {@code zone}), the maintenance leader enqueues one job with {@code
 * payloadJson} to {@code queue}. Validated at construction.
 *
 * <p>At start it becomes a schedule in {@code pgbus.schedule} (source {@code config}); see {@link
 * ScheduleEnqueuer} for exactly once, missed runs and leader changes, and docs/operations.md,
 * "Schedules (cron)".
 *
 * @param name identifies the schedule in {@code pgbus.schedule}; a letter, then letters, digits,
 *     '_' or '-', at most 63 characters
 * @param misfire what runs missed while no leader ran become ({@code pgbus.cron.<name>.misfire},
 *     {@link #parseMisfire}); {@link MisfirePolicy#RUN_ONCE} by default
 * @param catchUpLimit the most missed runs {@link MisfirePolicy#CATCH_UP} enqueues (1 to 1000);
 *     null for the other policies
 * @param overlap what a run does while the previous run's job still waits or runs ({@code
 *     pgbus.cron.<name>.overlap}, {@link #parseOverlap}); {@link OverlapPolicy#ALLOW} by default
 */
public record CronJob(
    String name,
    String schedule,
    ZoneId zone,
    String queue,
    String payloadJson,
    MisfirePolicy misfire,
    Integer catchUpLimit,
    OverlapPolicy overlap) {

  /** The key that sets a cron's misfire policy, after {@code pgbus.cron.<name>.}. */
  public static final String MISFIRE_KEY = "misfire";

  /** The key that sets a cron's overlap policy, after {@code pgbus.cron.<name>.}. */
  public static final String OVERLAP_KEY = "overlap";

  /** The most missed runs a {@code catch-up:<n>} policy may enqueue. */
  public static final int MAX_CATCH_UP = 1000;

  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,62}");

  /** Where a cron's keys start: {@code pgbus.cron.<name>.schedule} and so on. */
  public static final String KEY_PREFIX = "pgbus.cron.";

  /** The key that lists the crons by name. */
  public static final String NAMES_KEY = "pgbus.crons";

  /**
   * Refuses a bad name or schedule with an {@link InvalidConfigException} whose key is {@link
   * #NAMES_KEY} or the cron's {@code schedule} key.
   */
  public CronJob {
    Objects.requireNonNull(name, "cron name");
    if (!NAME.matcher(name).matches()) {
      String problem =
          "invalid cron name '"
              + name
              + "': use a letter followed by letters, digits, '_' or '-',"
              + " at most 63 characters";
      throw new InvalidConfigException(NAMES_KEY, NAMES_KEY + ": " + problem, problem);
    }
    Objects.requireNonNull(zone, "zone");
    Objects.requireNonNull(misfire, "misfire");
    Objects.requireNonNull(overlap, "overlap");
    if ((misfire == MisfirePolicy.CATCH_UP) != (catchUpLimit != null)
        || (catchUpLimit != null && (catchUpLimit < 1 || catchUpLimit > MAX_CATCH_UP))) {
      String key = KEY_PREFIX + name + "." + MISFIRE_KEY;
      throw new InvalidConfigException(
          key,
          key
              + ": policy "
              + misfire
              + " with catch-up limit "
              + catchUpLimit
              + " is invalid: only catch-up takes a limit, 1 to "
              + MAX_CATCH_UP);
    }
    QueueNames.require(queue);
    if (payloadJson == null || payloadJson.isBlank() || payloadJson.strip().equals("null")) {
      throw new IllegalArgumentException(
          "cron '" + name + "' has no payload: use a JSON object, or {} for no data");
    }
    try {
      CronSchedule.parse(schedule, zone).requireRunAfter(Instant.now());
    } catch (IllegalArgumentException e) {
      String key = KEY_PREFIX + name + ".schedule";
      InvalidConfigException refused =
          new InvalidConfigException(
              key,
              key + "=" + schedule + " is invalid: " + e.getMessage(),
              "cron '" + name + "': " + e.getMessage());
      refused.initCause(e);
      throw refused;
    }
  }

  /** A cron whose missed runs get one run ({@link MisfirePolicy#RUN_ONCE}), the default. */
  public CronJob(String name, String schedule, ZoneId zone, String queue, String payloadJson) {
    this(name, schedule, zone, queue, payloadJson, MisfirePolicy.RUN_ONCE, null);
  }

  /** A cron whose runs may overlap ({@link OverlapPolicy#ALLOW}), the default. */
  public CronJob(
      String name,
      String schedule,
      ZoneId zone,
      String queue,
      String payloadJson,
      MisfirePolicy misfire,
      Integer catchUpLimit) {
    this(name, schedule, zone, queue, payloadJson, misfire, catchUpLimit, OverlapPolicy.ALLOW);
  }

  /** A cron in UTC with an empty payload. */
  public static CronJob of(String name, String schedule, String queue) {
    return new CronJob(name, schedule, ZoneId.of("UTC"), queue, "{}");
  }

  /** This cron with the misfire policy {@code text} ({@link #parseMisfire}). */
  public CronJob withMisfire(String text) {
    Misfire m = parseMisfire(name, text);
    return new CronJob(
        name, schedule, zone, queue, payloadJson, m.policy(), m.catchUpLimit(), overlap);
  }

  /** This cron with the overlap policy {@code text} ({@link #parseOverlap}). */
  public CronJob withOverlap(String text) {
    return new CronJob(
        name, schedule, zone, queue, payloadJson, misfire, catchUpLimit, parseOverlap(name, text));
  }

  /**
   * Parses the value of {@code pgbus.cron.<name>.overlap}: {@code allow}, {@code skip}, {@code
   * queue} or {@code cancel-previous} (case, surrounding blanks, and '_' for '-' ignored).
   *
   * @throws InvalidConfigException naming the key, the value and the values allowed
   */
  public static OverlapPolicy parseOverlap(String name, String text) {
    String key = KEY_PREFIX + name + "." + OVERLAP_KEY;
    String v = text == null ? "" : text.strip().toLowerCase(Locale.ROOT).replace('_', '-');
    for (OverlapPolicy p : OverlapPolicy.values()) {
      if (p.name().toLowerCase(Locale.ROOT).replace('_', '-').equals(v)) {
        return p;
      }
    }
    throw new InvalidConfigException(
        key,
        key
            + "="
            + text
            + " is invalid: unknown overlap policy; use allow (runs may overlap, the default),"
            + " skip (a run is skipped while the previous one waits or runs), queue (it waits for"
            + " the previous one) or cancel-previous (the previous one is cancelled), e.g. "
            + key
            + "=skip");
  }

  /** A parsed {@code pgbus.cron.<name>.misfire}: the policy, and the limit of a catch-up. */
  public record Misfire(MisfirePolicy policy, Integer catchUpLimit) {}

  /**
   * Parses the value of {@code pgbus.cron.<name>.misfire}: {@code skip}, {@code run-once} or {@code
   * catch-up:<n>} with n from 1 to {@value #MAX_CATCH_UP} (case and surrounding blanks ignored).
   *
   * @throws InvalidConfigException naming the key, the value and the forms allowed
   */
  public static Misfire parseMisfire(String name, String text) {
    String key = KEY_PREFIX + name + "." + MISFIRE_KEY;
    String v = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
    if (v.equals("skip")) {
      return new Misfire(MisfirePolicy.SKIP, null);
    }
    if (v.equals("run-once")) {
      return new Misfire(MisfirePolicy.RUN_ONCE, null);
    }
    String use =
        "use skip (missed runs are dropped), run-once (one run for all of them, the default) or"
            + " catch-up:<n> (each of the latest n, 1 to "
            + MAX_CATCH_UP
            + "), e.g. "
            + key
            + "=catch-up:5";
    if (v.startsWith("catch-up")) {
      String n = v.substring("catch-up".length());
      if (!n.startsWith(":")) {
        throw misfireProblem(key, text, "catch-up needs the most runs to catch up; " + use);
      }
      int limit;
      try {
        limit = Integer.parseInt(n.substring(1).strip());
      } catch (NumberFormatException e) {
        throw misfireProblem(key, text, "'" + n.substring(1) + "' is not a whole number; " + use);
      }
      if (limit < 1 || limit > MAX_CATCH_UP) {
        throw misfireProblem(key, text, "the catch-up limit " + limit + " is out of range; " + use);
      }
      return new Misfire(MisfirePolicy.CATCH_UP, limit);
    }
    throw misfireProblem(key, text, "unknown misfire policy; " + use);
  }

  private static InvalidConfigException misfireProblem(String key, String value, String problem) {
    return new InvalidConfigException(key, key + "=" + value + " is invalid: " + problem);
  }

  CronSchedule parsedSchedule() {
    return CronSchedule.parse(schedule, zone);
  }
}
