package io.pgbus.fleet;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One server of the fleet, run as a child process of the test: laid out, started, probed, killed,
 * stopped and redeployed. Its java process id is what pgbus puts into its worker id ({@code
 * host:pid:suffix}), which is how FleetIT finds the leader's server.
 *
 * <p>The process ids of each start are written to {@code target/fleet/pids/<name>}, so that a later
 * run ends a server an aborted run left behind (only when its command line still names this build's
 * server directory).
 */
abstract class FleetServer {

  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  final String name;
  final FleetSettings settings;
  private Process process;
  private final List<Long> javaPids = new ArrayList<>();

  /** System properties (pgbus settings) given to the server's JVM on top of the fleet's own. */
  final Map<String, String> properties = new java.util.LinkedHashMap<>();

  FleetServer(String name, FleetSettings settings) {
    this.name = name;
    this.settings = settings;
  }

  /** The command that runs the server in the foreground. */
  abstract List<String> command();

  /** Environment variables of the server process. */
  abstract Map<String, String> environment();

  /** The MicroProfile Health readiness URL. */
  abstract String readyUrl();

  /** Where the server writes its log files. */
  abstract Path logDir();

  /** A directory the server's command line names: proves a left-over process is ours. */
  abstract Path ownDir();

  /** The ports the server binds, checked free before it starts. */
  abstract List<Integer> ports();

  /** Lays the server out from scratch: configuration and the application. */
  abstract void prepare() throws IOException;

  /** Redeploys the application in the running server; returns once the server says it is done. */
  abstract void redeploy(Duration timeout) throws Exception;

  /** The server's kind in the report: liberty or wildfly. */
  abstract String kind();

  /**
   * Undeploys the application from the running server; returns once the server says it is gone (its
   * stop, and so pgbus's drain, has ended).
   */
  abstract void undeploy(Duration timeout) throws Exception;

  /** Deploys the application {@link #undeploy} took away; returns once the server says it runs. */
  abstract void deploy(Duration timeout) throws Exception;

  /**
   * The server's own log file (Liberty's messages.log, WildFly's server.log): each line once, where
   * {@link #logDir} may hold copies (Liberty's console.log repeats warnings and System.err).
   */
  abstract Path mainLog();

  final Path consoleLog() {
    return settings.fleetDir().resolve("logs").resolve(name + ".console.log");
  }

  private Path pidFile() {
    return settings.fleetDir().resolve("pids").resolve(name);
  }

