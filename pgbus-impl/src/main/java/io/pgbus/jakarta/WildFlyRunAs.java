package io.pgbus.jakarta;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.security.PrivilegedExceptionAction;

/**
 * WildFly: an Elytron run-as identity of the deployment's security domain. The domain is the one
 * WildFly associates with the deployment's class loader ({@code SecurityDomain.getCurrent()}, read
 * on the job's thread, whose context class loader is the application's), so the deployment must
 * name one (jboss-web.xml or jboss-ejb3.xml {@code security-domain}). From the domain's anonymous
 * identity, {@code createRunAsIdentity(user, false)} asks the domain's realm for the user again:
 * its roles come from the realm (and role mappers) as at a login, and a user the realm no longer
 * has is refused. {@code false}: pgbus, not the anonymous identity, decides to run as the user, so
 * no {@code RunAsPrincipalPermission} is checked; under a Java security manager the deployment
 * needs {@code ElytronPermission "setRunAsPrincipal"} and {@code "getSecurityDomain"}
 * (permissions.xml). The work then runs with that identity current in the domain ({@code runAs}),
 * which EJB and web security of the same domain read.
 */
final class WildFlyRunAs implements RunAsIdentity {

  private static final String SECURITY_DOMAIN = "org.wildfly.security.auth.server.SecurityDomain";

  private final Method getCurrent;
  private final Method anonymous;
  private final Method createRunAs;
  private final Method runAs;

  private WildFlyRunAs(Class<?> domain, Class<?> identity) throws NoSuchMethodException {
    getCurrent = domain.getMethod("getCurrent");
    anonymous = domain.getMethod("getAnonymousSecurityIdentity");
    createRunAs = identity.getMethod("createRunAsIdentity", String.class, boolean.class);
    runAs = identity.getMethod("runAs", PrivilegedExceptionAction.class);
  }

  /** This implementation when Elytron's API is visible through {@code loader}. */
  static WildFlyRunAs find(ClassLoader loader) {
    try {
      Class<?> domain = Class.forName(SECURITY_DOMAIN, true, loader);
      Class<?> identity = domain.getMethod("getAnonymousSecurityIdentity").getReturnType();
      return new WildFlyRunAs(domain, identity);
    } catch (ReflectiveOperationException | LinkageError e) {
      return null;
    }
  }

  @Override
  public String server() {
    return "WildFly";
  }

  @Override
  public Object enter(Object identity, PrivilegedExceptionAction<?> action)
      throws ReflectiveOperationException {
    return runAs.invoke(identity, action);
  }

  @Override
  public Object identity(String user) throws Refused {
    Object domain;
    try {
      domain = getCurrent.invoke(null);
      if (domain == null) {
        // The job's thread may carry another context class loader than the deployment module's
        // that holds pgbus (WildFly registers the domain with the module's loader).
        Thread t = Thread.currentThread();
        ClassLoader before = t.getContextClassLoader();
        t.setContextClassLoader(WildFlyRunAs.class.getClassLoader());
        try {
          domain = getCurrent.invoke(null);
        } finally {
          t.setContextClassLoader(before);
        }
      }
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new Refused("WildFly would not name the deployment's security domain: " + e, e);
    }
    if (domain == null) {
      throw new Refused(
          "the deployment has no Elytron security domain to find user '"
              + user
              + "' in: name one in WEB-INF/jboss-web.xml (<security-domain>other</security-domain>,"
              + " mapped to an Elytron domain by an application-security-domain)",
          null);
    }
    try {
      return createRunAs.invoke(anonymous.invoke(domain), user, false);
    } catch (InvocationTargetException e) {
      Throwable why = e.getCause() == null ? e : e.getCause();
      throw new Refused(
          "WildFly refused the identity of user '"
              + user
              + "' in the deployment's security domain: "
              + why
              + "; the user must exist in the domain's realm",
          why);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new Refused("WildFly refused the identity of user '" + user + "': " + e, e);
    }
  }
}
