package io.pgbus.engine;

import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
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
  private final ZoneRules rules;
  private final ExecutionTime times;
  private final ChronoUnit precision;
  private final boolean fixedTime;

  private CronSchedule(
      String expression, ZoneId zone, ExecutionTime times, ChronoUnit precision, boolean fixed) {
    this.expression = expression;
    this.zone = zone;
    this.rules = zone.getRules();
    this.times = times;
    this.precision = precision;
    this.fixedTime = fixed;
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
    String[] f = unix.split(" ");
    int fields = f.length;
    try {
      if (fields == 5) {
        return new CronSchedule(
            text,
            zone,
            ExecutionTime.forCron(UNIX.parse(unix)),
            ChronoUnit.MINUTES,
            fixed(f[0], f[1]));
      }
      if (fields == 6) {
        return new CronSchedule(
            text,
            zone,
            ExecutionTime.forCron(WITH_SECONDS.parse(unix)),
            ChronoUnit.SECONDS,
            fixed(f[1], f[2]));
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

  /** Vixie cron's test: a job whose minute or hour field starts with '*' is a wildcard job. */
  private static boolean fixed(String minute, String hour) {
    return !minute.startsWith("*") && !hour.startsWith("*");
  }

  /** Whether a wall-clock time in a gap or a repeated hour runs by the fixed-time rules. */
  boolean fixedTime() {
    return fixedTime;
  }

  /**
   * The latest run at or before {@code t}, or null when the schedule has none. Walks back over the
   * zone's offset periods: in each, the wall clock's matches map to the time line one to one (but
   * the second occurrence of a repeated hour, which a fixed-time expression does not run); at a
   * spring-forward gap, a fixed-time match inside it runs at the gap's end.
   */
  Instant latestAtOrBefore(Instant t) {
    Instant at = t.truncatedTo(precision);
    ZoneOffset offset = rules.getOffset(at);
    LocalDateTime wall = LocalDateTime.ofInstant(at, offset);
    LocalDateTime c = matches(wall) ? wall : previous(wall);
    // The change that began the period holding t (one exactly at t included).
    ZoneOffsetTransition tr = rules.previousTransition(at.plusNanos(1));
    while (c != null) {
      LocalDateTime start = tr == null ? null : tr.getDateTimeAfter();
      for (; c != null && (start == null || !c.isBefore(start)); c = previous(c)) {
        if (!secondOccurrence(c, offset)) {
          return c.toInstant(offset);
        }
      }
      if (c == null || tr == null) {
        return null;
      }
      // Back across tr: before it, the wall clock ran up to (not including) getDateTimeBefore().
      if (tr.isGap() && !c.isBefore(tr.getDateTimeBefore())) {
        if (fixedTime) {
          return tr.getInstant();
        }
        c = previous(tr.getDateTimeBefore());
      } else if (tr.isOverlap()) {
        c = previous(tr.getDateTimeBefore());
      }
      offset = tr.getOffsetBefore();
      tr = rules.previousTransition(tr.getInstant());
    }
    return null;
  }

  /** The first run strictly after {@code t}, or null when the schedule has none. */
  Instant nextAfter(Instant t) {
    // Truncated first: runs are whole seconds or minutes. The mirror of latestAtOrBefore.
    Instant at = t.truncatedTo(precision);
    ZoneOffset offset = rules.getOffset(at);
    LocalDateTime c = next(LocalDateTime.ofInstant(at, offset));
    ZoneOffsetTransition tr = rules.nextTransition(at);
    while (c != null) {
      LocalDateTime end = tr == null ? null : tr.getDateTimeBefore();
      for (; c != null && (end == null || c.isBefore(end)); c = next(c)) {
        if (!secondOccurrence(c, offset)) {
          return c.toInstant(offset);
        }
      }
      if (c == null || tr == null) {
        return null;
      }
      // Across tr: after it, the wall clock starts at getDateTimeAfter().
      if (tr.isGap() && c.isBefore(tr.getDateTimeAfter())) {
        if (fixedTime) {
          return tr.getInstant();
        }
        c = atOrAfter(tr.getDateTimeAfter());
      } else if (tr.isOverlap()) {
        c = atOrAfter(tr.getDateTimeAfter());
      }
      offset = tr.getOffsetAfter();
      tr = rules.nextTransition(tr.getInstant());
    }
    return null;
  }

  /** A fixed-time expression runs a repeated wall-clock time only at its first occurrence. */
  private boolean secondOccurrence(LocalDateTime c, ZoneOffset offset) {
    if (!fixedTime) {
      return false;
    }
    ZoneOffsetTransition tr = rules.getTransition(c);
    return tr != null && tr.isOverlap() && offset.equals(tr.getOffsetAfter());
  }

  private LocalDateTime atOrAfter(LocalDateTime c) {
    return matches(c) ? c : next(c);
  }

  // The wall clock's matches: cron-utils in UTC, where no time is missing or repeated.
  private boolean matches(LocalDateTime c) {
    return times.isMatch(c.atZone(ZoneOffset.UTC));
  }

  private LocalDateTime next(LocalDateTime c) {
    return times
        .nextExecution(c.atZone(ZoneOffset.UTC))
        .map(z -> z.truncatedTo(precision).toLocalDateTime())
        .orElse(null);
  }

  private LocalDateTime previous(LocalDateTime c) {
    return times
        .lastExecution(c.atZone(ZoneOffset.UTC))
        .map(z -> z.truncatedTo(precision).toLocalDateTime())
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
