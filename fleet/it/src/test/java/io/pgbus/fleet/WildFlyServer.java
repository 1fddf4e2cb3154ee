package io.pgbus.fleet;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The WildFly of the fleet: the server of target/wildfly, configured at build time by
 * wildfly-config/pgbus.cli and src/test/wildfly/fleet.cli, run by {@code bin/standalone.sh} with
 * every port shifted by the offset. The fleet's WAR is deployed on its own through the deployment
 * scanner, not inside the EAR: WildFly does not register a {@code @Readiness} bean of an EAR's
 * sub-deployment (WFLY-12835, docs/wildfly.md), and FleetIT waits on pgbus's readiness.
 */
final class WildFlyServer extends FleetServer {

  private static final String WAR = "pgbus-fleet-app.war";

  /** WildFly's message for a deployment deployed again in place. */
  private static final String REPLACED = "WFLYSRV0016";

  WildFlyServer(String name, FleetSettings s) {
    super(name, s);
  }

  private Path standalone() {
    return settings.wildflyHome().resolve("standalone");
  }

  private Path deployments() {
    return standalone().resolve("deployments");
  }

  private int port(int base) {
    return base + settings.wildflyPortOffset();
  }

  @Override
  String kind() {
    return "wildfly";
  }

  /** Clears what an earlier run left (deployments, data, logs) and deploys the WAR. */
  @Override
  void prepare() throws IOException {
    for (String dir : List.of("data", "tmp", "log")) {
      deleteTree(standalone().resolve(dir));
    }
    try (var files = Files.list(deployments())) {
      for (Path f : files.filter(p -> p.getFileName().toString().startsWith(WAR)).toList()) {
        Files.delete(f);
      }
    }
    Files.copy(settings.fleetDir().resolve("apps/pgbus-fleet-app.war"), deployments().resolve(WAR));
  }

  /** The management CLI's {@code :shutdown}, as an operator types it; returns once it answered. */
  void cliShutdown(Duration timeout) throws Exception {
    Process p =
        new ProcessBuilder(
                settings.wildflyHome().resolve("bin/jboss-cli.sh").toString(),
                "--connect",
                "--controller=127.0.0.1:" + port(9990),
                "--command=:shutdown")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(consoleLog().toFile()))
            .start();
    if (!p.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(name + ": jboss-cli :shutdown did not return within " + timeout);
    }
  }

  @Override
  List<String> command() {
    var args = new java.util.ArrayList<String>();
    args.addAll(commandBase());
    args.addAll(propertyArguments());
    return args;
  }

  private List<String> commandBase() {
    return List.of(
        settings.wildflyHome().resolve("bin/standalone.sh").toString(),
        "-c",
        "standalone.xml",
        "-b",
        "127.0.0.1",
        "-bmanagement",
        "127.0.0.1",
        "-Djboss.socket.binding.port-offset=" + settings.wildflyPortOffset(),
        "-DPGBUS_DB_HOST=" + settings.dbHost(),
        "-DPGBUS_DB_PORT=" + settings.dbPort(),
        "-DPGBUS_DB_NAME=" + settings.dbName(),
        "-DPGBUS_DB_USER=" + settings.dbUser(),
        // The same WAR as on Liberty: WildFly's JNDI names come from outside it (docs/wildfly.md).
        "-Dpgbus.datasource=java:jboss/datasources/pgbus",
        "-Dpgbus.listener.datasource=java:jboss/datasources/pgbusListener",
        "-Dpgbus.executor=java:jboss/ee/concurrency/executor/pgbus",
        "-Dfleet.server=" + name);
  }

  @Override
  Map<String, String> environment() {
    return Map.of(
        // standalone.conf uses JAVA_OPTS as given instead of its defaults (-Xmx512m).
        "JAVA_OPTS",
        "-Xms64m -Xmx"
            + settings.heap()
            + " -XX:MetaspaceSize=96M -XX:MaxMetaspaceSize=256m"
            + " -Djava.net.preferIPv4Stack=true",
        // The script then runs java in the background and passes SIGTERM on to it.
        "LAUNCH_JBOSS_IN_BACKGROUND",
        "1");
  }

  @Override
  String readyUrl() {
    return "http://127.0.0.1:" + port(9990) + "/health/ready";
  }

  @Override
  Path logDir() {
    return standalone().resolve("log");
  }

  @Override
  Path ownDir() {
    return settings.wildflyHome();
  }

  @Override
  List<Integer> ports() {
    return List.of(port(8080), port(8443), port(9990), port(9993));
  }

  /**
   * Redeploys through the deployment scanner: a {@code .dodeploy} marker beside a deployed WAR
   * makes it deploy the WAR again. Done when the marker is gone and WildFly has logged "Replaced
   * deployment" once more (it leaves the {@code .deployed} marker as it was).
   */
  @Override
  void redeploy(Duration timeout) throws Exception {
    long replacedBefore = logLines(REPLACED);
    Path doDeploy = deployments().resolve(WAR + ".dodeploy");
    Files.createFile(doDeploy);
    long deadline = System.nanoTime() + timeout.toNanos();
    while (Files.exists(doDeploy) || logLines(REPLACED) == replacedBefore) {
      if (Files.exists(deployments().resolve(WAR + ".failed"))) {
        throw new AssertionError(name + ": redeploy of " + WAR + " failed; see " + logDir());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            name
                + ": "
                + WAR
                + " not redeployed within "
                + timeout
                + " (no "
                + REPLACED
                + " in "
                + logDir()
                + ")");
      }
      Thread.sleep(100);
    }
  }

  /**
   * Undeploys through the deployment scanner: deleting the {@code .deployed} marker undeploys the
   * WAR, and the scanner marks it {@code .undeployed} (it does not deploy it again by itself).
   */
  @Override
  void undeploy(Duration timeout) throws Exception {
    Files.delete(deployments().resolve(WAR + ".deployed"));
    Path undeployed = deployments().resolve(WAR + ".undeployed");
    awaitLog("no " + undeployed.getFileName(), timeout, () -> Files.exists(undeployed));
  }

  /** A {@code .dodeploy} marker deploys the WAR again; done once it is marked deployed. */
  @Override
  void deploy(Duration timeout) throws Exception {
    Files.createFile(deployments().resolve(WAR + ".dodeploy"));
    Path deployed = deployments().resolve(WAR + ".deployed");
    Path failed = deployments().resolve(WAR + ".failed");
    awaitLog(
        "no " + deployed.getFileName(),
        timeout,
        () -> {
          if (Files.exists(failed)) {
            throw new AssertionError(name + ": deploy of " + WAR + " failed; see " + logDir());
          }
          return Files.exists(deployed);
        });
  }

  @Override
  Path mainLog() {
    return logDir().resolve("server.log");
  }
}
