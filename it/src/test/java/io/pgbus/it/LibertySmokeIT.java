package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.transaction.UserTransaction;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Arrays;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Proves the harness: Arquillian deploys into the managed Liberty, the JTA datasource {@code
 * jdbc/pgbus} reaches the test database, a UserTransaction governs its work, and the
 * non-transactional {@code jdbc/pgbusListener} hands out connections that unwrap to the same {@link
 * PGConnection} class the application sees (pgjdbc in lib/global).
 */
@ExtendWith(ArquillianExtension.class)
class LibertySmokeIT {

  @Deployment
  static WebArchive deployment() {
    return Deployments.war("liberty-smoke").addClass(SmokeRows.class);
  }

  @EJB private SmokeRows rows;

  @Resource(lookup = "java:comp/UserTransaction")
  private UserTransaction tx;

  @Resource(lookup = "jdbc/pgbusListener")
  private DataSource listenerDataSource;

  @Test
  void rolledBackInsertIsGoneAndCommittedInsertStays() throws Exception {
    rows.createTable();
    String id = UUID.randomUUID().toString();

    tx.begin();
    rows.insert(id);
    tx.rollback();
    assertFalse(rows.exists(id), "row must be gone after rollback");

    tx.begin();
    rows.insert(id);
    tx.commit();
    assertTrue(rows.exists(id), "row must be present after commit");
  }

  @Test
  void listenerConnectionUnwrapsToPgConnectionAndHearsCommittedNotify() throws Exception {
    String payload = UUID.randomUUID().toString();
    try (Connection conn = listenerDataSource.getConnection()) {
      PGConnection pg = conn.unwrap(PGConnection.class);
      try (Statement st = conn.createStatement()) {
        st.execute("LISTEN it_smoke");
      }

      tx.begin();
      rows.notify("it_smoke", payload);
      tx.commit();

      PGNotification[] received = pg.getNotifications(10_000);
      assertArrayEquals(
          new String[] {payload},
          received == null
              ? new String[0]
              : Arrays.stream(received).map(PGNotification::getParameter).toArray(String[]::new));
    }
  }
}
