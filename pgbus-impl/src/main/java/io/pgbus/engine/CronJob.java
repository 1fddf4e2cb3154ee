package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.time.ZoneId;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A periodic job from the configuration ({@code pgbus.cron.<name>.*}): at every run of {@code
 * schedule} (evaluated in {@code zone}), the maintenance leader enqueues one job with {@code
 * payloadJson} to {@code queue}. Validated at construction.
 *
 * <p>At start it becomes a schedule in {@code pgbus.schedule} (source {@code config}, misfire
 * policy {@code RUN_ONCE}); see {@link ScheduleEnqueuer} for exactly once, missed runs and leader
 * changes, and docs/operations.md, "Schedules (cron)".
 *
 * @param name identifies the schedule in {@code pgbus.schedule}; a letter, then letters, digits,
 *     '_' or '-', at most 63 characters
 */
public record CronJob(String name, String schedule, ZoneId zone, String queue, String payloadJson) {

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
    QueueNames.require(queue);
    if (payloadJson == null || payloadJson.isBlank() || payloadJson.strip().equals("null")) {
      throw new IllegalArgumentException(
          "cron '" + name + "' has no payload: use a JSON object, or {} for no data");
    }
    try {
      CronSchedule.parse(schedule, zone);
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

  /** A cron in UTC with an empty payload. */
  public static CronJob of(String name, String schedule, String queue) {
    return new CronJob(name, schedule, ZoneId.of("UTC"), queue, "{}");
  }

  CronSchedule parsedSchedule() {
    return CronSchedule.parse(schedule, zone);
  }
}
