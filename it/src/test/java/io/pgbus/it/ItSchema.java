package io.pgbus.it;

import io.pgbus.it.support.Sql;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.Resource;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import javax.sql.DataSource;

/** Creates the tables the integration tests write business rows to, when a test WAR deploys. */
@Singleton
@Startup
public class ItSchema {

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @PostConstruct
  void create() {
    try {
      Sql.execute(ds, "CREATE TABLE IF NOT EXISTS it_orders(text text NOT NULL)");
      Sql.execute(
          ds,
          "CREATE TABLE IF NOT EXISTS it_handled(text text NOT NULL, job_id bigint NOT NULL,"
              + " queue text NOT NULL, attempt int NOT NULL)");
    } catch (Exception e) {
      throw new IllegalStateException("cannot create the IT tables: " + e.getMessage(), e);
    }
  }
}
