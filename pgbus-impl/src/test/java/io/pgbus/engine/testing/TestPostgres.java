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
 * With {@value #SOURCE_ENV}{@code =embedded}, step 2 is skipped. Testcontainers and zonky are
 * touched only on the branch that uses them, so a module that sets the environment variable needs
 * neither on its class path.
 */
public final class TestPostgres {

  /** The environment variable that points the tests at an existing server. */
  public static final String URL_ENV = "PGBUS_TEST_JDBC_URL";

  /**
   * Set to {@code embedded} to skip Testcontainers even when Docker is there: the version matrix
   * (tools/pg-matrix, profiles pg14..pg17) picks the PostgreSQL version through zonky's binaries.
   */
  public static final String SOURCE_ENV = "PGBUS_TEST_POSTGRES";

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
    } else if (!"embedded".equals(System.getenv(SOURCE_ENV)) && Containers.dockerAvailable()) {
      source = "testcontainers";
      url = Containers.start();
    } else {
      source = "embedded";
      url = Embedded.start();
    }
    String version;
    try (var c = java.sql.DriverManager.getConnection(url);
        var rs = c.createStatement().executeQuery("SHOW server_version")) {
      rs.next();
      version = rs.getString(1);
    } catch (java.sql.SQLException e) {
      version = "unknown (" + e.getMessage() + ")";
    }
    // Printed as well as logged: the version matrix (tools/pg-matrix) greps it from the output.
    System.out.println("pgbus tests use PostgreSQL " + version + " from " + source);
    LOG.log(
        System.Logger.Level.INFO,
        "pgbus tests use PostgreSQL {0} from {1} ({2})",
        version,
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
