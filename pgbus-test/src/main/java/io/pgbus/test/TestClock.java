package io.pgbus.test;

import io.pgbus.engine.SyncRunner;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * A fixed clock for tests that moves only when told, like db-scheduler's {@code SettableClock}. It
 * starts at the database's {@code now()} and stands still; {@link #advance} moves it forward and,
 * with it, the jobs: every waiting job's {@code run_at} moves back by the same amount, so a job
 * delayed by an hour is due after {@code advance(Duration.ofHours(1))} and not a second before. A
 * {@link TestWorker} built with the clock enqueues cron runs at its instant.
 *
 * <p>Why the jobs move rather than the claim's clock: pgbus's SQL compares with the database's
 * {@code now()} (the claim, retry backoff, snooze, lease), so the kit runs the real statements
 * unchanged and moves the data instead, which is what the passing of time does to a waiting job.
 * What that means:
 *
 * <ul>
 *   <li>The database's clock still runs. A job due within the few seconds the test itself has run
 *       since the clock was made is due too: keep the delays a test steps over well above its run
 *       time (minutes, not milliseconds).
 *   <li>{@link #advance} moves the jobs that are committed when it runs (scheduled and retryable
 *       ones, in every queue); it does not see another transaction's uncommitted jobs.
 *   <li>The {@code run_at} a test reads after an advance is in the database's time: earlier than
 *       when the job was enqueued for. Assert run_at and delays before advancing.
 *   <li>Pass the clock to the code under test (a {@link Clock} parameter) when it computes {@code
 *       withRunAt(...)} instants: they then agree with the delays the database computes.
 * </ul>
 */
public final class TestClock extends Clock {

  private final State state;
  private final ZoneId zone;

  /** Where every view of one clock (see {@link #withZone}) stands. */
  private static final class State {
    private final DataSource dataSource;
    private final Instant start;
    private Duration advanced = Duration.ZERO; // guarded by this

    State(DataSource dataSource, Instant start) {
      this.dataSource = dataSource;
      this.start = start;
    }
  }

  private TestClock(State state, ZoneId zone) {
    this.state = state;
    this.zone = zone;
  }

  /** A clock standing at the database's {@code now()}, in UTC; it moves the jobs of {@code ds}. */
  public static TestClock of(DataSource ds) {
    Objects.requireNonNull(ds, "ds");
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement("SELECT pg_catalog.now()");
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      return new TestClock(new State(ds, rs.getTimestamp(1).toInstant()), ZoneOffset.UTC);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "pgbus-test could not read the database's clock: " + e.getMessage(), e);
    }
  }

  @Override
  public Instant instant() {
    synchronized (state) {
      return state.start.plus(state.advanced);
    }
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  /** The same clock (advancing one advances both), seen in {@code zone}. */
  @Override
  public TestClock withZone(ZoneId zone) {
    return new TestClock(state, Objects.requireNonNull(zone, "zone"));
  }

  /** How far this clock is ahead of where it started. */
  public Duration advanced() {
    synchronized (state) {
      return state.advanced;
    }
  }

  /**
   * Moves the clock forward by {@code d}, and the run_at of every scheduled and retryable job back
   * by as much; returns how many jobs moved. Queues with a job that moved are notified, so workers
   * of a running engine on the same database (an Arquillian deployment) see them too.
   *
   * @throws IllegalArgumentException when {@code d} is negative: time does not go back
   */
  public int advance(Duration d) {
    Objects.requireNonNull(d, "d");
    if (d.isNegative()) {
      throw new IllegalArgumentException(
          "a TestClock only moves forward, but advance got "
              + d
              + ": start a new clock (TestClock.of) to begin again");
    }
    synchronized (state) {
      Map<String, Long> moved;
      try (Connection c = state.dataSource.getConnection()) {
        moved = SyncRunner.shiftWaiting(c, d);
      } catch (SQLException e) {
        throw new IllegalStateException(
            "pgbus-test could not move the waiting jobs by " + d + ": " + e.getMessage(), e);
      }
      state.advanced = state.advanced.plus(d);
      return moved.values().stream().mapToInt(Long::intValue).sum();
    }
  }

  /**
   * Moves the clock forward to {@code t}, as {@link #advance} does.
   *
   * @throws IllegalArgumentException when {@code t} is before the clock's instant
   */
  public int advanceTo(Instant t) {
    Instant now = instant();
    if (t.isBefore(now)) {
      throw new IllegalArgumentException(
          "a TestClock only moves forward: it stands at " + now + ", after " + t);
    }
    return advance(Duration.between(now, t));
  }

  @Override
  public String toString() {
    return "TestClock[" + instant() + ", advanced " + advanced() + "]";
  }
}
