package io.pgbus.demo;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import java.sql.Connection;
import java.sql.Statement;
import java.util.logging.Level;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Creates the demo's business tables: the one greetings are written to, and the sign-ups.
 * Idempotent: it runs at every start, and brings a table made by an older demo up to date.
 */
@Singleton
@Startup
public class DemoSchema {
  private static final Logger LOG = Logger.getLogger(DemoSchema.class.getName());

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @PostConstruct
  void create() {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE IF NOT EXISTS demo_greeting ("
              + " job_id bigint PRIMARY KEY, message text NOT NULL,"
              + " written_at timestamptz NOT NULL DEFAULT now(),"
              + " handler_started_at timestamptz)");
      // Added after the first demo release: a database created by it lacks the column.
      s.execute(
          "ALTER TABLE demo_greeting ADD COLUMN IF NOT EXISTS handler_started_at timestamptz");
      s.execute(
          "CREATE TABLE IF NOT EXISTS demo_signup ("
              + " id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name text NOT NULL,"
              + " welcome_job_id bigint, signed_up_at timestamptz NOT NULL DEFAULT now())");
    } catch (Exception e) {
      LOG.log(Level.WARNING, "demo: cannot create demo_greeting yet: {0}", e.getMessage());
    }
  }
}
