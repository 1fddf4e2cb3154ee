package io.pgbus.it;

import io.pgbus.it.support.Sql;
import javax.sql.DataSource;

/** The tables the integration tests write business rows to. */
final class ItSchema {
  private ItSchema() {}

  static void create(DataSource ds) throws Exception {
    Sql.execute(ds, "CREATE TABLE IF NOT EXISTS it_orders(text text NOT NULL)");
    Sql.execute(
        ds,
        "CREATE TABLE IF NOT EXISTS it_handled(text text NOT NULL, job_id bigint NOT NULL,"
            + " queue text NOT NULL, attempt int NOT NULL)");
  }
}
