package io.pgbus.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.stream.Stream;

/**
 * CPU time spent by this JVM, by the PostgreSQL server (postmaster and all its children, read from
 * /proc), and by the whole machine, so a phase can say where its CPU went and how busy the machine
 * was with other work. Linux only; elsewhere, or for a remote server, the server share is unknown
 * (-1).
 */
final class CpuMeter {

  /** USER_HZ; 100 on every Linux this runs on. */
  private static final double TICK_NANOS = 1e9 / 100;

  /** CPU times at one instant, in nanoseconds. */
  record Sample(
      long nanos, long jvm, long jvmSystem, long server, long machineBusy, long machineTotal) {

    /** CPU use during the interval since {@code before}, in cores (1.0 = one core busy). */
    Usage since(Sample before) {
      double wall = nanos - before.nanos;
      double total = machineTotal - before.machineTotal;
      double busy = machineBusy - before.machineBusy;
      int cores = Runtime.getRuntime().availableProcessors();
      double jvmCores = (jvm - before.jvm) / wall;
      double serverCores = server < 0 ? -1 : (server - before.server) / wall;
      double machineCores = total <= 0 ? -1 : busy / total * cores;
      long sys = jvmSystem < 0 ? -1 : jvmSystem - before.jvmSystem;
      return new Usage(
          wall / 1e9,
          jvmCores,
          serverCores,
          machineCores,
          jvm - before.jvm,
          sys,
          server < 0 ? -1 : server - before.server);
    }
  }

  /**
   * @param seconds wall time
   * @param jvm cores this JVM used on average
   * @param server cores the PostgreSQL server used, or -1
   * @param machine cores busy on the whole machine, or -1
   * @param jvmNanos CPU time of the JVM
   * @param jvmSystemNanos of which in the kernel (system calls, context switches), or -1
   * @param serverNanos CPU time of the server, or -1
   */
  record Usage(
      double seconds,
      double jvm,
      double server,
      double machine,
      long jvmNanos,
      long jvmSystemNanos,
      long serverNanos) {

    /** Cores used by everything else on the machine (other builds, the OS). */
    double others() {
      return machine < 0 || server < 0 ? -1 : Math.max(0, machine - jvm - server);
    }
  }

  private final long postmaster;

  private CpuMeter(long postmaster) {
    this.postmaster = postmaster;
  }

  /** Finds the server's postmaster through a backend's parent process, when it runs here. */
  static CpuMeter of(BenchServer server) {
    long pm = -1;
    if (server.local() && Files.isDirectory(Path.of("/proc"))) {
      try (Connection c = server.admin();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        long[] stat = stat(rs.getLong(1));
        pm = stat == null ? -1 : stat[0];
      } catch (SQLException e) {
        pm = -1;
      }
    }
    return new CpuMeter(pm);
  }

  Sample sample() {
    long jvm =
        ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    long[] machine = machine();
    long[] self = ownTicks();
    return new Sample(
        System.nanoTime(),
        jvm,
        self == null ? -1 : Math.round(self[1] * TICK_NANOS),
        server(),
        machine[0],
        machine[1]);
  }

  private long server() {
    if (postmaster < 0) {
      return -1;
    }
    long ticks = 0;
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path p : (Iterable<Path>) procs::iterator) {
        String name = p.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        long pid = Long.parseLong(name);
        long[] s = stat(pid);
        if (s != null && (pid == postmaster || s[0] == postmaster)) {
          ticks += s[1];
        }
      }
    } catch (IOException e) {
      return -1;
    }
    return Math.round(ticks * TICK_NANOS);
  }

  /** {utime, stime} of this JVM in ticks, or null. */
  private static long[] ownTicks() {
    try {
      String s = Files.readString(Path.of("/proc/self/stat"));
      String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
      return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** {ppid, utime + stime in ticks} of a process, or null when it is gone. */
  private static long[] stat(long pid) {
    try {
      String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
      return new long[] {Long.parseLong(f[1]), Long.parseLong(f[11]) + Long.parseLong(f[12])};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** {busy, total} jiffies of the machine, from the first line of /proc/stat. */
  private static long[] machine() {
    try {
      List<String> lines = Files.readAllLines(Path.of("/proc/stat"));
      String[] f = lines.get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < Math.min(f.length, 9); i++) {
        total += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
      return new long[] {total - idle, total};
    } catch (IOException | RuntimeException e) {
      return new long[] {-1, -1};
    }
  }

  /** The 1-minute load average, or -1. */
  static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
