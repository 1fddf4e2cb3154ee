package io.pgbus.engine.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A real PgBouncer in transaction mode, of one test's own: Debian's package ({@code apt-get install
 * pgbouncer}; run-tests installs it), started on its own port with its own ini and userlist in a
 * temp directory ({@code auth_type=trust}), in front of the test's PostgreSQL. It refuses to run as
 * root, so as root it runs as the user {@code postgres} ({@code runuser}). {@link #available()}
 * says whether the binary is there; a test without it is skipped with {@link #MISSING}.
 *
 * <pre>{@code
 * try (PgBouncer pgb = PgBouncer.inFrontOf("127.0.0.1", 5432).poolSize(3).start()) {
 *   DataSource ds = pgb.dataSource("mydb");
 *   pgb.restart();
 * }
 * }</pre>
 */
public final class PgBouncer implements AutoCloseable {

  /** Why a test that needs PgBouncer was skipped. */
  public static final String MISSING =
      "PgBouncer is not installed (apt-get install pgbouncer; ./run-tests installs it)";

  private static final List<Path> BINARIES =
      List.of(Path.of("/usr/sbin/pgbouncer"), Path.of("/usr/bin/pgbouncer"));

  private final String pgHost;
  private final int pgPort;
  private final int port;
  private final Path dir;
  private int poolSize = 4;
  private Process process;

  private PgBouncer(String pgHost, int pgPort, int port) {
    this.pgHost = pgHost;
    this.pgPort = pgPort;
    this.port = port;
    try {
      this.dir = Files.createTempDirectory("pgbus-pgbouncer-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether Debian's pgbouncer binary is installed. */
  public static boolean available() {
    return binary() != null;
  }

  private static Path binary() {
    return BINARIES.stream().filter(Files::isExecutable).findFirst().orElse(null);
  }

  /** A PgBouncer on a free port in front of {@code pgHost:pgPort}, not started yet. */
  public static PgBouncer inFrontOf(String pgHost, int pgPort) {
    return new PgBouncer(pgHost, pgPort, PrivateCluster.freePort());
  }

  /** The same, on {@code port}. */
  public static PgBouncer inFrontOf(String pgHost, int pgPort, int port) {
    return new PgBouncer(pgHost, pgPort, port);
  }

  /** Server connections per database and user ({@code default_pool_size}); before start. */
  public PgBouncer poolSize(int size) {
    this.poolSize = size;
    return this;
  }

  public int port() {
    return port;
  }

  /** A JDBC URL through PgBouncer, with pgjdbc's defaults (prepareThreshold 5). */
  public String jdbcUrl(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?connectTimeout=5";
  }

  /** A non-pooling datasource through PgBouncer, user postgres. */
  public DataSource dataSource(String database) {
    var ds = new PGSimpleDataSource();
    ds.setUrl(jdbcUrl(database));
    ds.setUser("postgres");
    ds.setApplicationName("pgbus-test");
    return ds;
  }

  /** Starts it and waits until it accepts connections (10 s at most). */
  public synchronized PgBouncer start() {
    Path bin = binary();
    if (bin == null) {
      throw new IllegalStateException(MISSING);
    }
    try {
      Files.writeString(
          dir.resolve("pgbouncer.ini"),
          String.join(
              "\n",
              "[databases]",
              "* = host=" + pgHost + " port=" + pgPort,
              "[pgbouncer]",
              "listen_addr = 127.0.0.1",
              "listen_port = " + port,
              "unix_socket_dir =",
              "auth_type = trust",
              "auth_file = " + dir.resolve("userlist.txt"),
              "pool_mode = transaction",
              "default_pool_size = " + poolSize,
              "max_client_conn = 200",
              "admin_users = postgres",
              "ignore_startup_parameters = extra_float_digits,options",
              "logfile = " + dir.resolve("pgbouncer.log"),
              ""));
      Files.writeString(dir.resolve("userlist.txt"), "\"postgres\" \"\"\n");
      var command = new ArrayList<String>();
      if (isRoot()) {
        // PgBouncer refuses root; Debian's package creates the user postgres.
        new ProcessBuilder("chown", "-R", "postgres:", dir.toString()).start().waitFor();
        command.addAll(List.of("runuser", "-u", "postgres", "--"));
      }
      command.add(bin.toString());
      command.add(dir.resolve("pgbouncer.ini").toString());
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("stdout.log").toFile())
              .start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (!accepts()) {
        if (!process.isAlive() || System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "PgBouncer did not start on port " + port + ": " + log() + " " + stdout());
        }
        Thread.sleep(50);
      }
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting PgBouncer", e);
    }
  }

  /** Stops it (every client and server connection drops) and waits for the process to end. */
  public synchronized void stop() {
    if (process == null) {
      return;
    }
    process.descendants().forEach(ProcessHandle::destroy);
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (accepts() && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  /** Stops it and starts it again on the same port. */
  public void restart() {
    stop();
    start();
  }

  /** Its log so far, for a failed test's message. */
  public String log() {
    try {
      Path log = dir.resolve("pgbouncer.log");
      return Files.exists(log) ? Files.readString(log) : "";
    } catch (IOException e) {
      return "(log unreadable: " + e + ")";
    }
  }

  private String stdout() {
    try {
      Path out = dir.resolve("stdout.log");
      return Files.exists(out) ? Files.readString(out) : "";
    } catch (IOException e) {
      return "";
    }
  }

  private boolean accepts() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean isRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  @Override
  public void close() {
    stop();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temp directory left behind
    }
  }
}