  /** Starts the server process; {@link #awaitReady} waits for it. */
  final void start() throws IOException {
    for (int port : ports()) {
      requireFree(port);
    }
    Files.createDirectories(consoleLog().getParent());
    ProcessBuilder pb = new ProcessBuilder(command());
    // The fleet's servers take their settings from their own files and arguments only.
    pb.environment().keySet().removeIf(k -> k.startsWith("PGBUS_"));
    pb.environment().putAll(environment());
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(consoleLog().toFile()));
    process = pb.start();
    recordPids();
  }

  /**
   * Waits up to 90 s for the port to be free: a connection the previous run's server closed may
   * linger for up to 60 s, and a port moved into Linux's ephemeral range (32768-60999) may be held
   * for a while by a client connection of anything on the machine.
   */
  private void requireFree(int port) {
    long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
    while (true) {
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress("127.0.0.1", port));
        return;
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              name
                  + ": port "
                  + port
                  + " on 127.0.0.1 is taken; stop what holds it (ss -tanp |"
                  + " grep :"
                  + port
                  + "), or give the fleet other ports (fleet/it/pom.xml,"
                  + " fleet.*.port properties)",
              e);
        }
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for port " + port, e);
      }
    }
  }

  /** The server's java processes: the process itself and its descendants (a launcher script's). */
  final List<ProcessHandle> processes() {
    if (process == null) {
      return List.of();
    }
    List<ProcessHandle> all = new ArrayList<>();
    process.toHandle().descendants().forEach(all::add);
    all.add(process.toHandle());
    return all;
  }

  final boolean alive() {
    return process != null && process.isAlive();
  }

  /** Whether {@code pid} is one of this server's processes. */
  final boolean runs(long pid) {
    return processes().stream().anyMatch(p -> p.pid() == pid && p.isAlive());
  }

  /** The pid pgbus reports for this server: the java process (not a launcher script). */
  final long javaPid() {
    return processes().stream()
        .filter(p -> p.info().command().map(c -> c.endsWith("/java")).orElse(false))
        .mapToLong(ProcessHandle::pid)
        .findFirst()
        .orElseThrow(() -> new IllegalStateException(name + " has no java process"));
  }

  /** Waits for {@code /health/ready} to answer 200 with pgbus's check in it. */
  final Duration awaitReady(Duration timeout) throws Exception {
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    String last = "no answer yet";
    while (System.nanoTime() < deadline) {
      if (!alive()) {
        throw new AssertionError(
            name
                + " exited with "
                + process.exitValue()
                + " before it was ready; see "
                + consoleLog()
                + " and "
                + logDir());
      }
      try {
        HttpResponse<String> r =
            HTTP.send(
                HttpRequest.newBuilder(URI.create(readyUrl()))
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        last = r.statusCode() + " " + r.body();
        // The aggregate must be UP and include pgbus's own check, not only the server's.
        if (r.statusCode() == 200 && r.body().contains("\"pgbus\"")) {
          return Duration.ofNanos(System.nanoTime() - start);
        }
      } catch (IOException e) {
        last = e.toString();
      }
      Thread.sleep(250);
    }
    throw new AssertionError(
        name
            + " not ready after "
            + timeout
            + " at "
            + readyUrl()
            + ": "
            + last
            + "; see "
            + consoleLog());
  }

  /** POSTs to the application; returns the body, failing on a status other than 200. */
  final String post(String url) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new AssertionError(
          "POST " + url + " on " + name + ": " + r.statusCode() + " " + r.body());
    }
    return r.body().strip();
  }

  /** SIGKILL to the given process of this server, then waits until the whole server is gone. */
  final void kill(long pid) throws Exception {
    ProcessHandle victim =
        ProcessHandle.of(pid).orElseThrow(() -> new IllegalStateException("no process " + pid));
    if (!runs(pid)) {
      throw new IllegalStateException("process " + pid + " is not part of " + name);
    }
    List<ProcessHandle> rest = processes();
    victim.destroyForcibly(); // SIGKILL on Linux
    victim.onExit().get(30, TimeUnit.SECONDS);
    // A launcher script ends once its java is gone; whatever is left is ended as well.
    for (ProcessHandle p : rest) {
      if (p.isAlive() && p.pid() != pid) {
        p.destroyForcibly();
      }
    }
    process.waitFor(30, TimeUnit.SECONDS);
  }

  /**
   * Stops the server: SIGTERM to each of its processes (both servers shut down in order on it),
   * then SIGKILL to what is still alive after the timeout.
   */
  final void stop(Duration timeout) {
    List<ProcessHandle> all = processes();
    all.forEach(ProcessHandle::destroy);
    long deadline = System.nanoTime() + timeout.toNanos();
    for (ProcessHandle p : all) {
      long left = Math.max(1, deadline - System.nanoTime());
      try {
        p.onExit().get(left, TimeUnit.NANOSECONDS);
      } catch (Exception e) {
        p.destroyForcibly();
      }
    }
  }

  /** Waits up to {@code timeout} for every process of this server to end; false if one lives. */
  final boolean awaitExit(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (processes().stream().anyMatch(ProcessHandle::isAlive)) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(20);
    }
    return true;
  }

  /** The properties as JVM arguments. */
  final List<String> propertyArguments() {
    return properties.entrySet().stream().map(e -> "-D" + e.getKey() + "=" + e.getValue()).toList();
  }

  /** Ends, at once, every process of this server: the shutdown hook's last resort. */
  final void killAll() {
    processes().forEach(ProcessHandle::destroyForcibly);
  }

  private void recordPids() throws IOException {
    Files.createDirectories(pidFile().getParent());
    List<String> pids = new ArrayList<>();
    pids.add(String.valueOf(process.pid()));
    Files.write(pidFile(), pids, StandardCharsets.UTF_8);
  }

  /** Whether {@code pid} was this server's java process, now or before a restart. */
  final boolean ran(long pid) {
    return javaPids.contains(pid);
  }

  /** Records the java pid too, once the launcher has started it. */
  final void recordJavaPid() throws IOException {
    javaPids.add(javaPid());
    List<String> pids = new ArrayList<>(Files.readAllLines(pidFile()));
    String pid = String.valueOf(javaPid());
    if (!pids.contains(pid)) {
      pids.add(pid);
      Files.write(pidFile(), pids, StandardCharsets.UTF_8);
    }
  }

  /**
   * Ends a server an earlier, aborted run of this build left running: the processes named in its
   * pid file whose command line still names this server's directory.
   */
  final void endLeftOver() throws IOException {
    if (!Files.exists(pidFile())) {
      return;
    }
    for (String line : Files.readAllLines(pidFile())) {
      Optional<ProcessHandle> p = ProcessHandle.of(Long.parseLong(line.strip()));
      if (p.isPresent()
          && p.get().info().commandLine().map(c -> c.contains(ownDir().toString())).orElse(false)) {
        System.out.println("[fleet] ending " + name + " left over by an earlier run: pid " + line);
        // A launcher script's java first: it would outlive the script.
        p.get().descendants().forEach(ProcessHandle::destroyForcibly);
        p.get().destroyForcibly();
        try {
          p.get().onExit().get(30, TimeUnit.SECONDS);
        } catch (Exception e) {
          throw new IllegalStateException(
              "cannot end left-over process " + line + " of " + name, e);
        }
      }
    }
    Files.delete(pidFile());
  }

  /** How many lines of the server's logs (all of them, rolled ones too) contain {@code text}. */
  final long logLines(String text) throws IOException {
    if (!Files.isDirectory(logDir())) {
      return 0;
    }
    long n = 0;
    try (Stream<Path> files = Files.list(logDir())) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        try (Stream<String> lines = Files.lines(f, StandardCharsets.ISO_8859_1)) {
          n += lines.filter(l -> l.contains(text)).count();
        } catch (UncheckedIOException e) {
          throw e.getCause();
        }
      }
    }
    return n;
  }

  /** How many lines of the server's logs contain {@code text} and match {@code pattern}. */
  final long logLinesMatching(String text, java.util.regex.Pattern pattern) throws IOException {
    long n = 0;
    List<Path> dirs = new ArrayList<>();
    if (Files.isDirectory(logDir())) {
      dirs.add(logDir());
    }
    for (Path dir : dirs) {
      try (Stream<Path> files = Files.list(dir)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          try (Stream<String> lines = Files.lines(f, StandardCharsets.ISO_8859_1)) {
            n += lines.filter(l -> l.contains(text) && pattern.matcher(l).find()).count();
          } catch (UncheckedIOException e) {
            throw e.getCause();
          }
        }
      }
    }
    return n;
  }

  /** How many lines of {@link #mainLog} contain {@code text} and match {@code pattern}. */
  final long mainLogLinesMatching(String text, java.util.regex.Pattern pattern) throws IOException {
    if (!Files.isRegularFile(mainLog())) {
      return 0;
    }
    try (Stream<String> lines = Files.lines(mainLog(), StandardCharsets.ISO_8859_1)) {
      return lines.filter(l -> l.contains(text) && pattern.matcher(l).find()).count();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /** Waits until {@code done} holds, failing with {@code what} after {@code timeout}. */
  final void awaitLog(String what, Duration timeout, java.util.concurrent.Callable<Boolean> done)
      throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.call()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(name + ": " + what + " within " + timeout + "; see " + logDir());
      }
      Thread.sleep(100);
    }
  }

  /** Deletes a directory tree, if it exists. */
  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  /** Copies a directory tree. */
  static void copyTree(Path from, Path to) throws IOException {
    try (Stream<Path> walk = Files.walk(from)) {
      for (Path p : walk.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        }
      }
    }
  }

  @Override
  public String toString() {
    return name;
  }
}
