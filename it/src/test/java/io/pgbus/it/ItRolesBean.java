package io.pgbus.it;

import jakarta.annotation.Resource;
import jakarta.annotation.security.DeclareRoles;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ejb.SessionContext;
import jakarta.ejb.Stateless;

/**
 * An EJB only the role pgbus-admin may call, which says who called it: what a handler of a queue
 * that runs as the enqueuer calls (RunAsIT). On WildFly it is in the security domain other (the
 * WAR's jboss-ejb3.xml in RunAsIT).
 */
@Stateless
@DeclareRoles("pgbus-admin")
public class ItRolesBean {

  @Resource SessionContext context;

  @RolesAllowed("pgbus-admin")
  public String callerWithAdminRole() {
    return context.getCallerPrincipal().getName();
  }
}
