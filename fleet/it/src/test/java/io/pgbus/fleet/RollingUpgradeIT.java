package io.pgbus.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A rolling upgrade, as a platform rolls a deployment of three replicas with one surge server
 * (issue #25): three Open Liberty servers of the previous release (built from its git ref by
 * src/test/rolling/build-previous) run under a steady load; a server of the next build (main's,
 * plus the test-only expand migration {@code rolling/V9001__rolling_expand.sql}, see {@link
 * NextBuild}) starts, migrates, and once it is ready the first old server gets the graceful stop
 * (SIGTERM); then a second new server starts on the freed ports and the second old one stops, and
 * so on.
 *
 * <p>It proves: no job lost and none doubled (one business row per job, from the attempt that
 * completed it); each old server's readiness UP from its start until its stop began, across the
 * migration (polled every 200 ms, every transition recorded); never two live leaders, and never a
 * leaderless stretch longer than a takeover; the old build still running jobs on the new schema;
 * and the deploy gate ({@code pgbus.deploy-check=fail}) passing on every new server. The second
 * test starts a build that lacks a handler for a queue with waiting jobs: its readiness must be
 * DOWN, naming the queue, while the running servers stay UP.
 *
 * <p>Run with {@code flock /tmp/pgbus-it.lock mvn -B -pl fleet/it -am verify -Pfleet,rolling
 * -Dit.test=RollingUpgradeIT -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false} ({@code
 * ./run-tests --rolling}). Its numbers go to target/fleet/rolling-result.txt (docs/operations.md,
 * "Rolling upgrade", quotes them).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RollingUpgradeIT {

  private static final String QUEUE = "fleet";

  /** A queue no build has a handler for: the gate's failing case. */
  private static final String ORPHAN_QUEUE = "fleet_orphan";

  /**
   * The test-only expand migration the next build carries; {@code -Drolling.migration=} (empty)
   * upgrades between two builds of one schema instead.
   */
  private static final String MIGRATION =
      System.getProperty("rolling.migration", "rolling/V9001__rolling_expand.sql");

  private static final String MIGRATED_VERSION = "9001";

  private static final int RATE = Integer.getInteger("rolling.rate", 1_000);
  private static final int JOB_SLEEP_MS = Integer.getInteger("rolling.job.sleep.ms", 1);
  private static final Duration BEFORE = Duration.ofSeconds(Long.getLong("rolling.before.s", 30));
  private static final Duration AFTER = Duration.ofSeconds(Long.getLong("rolling.after.s", 10));

  /** The first seconds of load are the fleet warming up, not its steady state: not measured. */
  private static final Duration WARM_UP = Duration.ofSeconds(5);

  private static final String DEPLOY_CHECK = System.getProperty("rolling.deploy-check", "fail");
  private static final Duration START_TIMEOUT = Duration.ofMinutes(4);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(90);

  /**
   * The longest a fleet may be without a live leader: a resigning leader NOTIFYs pgbus-leader and a
   * follower elects at once, but a leader whose stop did not resign leaves its lease to run out
   * (3/4 of the app's 4 s TTL) and followers notice at their next tick (a third of the 10 s lease).
   */
  private static final Duration LEADERLESS =
      Duration.ofSeconds(4).multipliedBy(3).dividedBy(4).plus(Duration.ofSeconds(10).dividedBy(3));

  private static FleetSettings settings;
  private static FleetDatabase db;
  private static Path previousEar;
  private static Path nextEar;
  private static String previousRef;
  private static final List<FleetServer> started = new ArrayList<>();
  private static final Map<String, String> REPORT = new LinkedHashMap<>();

  @BeforeAll
  static void builds() throws Exception {
    settings = FleetSettings.fromSystemProperties();
    db = new FleetDatabase(settings);
    Path previousDir = Paths.get(required("rolling.previous.dir"));
    previousEar = previousDir.resolve("pgbus-fleet-ear.ear");
    Properties ref = new Properties();
    try (Reader r =
        Files.newBufferedReader(
            previousDir.resolve("previous.properties"), StandardCharsets.UTF_8)) {
      ref.load(r);
    }
    previousRef = ref.getProperty("ref") + " (" + ref.getProperty("commit") + ")";
    Path mainEar = settings.fleetDir().resolve("apps/pgbus-fleet-ear.ear");
    nextEar =
        MIGRATION.isBlank()
            ? mainEar
            : NextBuild.withMigration(
                mainEar,
                MIGRATION,
                settings.fleetDir().resolve("rolling/next/pgbus-fleet-ear.ear"));
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> List.copyOf(started).forEach(FleetServer::killAll), "rolling-reaper"));
    db.recreate();
    report("previous build", previousRef);
    report(
        "next build",
        "the working tree's fleet EAR" + (MIGRATION.isBlank() ? "" : " + " + MIGRATION));
  }

  @AfterAll
  static void stopServers() throws Exception {
    List<Thread> stops = new ArrayList<>();
    for (FleetServer s : started) {
      Thread t = new Thread(() -> s.stop(Duration.ofSeconds(60)), "stop-" + s);
      t.start();
      stops.add(t);
    }
    for (Thread t : stops) {
      t.join();
    }
    if (settings == null) {
      return;
    }
    List<String> lines = new ArrayList<>();
    REPORT.forEach((k, v) -> lines.add(k + ": " + v));
    Path out = settings.fleetDir().resolve("rolling-result.txt");
    Files.createDirectories(out.getParent());
    Files.write(out, lines, StandardCharsets.UTF_8);
    System.out.println("[rolling] result (" + out + "):");
    lines.forEach(l -> System.out.println("[rolling]   " + l));
  }

  @Test
  @Order(1)
  void threeServersAreReplacedOneByOneUnderLoadWithNoJobLostOrDoubled() throws Exception {
    LibertyServer oldA = server("old-a", 'a', previousEar);
    LibertyServer oldB = server("old-b", 'b', previousEar);
    LibertyServer oldC = server("old-c", 'c', previousEar);
    // The surge server takes the fourth ports; each later one the ports its predecessor freed.
    LibertyServer newD = server("new-d", 'd', nextEar);
    LibertyServer newA = server("new-a", 'a', nextEar);
    LibertyServer newB = server("new-b", 'b', nextEar);
    List<LibertyServer> olds = List.of(oldA, oldB, oldC);
    List<LibertyServer> news = List.of(newD, newA, newB);
    for (LibertyServer s : news) {
      gate(s);
    }
    Map<String, Long> readyAt = new LinkedHashMap<>();
    Map<String, Long> stopAt = new LinkedHashMap<>();

    try (ReadinessWatch watch = new ReadinessWatch().start()) {
      long t0 = System.nanoTime();
      for (LibertyServer s : olds) {
        launch(s);
      }
      for (LibertyServer s : olds) {
        s.awaitReady(START_TIMEOUT);
        s.recordJavaPid();
        readyAt.put(s.name, watch.now());
        watch.watch(s);
      }
      report("old servers start (3 at once, until ready)", seconds(since(t0)));
      String before = installedVersion();
      // Only now: pgbus.leader exists once the first server migrated.
      FleetSampler sampler = new FleetSampler(db).start();

      Object loadStart;
      Object upgradeStart;
      Object upgradeEnd;
      Object loadEnd;
      long enqueued;
      try (LoadProducer load = new LoadProducer(db, QUEUE, RATE, JOB_SLEEP_MS).start()) {
        loadStart = dbNow();
        sampler.phase("before");
        awaitFor(BEFORE);

        sampler.phase("upgrade");
        upgradeStart = dbNow();
        long u0 = System.nanoTime();
        for (int i = 0; i < olds.size(); i++) {
          LibertyServer next = news.get(i);
          LibertyServer old = olds.get(i);
          long s0 = System.nanoTime();
          launch(next);
          next.awaitReady(START_TIMEOUT);
          next.recordJavaPid();
          Duration ready = since(s0);
          readyAt.put(next.name, watch.now());
          watch.watch(next);
          if (i == 0 && !MIGRATION.isBlank()) {
            assertEquals(
                MIGRATED_VERSION,
                installedVersion(),
                next + " must have migrated the schema from " + before);
          }
          stopAt.put(old.name, watch.now());
          long k0 = System.nanoTime();
          old.stop(STOP_TIMEOUT);
          Duration stopped = since(k0);
          assertTrue(
              stopped.compareTo(STOP_TIMEOUT) < 0,
              old + " did not stop within " + STOP_TIMEOUT + ": it was killed");
          watch.unwatch(old);
          report(
              "step " + (i + 1),
              next
                  + " ready "
                  + seconds(ready)
                  + " after its start; "
                  + old
                  + " stopped (SIGTERM, drain) in "
                  + seconds(stopped)
                  + "; "
                  + waiting()
                  + " jobs waiting");
        }
        Duration upgrade = since(u0);
        upgradeEnd = dbNow();
        report(
            "rolling upgrade of 3 servers",
            seconds(upgrade)
                + " (first new server started to last old server stopped), under "
                + RATE
                + " jobs/s");

        sampler.phase("after");
        awaitFor(AFTER);
        loadEnd = dbNow();
        load.close();
        enqueued = load.enqueued();
      }
      report("schema", before + " -> " + installedVersion());
      await(
          "all " + enqueued + " jobs completed",
          Duration.ofMinutes(5),
          () -> db.count("SELECT count(*) FROM pgbus.job WHERE state = 'completed'") == enqueued);

      // 0 lost, 0 doubled: every enqueued job completed, with one business row from that attempt.
      assertEquals(enqueued, db.count("SELECT count(*) FROM pgbus.job WHERE queue = ?", QUEUE));
      assertEquals(
          enqueued,
          db.count("SELECT count(*) FROM fleet_run WHERE queue = ?", QUEUE),
          "business rows: a job committed twice, or one committed none");
      assertEquals(
          enqueued,
          db.count("SELECT count(DISTINCT job_id) FROM fleet_run WHERE queue = ?", QUEUE));
      assertEquals(
          0,
          db.count(
              "SELECT count(*) FROM fleet_run r JOIN pgbus.job j ON j.id = r.job_id"
                  + " WHERE r.attempt <> j.attempt"),
          "a business row of an attempt that did not complete its job committed");
      report("exactly once", enqueued + " jobs enqueued, completed and committed once each");
      report("jobs per server", perServer().toString());

      // The old build ran jobs on the new schema, not only answered its probe: after the moment
      // the next build's migration was recorded (its first server's, or the upgrade's start
      // when it carries none).
      long oldOnNew =
          db.count(
              "SELECT count(*) FROM fleet_run WHERE server LIKE 'old-%' AND committed >"
                  + " coalesce((SELECT installed_on FROM pgbus.schema_history WHERE version = ?),"
                  + " ?::timestamptz)",
              MIGRATED_VERSION, upgradeStart);
      assertTrue(oldOnNew > 0, "no old server ran a job after the new build migrated");
      report("old servers on the new schema", oldOnNew + " jobs run after the migration");

      List<ReadinessWatch.Poll> polls = watch.polls();
      report(
          "readiness transitions",
          watch.transitions().stream()
              .map(p -> p.atMillis() + " ms " + p.server() + " " + p.state())
              .collect(Collectors.joining("; ")));
      for (LibertyServer s : olds) {
        List<ReadinessWatch.Poll> mine =
            polls.stream().filter(p -> p.server().equals(s.name)).toList();
        List<ReadinessWatch.Poll> notUp =
            mine.stream()
                .filter(
                    p -> p.atMillis() >= readyAt.get(s.name) && p.atMillis() < stopAt.get(s.name))
                .filter(p -> !p.state().equals("UP"))
                .toList();
        assertTrue(
            notUp.isEmpty(),
            s + ": readiness not UP before its stop (" + notUp.size() + " polls): " + notUp);
        report(s + " readiness", mine.size() + " polls, UP in each until its stop began");
      }
      for (LibertyServer s : news) {
        List<ReadinessWatch.Poll> notUp =
            polls.stream()
                .filter(p -> p.server().equals(s.name) && !p.state().equals("UP"))
                .toList();
        assertTrue(notUp.isEmpty(), s + ": readiness not UP once ready: " + notUp);
      }
      report(
          "deploy gate",
          "pgbus.deploy-check=" + DEPLOY_CHECK + " on each new server: each ready, UP throughout");

      sampler.close();
      checkLeaders(sampler.samples());

      report("claim latency and throughput before", window(loadStart, upgradeStart, true));
      report("claim latency and throughput during", window(upgradeStart, upgradeEnd, false));
      report("claim latency and throughput after", window(upgradeEnd, loadEnd, false));
    }
  }

  @Test
  @Order(2)
  void aBuildWithoutAHandlerForAQueueWithWaitingJobsFailsTheGate() throws Exception {
    db.enqueue(ORPHAN_QUEUE, 20, 0);
    LibertyServer gated = server("gated-c", 'c', nextEar);
    gate(gated);
    List<FleetServer> running = started.stream().filter(FleetServer::alive).toList();
    try (ReadinessWatch watch = new ReadinessWatch().start()) {
      running.forEach(watch::watch);
      watch.watch(gated);
      launch(gated);
      await(
          gated + " readiness DOWN naming " + ORPHAN_QUEUE,
          START_TIMEOUT,
          () -> {
            List<ReadinessWatch.Poll> mine =
                watch.polls().stream().filter(p -> p.server().equals(gated.name)).toList();
            if (mine.stream().anyMatch(p -> p.state().equals("UP"))) {
              throw new AssertionError(
                  gated
                      + " turned ready although "
                      + ORPHAN_QUEUE
                      + " has waiting jobs and no handler anywhere: the deploy gate passed it");
            }
            return mine.stream()
                .anyMatch(p -> p.state().equals("DOWN") && p.body().contains(ORPHAN_QUEUE));
          });
      long downAt = watch.now();
      // It stays DOWN: a platform waiting for it to be ready never removes an old server.
      awaitFor(Duration.ofSeconds(10));
      List<ReadinessWatch.Poll> polls = watch.polls();
      List<ReadinessWatch.Poll> gatedAfter =
          polls.stream()
              .filter(p -> p.server().equals(gated.name) && p.atMillis() >= downAt)
              .toList();
      assertTrue(gatedAfter.size() >= 10, "too few polls of " + gated + ": " + gatedAfter);
      assertTrue(
          gatedAfter.stream().allMatch(p -> p.state().equals("DOWN")),
          gated + " must stay DOWN: " + gatedAfter);
      for (FleetServer s : running) {
        List<ReadinessWatch.Poll> notUp =
            polls.stream()
                .filter(p -> p.server().equals(s.name) && !p.state().equals("UP"))
                .toList();
        assertTrue(notUp.isEmpty(), s + " must stay UP meanwhile: " + notUp);
      }
      String reason = gatedAfter.get(gatedAfter.size() - 1).body();
      report("gate failing", gated + " DOWN: " + reason);
    }
    assertEquals(
        20,
        db.count(
            "SELECT count(*) FROM pgbus.job WHERE queue = ? AND state = 'available' AND attempt = 0",
            ORPHAN_QUEUE),
        "the orphan queue's jobs wait untouched");
    gated.stop(STOP_TIMEOUT);
  }

  /** A Liberty server of {@code ear} on the ports of slot a, b, c or d. */
  private static LibertyServer server(String name, char slot, Path ear) throws IOException {
    int http;
    int https;
    switch (slot) {
      case 'a' -> {
        http = settings.libertyAHttp();
        https = settings.libertyAHttps();
      }
      case 'b' -> {
        http = settings.libertyBHttp();
        https = settings.libertyBHttps();
      }
      case 'c' -> {
        http = settings.libertyCHttp();
        https = settings.libertyCHttps();
      }
      case 'd' -> {
        http = settings.libertyDHttp();
        https = settings.libertyDHttps();
      }
      default -> throw new IllegalArgumentException("no slot " + slot);
    }
    String serverName = "rolling-" + name;
    LibertyServer s = new LibertyServer(name, serverName, http, https, settings, ear);
    s.endLeftOver();
    return s;
  }

  /** Asks the new build to refuse readiness when its deploy check finds a problem. */
  private static void gate(LibertyServer s) {
    if (!DEPLOY_CHECK.isBlank()) {
      s.properties.put("pgbus.deploy-check", DEPLOY_CHECK);
    }
  }

  private static void launch(LibertyServer s) throws Exception {
    s.prepare();
    started.add(s);
    s.start();
  }

  /**
   * Enqueue to start of the completing attempt (its business row, written first thing in the
   * handler, at {@code clock_timestamp()}), of the jobs enqueued in the window; and the jobs
   * completed per second in it.
   */
  private static String window(Object from, Object to, boolean skipWarmUp) throws Exception {
    Object start = from;
    if (skipWarmUp) {
      start = db.value("SELECT ?::timestamptz + ?::interval", from, WARM_UP.toSeconds() + " s");
    }
    List<Object> r =
        db.rows(
                """
                SELECT count(*),
                       percentile_cont(0.5) WITHIN GROUP (ORDER BY ms),
                       percentile_cont(0.99) WITHIN GROUP (ORDER BY ms),
                       max(ms),
                       extract(epoch FROM ?::timestamptz - ?::timestamptz)
                FROM (SELECT extract(epoch FROM r.committed - j.created_at) * 1000 AS ms
                      FROM pgbus.job j JOIN fleet_run r ON r.job_id = j.id AND r.attempt = j.attempt
                      WHERE j.queue = ? AND j.created_at >= ? AND j.created_at < ?) x
                """,
                to,
                start,
                QUEUE,
                start,
                to)
            .get(0);
    long jobs = ((Number) r.get(0)).longValue();
    double secs = ((Number) r.get(4)).doubleValue();
    long done =
        db.count(
            "SELECT count(*) FROM fleet_run WHERE queue = ? AND committed >= ? AND committed < ?",
            QUEUE,
            start,
            to);
    return String.format(
        "%.1f s, %d jobs enqueued (%.0f/s), %.0f completed/s, enqueue to start p50 %.0f ms,"
            + " p99 %.0f ms, max %.0f ms",
        secs,
        jobs,
        jobs / secs,
        done / secs,
        ((Number) r.get(1)).doubleValue(),
        ((Number) r.get(2)).doubleValue(),
        ((Number) r.get(3)).doubleValue());
  }

  /**
   * Never two live leaders; a leaderless stretch no longer than a takeover; and the leaders in
   * turn, each mapped to its server.
   */
  private static void checkLeaders(List<FleetSampler.Sample> samples) throws Exception {
    assertTrue(samples.size() > 100, "too few samples: " + samples.size());
    long longestGap = 0;
    long gapStart = -1;
    boolean seenLeader = false;
    List<String> holders = new ArrayList<>();
    for (FleetSampler.Sample s : samples) {
      assertTrue(s.liveLeaders() <= 1, "two live leaders at " + s);
      if (s.liveLeaders() == 1) {
        seenLeader = true;
        if (gapStart >= 0) {
          longestGap = Math.max(longestGap, s.atMillis() - gapStart);
          gapStart = -1;
        }
        String who = s.holder() + "@" + s.electedAt();
        if (holders.isEmpty() || !holders.get(holders.size() - 1).equals(who)) {
          holders.add(who);
        }
      } else if (seenLeader && gapStart < 0) {
        gapStart = s.atMillis();
      }
    }
    assertTrue(gapStart < 0, "no live leader at the end, since " + gapStart + " ms");
    assertTrue(
        longestGap <= LEADERLESS.toMillis(),
        "the fleet was without a leader for " + longestGap + " ms, more than " + LEADERLESS);
    List<String> named = new ArrayList<>();
    for (String h : holders) {
      named.add(serverOf(h) + " (" + h + ")");
    }
    report(
        "leaders",
        samples.size()
            + " samples, at most 1 live leader in each, longest leaderless stretch "
            + longestGap
            + " ms; in turn: "
            + String.join(", ", named));
  }

  /** The fleet server whose java process the worker id {@code host:pid:suffix} names. */
  private static String serverOf(String holder) {
    String[] parts = holder.split(":");
    if (parts.length >= 2) {
      try {
        long pid = Long.parseLong(parts[1]);
        for (FleetServer s : started) {
          if (s.ran(pid)) {
            return s.name;
          }
        }
      } catch (NumberFormatException e) {
        // Not a default worker id: reported as it is.
      }
    }
    return "?";
  }

  private static Map<String, Long> perServer() throws Exception {
    Map<String, Long> m = new LinkedHashMap<>();
    for (List<Object> r :
        db.rows(
            "SELECT server, count(*) FROM fleet_run WHERE queue = ? GROUP BY server ORDER BY server",
            QUEUE)) {
      m.put((String) r.get(0), ((Number) r.get(1)).longValue());
    }
    return m;
  }

  private static long waiting() throws Exception {
    return db.count("SELECT count(*) FROM pgbus.job WHERE state = 'available'");
  }

  private static String installedVersion() throws Exception {
    return (String)
        db.value(
            "SELECT version FROM pgbus.schema_history WHERE success AND version IS NOT NULL"
                + " ORDER BY installed_rank DESC LIMIT 1");
  }

  private static Object dbNow() throws Exception {
    return db.value("SELECT clock_timestamp()");
  }

  /** A measured window of load: the time itself is what is measured, not a guess at a state. */
  private static void awaitFor(Duration d) throws InterruptedException {
    Thread.sleep(d.toMillis());
  }

  private static void await(String what, Duration timeout, Callable<Boolean> condition)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      Thread.sleep(200);
    }
  }

  private static Duration since(long nanos) {
    return Duration.ofNanos(System.nanoTime() - nanos);
  }

  private static String seconds(Duration d) {
    return String.format("%.1f s", d.toMillis() / 1000.0);
  }

  private static void report(String key, String value) {
    REPORT.put(key, value);
    System.out.println("[rolling] " + key + ": " + value);
  }

  private static String required(String key) {
    String v = System.getProperty(key);
    if (v == null || v.isBlank()) {
      throw new IllegalStateException(
          "system property "
              + key
              + " is not set; run with -Pfleet,rolling (./run-tests --rolling)");
    }
    return v;
  }
}
