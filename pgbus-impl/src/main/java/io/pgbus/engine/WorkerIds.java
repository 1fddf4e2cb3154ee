package io.pgbus.engine;

import java.net.InetAddress;

/** Default names for {@code attempted_by}: host and process id, so an operator can find the JVM. */
final class WorkerIds {
  private WorkerIds() {}

  static String local() {
    // The suffix keeps two engines in one JVM (tests, benchmarks) apart.
    return host()
        + ":"
        + ProcessHandle.current().pid()
        + ":"
        + Integer.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextInt(0x10000));
  }

  /** This machine's host name, or "unknown-host". */
  static String host() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      return "unknown-host";
    }
  }
}
