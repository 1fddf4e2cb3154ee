package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.AuditEntry;
import io.pgbus.JobQueue;
import io.pgbus.it.support.Http;
import io.pgbus.it.support.TestServer;
import jakarta.annotation.Resource;
import jakarta.inject.Inject;
import java.net.URL;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An EJB called by an authenticated user enqueues and cancels as that user: the job's enqueued_by
 * and the audit trail name the container's caller principal.
 */
@ExtendWith(ArquillianExtension.class)
class WhoDidItIT {

  @Deployment
  static WebArchive deployment() {
    WebArchive war =
        PgbusWars.of(
                "who-did-it",
                "pgbus.capsules=who",
                "pgbus.capsule.who.queues=it_who_elsewhere",
                "pgbus.capsule.who.concurrency=1")
            .addClasses(ItRestApplication.class, ItWho.class, ItEnqueuingBean.class, Http.class);
    return TestServer.current().withBasicAuth(war);
  }

  @Inject JobQueue jobs;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @ArquillianResource URL url;

  @Test
  void anAuthenticatedCallersJobAndCancelNameThatUser() throws Exception {
    String text = UUID.randomUUID().toString();
    Http.Response r =
        Http.get(
            Http.root(url) + url.getPath() + "api/pgbus/who?text=" + text, "admin", "admin-secret");
    assertEquals(200, r.status(), r.body());
    long id = Long.parseLong(r.body().strip());

    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement("SELECT enqueued_by, state::text FROM pgbus.job WHERE id = ?")) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        assertEquals("admin", rs.getString(1));
        assertEquals("cancelled", rs.getString(2));
      }
    }
    List<AuditEntry> trail = jobs.history(id);
    assertEquals(1, trail.size(), trail.toString());
    assertEquals("admin", trail.get(0).actor());
    assertEquals("cancel", trail.get(0).action());
  }
}
