package io.pgbus.it;

import jakarta.annotation.security.DeclareRoles;
import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RunAs;
import jakarta.ejb.EJB;
import jakarta.ejb.Stateless;

/**
 * Gives a handler's work an identity (docs/operations.md, "Which identity a handler runs as"): its
 * calls carry the role pgbus-admin, and the server maps that run-as role to the user admin
 * (Liberty: the EAR's ibm-application-bnd.xml; WildFly: the WAR's jboss-ejb3.xml, see {@link
 * RunAsIT}).
 */
@Stateless
@RunAs("pgbus-admin")
@DeclareRoles("pgbus-admin")
@PermitAll
public class ItRunAsBean {

  @EJB ItEnqueuingBean enqueuer;

  /** Enqueues (and cancels) a job through an EJB that sees the run-as identity as its caller. */
  public long enqueueAsRunAsUser(String text) {
    return enqueuer.enqueueAndCancel(text);
  }
}
