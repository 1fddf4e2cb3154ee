package io.pgbus.engine.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A main class of the test sources run in a JVM of its own, on the test class path, so a test can
 * kill a real worker process with SIGKILL. Its output is echoed with a {@code [child]} prefix and
 * can be awaited line by line. {@link #close()} kills it if it still runs, so a failed test never
 * leaves it behind.
 */
public final class ChildJvm implements AutoCloseable {

  private final Process process;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

  private ChildJvm(Process process) {
    this.process = process;
    Thread reader = new Thread(this::echo, "child-jvm-" + process.pid() + "-output");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts {@code mainClass} with {@code args} in a new JVM on this JVM's class path. */
  public static ChildJvm start(Class<?> mainClass, String... args) {
    var command = new ArrayList<String>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx128m");
    command.add("-XX:TieredStopAtLevel=1"); // starts faster; it runs for seconds only
    String logging = System.getProperty("java.util.logging.config.file");
    if (logging != null) {
      command.add("-Djava.util.logging.config.file=" + logging);
    }
    command.add("-cp");
    command.add(classPath());
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    try {
      return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
    } catch (IOException e) {
      throw new UncheckedIOException("could not start a JVM for " + mainClass.getName(), e);
    }
  }

  public long pid() {
    return process.pid();
  }

  /** Waits for a line that starts with {@code prefix}; fails with what was seen instead. */
  public String await(String prefix, Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      String line = left > 0 ? lines.poll(left, TimeUnit.NANOSECONDS) : null;
      if (line == null) {
        throw new AssertionError(
            "the child JVM did not print a line starting with '"
                + prefix
                + "' within "
                + timeout
                + (process.isAlive() ? "" : " (it exited with " + process.exitValue() + ")"));
      }
      if (line.startsWith(prefix)) {
        return line;
      }
    }
  }

  /**
   * Sends SIGKILL ({@code kill -9}) and waits for the process to be gone; returns its exit code
   * (137 for a SIGKILL).
   */
  public int kill9() throws InterruptedException {
    try {
      Process kill = new ProcessBuilder("kill", "-9", Long.toString(process.pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        process.destroyForcibly(); // SIGKILL too, on Linux
      }
    } catch (IOException noKillCommand) {
      process.destroyForcibly();
    }
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      throw new AssertionError("the child JVM " + process.pid() + " survived SIGKILL");
    }
    return process.exitValue();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroyForcibly();
      process.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private void echo() {
    try (var in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        System.out.println("[child " + process.pid() + "] " + line);
        lines.add(line);
      }
    } catch (IOException ignored) {
      // the process is gone
    }
  }

  /**
   * The test class path. Surefire runs tests from a manifest-only jar by default, whose manifest
   * lists the real class path; a JVM started with that jar on its class path sees all of it.
   */
  private static String classPath() {
    String surefire = System.getProperty("surefire.test.class.path");
    return surefire != null && !surefire.isBlank()
        ? surefire
        : System.getProperty("java.class.path");
  }
}
