package io.pgbus.it;

import io.pgbus.JobContext;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/**
 * Writes an it_handled row in a transaction of its own ({@code REQUIRES_NEW}), as a handler in
 * {@code JobTransaction.HANDLER} mode does: the row commits when this method returns.
 */
@ApplicationScoped
public class HandledRows {

  @Resource(lookup = "jdbc/pgbus")
  DataSource dataSource;

  @Transactional(Transactional.TxType.REQUIRES_NEW)
  public void write(String text, JobContext job) throws Exception {
    insert(dataSource, text, job);
  }

  /** Inserts the row through {@code dataSource}, in whatever transaction the caller is in. */
  static void insert(DataSource dataSource, String text, JobContext job) throws Exception {
    try (Connection c = dataSource.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO it_handled(text, job_id, queue, attempt) VALUES (?, ?, ?, ?)")) {
      ps.setString(1, text);
      ps.setLong(2, job.id());
      ps.setString(3, job.queue());
      ps.setInt(4, job.attempt());
      ps.execute();
    }
  }
}
