package io.pgbus.jakarta;

import io.pgbus.PgbusException;
import io.pgbus.engine.JobCipher;
import io.pgbus.engine.ListenerConnections;
import io.pgbus.engine.PoolerGuard;
import io.pgbus.engine.SchemaName;
import jakarta.annotation.PostConstruct;
import jakarta.enterprise.concurrent.ManagedExecutorService;
import jakarta.enterprise.concurrent.ManagedThreadFactory;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.DriverManager;
import java.util.Properties;
import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

/**
 * The container resources pgbus runs on, resolved once from the configured JNDI names: the JTA
 * datasource (enqueue, claims, job transactions), the listener's non-JTA datasource or direct URL,
 * and the managed executor.
 */
@ApplicationScoped
public class PgbusResources {

  /**
   * The key that tells the doctor the JTA datasource's maxPoolSize (set in pgbus-datasources.xml).
   */
  static final String POOL_SIZE_KEY = "pgbus.datasource.max-pool-size";

  private PgbusSettings settings;
  private JobCipher cipher;
  private RunAsQueues runAsQueues;
  private Integer poolMax;
  private DataSource rawDataSource;
  private DataSource dataSource;
  private final PoolerGuard pooler = new PoolerGuard();
  private ManagedExecutorService executor;
  private ManagedThreadFactory threadFactory;

  @PostConstruct
  void resolve() {
    Config config = ConfigProvider.getConfig();
    settings =
        PgbusSettings.read(
            key -> config.getOptionalValue(key, String.class), config.getPropertyNames());
    cipher =
        EncryptionSettings.read(
            key -> config.getOptionalValue(key, String.class), config.getPropertyNames());
    runAsQueues =
        RunAsQueues.read(
            key -> config.getOptionalValue(key, String.class), config.getPropertyNames());
    poolMax =
        config
            .getOptionalValue(POOL_SIZE_KEY, String.class)
            .map(String::strip)
            .filter(v -> v.matches("\\d{1,6}"))
            .map(Integer::valueOf)
            .orElse(null);
    rawDataSource = lookup(settings.dataSource(), DataSource.class, "pgbus.datasource");
    // Every pgbus statement on it is guarded against a transaction-mode pooler (PoolerGuard), and
    // runs in the instance's schema (pgbus.schema; nothing is wrapped for the default one). The
    // container's handle is wrapped, never bypassed: it stays enlisted in the caller's transaction.
    dataSource = settings.schema().wrap(pooler.wrap(rawDataSource));
    executor = lookup(settings.executor(), ManagedExecutorService.class, "pgbus.executor");
    threadFactory =
        lookup(settings.threadFactory(), ManagedThreadFactory.class, "pgbus.thread-factory");
  }

  PgbusSettings settings() {
    return settings;
  }

  /** Seals the jobs of the queues that encrypt ({@link EncryptionSettings}). */
  public JobCipher cipher() {
    return cipher;
  }

  /** The queues whose handler runs as the enqueuer ({@link RunAsQueues}). */
  RunAsQueues runAsQueues() {
    return runAsQueues;
  }

  /**
   * {@code pgbus.admin.mask-payloads}: whether the admin API hides payloads, error texts and
   * results from callers without the role {@code pgbus-admin}.
   */
  public boolean adminMaskPayloads() {
    return settings.adminMaskPayloads();
  }

  /** The JTA datasource's maxPoolSize as declared in configuration, or null when unknown. */
  Integer poolMax() {
    return poolMax;
  }

  /** The JTA datasource: connections taken inside a transaction join it. */
  public DataSource dataSource() {
    return dataSource;
  }

  /** The guard of pgbus's statements on the JTA datasource (issue #33). */
  /** The schema of this deployment's instance ({@code pgbus.schema}). */
  public SchemaName schema() {
    return settings.schema();
  }

  PoolerGuard pooler() {
    return pooler;
  }

  /** Looks for a transaction-mode pooler in front of the JTA datasource ({@link PoolerGuard}). */
  PoolerGuard.Session inspectPooler() throws java.sql.SQLException {
    return pooler.inspect(rawDataSource);
  }

  ManagedExecutorService executor() {
    return executor;
  }

  /**
   * Makes the threads of the engine's long-running loops, so they hold no thread of the executor: a
   * server's shared pool shrinks between bursts, and loops parked on it left jobs waiting.
   */
  ManagedThreadFactory threadFactory() {
    return threadFactory;
  }

  /**
   * Opens the listener's dedicated connection: from {@code pgbus.listener.url} when set (to bypass
   * a transaction-mode pooler), else from the non-JTA datasource {@code pgbus.listener.datasource}.
   */
  ListenerConnections listenerConnections() {
    return settings.schema().wrap(unmappedListenerConnections());
  }

  private ListenerConnections unmappedListenerConnections() {
    if (settings.listenerUrl() != null) {
      String url = settings.listenerUrl();
      var props = new Properties();
      if (settings.listenerUser() != null) {
        props.setProperty("user", settings.listenerUser());
      }
      if (settings.listenerPassword() != null) {
        props.setProperty("password", settings.listenerPassword());
      }
      props.setProperty("tcpKeepAlive", "true");
      return () -> DriverManager.getConnection(url, props);
    }
    DataSource listener =
        lookup(settings.listenerDataSource(), DataSource.class, "pgbus.listener.datasource");
    return listener::getConnection;
  }

  private static <T> T lookup(String name, Class<T> type, String key) {
    try {
      Object found = InitialContext.doLookup(name);
      if (!type.isInstance(found)) {
        throw new PgbusException(
            "pgbus: "
                + key
                + "="
                + name
                + " names a "
                + found.getClass().getName()
                + ", not a "
                + type.getSimpleName());
      }
      return type.cast(found);
    } catch (NamingException e) {
      throw new PgbusException(
          "pgbus: "
              + key
              + "="
              + name
              + " was not found in JNDI ("
              + e.getMessage()
              + "); declare"
              + " it in the server's configuration or set "
              + key
              + " to the JNDI name you use"
              + " (WildFly: java:jboss/..., see docs/wildfly.md)",
          e);
    }
  }
}
