package io.pgbus;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.ZoneId;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * What a recurring schedule runs and when: at every run of a cron expression (read in a time zone),
 * one job with a payload and options goes to a queue. Immutable; every value is checked when it is
 * set, with an {@link InvalidScheduleException} that names it and the rule. The cron expression is
 * parsed by {@link Schedules#create} and {@link Schedules#update}.
 *
 * <pre>{@code
 * schedules.create(ScheduleDefinition.of("invoice-acme", "0 6 * * MON-FRI", "invoices")
 *     .inZone("Europe/Berlin")
 *     .withPayloadJson("{\"customer\": \"acme\"}")
 *     .catchingUp(3));
 * }</pre>
 *
 * <p>Bounds: name {@value #NAME_RULE}; expression at most {@value #MAX_CRON_LENGTH} characters;
 * zone an IANA name ({@code Europe/Berlin}) or {@code UTC}, at most {@value #MAX_ZONE_LENGTH}
 * characters; payload one JSON value (not {@code null}) of at most {@value #MAX_PAYLOAD_BYTES}
 * bytes; priority and max attempts as in {@link EnqueueOptions}; catch-up 1 to {@value
 * #MAX_CATCH_UP} runs.
 */
public final class ScheduleDefinition {

  public static final String NAME_RULE =
      "a letter, then letters, digits, '_' or '-', at most 63 characters";
  public static final int MAX_CRON_LENGTH = 200;
  public static final int MAX_ZONE_LENGTH = 64;
  public static final int MAX_PAYLOAD_BYTES = 65536;
  public static final int MAX_CATCH_UP = 1000;

  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,62}");

  private final String name;
  private final String cron;
  private final String zone;
  private final String queue;
  private final String payloadJson;
  private final int priority;
  private final Integer maxAttempts;
  private final MisfirePolicy misfire;
  private final Integer catchUpLimit;
  private final OverlapPolicy overlap;

  private ScheduleDefinition(
      String name,
      String cron,
      String zone,
      String queue,
      String payloadJson,
      int priority,
      Integer maxAttempts,
      MisfirePolicy misfire,
      Integer catchUpLimit,
      OverlapPolicy overlap) {
    this.name = name;
    this.cron = cron;
    this.zone = zone;
    this.queue = queue;
    this.payloadJson = payloadJson;
    this.priority = priority;
    this.maxAttempts = maxAttempts;
    this.misfire = misfire;
    this.catchUpLimit = catchUpLimit;
    this.overlap = overlap;
  }

  /**
   * A schedule in UTC with the payload {@code {}}, default options and {@link
   * MisfirePolicy#RUN_ONCE} and {@link OverlapPolicy#ALLOW}.
   */
  public static ScheduleDefinition of(String name, String cron, String queue) {
    requireName(name);
    if (cron == null || cron.isBlank()) {
      throw new InvalidScheduleException(
          name,
          "schedule '"
              + name
              + "' has no cron expression: give one such as '0 3 * * *' (03:00 every day)");
    }
    String text = cron.strip();
    if (text.length() > MAX_CRON_LENGTH) {
      throw new InvalidScheduleException(
          name,
          "schedule '"
              + name
              + "': the cron expression has "
              + text.length()
              + " characters: use at most "
              + MAX_CRON_LENGTH);
    }
    try {
      QueueNames.require(queue);
    } catch (InvalidJobException e) {
      throw new InvalidScheduleException(name, "schedule '" + name + "': " + e.getMessage());
    }
    return new ScheduleDefinition(
        name, text, "UTC", queue, "{}", 0, null, MisfirePolicy.RUN_ONCE, null, OverlapPolicy.ALLOW);
  }

  /**
   * The values of a stored schedule as they are, none checked: how a row that breaks a rule (an
   * unknown zone written by SQL, say) is shown, so that it can be fixed or deleted. Only for {@link
   * Schedule#definition} of a schedule with a {@link Schedule#problem}; {@link Schedules#create}
   * and {@link Schedules#update} check every value again, and the database refuses what breaks its
   * bounds.
   */
  public static ScheduleDefinition asStored(
      String name,
      String cron,
      String zone,
      String queue,
      String payloadJson,
      int priority,
      Integer maxAttempts,
      MisfirePolicy misfire,
      Integer catchUpLimit) {
    return asStored(
        name,
        cron,
        zone,
        queue,
        payloadJson,
        priority,
        maxAttempts,
        misfire,
        catchUpLimit,
        OverlapPolicy.ALLOW);
  }

  /** {@link #asStored}, with the stored overlap policy (null: not one this build knows). */
  public static ScheduleDefinition asStored(
      String name,
      String cron,
      String zone,
      String queue,
      String payloadJson,
      int priority,
      Integer maxAttempts,
      MisfirePolicy misfire,
      Integer catchUpLimit,
      OverlapPolicy overlap) {
    return new ScheduleDefinition(
        name,
        cron,
        zone,
        queue,
        payloadJson,
        priority,
        maxAttempts,
        misfire,
        catchUpLimit,
        overlap);
  }

  /**
   * Checks a schedule name.
   *
   * @throws InvalidScheduleException naming the value and {@link #NAME_RULE}
   */
  public static String requireName(String name) {
    if (name == null || !NAME.matcher(name).matches()) {
      String shown = name == null ? "(none)" : "'" + cut(name) + "'";
      throw new InvalidScheduleException(
          name, "invalid schedule name " + shown + ": use " + NAME_RULE);
    }
    return name;
  }

  /**
   * The time zone the expression is read in.
   *
   * @param zoneId an IANA zone ({@code Europe/Berlin}), {@code UTC}, or an offset ({@code +02:00})
   */
  public ScheduleDefinition inZone(String zoneId) {
    if (zoneId == null || zoneId.isBlank() || zoneId.length() > MAX_ZONE_LENGTH) {
      throw badZone(zoneId, "use an IANA zone such as 'Europe/Berlin', or 'UTC'");
    }
    try {
      ZoneId.of(zoneId);
    } catch (DateTimeException e) {
      throw badZone(
          zoneId, e.getMessage() + "; use an IANA zone such as 'Europe/Berlin', or 'UTC'");
    }
    return new ScheduleDefinition(
        name,
        cron,
        zoneId,
        queue,
        payloadJson,
        priority,
        maxAttempts,
        misfire,
        catchUpLimit,
        overlap);
  }

  private InvalidScheduleException badZone(String zoneId, String rule) {
    String shown = zoneId == null ? "(none)" : "'" + cut(zoneId) + "'";
    return new InvalidScheduleException(
        name, "schedule '" + name + "': unknown time zone " + shown + ": " + rule);
  }

  /**
   * The payload of each run's job, as JSON text. PostgreSQL checks that it parses.
   *
   * @param json one JSON value, not {@code null}, at most {@value #MAX_PAYLOAD_BYTES} bytes
   */
  public ScheduleDefinition withPayloadJson(String json) {
    if (json == null || json.isBlank() || json.strip().equals("null")) {
      throw new InvalidScheduleException(
          name, "schedule '" + name + "' has no payload: use a JSON object, or {} for no data");
    }
    int bytes = json.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_PAYLOAD_BYTES) {
      throw new InvalidScheduleException(
          name,
          "schedule '"
              + name
              + "': the payload has "
              + bytes
              + " bytes: use at most "
              + MAX_PAYLOAD_BYTES
              + " (store large data elsewhere and pass its key)");
    }
    return new ScheduleDefinition(
        name, cron, zone, queue, json, priority, maxAttempts, misfire, catchUpLimit, overlap);
  }

  /**
   * Each run's job priority, {@value EnqueueOptions#MIN_PRIORITY} to {@value
   * EnqueueOptions#MAX_PRIORITY}.
   */
  public ScheduleDefinition withPriority(int priority) {
    try {
      EnqueueOptions.defaults().withPriority(priority);
    } catch (InvalidJobException e) {
      throw new InvalidScheduleException(name, "schedule '" + name + "': " + e.getMessage());
    }
    return new ScheduleDefinition(
        name,
        cron,
        zone,
        queue,
        payloadJson,
        priority,
        maxAttempts,
        misfire,
        catchUpLimit,
        overlap);
  }

  /** Each run's job attempts (1 to 1000); without it, the queue's or the engine's default. */
  public ScheduleDefinition withMaxAttempts(int maxAttempts) {
    try {
      EnqueueOptions.defaults().withMaxAttempts(maxAttempts);
    } catch (InvalidJobException e) {
      throw new InvalidScheduleException(name, "schedule '" + name + "': " + e.getMessage());
    }
    return new ScheduleDefinition(
        name,
        cron,
        zone,
        queue,
        payloadJson,
        priority,
        maxAttempts,
        misfire,
        catchUpLimit,
        overlap);
  }

  /**
   * {@link MisfirePolicy#SKIP} or {@link MisfirePolicy#RUN_ONCE}; for catch-up see {@link
   * #catchingUp}.
   */
  public ScheduleDefinition withMisfire(MisfirePolicy policy) {
    Objects.requireNonNull(policy, "policy");
    if (policy == MisfirePolicy.CATCH_UP) {
      throw new InvalidScheduleException(
          name, "schedule '" + name + "': CATCH_UP needs its bound: use catchingUp(limit)");
    }
    return new ScheduleDefinition(
        name, cron, zone, queue, payloadJson, priority, maxAttempts, policy, null, overlap);
  }

  /** {@link MisfirePolicy#CATCH_UP}: enqueue up to the latest {@code limit} missed runs. */
  public ScheduleDefinition catchingUp(int limit) {
    if (limit < 1 || limit > MAX_CATCH_UP) {
      throw new InvalidScheduleException(
          name,
          "schedule '"
              + name
              + "': catch-up limit "
              + limit
              + " is out of range: use 1 to "
              + MAX_CATCH_UP
              + " runs");
    }
    return new ScheduleDefinition(
        name,
        cron,
        zone,
        queue,
        payloadJson,
        priority,
        maxAttempts,
        MisfirePolicy.CATCH_UP,
        limit,
        overlap);
  }

  /**
   * What a run does while the previous run's job still waits or runs; see {@link OverlapPolicy}.
   * {@link OverlapPolicy#ALLOW} by default.
   */
  public ScheduleDefinition withOverlap(OverlapPolicy policy) {
    Objects.requireNonNull(policy, "policy");
    return new ScheduleDefinition(
        name, cron, zone, queue, payloadJson, priority, maxAttempts, misfire, catchUpLimit, policy);
  }

  public String name() {
    return name;
  }

  /** The cron expression as given, without surrounding blanks. */
  public String cron() {
    return cron;
  }

  public String zone() {
    return zone;
  }

  public String queue() {
    return queue;
  }

  public String payloadJson() {
    return payloadJson;
  }

  public int priority() {
    return priority;
  }

  /** Null: the queue's or the engine's default. */
  public Integer maxAttempts() {
    return maxAttempts;
  }

  public MisfirePolicy misfire() {
    return misfire;
  }

  public OverlapPolicy overlap() {
    return overlap;
  }

  /** The catch-up bound; null unless {@link #misfire()} is {@link MisfirePolicy#CATCH_UP}. */
  public Integer catchUpLimit() {
    return catchUpLimit;
  }

  private static String cut(String s) {
    return s.length() > 80 ? s.substring(0, 80) + "...(" + s.length() + " chars)" : s;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ScheduleDefinition d
        && name.equals(d.name)
        && cron.equals(d.cron)
        && zone.equals(d.zone)
        && queue.equals(d.queue)
        && payloadJson.equals(d.payloadJson)
        && priority == d.priority
        && Objects.equals(maxAttempts, d.maxAttempts)
        && misfire == d.misfire
        && Objects.equals(catchUpLimit, d.catchUpLimit)
        && overlap == d.overlap;
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        name, cron, zone, queue, payloadJson, priority, maxAttempts, misfire, overlap);
  }

  @Override
  public String toString() {
    return "schedule '"
        + name
        + "' ("
        + cron
        + " in "
        + zone
        + " to queue '"
        + queue
        + "', misfire "
        + misfire
        + (catchUpLimit == null ? "" : " " + catchUpLimit)
        + ", overlap "
        + overlap
        + ")";
  }
}
