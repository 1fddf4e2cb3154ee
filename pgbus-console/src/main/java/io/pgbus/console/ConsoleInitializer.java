package io.pgbus.console;

import jakarta.servlet.HttpConstraintElement;
import jakarta.servlet.HttpMethodConstraintElement;
import jakarta.servlet.ServletContainerInitializer;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletRegistration;
import jakarta.servlet.ServletSecurityElement;
import jakarta.servlet.annotation.ServletSecurity.EmptyRoleSemantic;
import jakarta.servlet.annotation.ServletSecurity.TransportGuarantee;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.logging.Logger;

/**
 * Registers the console in every WAR that carries this jar (found through {@code
 * META-INF/services}): the {@link ConsoleServlet} at {@code pgbus.console.path} with a security
 * constraint that admits the roles pgbus-viewer and pgbus-admin only, so the pages are never open
 * to anonymous users, whatever the WAR's web.xml says, and TRACE is denied to all. The settings
 * come from MicroProfile Config when the server has it, else from the context parameters of the
 * same names.
 */
public final class ConsoleInitializer implements ServletContainerInitializer {
  private static final Logger LOG = Logger.getLogger(ConsoleInitializer.class.getName());

  static final String VIEWER = "pgbus-viewer";
  static final String ADMIN = "pgbus-admin";
  static final String SERVLET_NAME = "pgbus-console";

  @Override
  public void onStartup(Set<Class<?>> classes, ServletContext context) {
    ConsoleConfig config = ConsoleConfig.read(settings(context));
    if (!config.enabled()) {
      LOG.info(() -> "pgbus console: disabled (" + ConsoleConfig.ENABLED + "=false)");
      return;
    }
    context.declareRoles(VIEWER, ADMIN);
    ServletRegistration.Dynamic servlet =
        context.addServlet(SERVLET_NAME, new ConsoleServlet(config));
    if (servlet == null) {
      throw new IllegalStateException(
          "pgbus console: the WAR already has a servlet named " + SERVLET_NAME + "; remove it");
    }
    Set<String> taken = servlet.addMapping(config.path(), config.path() + "/*");
    if (!taken.isEmpty()) {
      throw new IllegalStateException(
          "pgbus console: "
              + ConsoleConfig.PATH
              + "="
              + config.path()
              + " is taken by another servlet of this WAR ("
              + taken
              + "); choose another path");
    }
    // Enforced by the container before the servlet runs, so the static pages are protected too.
    // TRACE is denied to everyone: HttpServlet's would echo the request, Authorization included.
    servlet.setServletSecurity(
        new ServletSecurityElement(
            new HttpConstraintElement(TransportGuarantee.NONE, VIEWER, ADMIN),
            List.of(
                new HttpMethodConstraintElement(
                    "TRACE", new HttpConstraintElement(EmptyRoleSemantic.DENY)))));
    LOG.info(
        () ->
            "pgbus console: at "
                + context.getContextPath()
                + config.path()
                + "/ for the roles "
                + VIEWER
                + " and "
                + ADMIN
                + ", on the admin API at "
                + context.getContextPath()
                + config.api());
  }

  private static Function<String, Optional<String>> settings(ServletContext context) {
    Function<String, Optional<String>> params =
        key -> Optional.ofNullable(context.getInitParameter(key));
    try {
      var mp = org.eclipse.microprofile.config.ConfigProvider.getConfig(context.getClassLoader());
      return key -> mp.getOptionalValue(key, String.class).or(() -> params.apply(key));
    } catch (LinkageError | IllegalStateException e) {
      // No MicroProfile Config on this server: the context parameters alone.
      return params;
    }
  }
}
