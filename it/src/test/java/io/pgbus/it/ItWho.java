package io.pgbus.it;

import jakarta.annotation.security.DeclareRoles;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;

/** A resource for authenticated users that calls {@link ItEnqueuingBean}. */
@RequestScoped
@Path("pgbus/who")
@DeclareRoles("pgbus-admin")
public class ItWho {

  @Inject ItEnqueuingBean bean;

  @GET
  @RolesAllowed("pgbus-admin")
  public String enqueue(@QueryParam("text") String text) {
    return Long.toString(bean.enqueueAndCancel(text));
  }
}
