package io.pgbus.it;

import io.pgbus.it.support.Await;
import io.pgbus.it.support.Config;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * A pgbus test WAR with the shared test beans and the given pgbus configuration lines, plus the
 * lines that point pgbus at this server's resources ({@link TestServer#pgbusConfig}).
 */
final class PgbusWars {
  private PgbusWars() {}

  static WebArchive of(String name, String... config) {
    WebArchive war =
        Deployments.pgbusWar(name)
            .addClasses(
                Marker.class,
                Enqueuer.class,
                RecordingHandler.class,
                ItSchema.class,
                PgbusWars.class,
                Deployments.class)
            .addClasses(Await.class, Sql.class, Config.class);
    return Config.with(war, TestServer.current().pgbusConfig(config));
  }
}
