package io.pgbus.it;

import io.pgbus.it.support.Config;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import java.io.File;
import java.util.Arrays;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.EnterpriseArchive;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * A test EAR shaped as docs/wildfly.md tells a user to build one, the same for both servers: the
 * WAR {@code <name>.war} (context root {@code /<name>}) carries pgbus-api, pgbus-impl, the
 * handlers, microprofile-config.properties and a web.xml that binds {@code jdbc/pgbus} for WildFly;
 * the EAR's lib/ carries pgbus-health, and its META-INF/jboss-deployment-structure.xml gives the
 * WAR the driver module. Liberty ignores the two WildFly files.
 */
final class Ears {
  private Ears() {}

  static EnterpriseArchive of(String name, String... config) {
    return of(name, new Class<?>[0], config);
  }

  /** The same, with more classes (a test's own handler) in the WAR. */
  static EnterpriseArchive of(String name, Class<?>[] classes, String... config) {
    WebArchive war =
        ShrinkWrap.create(WebArchive.class, name + ".war")
            .addAsLibraries(libraries(false))
            .addClasses(
                Marker.class,
                Enqueuer.class,
                RecordingHandler.class,
                ItSchema.class,
                OrdersResource.class,
                ItRestApplication.class,
                Sql.class,
                TestServer.class)
            .addClasses(classes)
            .setWebXML("wildfly/web.xml");
    Config.with(war, TestServer.current().pgbusConfig(config));
    return ShrinkWrap.create(EnterpriseArchive.class, name + ".ear")
        .addAsModule(war)
        .addAsLibraries(libraries(true))
        .addAsManifestResource(
            new StringAsset(deploymentStructure(name + ".war")), "jboss-deployment-structure.xml");
  }

  /**
   * pgbus's jars for the WAR, or the one for the EAR's lib/: pgbus-health, whose checks WildFly
   * finds only there (WFLY-12835, docs/wildfly.md).
   */
  private static File[] libraries(boolean earLib) {
    return Arrays.stream(Deployments.pgbusLibraries())
        .filter(f -> f.getName().startsWith("pgbus-health") == earLib)
        .toArray(File[]::new);
  }

  /**
   * In an EAR, WildFly reads jboss-deployment-structure.xml only in the EAR's META-INF (one inside
   * the WAR is ignored with WFLYSRV0001), and the WAR, where pgbus runs, needs the driver module as
   * a sub-deployment.
   */
  private static String deploymentStructure(String warName) {
    return """
        <jboss-deployment-structure xmlns="urn:jboss:deployment-structure:1.3">
          <deployment>
            <dependencies>
              <module name="org.postgresql" services="import"/>
            </dependencies>
          </deployment>
          <sub-deployment name="%s">
            <dependencies>
              <module name="org.postgresql" services="import"/>
            </dependencies>
          </sub-deployment>
        </jboss-deployment-structure>
        """
        .formatted(warName);
  }
}
