package io.pgbus.engine;

import io.pgbus.AuditEntry;
import io.pgbus.EnqueueOptions;
import io.pgbus.Enqueued;
import io.pgbus.InvalidScheduleException;
import io.pgbus.PgbusException;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import io.pgbus.Schedules;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The schedule operations of {@link Schedules} on a connection the caller owns: the Jakarta adapter
 * passes one enlisted in the caller's JTA transaction, so every change commits or rolls back with
 * it. Nothing here needs a running engine. Every input is checked before the first statement, so a
 * refusal writes nothing and leaves the caller's transaction usable.
 */
public final class ScheduleBook {

  /** How often resume re-reads a schedule that changed under it before it gives up. */
  private static final int RESUME_TRIES = 5;

  private final ScheduleStore store = new ScheduleStore();
  private final AuditStore audit = new AuditStore();
  private final Jobs jobs;
  private final int maxPayloadBytes;

  /**
   * @param jobs enqueues {@link #trigger} runs
   * @param maxPayloadBytes the engine's payload limit ({@code pgbus.max-payload-bytes}): a schedule
   *     whose payload no run could enqueue is refused at once
   */
  public ScheduleBook(Jobs jobs, int maxPayloadBytes) {
    this.jobs = Objects.requireNonNull(jobs);
    this.maxPayloadBytes = maxPayloadBytes;
  }

  /** See {@link Schedules#create}. */
  public Schedule create(Connection c, ScheduleDefinition d, String actor) {
    CronSchedule times = parse(d);
    return sql(
        d.name(),
        "create schedule '" + d.name() + "'",
        () -> {
          Instant next = firstRun(d, times, store.now(c));
          return store
              .scheduleCreate(c, d, next, actor)
              .orElseThrow(
                  () ->
                      new InvalidScheduleException(
                          d.name(),
                          "schedule '"
                              + d.name()
                              + "' exists already: change it with update, or choose another"
                              + " name"))
              .schedule();
        });
  }

  /** See {@link Schedules#update}. */
  public Optional<Schedule> update(Connection c, ScheduleDefinition d, String actor) {
    CronSchedule times = parse(d);
    return sql(
        d.name(),
        "update schedule '" + d.name() + "'",
        () ->
            store
                .scheduleUpdate(c, d, firstRun(d, times, store.now(c)), actor)
                .map(ScheduleStore.Row::schedule));
  }

  /** See {@link Schedules#pause}. */
  public boolean pause(Connection c, String name, String actor) {
    ScheduleDefinition.requireName(name);
    return sql(name, "pause schedule '" + name + "'", () -> store.schedulePause(c, name, actor));
  }

  /** See {@link Schedules#resume}. */
  public boolean resume(Connection c, String name, String actor) {
    ScheduleDefinition.requireName(name);
    return sql(
        name,
        "resume schedule '" + name + "'",
        () -> {
          for (int i = 0; i < RESUME_TRIES; i++) {
            Optional<ScheduleStore.Row> row = store.scheduleGet(c, name);
            if (row.isEmpty()) {
              return false;
            }
            if (!row.get().schedule().paused()) {
              return true;
            }
            requireReadable(row.get().schedule(), "resume");
            Instant next = parse(row.get().definition()).nextAfter(store.now(c));
            if (store.scheduleResume(c, name, row.get().revision(), next, actor)) {
              return true;
            }
          }
          throw new PgbusException(
              "pgbus could not resume schedule '"
                  + name
                  + "': it kept changing while being resumed; try again");
        });
  }

  /** See {@link Schedules#delete}. */
  public boolean delete(Connection c, String name, String actor) {
    ScheduleDefinition.requireName(name);
    return sql(name, "delete schedule '" + name + "'", () -> store.scheduleDelete(c, name, actor));
  }

  /** See {@link Schedules#trigger}. */
  public OptionalLong trigger(Connection c, String name, String actor) {
    return trigger(c, name, actor, null);
  }

  /**
   * See {@link Schedules#trigger}; from the handler of job {@code parentJobId} (null: from none),
   * whose correlation id the run inherits.
   */
  public OptionalLong trigger(Connection c, String name, String actor, Long parentJobId) {
    ScheduleDefinition.requireName(name);
    Optional<ScheduleStore.Row> row =
        sql(name, "read schedule '" + name + "'", () -> store.scheduleGet(c, name));
    if (row.isEmpty()) {
      return OptionalLong.empty();
    }
    requireReadable(row.get().schedule(), "trigger");
    ScheduleDefinition d = row.get().definition();
    Enqueued e = jobs.enqueueIfAbsent(c, runJob(d, null, actor).withParent(parentJobId));
    sql(
        name,
        "audit the trigger of schedule '" + name + "'",
        () -> {
          store.scheduleAuditTrigger(c, name, d.queue(), e.id(), actor);
          return null;
        });
    return OptionalLong.of(e.id());
  }

