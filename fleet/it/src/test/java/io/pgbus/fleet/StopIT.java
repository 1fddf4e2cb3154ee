package io.pgbus.fleet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every way an operator stops a server drains pgbus's running jobs (issue #32): SIGTERM (what a
 * Kubernetes pod gets) and Liberty's {@code server stop} on Open Liberty, SIGTERM and the CLI's
 * {@code :shutdown} on WildFly. Each stop comes while four jobs run: two that end within the drain
 * timeout and two that outlive it. When the server has exited, the short ones must be completed and
 * the long ones back in {@code available}, released by id in the server's log, none left {@code
 * running}; after a restart each job must have completed exactly once (one business row, written by
 * the attempt that completed it) with no attempt spent on the stop.
 *
 * <p>Run with {@code mvn -B -pl fleet/it -am verify -Pfleet -Dit.test=StopIT} (under {@code flock
 * /tmp/pgbus-it.lock}): it uses the fleet's database and Liberty A's and WildFly's ports.
 */
class StopIT {

  // The long jobs outlive the drain and the time jboss-cli takes to start (over 20 s on a loaded
  // machine); the lease is raised from the fleet app's 10 s (job timeout 9 s) so that they stay
  // within their timeout.
  private static final Duration DRAIN = Duration.ofSeconds(4);
  private static final Duration LEASE = Duration.ofSeconds(120);
  private static final int SHORT_MS = 1_000;
  private static final int LONG_MS = 45_000;
  private static final Duration START_TIMEOUT = Duration.ofMinutes(4);
  private static final String RELEASED = "back to available without spending an attempt";

  private static FleetSettings settings;
  private static FleetDatabase db;
  private static final List<FleetServer> started = new ArrayList<>();

  @BeforeAll
  static void database() throws Exception {
    settings = FleetSettings.fromSystemProperties();
    db = new FleetDatabase(settings);
    db.recreate();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> started.forEach(FleetServer::killAll), "stop-reaper"));
  }

  @AfterAll
  static void stopServers() {
    started.forEach(s -> s.stop(Duration.ofSeconds(60)));
  }

  @Test
  void libertyDrainsOnSigtermAndOnServerStop() throws Exception {
    LibertyServer liberty =
        new LibertyServer(
            "liberty-a", "fleetA", settings.libertyAHttp(), settings.libertyAHttps(), settings);
    run(liberty, "SIGTERM", () -> liberty.stop(Duration.ofSeconds(150)));
    run(liberty, "server stop", () -> liberty.serverStop(Duration.ofSeconds(150)));
    liberty.stop(Duration.ofSeconds(60));
  }

  @Test
  void wildflyDrainsOnSigtermAndOnShutdown() throws Exception {
    WildFlyServer wildfly = new WildFlyServer("wildfly", settings);
    run(wildfly, "SIGTERM", () -> wildfly.stop(Duration.ofSeconds(150)));
    run(wildfly, ":shutdown", () -> wildfly.cliShutdown(Duration.ofSeconds(150)));
    wildfly.stop(Duration.ofSeconds(60));
  }

  interface Stop {
    void stop() throws Exception;
  }

  /** Starts the server (laying it out the first time), runs four jobs, stops it, restarts it. */
  private static void run(FleetServer server, String kind, Stop stop) throws Exception {
    if (!started.contains(server)) {
      server.endLeftOver();
      server.properties.put("pgbus.drain-timeout", DRAIN.toMillis() + "ms");
      server.properties.put("pgbus.lease", LEASE.toSeconds() + "s");
      server.prepare();
      started.add(server);
      start(server);
    }
    long before = db.count("SELECT coalesce(max(id), 0) FROM pgbus.job");
    db.enqueue("fleet", 2, SHORT_MS);
    db.enqueue("fleet", 2, LONG_MS);
    List<Long> ids = ids("id > ?", before);
    List<Long> shortIds = ids("id > ? AND (payload->>'sleepMs')::int = " + SHORT_MS, before);
    List<Long> longIds = ids("id > ? AND (payload->>'sleepMs')::int = " + LONG_MS, before);
    await(
        server + ": all four jobs running before the " + kind,
        Duration.ofSeconds(60),
        () ->
            db.count("SELECT count(*) FROM pgbus.job WHERE id > ? AND state = 'running'", before)
                == 4);
    long released = server.logLines(RELEASED);

    long t0 = System.nanoTime();
    stop.stop();
    assertTrue(server.awaitExit(DRAIN.plusSeconds(60)), server + " still runs after the " + kind);
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    System.out.println(
        "[stop] " + server + " " + kind + ": exited after " + took.toMillis() + " ms");

    String states = states(ids);
    for (long id : shortIds) {
      assertEquals(
          "completed",
          db.value("SELECT state::text FROM pgbus.job WHERE id = ?", id),
          server + " " + kind + ": a job shorter than the drain finishes; jobs: " + states);
    }
    for (long id : longIds) {
      assertEquals(
          "available",
          db.value("SELECT state::text FROM pgbus.job WHERE id = ?", id),
          server + " " + kind + ": a job that outlives the drain is handed back; jobs: " + states);
    }
    assertTrue(
        server.logLines(RELEASED) > released,
        server + " " + kind + ": no line '" + RELEASED + "' in " + server.logDir());
    for (long id : longIds) {
      Pattern named = Pattern.compile("\\b" + id + "\\b");
      assertTrue(
          server.logLinesMatching(RELEASED, named) > 0,
          server + " " + kind + ": released job " + id + " not named in " + server.logDir());
    }

    start(server);
    await(
        server + ": every job completed after the restart",
        Duration.ofSeconds(150),
        () ->
            db.count("SELECT count(*) FROM pgbus.job WHERE id > ? AND state = 'completed'", before)
                == 4);
    for (long id : ids) {
      assertEquals(
          1L,
          db.count("SELECT count(*) FROM fleet_run WHERE job_id = ?", id),
          server + " " + kind + ": job " + id + " committed once");
      assertEquals(
          24L,
          db.count("SELECT max_attempts - attempt FROM pgbus.job WHERE id = ?", id),
          server + " " + kind + ": job " + id + " spent no attempt on the stop; " + states(ids));
    }
  }

  private static void start(FleetServer server) throws Exception {
    server.start();
    server.awaitReady(START_TIMEOUT);
    server.recordJavaPid();
  }

  private static List<Long> ids(String where, long before) throws Exception {
    return db.rows("SELECT id FROM pgbus.job WHERE " + where + " ORDER BY id", before).stream()
        .map(r -> ((Number) r.get(0)).longValue())
        .toList();
  }

  private static String states(List<Long> ids) throws Exception {
    return db.rows(
            "SELECT id, state::text, attempt, max_attempts FROM pgbus.job WHERE id = ANY (?::bigint[])"
                + " ORDER BY id",
            ids.stream().map(String::valueOf).collect(Collectors.joining(",", "{", "}")))
        .toString();
  }

  private static void await(String what, Duration timeout, Check condition) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.holds()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + timeout + " waiting for " + what);
      }
      Thread.sleep(100);
    }
  }

  interface Check {
    boolean holds() throws Exception;
  }
}
