package com.example.orders;

import io.pgbus.test.PgbusTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A throwaway database for the test class: created on the server of {@code PGBUS_TEST_JDBC_URL}
 * (else 127.0.0.1:5432 as postgres), given the pgbus schema and the orders table, dropped after.
 */
final class OrdersDatabase implements BeforeAllCallback, AfterAllCallback {

  private static final String SERVER =
      System.getenv()
          .getOrDefault(
              "PGBUS_TEST_JDBC_URL", "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");

  private final String name = "orders_" + UUID.randomUUID().toString().replace("-", "");
  private PGSimpleDataSource ds;

  DataSource dataSource() {
    return ds;
  }

  @Override
  public void beforeAll(ExtensionContext context) throws SQLException {
    admin("CREATE DATABASE " + name);
    ds = new PGSimpleDataSource();
    ds.setUrl(SERVER.replaceFirst("/[^/?]*(\\?|$)", "/" + name + "$1"));
    PgbusTest.migrate(ds);
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          "CREATE TABLE orders (id bigserial PRIMARY KEY, customer text NOT NULL,"
              + " cents bigint NOT NULL, status text NOT NULL,"
              + " reminded boolean NOT NULL DEFAULT false)");
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws SQLException {
    admin("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
  }

  private static void admin(String sql) throws SQLException {
    try (Connection c = DriverManager.getConnection(SERVER);
        Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
