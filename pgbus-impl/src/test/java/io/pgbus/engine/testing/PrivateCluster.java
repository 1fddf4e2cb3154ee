package io.pgbus.engine.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL server of one test's own, for fault tests that the shared server must not suffer: it
 * can start after the engine (a database that is down at deploy), stop under load, and start again
 * on the same port with the same data. Every test sees the database {@code postgres} as user {@code
 * postgres} on {@code 127.0.0.1}.
 *
 * <p>{@link #close()} stops the server and deletes its data directory, whatever state it is in; use
 * it in try-with-resources or an {@code @AfterAll}. The server is also stopped when the JVM exits
 * (zonky's shutdown hook), so a failed test never leaves one running.
 *
 * <pre>{@code
 * try (PrivateCluster pg = PrivateCluster.onFreePort()) {
 *   Engine e = ...(pg.dataSource(), pg::connect)...;   // nothing answers yet
 *   pg.start();
 *   pg.stop(); pg.start();                              // a restart: same port, same data
 * }
 * }</pre>
 */
public final class PrivateCluster implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(PrivateCluster.class.getName());

  private final int port;
  private final Path dataDirectory;
  private EmbeddedPostgres server;
  private boolean closed;

  private PrivateCluster(int port, Path dataDirectory) {
    this.port = port;
    this.dataDirectory = dataDirectory;
  }

  /** A cluster on a port that is free now, not started yet. */
  public static PrivateCluster onFreePort() {
    return onPort(freePort());
  }

  /** A cluster on the given port, not started yet. */
  public static PrivateCluster onPort(int port) {
    try {
      return new PrivateCluster(port, Files.createTempDirectory("pgbus-private-cluster-"));
    } catch (IOException e) {
      throw new UncheckedIOException("could not create a data directory for a private cluster", e);
    }
  }

  public int port() {
    return port;
  }

  /** A JDBC URL for the database {@code postgres}; valid whether or not the server runs. */
  public String jdbcUrl() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres&connectTimeout=5";
  }

  /** A non-pooling datasource: each {@code getConnection} opens a new connection. */
  public DataSource dataSource() {
    var ds = new PGSimpleDataSource();
    ds.setUrl(jdbcUrl());
    ds.setApplicationName("pgbus-test");
    return ds;
  }

  /** A new connection; fails while the server is down. */
  public Connection connect() throws SQLException {
    return dataSource().getConnection();
  }

  public synchronized boolean running() {
    return server != null;
  }

  /** Starts the server (the first time, on a fresh data directory) and waits until it answers. */
  public synchronized PrivateCluster start() {
    if (closed) {
      throw new IllegalStateException("this private cluster was closed");
    }
    if (server != null) {
      return this;
    }
    long began = System.nanoTime();
    try {
      server =
          EmbeddedPostgres.builder()
              .setPort(port)
              .setDataDirectory(dataDirectory)
              .setCleanDataDirectory(false) // keep the data across stop() and start()
              .setServerConfig("fsync", "off")
              .setServerConfig("synchronous_commit", "off")
              .setServerConfig("max_connections", "100")
              .setPGStartupWait(Duration.ofSeconds(30))
              .setRegisterShutdownHook(true)
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start the private cluster on port " + port, e);
    }
    LOG.log(
        System.Logger.Level.INFO,
        "private PostgreSQL started on port {0} in {1} ms",
        port,
        Duration.ofNanos(System.nanoTime() - began).toMillis());
    return this;
  }

  /**
   * Stops the server with a fast shutdown: open sessions are terminated (each gets the server's
   * FATAL message), as in a restart for maintenance.
   */
  public synchronized void stop() {
    if (server == null) {
      return;
    }
    EmbeddedPostgres s = server;
    server = null;
    try {
      s.close();
    } catch (IOException e) {
      throw new UncheckedIOException("could not stop the private cluster on port " + port, e);
    }
    LOG.log(System.Logger.Level.INFO, "private PostgreSQL on port {0} stopped", port);
  }

  /** Stops the server and deletes its data directory. */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      stop();
    } finally {
      deleteRecursively(dataDirectory);
    }
  }

  private static void deleteRecursively(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "could not delete {0}: {1}", dir, e.getMessage());
    }
  }

  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port for a private cluster", e);
    }
  }
}
