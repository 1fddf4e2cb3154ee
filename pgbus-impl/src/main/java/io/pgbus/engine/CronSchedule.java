package io.pgbus.engine;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A parsed cron expression in a time zone: when its runs are. Parsing and the calendar arithmetic
 * are cron-utils'; this class only picks the dialect and answers the two questions the scheduler
 * asks.
 *
 * <p>Five fields are classic Unix cron ({@code minute hour day-of-month month day-of-week}); six
 * fields put seconds first ({@code second minute hour day-of-month month day-of-week}, Spring's
 * dialect, {@code ?} allowed). The nicknames {@code @yearly}, {@code @annually}, {@code @monthly},
 * {@code @weekly}, {@code @daily}, {@code @midnight} and {@code @hourly} are accepted too.
 */
final class CronSchedule {

  /** How to write a schedule; part of every parse error. */
  static final String RULE =
      "use 5 fields 'minute hour day-of-month month day-of-week' (for example '0 3 * * *' for"
          + " 03:00 every day), 6 fields with seconds first ('*/10 * * * * *': every 10 seconds),"
          + " or @hourly, @daily, @weekly, @monthly, @yearly";

  private static final CronParser UNIX =
      new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
  private static final CronParser WITH_SECONDS =
      new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));

  private static final Map<String, String> NICKNAMES =
      Map.of(
          "@yearly", "0 0 1 1 *",
          "@annually", "0 0 1 1 *",
          "@monthly", "0 0 1 * *",
          "@weekly", "0 0 * * 0",
          "@daily", "0 0 * * *",
          "@midnight", "0 0 * * *",
          "@hourly", "0 * * * *");

  private final String expression;
  private final ZoneId zone;
  private final ExecutionTime times;
  private final ChronoUnit precision;

  private CronSchedule(String expression, ZoneId zone, ExecutionTime times, ChronoUnit precision) {
    this.expression = expression;
    this.zone = zone;
    this.times = times;
    this.precision = precision;
  }

  /**
   * Parses an expression.
   *
   * @throws IllegalArgumentException naming the expression, what is wrong, and the rule
   */
  static CronSchedule parse(String expression, ZoneId zone) {
    Objects.requireNonNull(zone, "zone");
    if (expression == null || expression.isBlank()) {
      throw new IllegalArgumentException("the cron schedule is empty: " + RULE);
    }
    String text = expression.strip().replaceAll("\\s+", " ");
    String unix = NICKNAMES.getOrDefault(text.toLowerCase(Locale.ROOT), text);
    int fields = unix.split(" ").length;
    try {
      if (fields == 5) {
        return new CronSchedule(
            text, zone, ExecutionTime.forCron(UNIX.parse(unix)), ChronoUnit.MINUTES);
      }
      if (fields == 6) {
        return new CronSchedule(
            text, zone, ExecutionTime.forCron(WITH_SECONDS.parse(unix)), ChronoUnit.SECONDS);
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "invalid cron schedule '" + text + "': " + e.getMessage() + "; " + RULE, e);
    }
    throw new IllegalArgumentException(
        "invalid cron schedule '" + text + "': it has " + fields + " field(s); " + RULE);
  }

  String expression() {
    return expression;
  }

  ZoneId zone() {
    return zone;
  }

  /** The latest run at or before {@code t}, or null when the schedule has none. */
  Instant latestAtOrBefore(Instant t) {
    ZonedDateTime at = t.atZone(zone).truncatedTo(precision);
    if (times.isMatch(at)) {
      return at.toInstant();
    }
    return times.lastExecution(at).map(ZonedDateTime::toInstant).orElse(null);
  }

  /** The first run strictly after {@code t}, or null when the schedule has none. */
  Instant nextAfter(Instant t) {
    // Truncated first: cron-utils keeps the fraction of a second it is given in what it returns
    // (after 02:59:59.5 came 03:00:00.5), and runs are whole seconds or minutes.
    ZonedDateTime from = t.atZone(zone).truncatedTo(precision);
    return times
        .nextExecution(from)
        .map(next -> next.truncatedTo(precision).toInstant())
        .orElse(null);
  }

  /**
   * This schedule, when it has a run after {@code t}.
   *
   * @throws IllegalArgumentException naming the expression, when it never fires again (such as
   *     {@code 0 0 31 2 *}, the 31st of February): such a schedule would be stored with no next run
   */
  CronSchedule requireRunAfter(Instant t) {
    if (nextAfter(t) == null) {
      throw new IllegalArgumentException(
          "the cron schedule '"
              + expression
              + "' never fires after "
              + t.truncatedTo(ChronoUnit.SECONDS)
              + " in "
              + zone
              + ": no date matches its day of month, month and day of week together (such as"
              + " the 31st of February); "
              + RULE);
    }
    return this;
  }

  @Override
  public String toString() {
    return expression + " (" + zone + ")";
  }
}
