package io.pgbus.jakarta;

import jakarta.enterprise.inject.spi.CDI;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import java.util.Set;

/**
 * In a WAR that carries pgbus (found through {@code META-INF/services}), starts the runtime's drain
 * when the web module stops: on WildFly that is before the EJB components wait for their calls in
 * flight, running jobs among them (see {@link UndeployDrain}).
 */
public final class PgbusWebLifecycle implements ServletContainerInitializer {

  private static final System.Logger LOG = System.getLogger(PgbusWebLifecycle.class.getName());

  @Override
  public void onStartup(Set<Class<?>> classes, ServletContext context) {
    context.addListener(new Listener());
  }

  /** Drains on {@code contextDestroyed}; a WAR without a pgbus runtime is left alone. */
  static final class Listener implements ServletContextListener {
    @Override
    public void contextDestroyed(ServletContextEvent event) {
      try {
        CDI.current().select(UndeployDrain.class).get().begin("the web module stops");
      } catch (RuntimeException | LinkageError e) {
        // No runtime in this module (or CDI is already gone): its @PreDestroy drains instead.
        LOG.log(
            System.Logger.Level.DEBUG,
            "pgbus: no drain from the web module {0}: {1}",
            event.getServletContext().getContextPath(),
            e.toString());
      }
    }
  }
}
