package io.pgbus.engine.testing;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The one PostgreSQL server the tests of this JVM use, found once, in this order:
 *
 * <ol>
 *   <li>the environment variable {@value #URL_ENV}: a JDBC URL to a database on a server where that
 *       user may create and drop databases, for example {@code
 *       jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres};
 *   <li>Testcontainers, when a Docker engine is reachable;
 *   <li>an embedded PostgreSQL (zonky), started once per JVM and stopped when the JVM ends.
 * </ol>
 *
 * Testcontainers and zonky are touched only on the branch that uses them, so a module that sets the
 * environment variable needs neither on its class path.
 */
public final class TestPostgres {

  /** The environment variable that points the tests at an existing server. */
  public static final String URL_ENV = "PGBUS_TEST_JDBC_URL";

  /** The image used when Testcontainers starts the server. */
  public static final String IMAGE = "postgres:15-alpine";

  private static final System.Logger LOG = System.getLogger(TestPostgres.class.getName());

  private static volatile String adminUrl;
  private static volatile String source;

  private TestPostgres() {}

  /** A JDBC URL to an admin-capable database on the test server, starting it on first use. */
  public static String adminUrl() {
    String url = adminUrl;
    if (url == null) {
      synchronized (TestPostgres.class) {
        url = adminUrl;
        if (url == null) {
          url = find();
          adminUrl = url;
        }
      }
    }
    return url;
  }

  /** Where the server came from: "env", "testcontainers" or "embedded" (null before first use). */
  public static String source() {
    return source;
  }

  private static String find() {
    String url;
    String fromEnv = System.getenv(URL_ENV);
    if (fromEnv != null && !fromEnv.isBlank()) {
      source = "env";
      url = fromEnv.strip();
    } else if (Containers.dockerAvailable()) {
      source = "testcontainers";
      url = Containers.start();
    } else {
      source = "embedded";
      url = Embedded.start();
    }
    LOG.log(
        System.Logger.Level.INFO,
        "pgbus tests use PostgreSQL from {0} ({1})",
        source,
        url.replaceAll("password=[^&]*", "password=***"));
    return url;
  }

  /** Testcontainers, loaded only when this class is. */
  private static final class Containers {
    static boolean dockerAvailable() {
      try {
        return org.testcontainers.DockerClientFactory.instance().isDockerAvailable();
      } catch (Throwable notThere) {
        // Not on the class path, or no usable Docker configuration: fall through to embedded.
        return false;
      }
    }

    static String start() {
      var pg =
          new org.testcontainers.postgresql.PostgreSQLContainer(IMAGE)
              .withCommand("postgres", "-c", "fsync=off", "-c", "max_connections=300");
      pg.start(); // Testcontainers' reaper removes it when the JVM ends.
      String url = pg.getJdbcUrl();
      return url
          + (url.contains("?") ? "&" : "?")
          + "user="
          + pg.getUsername()
          + "&password="
          + pg.getPassword();
    }
  }

  /** zonky's embedded PostgreSQL, loaded only when this class is. */
  private static final class Embedded {
    static String start() {
      try {
        var pg =
            io.zonky.test.db.postgres.embedded.EmbeddedPostgres.builder()
                .setServerConfig("max_connections", "300")
                .setServerConfig("fsync", "off")
                .setServerConfig("synchronous_commit", "off")
                .setRegisterShutdownHook(true) // stops the server when the JVM ends
                .start();
        return pg.getJdbcUrl("postgres", "postgres");
      } catch (IOException e) {
        throw new UncheckedIOException("could not start the embedded PostgreSQL for the tests", e);
      }
    }
  }
}
