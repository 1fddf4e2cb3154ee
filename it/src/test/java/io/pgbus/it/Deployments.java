package io.pgbus.it;

import io.pgbus.it.support.TestServer;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Stream;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * Builds the test WARs that Arquillian deploys.
 *
 * <p>{@link #pgbusWar(String)} bundles pgbus-api, pgbus-impl and their runtime dependencies
 * (pgbus-health, Flyway) in {@code WEB-INF/lib}, as an application would ({@link Ears} puts
 * pgbus-health into the EAR's lib/ instead). The build copies those jars into the directory named
 * by the system property {@code pgbus.it.libs} (it/pom.xml, copy-dependencies with
 * includeScope=runtime), so adding a runtime dependency to pgbus-impl needs no change here. pgjdbc
 * is not bundled: the test server has it (Liberty: lib/global; WildFly: the module org.postgresql).
 * Every WAR gets what its server needs ({@link TestServer#prepare}).
 */
public final class Deployments {

  private Deployments() {}

  /** An empty WAR for this run's server; add the test's own classes to it. */
  public static WebArchive war(String name) {
    return TestServer.current()
        .prepare(ShrinkWrap.create(WebArchive.class, name + ".war"))
        .addClass(TestServer.class);
  }

  /** A WAR that carries pgbus and its runtime dependencies in WEB-INF/lib. */
  public static WebArchive pgbusWar(String name) {
    return war(name).addAsLibraries(pgbusLibraries());
  }

  /**
   * The pgbus-test jar, for a WAR that tests with the kit inside the container (the build copies it
   * alone into {@code pgbus.it.kit}: the server has JSON-B).
   */
  public static File testKitLibrary() {
    File[] jars = jarsIn("pgbus.it.kit");
    if (jars.length != 1) {
      throw new IllegalStateException("expected the pgbus-test jar alone in pgbus.it.kit");
    }
    return jars[0];
  }

  /** The jars a pgbus application bundles: pgbus-api, pgbus-impl, pgbus-health, Flyway. */
  public static File[] pgbusLibraries() {
    return jarsIn("pgbus.it.libs");
  }

  private static File[] jarsIn(String property) {
    String dir = System.getProperty(property);
    if (dir == null) {
      throw new IllegalStateException(
          "system property " + property + " is not set; run the ITs through Maven (mvn verify)");
    }
    Path libs = Paths.get(dir);
    try (Stream<Path> files = Files.list(libs)) {
      File[] jars =
          files
              .filter(p -> p.getFileName().toString().endsWith(".jar"))
              .sorted()
              .map(Path::toFile)
              .toArray(File[]::new);
      if (jars.length == 0) {
        throw new IllegalStateException("no jars in " + property + "=" + libs);
      }
      return jars;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list " + property + "=" + libs, e);
    }
  }
}
