package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pgbus.it.support.Http;
import java.net.URL;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.container.test.api.RunAsClient;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An application whose JAX-RS Application scans its classes (pgbus-impl among them) does not get
 * the doctor or the admin API: it has to opt in with a subclass (see ItDoctor, ItAdmin).
 */
@ExtendWith(ArquillianExtension.class)
@RunAsClient
class DoctorIsOptInIT {

  @Deployment(testable = false)
  static WebArchive deployment() {
    return PgbusWars.of("doctor-opt-in").addClasses(ItRestApplication.class);
  }

  @ArquillianResource URL url;

  @Test
  void aScanningApplicationDoesNotMountTheDoctor() throws Exception {
    Http.Response r = Http.get(Http.root(url) + url.getPath() + "api/pgbus/doctor");
    assertEquals(404, r.status(), r.body());
  }

  @Test
  void aScanningApplicationDoesNotMountTheAdminApi() throws Exception {
    Http.Response r = Http.get(Http.root(url) + url.getPath() + "api/pgbus/admin/jobs");
    assertEquals(404, r.status(), r.body());
  }
}
