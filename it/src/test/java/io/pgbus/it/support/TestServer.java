package io.pgbus.it.support;

import java.net.URL;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.jboss.shrinkwrap.api.spec.WebArchive;

/**
 * The server the ITs run on, named by the system property {@code pgbus.it.server} that the Maven
 * profile sets: everything a test deployment or an operator's probe does differently per server, so
 * that the test classes stay the same on both. Tests name datasources by their Liberty JNDI names
 * ({@code jdbc/pgbus}); this maps them.
 */
public enum TestServer {
  /**
   * Open Liberty: the datasources are jdbc/..., pgbus's defaults; health beside the application.
   */
  LIBERTY {
    @Override
    Map<String, String> resources() {
      return Map.of();
    }

    @Override
    public String dataSource(String libertyName) {
      return libertyName;
    }

    @Override
    public WebArchive prepare(WebArchive war) {
      return war;
    }

    /** The basicRegistry of server.xml authenticates a request's BASIC credentials as it is. */
    @Override
    public WebArchive withBasicAuth(WebArchive war) {
      return war;
    }

    @Override
    public String health(URL deploymentUrl) {
      return Http.root(deploymentUrl) + "/health";
    }
  },

  /**
   * WildFly: the datasources are java:jboss/datasources/... (wildfly-config/pgbus.cli,
   * src/test/wildfly/it.cli), pgjdbc is the module org.postgresql, and health is served on the
   * management interface.
   */
  WILDFLY {
    /**
     * The executor is pgbus's own (wildfly-config/pgbus.cli, see there why). The datasources keep
     * pgbus's defaults, jdbc/pgbus and jdbc/pgbusListener: pgbus.cli binds those names on WildFly.
     */
    @Override
    Map<String, String> resources() {
      return Map.of("pgbus.executor", "java:jboss/ee/concurrency/executor/pgbus");
    }

    @Override
    public String dataSource(String libertyName) {
      if (!libertyName.startsWith(LIBERTY_PREFIX)) {
        throw new IllegalArgumentException("not a test datasource name: " + libertyName);
      }
      return "java:jboss/datasources/" + libertyName.substring(LIBERTY_PREFIX.length());
    }

    /**
     * Adds the dependency on the pgjdbc module (jboss-deployment-structure.xml) and the web.xml a
     * user's WAR carries (docs/wildfly.md): WildFly resolves the EE components'
     * {@code @Resource(lookup = "jdbc/...")} in the module's {@code java:comp/env}, where its
     * resource references bind the names; CDI beans' and JNDI lookups find
     * wildfly-config/pgbus.cli's {@code java:/jdbc/...} bindings.
     */
    @Override
    public WebArchive prepare(WebArchive war) {
      return war.addAsWebInfResource(
              "wildfly/jboss-deployment-structure.xml", "jboss-deployment-structure.xml")
          .setWebXML("wildfly/web.xml");
    }

    /**
     * What docs/wildfly.md ("The doctor") tells a user to add: BASIC login against the application
     * realm (jboss-web.xml: security domain other), where the pom's add-user.sh put the test users,
     * and RESTEasy enforcing {@code @RolesAllowed}.
     */
    @Override
    public WebArchive withBasicAuth(WebArchive war) {
      war.delete("WEB-INF/web.xml");
      return war.setWebXML("wildfly/web-basic-auth.xml")
          .addAsWebInfResource("wildfly/jboss-web.xml", "jboss-web.xml");
    }

    @Override
    public String health(URL deploymentUrl) {
      String url = System.getProperty("pgbus.it.health.url");
      if (url == null) {
        throw new IllegalStateException(
            "system property pgbus.it.health.url is not set; run the ITs through Maven (-Pwildfly)");
      }
      return url;
    }
  };

  private static final String LIBERTY_PREFIX = "jdbc/";

  /**
   * The server of this run: {@code pgbus.it.server}, {@code liberty} when it is not set. Inside the
   * server too: the WildFly test server has the property, the Liberty one does not.
   */
  public static TestServer current() {
    String name = System.getProperty("pgbus.it.server", "liberty");
    try {
      return valueOf(name.strip().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalStateException(
          "pgbus.it.server=" + name + " is not a test server; use liberty or wildfly", e);
    }
  }

  /** pgbus's resource keys whose default does not fit this server, with the value that does. */
  abstract Map<String, String> resources();

  /** The server's name in reports and logs: {@code liberty}, {@code wildfly}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** This server's JNDI name of the test datasource that Liberty calls {@code libertyName}. */
  public abstract String dataSource(String libertyName);

  /** Adds what this server needs to a test WAR. */
  public abstract WebArchive prepare(WebArchive war);

  /**
   * Lets the WAR's callers log in with BASIC credentials as the test users (admin/admin-secret in
   * the group pgbus-admin); call after {@link #prepare}.
   */
  public abstract WebArchive withBasicAuth(WebArchive war);

  /** The MicroProfile Health root ({@code .../health}) of this server. */
  public abstract String health(URL deploymentUrl);

  /**
   * The pgbus configuration lines of a test WAR: the test's own, after lines that point pgbus at
   * this server's resources for each resource key the test does not set itself.
   */
  public List<String> pgbusConfig(String... testLines) {
    List<String> lines = new ArrayList<>();
    new TreeMap<>(resources())
        .forEach(
            (key, value) -> {
              if (Arrays.stream(testLines).noneMatch(line -> line.startsWith(key + "="))) {
                lines.add(key + "=" + value);
              }
            });
    lines.addAll(Arrays.asList(testLines));
    return lines;
  }
}