  /** See {@link Schedules#history}. */
  public List<AuditEntry> history(Connection c, String name, int limit) {
    ScheduleDefinition.requireName(name);
    if (limit < 1 || limit > Schedules.MAX_HISTORY) {
      throw new InvalidScheduleException(
          name,
          "schedule history size " + limit + " is out of range: use 1 to " + Schedules.MAX_HISTORY);
    }
    return sql(
        name,
        "read the history of schedule '" + name + "'",
        () -> audit.auditOfSchedule(c, name, limit));
  }

  /** See {@link Schedules#get}. */
  public Optional<Schedule> get(Connection c, String name) {
    ScheduleDefinition.requireName(name);
    return sql(
        name,
        "read schedule '" + name + "'",
        () -> store.scheduleGet(c, name).map(ScheduleStore.Row::schedule));
  }

  /** See {@link Schedules#list}. */
  public List<Schedule> list(Connection c, String afterName, int limit) {
    if (limit < 1 || limit > Schedules.MAX_PAGE) {
      throw new InvalidScheduleException(
          null, "schedule page size " + limit + " is out of range: use 1 to " + Schedules.MAX_PAGE);
    }
    if (afterName != null) {
      ScheduleDefinition.requireName(afterName);
    }
    return sql(
        null,
        "list the schedules",
        () ->
            store.scheduleList(c, afterName, limit).stream()
                .map(ScheduleStore.Row::schedule)
                .toList());
  }

  /**
   * The job of one run of a schedule: at {@code run} with the run's unique key, or (null) now
   * without one, for a trigger.
   */
  static NewJob runJob(ScheduleDefinition d, Instant run, String actor) {
    EnqueueOptions options = runOptions(d);
    if (run != null) {
      options = options.withRunAt(run).withUniqueKey(ScheduleEnqueuer.runKey(d.name(), run));
    }
    return new NewJob(d.queue(), d.payloadJson(), options, actor);
  }

  /**
   * The job of the leader's run {@code run} that waits on the previous run's job {@code previous}
   * ({@link io.pgbus.OverlapPolicy#QUEUE}): no run_at, it becomes due when that job completed.
   */
  static NewJob runJobAfter(ScheduleDefinition d, Instant run, long previous) {
    EnqueueOptions options =
        runOptions(d).withUniqueKey(ScheduleEnqueuer.runKey(d.name(), run)).afterJobs(previous);
    return new NewJob(d.queue(), d.payloadJson(), options, null);
  }

  private static EnqueueOptions runOptions(ScheduleDefinition d) {
    EnqueueOptions options = EnqueueOptions.defaults().withPriority(d.priority());
    return d.maxAttempts() == null ? options : options.withMaxAttempts(d.maxAttempts());
  }

  /**
   * Parses the definition's expression in its zone, and checks its payload against the engine's
   * limit.
   *
   * @throws InvalidScheduleException naming the expression and the rule
   */
  CronSchedule parse(ScheduleDefinition d) {
    int bytes = d.payloadJson().getBytes(StandardCharsets.UTF_8).length;
    if (bytes > maxPayloadBytes) {
      throw new InvalidScheduleException(
          d.name(),
          "schedule '"
              + d.name()
              + "': the payload has "
              + bytes
              + " bytes, more than pgbus.max-payload-bytes="
              + maxPayloadBytes
              + " allows for its jobs: make it smaller, or raise the limit");
    }
    try {
      return CronSchedule.parse(d.cron(), ZoneId.of(d.zone()));
    } catch (IllegalArgumentException | DateTimeException e) {
      throw new InvalidScheduleException(
          d.name(), "schedule '" + d.name() + "': " + e.getMessage());
    }
  }

  /** The schedule's first run after {@code now}; one that never fires is refused, not stored. */
  private static Instant firstRun(ScheduleDefinition d, CronSchedule times, Instant now) {
    try {
      return times.requireRunAfter(now).nextAfter(now);
    } catch (IllegalArgumentException e) {
      throw new InvalidScheduleException(
          d.name(), "schedule '" + d.name() + "': " + e.getMessage());
    }
  }

  /** Refuses to act on a stored row that cannot run: its values are not known to be sound. */
  private static void requireReadable(Schedule s, String action) {
    if (!s.readable()) {
      throw new InvalidScheduleException(
          s.name(), "cannot " + action + " schedule '" + s.name() + "': " + s.problem());
    }
  }

  private interface Sql<T> {
    T run() throws SQLException;
  }

  private static <T> T sql(String name, String action, Sql<T> work) {
    try {
      return work.run();
    } catch (SQLException e) {
      PgbusException p = Failures.of(null, action, e);
      if (p instanceof io.pgbus.InvalidJobException) {
        throw new InvalidScheduleException(name, p.getMessage());
      }
      throw p;
    }
  }
}
