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
 * Kubernetes pod gets), an undeploy and a redeploy on both servers, Liberty's {@code server stop}
 * and WildFly's CLI {@code :shutdown}. Each stop comes while four jobs run: two that end within the
 * drain timeout and two that outlive it. When the stop has ended (the server exited, or the
 * application is gone or replaced), the short ones must be completed and no long one still {@code
 * running} on the stopped engine: each released back to {@code available}, named by id in exactly
 * one line of the server's log. After a restart (or the redeploy, or a deploy after the undeploy)
 * each job must have completed exactly once (one business row, written by the attempt that
 * completed it) with no attempt spent on the stop.
 *
 * <p>Run with {@code mvn -B -pl fleet/it -am verify -Pfleet -Dit.test=StopIT} (under {@code flock
 * /tmp/pgbus-it.lock}): it uses the fleet's database and Liberty A's and WildFly's ports.
 */
class StopIT {

  // The long jobs outlive the drain and the time jboss-cli takes to start (over 20 s on a loaded
  // machine); the lease is raised from the fleet app's 10 s (job timeout 9 s) so that they stay
  // within their timeout. An undeploy or a redeploy needs no CLI: shorter long jobs keep CI time.
  private static final Duration DRAIN = Duration.ofSeconds(4);
  private static final Duration LEASE = Duration.ofSeconds(120);
  private static final int SHORT_MS = 1_000;
  private static final int LONG_MS = 45_000;
  private static final int LONG_IN_SERVER_MS = 15_000;
  private static final Duration START_TIMEOUT = Duration.ofMinutes(4);
  private static final Duration DEPLOY_TIMEOUT = Duration.ofMinutes(3);
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
  void libertyDrainsOnRedeployUndeploySigtermAndServerStop() throws Exception {
    LibertyServer liberty =
        new LibertyServer(
            "liberty-a", "fleetA", settings.libertyAHttp(), settings.libertyAHttps(), settings);
    inServer(liberty, "redeploy", () -> liberty.redeploy(DEPLOY_TIMEOUT), () -> {});
    inServer(
        liberty,
        "undeploy",
        () -> liberty.undeploy(DEPLOY_TIMEOUT),
        () -> liberty.deploy(DEPLOY_TIMEOUT));
    exiting(liberty, "SIGTERM", () -> liberty.stop(Duration.ofSeconds(150)));
    exiting(liberty, "server stop", () -> liberty.serverStop(Duration.ofSeconds(150)));
    liberty.stop(Duration.ofSeconds(60));
  }

  @Test
  void wildflyDrainsOnRedeployUndeploySigtermAndShutdown() throws Exception {
    WildFlyServer wildfly = new WildFlyServer("wildfly", settings);
    inServer(wildfly, "redeploy", () -> wildfly.redeploy(DEPLOY_TIMEOUT), () -> {});
    inServer(
        wildfly,
        "undeploy",
        () -> wildfly.undeploy(DEPLOY_TIMEOUT),
        () -> wildfly.deploy(DEPLOY_TIMEOUT));
    exiting(wildfly, "SIGTERM", () -> wildfly.stop(Duration.ofSeconds(150)));
    exiting(wildfly, ":shutdown", () -> wildfly.cliShutdown(Duration.ofSeconds(150)));
    wildfly.stop(Duration.ofSeconds(60));
  }

  interface Stop {
    void stop() throws Exception;
  }

  /** A stop that ends the server's process; the server is started again afterwards. */
  private static void exiting(FleetServer server, String kind, Stop stop) throws Exception {
    run(
        server,
        kind,
        LONG_MS,
        () -> {
          stop.stop();
          assertTrue(
              server.awaitExit(DRAIN.plusSeconds(60)), server + " still runs after the " + kind);
        },
        () -> start(server));
  }

  /** A stop of the application alone: the server runs on; {@code after} brings it back. */
  private static void inServer(FleetServer server, String kind, Stop stop, Stop after)
      throws Exception {
    run(server, kind, LONG_IN_SERVER_MS, stop, after);
  }

  /** Starts the server (laying it out the first time), runs four jobs, stops, brings it back. */
  private static void run(FleetServer server, String kind, int longMs, Stop stop, Stop back)
      throws Exception {
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
    db.enqueue("fleet", 2, longMs);
    List<Long> ids = ids("id > ?", before);
    List<Long> shortIds = ids("id > ? AND (payload->>'sleepMs')::int = " + SHORT_MS, before);
    List<Long> longIds = ids("id > ? AND (payload->>'sleepMs')::int = " + longMs, before);
    await(
        server + ": all four jobs running before the " + kind,
        Duration.ofSeconds(60),
        () ->
            db.count("SELECT count(*) FROM pgbus.job WHERE id > ? AND state = 'running'", before)
                == 4);
    // The attempt each long job runs before the stop: a claim after it (the redeployed engine's)
    // runs a later one, since a release never takes the attempt back (it grows the budget).
    var stoppedAttempt = new java.util.HashMap<Long, Long>();
    for (long id : longIds) {
      stoppedAttempt.put(id, db.count("SELECT attempt FROM pgbus.job WHERE id = ?", id));
    }

    long t0 = System.nanoTime();
    stop.stop();
    Duration took = Duration.ofNanos(System.nanoTime() - t0);
    System.out.println("[stop] " + server + " " + kind + ": done after " + took.toMillis() + " ms");

    String states = states(ids);
    for (long id : shortIds) {
      assertEquals(
          "completed",
          db.value("SELECT state::text FROM pgbus.job WHERE id = ?", id),
          server + " " + kind + ": a job shorter than the drain finishes; jobs: " + states);
    }
    for (long id : longIds) {
      // Back by the end of the stop: the drain released it. After a redeploy the new engine may
      // have claimed it again already, but the stopped one holds it no more.
      assertEquals(
          0L,
          db.count(
              "SELECT count(*) FROM pgbus.job WHERE id = ? AND state = 'running'"
                  + " AND attempt = ?",
              id,
              stoppedAttempt.get(id).intValue()),
          server + " " + kind + ": a job that outlives the drain is handed back; jobs: " + states);
      // "job 12", not a bare 12: a time stamp or a thread name holds small numbers too.
      Pattern named = Pattern.compile("\\bjob " + id + "\\b");
      assertEquals(
          1L,
          server.mainLogLinesMatching(RELEASED, named),
          server + " " + kind + ": released job " + id + " named once in " + server.mainLog());
    }

    back.stop();
    await(
        server + ": every job completed after the " + kind,
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
