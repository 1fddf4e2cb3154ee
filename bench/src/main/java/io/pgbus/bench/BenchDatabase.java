package io.pgbus.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One fresh database of a workload run, with the pools opened on it. Closing it closes the pools
 * and drops the database.
 */
final class BenchDatabase implements AutoCloseable {

  private final BenchServer server;
  private final String name;
  private final String url;
  private final List<HikariDataSource> pools = new CopyOnWriteArrayList<>();

  BenchDatabase(BenchServer server, String name, String url) {
    this.server = server;
    this.name = name;
    this.url = url;
  }

  String name() {
    return name;
  }

  /** Its JDBC URL (user postgres), as the pools use it. */
  String url() {
    return url;
  }

  BenchServer server() {
    return server;
  }

  /**
   * A HikariCP pool, the same setup for both systems. {@code minIdle == max} gives a fixed pool,
   * filled before this returns, so no measurement pays for connection setup; {@code minIdle = 0}
   * grows on demand, so the connection count shows what a system actually used.
   */
  HikariDataSource pool(String poolName, int max, int minIdle) {
    var hc = new HikariConfig();
    hc.setJdbcUrl(url);
    hc.setPoolName(poolName);
    hc.setMaximumPoolSize(max);
    hc.setMinimumIdle(minIdle);
    hc.setConnectionTimeout(60_000);
    hc.addDataSourceProperty("ApplicationName", poolName);
    var ds = new HikariDataSource(hc);
    pools.add(ds);
    if (minIdle > 0) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (ds.getHikariPoolMXBean().getTotalConnections() < minIdle
          && System.nanoTime() < deadline) {
        Sleep.millis(5);
      }
    }
    return ds;
  }

  /** A dedicated, unpooled connection in auto-commit, as a LISTEN connection or another JVM has. */
  Connection connect(String applicationName) throws SQLException {
    var p = new Properties();
    p.setProperty("ApplicationName", applicationName);
    return DriverManager.getConnection(url, p);
  }

  @Override
  public void close() throws SQLException {
    for (HikariDataSource ds : pools) {
      ds.close();
    }
    pools.clear();
    server.dropDatabase(name);
  }
}
