package io.pgbus.fleet;

import java.nio.file.Path;
import java.nio.file.Paths;

/** What fleet/it/pom.xml passes to FleetIT as system properties; each one is required. */
record FleetSettings(
    Path fleetDir,
    Path wlpHome,
    Path wildflyHome,
    String dbHost,
    int dbPort,
    String dbName,
    String dbUser,
    int libertyAHttp,
    int libertyAHttps,
    int libertyBHttp,
    int libertyBHttps,
    int libertyCHttp,
    int libertyCHttps,
    int libertyDHttp,
    int libertyDHttps,
    int wildflyPortOffset,
    String heap) {

  static FleetSettings fromSystemProperties() {
    return new FleetSettings(
        Paths.get(required("fleet.dir")),
        Paths.get(required("fleet.wlp.home")),
        Paths.get(required("fleet.wildfly.home")),
        required("fleet.db.host"),
        Integer.parseInt(required("fleet.db.port")),
        required("fleet.db.name"),
        required("fleet.db.user"),
        Integer.parseInt(required("fleet.liberty.a.http.port")),
        Integer.parseInt(required("fleet.liberty.a.https.port")),
        Integer.parseInt(required("fleet.liberty.b.http.port")),
        Integer.parseInt(required("fleet.liberty.b.https.port")),
        Integer.parseInt(required("fleet.liberty.c.http.port")),
        Integer.parseInt(required("fleet.liberty.c.https.port")),
        Integer.parseInt(required("fleet.liberty.d.http.port")),
        Integer.parseInt(required("fleet.liberty.d.https.port")),
        Integer.parseInt(required("fleet.wildfly.port.offset")),
        required("fleet.server.heap"));
  }

  private static String required(String key) {
    String v = System.getProperty(key);
    if (v == null || v.isBlank()) {
      throw new IllegalStateException(
          "system property "
              + key
              + " is not set; run the fleet through Maven: "
              + "mvn -B -pl fleet/it -am verify -Pfleet (or ./run-tests --fleet)");
    }
    return v;
  }
}
