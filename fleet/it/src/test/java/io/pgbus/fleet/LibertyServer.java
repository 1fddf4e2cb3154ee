package io.pgbus.fleet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * An Open Liberty server of the fleet, made from target/fleet/liberty-template (the fleet's
 * server.xml, liberty-config's datasources, pgjdbc in lib/jdbc) with the fleet's EAR in apps/. It
 * runs as {@code bin/server run <name>}, whose process is the server's java process.
 */
final class LibertyServer extends FleetServer {

  /** Liberty's message for an application that was updated in place. */
  private static final String APP_UPDATED = "CWWKZ0003I";

  /** Liberty's messages for an application that started, and one that stopped. */
  private static final String APP_STARTED = "CWWKZ0001I";

  private static final String APP_STOPPED = "CWWKZ0009I";

  private final String serverName;
  private final int httpPort;
  private final int httpsPort;
  private final Path earSource;

  LibertyServer(String name, String serverName, int httpPort, int httpsPort, FleetSettings s) {
    this(
        name, serverName, httpPort, httpsPort, s, s.fleetDir().resolve("apps/pgbus-fleet-ear.ear"));
  }

  /** A server of the EAR {@code earSource}: RollingUpgradeIT's previous and next builds. */
  LibertyServer(
      String name,
      String serverName,
      int httpPort,
      int httpsPort,
      FleetSettings s,
      Path earSource) {
    super(name, s);
    this.serverName = serverName;
    this.httpPort = httpPort;
    this.httpsPort = httpsPort;
    this.earSource = earSource;
  }

  private Path serverDir() {
    return settings.wlpHome().resolve("usr/servers").resolve(serverName);
  }

  private Path ear() {
    return serverDir().resolve("apps/pgbus-fleet.ear");
  }

  @Override
  String kind() {
    return "liberty";
  }

  @Override
  void prepare() throws IOException {
    deleteTree(serverDir());
    copyTree(settings.fleetDir().resolve("liberty-template"), serverDir());
    Files.createDirectories(ear().getParent());
    Files.copy(earSource, ear());
    // Bootstrap properties win over environment variables and liberty-config's defaults.
    Files.write(
        serverDir().resolve("bootstrap.properties"),
        List.of(
            "PGBUS_DB_HOST=" + settings.dbHost(),
            "PGBUS_DB_PORT=" + settings.dbPort(),
            "PGBUS_DB_NAME=" + settings.dbName(),
            "PGBUS_DB_USER=" + settings.dbUser(),
            "PGBUS_DB_PASSWORD=",
            // Ten connections per server (see src/test/wildfly/fleet.cli why).
            "pgbus.datasource.max-pool-size=10",
            "fleet.http.port=" + httpPort,
            "fleet.https.port=" + httpsPort),
        StandardCharsets.UTF_8);
    var options = new java.util.ArrayList<String>();
    options.add("-Xmx" + settings.heap());
    options.add("-Dfleet.server=" + name);
    options.addAll(propertyArguments());
    Files.write(serverDir().resolve("jvm.options"), options, StandardCharsets.UTF_8);
  }

  @Override
  List<String> command() {
    return List.of(settings.wlpHome().resolve("bin/server").toString(), "run", serverName);
  }

  /** {@code bin/server stop <name>}: Liberty's own stop command; returns once it has ended. */
  void serverStop(Duration timeout) throws Exception {
    Process p =
        new ProcessBuilder(settings.wlpHome().resolve("bin/server").toString(), "stop", serverName)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(consoleLog().toFile()))
            .start();
    if (!p.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(name + ": server stop did not return within " + timeout);
    }
  }

  @Override
  Map<String, String> environment() {
    return Map.of();
  }

  @Override
  String readyUrl() {
    return "http://127.0.0.1:" + httpPort + "/health/ready";
  }

  String appUrl() {
    return "http://127.0.0.1:" + httpPort + "/fleet/api";
  }

  @Override
  Path logDir() {
    return serverDir().resolve("logs");
  }

  @Override
  Path ownDir() {
    return settings.wlpHome();
  }

  @Override
  List<Integer> ports() {
    return List.of(httpPort, httpsPort);
  }

  /**
   * Replaces apps/pgbus-fleet.ear with a fresh copy (a rename, so Liberty never reads half a file)
   * and waits for Liberty's "application updated" message.
   */
  @Override
  void redeploy(Duration timeout) throws Exception {
    long updatedBefore = logLines(APP_UPDATED);
    Path next = serverDir().resolve("pgbus-fleet.ear.next");
    Files.copy(earSource, next, StandardCopyOption.REPLACE_EXISTING);
    Files.setLastModifiedTime(next, FileTime.from(Instant.now()));
    Files.move(next, ear(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (logLines(APP_UPDATED) == updatedBefore) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            name
                + " did not report "
                + APP_UPDATED
                + " within "
                + timeout
                + " after its EAR was replaced; see "
                + logDir());
      }
      Thread.sleep(100);
    }
  }

  /** Removes apps/pgbus-fleet.ear: the application monitor stops the application. */
  @Override
  void undeploy(Duration timeout) throws Exception {
    long stoppedBefore = logLines(APP_STOPPED);
    Files.delete(ear());
    awaitLog(
        "no " + APP_STOPPED + " after its EAR was removed",
        timeout,
        () -> logLines(APP_STOPPED) > stoppedBefore);
  }

  /** Puts apps/pgbus-fleet.ear back (a rename), and waits for the application to start. */
  @Override
  void deploy(Duration timeout) throws Exception {
    long startedBefore = logLines(APP_STARTED) + logLines(APP_UPDATED);
    Path next = serverDir().resolve("pgbus-fleet.ear.next");
    Files.copy(
        settings.fleetDir().resolve("apps/pgbus-fleet-ear.ear"),
        next,
        StandardCopyOption.REPLACE_EXISTING);
    Files.move(next, ear(), StandardCopyOption.ATOMIC_MOVE);
    awaitLog(
        "no " + APP_STARTED + " after its EAR came back",
        timeout,
        () -> logLines(APP_STARTED) + logLines(APP_UPDATED) > startedBefore);
  }

  @Override
  Path mainLog() {
    return logDir().resolve("messages.log");
  }
}
