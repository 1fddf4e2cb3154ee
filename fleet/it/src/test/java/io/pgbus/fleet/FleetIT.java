package io.pgbus.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Two Open Liberty servers and one WildFly on one PostgreSQL, each running the fleet application
 * (module pgbus-fleet-app: the EAR on Liberty, its WAR on WildFly), driven over SQL as producers
 * would drive them.
 *
 * <p>The first test runs 10,000 jobs through the fleet, enqueued in waves. While they run, it twice
 * kills the maintenance leader's server with SIGKILL and starts it again, and it redeploys the
 * application on a Liberty server and on the WildFly. Every job must complete exactly once (one
 * business row per job, written by the attempt that completed it); after each kill a new leader
 * must take over within the leader TTL, and the dead server's running jobs must be rescued and
 * completed by a later attempt. A sampler checks meanwhile that a fleet with every server up has
 * exactly one live leader and exactly three listener connections, and the servers' logs must hold
 * exactly one election per leader the database saw. The second test pauses a queue through the
 * application on one server and checks that no server claims its jobs until it is resumed.
 *
 * <p>The numbers of the last run go to target/fleet/fleet-result.txt (docs/operations.md, "Fleet
 * test", quotes them).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FleetIT {

  /** Jobs enqueued at the start, before each redeploy, and before the second kill: 10,000. */
  private static final int FIRST_WAVE = 3_000;

  private static final int REDEPLOY_WAVE = 2_500;
  private static final int KILL_WAVE = 2_000;
  private static final int TOTAL = FIRST_WAVE + 2 * REDEPLOY_WAVE + KILL_WAVE;
  private static final int KILL_AFTER = 1_500;
  private static final int PAUSED_JOBS = 300;

  /** What a handler works per job: long enough that a killed server always has jobs running. */
  private static final int JOB_SLEEP_MS = Integer.getInteger("fleet.job.sleep.ms", 50);

  /** As in the application's microprofile-config.properties. */
  private static final Duration LEADER_TTL = Duration.ofSeconds(4);

  private static final Duration LEASE = Duration.ofSeconds(10);
  // A follower learns that the leader's lease ran out from its next tick (pgbus.tick, one statement
  // per tick, issue #14), and under this load every follower holds jobs, so it ticks every
  // heartbeat interval: a third of min(pgbus.heartbeat.ttl, pgbus.lease) = 10 s / 3. A killed
  // leader's lease runs out within 3/4 of the TTL (it renews every quarter), so a new leader within
  // that plus one interval, plus a second for a loaded machine.
  private static final Duration TAKEOVER =
      LEADER_TTL.multipliedBy(3).dividedBy(4).plus(LEASE.dividedBy(3)).plusSeconds(1);
  private static final Duration START_TIMEOUT = Duration.ofMinutes(4);
  private static final String ELECTED = "is now the maintenance leader";

  private static FleetSettings settings;
  private static FleetDatabase db;
  private static LibertyServer libertyA;
  private static LibertyServer libertyB;
  private static WildFlyServer wildfly;
  private static List<FleetServer> servers;
  private static final Map<String, String> REPORT = new LinkedHashMap<>();

  @BeforeAll
  static void startTheFleet() throws Exception {
    settings = FleetSettings.fromSystemProperties();
    db = new FleetDatabase(settings);
    libertyA =
        new LibertyServer(
            "liberty-a", "fleetA", settings.libertyAHttp(), settings.libertyAHttps(), settings);
    libertyB =
        new LibertyServer(
            "liberty-b", "fleetB", settings.libertyBHttp(), settings.libertyBHttps(), settings);
    wildfly = new WildFlyServer("wildfly", settings);
    servers = List.of(libertyA, libertyB, wildfly);
    // Whatever happens to this JVM short of SIGKILL, no server outlives it.
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> servers.forEach(FleetServer::killAll), "fleet-reaper"));
    for (FleetServer s : servers) {
      s.endLeftOver();
    }
    db.recreate();
    for (FleetServer s : servers) {
      s.prepare();
    }
    long t0 = System.nanoTime();
    for (FleetServer s : servers) {
      s.start();
    }
    for (FleetServer s : servers) {
      s.awaitReady(START_TIMEOUT);
      s.recordJavaPid();
    }
    await(
        "three listener connections and one live leader",
        Duration.ofSeconds(60),
        () ->
            listeners() == 3
                && db.count("SELECT count(*) FROM pgbus.leader WHERE expires_at > now()") == 1);
    report("fleet start (3 servers, in parallel, until ready)", seconds(since(t0)));
  }

  @AfterAll
  static void stopTheFleet() throws Exception {
    if (servers == null) {
      return;
    }
    long t0 = System.nanoTime();
    List<Thread> stops = new ArrayList<>();
    for (FleetServer s : servers) {
      Thread t = new Thread(() -> s.stop(Duration.ofSeconds(60)), "stop-" + s);
      t.start();
      stops.add(t);
    }
    for (Thread t : stops) {
      t.join();
    }
    report("fleet stop", seconds(since(t0)));
    List<String> lines = new ArrayList<>();
    REPORT.forEach((k, v) -> lines.add(k + ": " + v));
    Files.createDirectories(settings.fleetDir());
    Files.write(settings.fleetDir().resolve("fleet-result.txt"), lines, StandardCharsets.UTF_8);
    System.out.println("[fleet] result (" + settings.fleetDir().resolve("fleet-result.txt") + "):");
    lines.forEach(l -> System.out.println("[fleet]   " + l));
  }

  @Test
  @Order(1)
  void tenThousandJobsRunExactlyOnceThroughTwoLeaderKillsAndTwoRedeploys() throws Exception {
    long t0 = System.nanoTime();
    List<Kill> kills = new ArrayList<>();
    List<FleetSampler.Sample> samples;
    try (FleetSampler sampler = new FleetSampler(db).start()) {
      db.enqueue("fleet", FIRST_WAVE, JOB_SLEEP_MS);
      await(
          KILL_AFTER + " jobs completed",
          Duration.ofMinutes(3),
          () -> completed("fleet") >= KILL_AFTER);
      kills.add(killTheLeader(sampler, 1));

      // More jobs arrive while a Liberty server redeploys the application.
      Kill first = kills.get(0);
      redeployUnderLoad(sampler, libertyA == first.victim() ? libertyB : libertyA);

      // Whoever leads now: mostly a Liberty server, since the first leader has been the WildFly.
      db.enqueue("fleet", KILL_WAVE, JOB_SLEEP_MS);
      kills.add(killTheLeader(sampler, 2));

      // More jobs while the WildFly redeploys (its listener connection is pooled, unlike
      // Liberty's: docs/wildfly.md).
      redeployUnderLoad(sampler, wildfly);

      await(
          "all " + TOTAL + " jobs completed",
          Duration.ofMinutes(5),
          () -> completed("fleet") == TOTAL);
      report(
          "load",
          TOTAL
              + " jobs in "
              + seconds(since(t0))
              + " (handler "
              + JOB_SLEEP_MS
              + " ms, 3 x 6 slots)");
      samples = sampler.samples();
    }

    // Exactly once: every job completed, one business row each, from the attempt that completed it.
    assertEquals(TOTAL, db.count("SELECT count(*) FROM pgbus.job WHERE queue = 'fleet'"));
    assertEquals(
        TOTAL,
        db.count("SELECT count(*) FROM pgbus.job WHERE queue = 'fleet' AND state = 'completed'"));
    assertEquals(
        TOTAL,
        db.count("SELECT count(*) FROM fleet_run WHERE queue = 'fleet'"),
        "business rows: a job committed twice, or one committed none");
    assertEquals(
        TOTAL, db.count("SELECT count(DISTINCT job_id) FROM fleet_run WHERE queue = 'fleet'"));
    assertEquals(
        0,
        db.count(
            "SELECT count(*) FROM fleet_run r JOIN pgbus.job j ON j.id = r.job_id WHERE r.attempt <> j.attempt"),
        "a business row of an attempt that did not complete its job committed");
    report(
        "exactly once",
        TOTAL + " jobs completed, " + TOTAL + " business rows, each from the completing attempt");

    for (Kill k : kills) {
      // The dead server's attempts: rolled back, the jobs rescued (their errors name the dead
      // worker) and run again by another attempt.
      assertEquals(
          k.stranded().size(),
          db.count(
              "SELECT count(*) FROM pgbus.job j JOIN fleet_run r ON r.job_id = j.id"
                  + " WHERE j.id = ANY(?::bigint[]) AND j.attempt >= 2 AND r.attempt = j.attempt"
                  + " AND j.errors::text LIKE '%' || ? || '%'",
              pgArray(k.stranded()), k.holder()),
          "kill "
              + k.round()
              + ": each job the killed server was running must be rescued and completed by a later attempt");
      assertEquals(
          0,
          db.count(
              "SELECT count(*) FROM fleet_run WHERE job_id = ANY(?::bigint[]) AND pid = ?",
              pgArray(k.stranded()),
              k.pid()),
          "kill " + k.round() + ": a business row of a killed attempt committed");
      assertTrue(
          k.leaderChange().compareTo(TAKEOVER) <= 0,
          "kill "
              + k.round()
              + ": a new leader took "
              + k.leaderChange()
              + ", more than 3/4 of the TTL "
              + LEADER_TTL
              + " plus one heartbeat interval ("
              + TAKEOVER
              + ")");
    }
    report(
        "rescued",
        kills.stream().mapToInt(k -> k.stranded().size()).sum()
            + " jobs of the killed servers, each completed once by a later attempt, none by a killed one");

    Map<String, Long> perServer = perServer("fleet");
    report("jobs per server", perServer.toString());
    for (FleetServer s : servers) {
      assertTrue(perServer.getOrDefault(s.name, 0L) > 0, s + " ran no job: " + perServer);
    }

    // With every server up: exactly one live leader and exactly three listeners, in every sample.
    List<FleetSampler.Sample> allUp =
        samples.stream().filter(s -> s.phase().equals(FleetSampler.ALL_UP)).toList();
    assertTrue(allUp.size() >= 20, "too few samples with every server up: " + allUp.size());
    for (FleetSampler.Sample s : allUp) {
      assertEquals(1, s.liveLeaders(), "live leaders at " + s);
      assertEquals(3, s.listeners(), "listener connections at " + s);
    }
    report(
        "samples (every 100 ms)",
        samples.size()
            + ", "
            + allUp.size()
            + " with every server up: "
            + "1 leader and 3 listeners in each; listeners by phase "
            + listenersByPhase(samples));

    // Every election any server logged is a leadership the database saw, and the other way round:
    // no server believed it led while another held the lease (a flap would show as an extra line).
    LinkedHashSet<String> holders =
        samples.stream()
            .map(FleetSampler.Sample::holder)
            .filter(h -> h != null)
            .collect(Collectors.toCollection(LinkedHashSet::new));
    long elections = 0;
    for (FleetServer s : servers) {
      elections += s.logLines(ELECTED);
    }
    assertEquals(
        holders.size(),
        elections,
        "elections in the servers' logs vs. leaders seen in pgbus.leader " + holders);
    report(
        "leaders",
        holders.size()
            + " in turn ("
            + holders.stream().map(FleetIT::serverOf).toList()
            + "), as many elections logged");
  }

  @Test
  @Order(2)
  void pauseOnOneServerStopsClaimsOnEveryServer() throws Exception {
    assertEquals("true", libertyA.post(libertyA.appUrl() + "/queues/fleet_pause/pause"));
    String pausedBy =
        (String) db.value("SELECT paused_by FROM pgbus.queue_pause WHERE queue = 'fleet_pause'");
    assertEquals(libertyA.javaPid(), pidOf(pausedBy), "paused by " + pausedBy);

    db.enqueue("fleet_pause", PAUSED_JOBS, 0);
    // Wake every server's claim loop again and again: each finds the queue paused.
    Duration window = Duration.ofSeconds(6);
    long end = System.nanoTime() + window.toNanos();
    int wakes = 0;
    while (System.nanoTime() < end) {
      db.execute("SELECT pg_notify('pgbus_fleet_pause', '')");
      wakes++;
      assertEquals(
          0,
          db.count(
              "SELECT count(*) FROM pgbus.job WHERE queue = 'fleet_pause' AND (state <> 'available' OR attempt > 0)"),
          "a server claimed a job of the paused queue");
      Thread.sleep(250);
    }
    assertEquals(0, db.count("SELECT count(*) FROM fleet_run WHERE queue = 'fleet_pause'"));

    long t0 = System.nanoTime();
    assertEquals("true", libertyA.post(libertyA.appUrl() + "/queues/fleet_pause/resume"));
    await(
        "the paused queue's jobs completed",
        Duration.ofSeconds(60),
        () -> completed("fleet_pause") == PAUSED_JOBS);
    Duration drained = since(t0);
    assertEquals(
        PAUSED_JOBS, db.count("SELECT count(*) FROM fleet_run WHERE queue = 'fleet_pause'"));
    assertEquals(
        PAUSED_JOBS,
        db.count("SELECT count(DISTINCT job_id) FROM fleet_run WHERE queue = 'fleet_pause'"));
    report(
        "pause",
        "paused through "
            + libertyA
            + "; "
            + PAUSED_JOBS
            + " jobs, no claim on any server for "
            + window.toSeconds()
            + " s and "
            + wakes
            + " wake-ups; after resume all ran in "
            + seconds(drained)
            + ", per server "
            + perServer("fleet_pause"));
  }

  /** One SIGKILL of the leader's server: who died, its worker id, its jobs, the leader change. */
  private record Kill(
      int round,
      FleetServer victim,
      String holder,
      long pid,
      List<Long> stranded,
      Duration leaderChange) {}

  /**
   * SIGKILL to the maintenance leader's server in the middle of the load; waits for a new leader,
   * starts the server again and waits until its running jobs were rescued and completed elsewhere
   * and it is back with its listener.
   */
  private static Kill killTheLeader(FleetSampler sampler, int round) throws Exception {
    String holder = liveHolder();
    long pid = pidOf(holder);
    FleetServer victim =
        servers.stream()
            .filter(s -> s.runs(pid))
            .findFirst()
            .orElseThrow(
                () ->
                    new AssertionError("the leader " + holder + " is none of the fleet's servers"));
    sampler.phase("failover");
    String label = "kill " + round + ": ";
    report(
        label + "SIGKILL to the leader",
        victim
            + " ("
            + victim.kind()
            + ", pid "
            + pid
            + ") with "
            + waiting("fleet")
            + " jobs waiting");
    String killedAtDb = (String) db.value("SELECT clock_timestamp()::text");
    long killedAt = System.nanoTime();
    victim.kill(pid);
    // The attempts that died with it: still running under its worker id.
    List<Long> stranded =
        longs(
            "SELECT id FROM pgbus.job WHERE state = 'running' AND attempted_by = ? ORDER BY id",
            holder);
    assertFalse(
        stranded.isEmpty(), label + "the killed server had no job running; nothing to rescue");

    String newHolder = awaitNewLeader(holder, LEADER_TTL.plusSeconds(10));
    Duration leaderChange = since(killedAt);
    report(
        label + "new leader",
        seconds(leaderChange)
            + " after the kill (TTL "
            + LEADER_TTL.toSeconds()
            + " s): "
            + serverOf(newHolder));

    // It comes back while the others work.
    sampler.phase("rejoining");
    long restartedAt = System.nanoTime();
    victim.start();
    await(
        label + "the killed server's jobs rescued",
        LEASE.plusSeconds(30),
        () ->
            db.count(
                    "SELECT count(*) FROM pgbus.job WHERE id = ANY(?::bigint[]) AND state = 'running'",
                    pgArray(stranded))
                == 0);
    // Rescue writes its time into the job's errors; by the database's clock, as the kill's.
    Object rescueLatency =
        db.value(
            "SELECT round(extract(epoch FROM max((errors->0->>'at')::timestamptz) - ?::timestamptz)::numeric, 1)"
                + " FROM pgbus.job WHERE id = ANY(?::bigint[])",
            killedAtDb,
            pgArray(stranded));
    await(
        label + "the killed server's jobs completed elsewhere",
        Duration.ofSeconds(60),
        () ->
            db.count(
                    "SELECT count(*) FROM pgbus.job WHERE id = ANY(?::bigint[]) AND state = 'completed'",
                    pgArray(stranded))
                == stranded.size());
    report(
        label + "its running jobs",
        stranded.size()
            + ", rescued "
            + rescueLatency
            + " s after the kill (lease "
            + LEASE.toSeconds()
            + " s), completed "
            + seconds(since(killedAt))
            + " after it (a rescued job queues behind the backlog: its run_at is the rescue's time)");
    victim.awaitReady(START_TIMEOUT);
    victim.recordJavaPid();
    await(label + "three listeners again", Duration.ofSeconds(60), () -> listeners() == 3);
    report(
        label + "restarted", victim + " ready " + seconds(since(restartedAt)) + " after its start");
    sampler.phase(FleetSampler.ALL_UP);
    return new Kill(round, victim, holder, pid, stranded, leaderChange);
  }

  /** Enqueues a wave and redeploys the server's application while the fleet works through it. */
  private static void redeployUnderLoad(FleetSampler sampler, FleetServer server) throws Exception {
    db.enqueue("fleet", REDEPLOY_WAVE, JOB_SLEEP_MS);
    long before = waiting("fleet");
    sampler.phase("redeploy");
    long r0 = System.nanoTime();
    server.redeploy(Duration.ofMinutes(2));
    server.awaitReady(Duration.ofMinutes(2));
    Duration took = since(r0);
    long after = waiting("fleet");
    await(
        "three listeners after the redeploy of " + server,
        Duration.ofSeconds(60),
        () -> listeners() == 3);
    sampler.phase(FleetSampler.ALL_UP);
    assertTrue(
        after > 0,
        "the redeploy of " + server + " was not under load: no job was left when it ended");
    report(
        "redeploy under load: " + server,
        "ready again in "
            + seconds(took)
            + "; jobs waiting: "
            + before
            + " before, "
            + after
            + " after");
  }

  // --- helpers -----------------------------------------------------------------------------

  private static long waiting(String queue) throws Exception {
    return db.count(
        "SELECT count(*) FROM pgbus.job WHERE queue = ? AND state <> 'completed'", queue);
  }

  private static long completed(String queue) throws Exception {
    return db.count(
        "SELECT count(*) FROM pgbus.job WHERE queue = ? AND state = 'completed'", queue);
  }

  private static long listeners() throws Exception {
    return db.count(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            + " AND application_name = 'pgbus-listener'");
  }

  private static String liveHolder() throws Exception {
    String h = (String) db.value("SELECT holder FROM pgbus.leader WHERE expires_at > now()");
    if (h == null) {
      throw new AssertionError("no live maintenance leader");
    }
    return h;
  }

  /** Polls pgbus.leader every 20 ms until a live lease is held by someone else. */
  private static String awaitNewLeader(String old, Duration timeout) throws Exception {
    String[] seen = new String[1];
    await(
        "a new leader",
        timeout,
        () -> {
          seen[0] = (String) db.value("SELECT holder FROM pgbus.leader WHERE expires_at > now()");
          return seen[0] != null && !seen[0].equals(old);
        },
        20);
    return seen[0];
  }

  /** The process id in a worker id: pgbus's default is host:pid:suffix (WorkerIds). */
  private static long pidOf(String workerId) {
    String[] parts = workerId.split(":");
    if (parts.length < 3) {
      throw new AssertionError("worker id " + workerId + " is not host:pid:suffix");
    }
    return Long.parseLong(parts[parts.length - 2]);
  }

  private static String serverOf(String workerId) {
    long pid = pidOf(workerId);
    return servers.stream()
        .filter(s -> s.ran(pid))
        .map(s -> s.runs(pid) ? s.name : s.name + " (killed)")
        .findFirst()
        .orElse("pid " + pid);
  }

  private static Map<String, Long> perServer(String queue) throws Exception {
    Map<String, Long> m = new LinkedHashMap<>();
    for (List<Object> r :
        db.rows(
            "SELECT server, count(*) FROM fleet_run WHERE queue = ? GROUP BY server ORDER BY server",
            queue)) {
      m.put((String) r.get(0), ((Number) r.get(1)).longValue());
    }
    return m;
  }

  private static Map<String, String> listenersByPhase(List<FleetSampler.Sample> samples) {
    Map<String, String> m = new LinkedHashMap<>();
    samples.stream()
        .collect(
            Collectors.groupingBy(
                FleetSampler.Sample::phase, LinkedHashMap::new, Collectors.toList()))
        .forEach(
            (phase, list) -> {
              long min = list.stream().mapToLong(FleetSampler.Sample::listeners).min().orElse(0);
              long max = list.stream().mapToLong(FleetSampler.Sample::listeners).max().orElse(0);
              m.put(phase, min == max ? String.valueOf(min) : min + ".." + max);
            });
    return m;
  }

  private static List<Long> longs(String sql, Object... params) throws Exception {
    return db.rows(sql, params).stream().map(r -> ((Number) r.get(0)).longValue()).toList();
  }

  /** A PostgreSQL array literal of ids, bound as text and cast in the query. */
  private static String pgArray(List<Long> ids) {
    return ids.stream().map(String::valueOf).collect(Collectors.joining(",", "{", "}"));
  }

  private static Duration since(long nanos) {
    return Duration.ofNanos(System.nanoTime() - nanos);
  }

  private static String seconds(Duration d) {
    return String.format(java.util.Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
  }

  private static void report(String key, String value) {
    REPORT.put(key, value);
    System.out.println("[fleet] " + key + ": " + value);
  }

  private static void await(String what, Duration timeout, Callable<Boolean> condition)
      throws Exception {
    await(what, timeout, condition, 100);
  }

  private static void await(
      String what, Duration timeout, Callable<Boolean> condition, long everyMs) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!Boolean.TRUE.equals(condition.call())) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      Thread.sleep(everyMs);
    }
  }
}
