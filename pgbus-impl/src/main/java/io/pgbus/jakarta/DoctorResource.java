package io.pgbus.jakarta;

import jakarta.annotation.security.DeclareRoles;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

/**
 * The doctor's report as JSON, for users in the role {@value #ROLE} only. It tells the PostgreSQL
 * version, the database, its connection limits, the pool size and every queue name, so it is never
 * mounted by itself: it carries no {@code @Path}, and JAX-RS class scanning, which finds every
 * {@code @Path} class in the application's jars, passes it by. An application opts in with a
 * subclass of its own:
 *
 * <pre>{@code
 * @RequestScoped
 * @Path("pgbus/doctor")
 * public class PgbusDoctor extends DoctorResource {}
 * }</pre>
 *
 * <p>The role is checked here as well as declared with {@code @RolesAllowed}: a server that does
 * not enforce the annotation on JAX-RS resources (WildFly without {@code
 * resteasy.role.based.security}) still answers 401 to anonymous callers and 403 to others. Reports
 * are cached for {@link PgbusRuntime#DOCTOR_CACHE}, so repeated calls cost the database nothing.
 * The admin API's {@code GET doctor} follows the same rule: admins only, viewers get 403.
 */
@RequestScoped
@DeclareRoles(DoctorResource.ROLE)
public class DoctorResource {

  /** The role that may read the doctor's report. */
  public static final String ROLE = "pgbus-admin";

  @Inject PgbusRuntime runtime;

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ROLE)
  public Response report(@Context SecurityContext security) {
    if (security == null || security.getUserPrincipal() == null) {
      return nosniff(
          Response.status(Response.Status.UNAUTHORIZED)
              .header(HttpHeaders.WWW_AUTHENTICATE, "Basic realm=\"pgbus\"")
              .build());
    }
    if (!security.isUserInRole(ROLE)) {
      return nosniff(Response.status(Response.Status.FORBIDDEN).build());
    }
    return nosniff(Response.ok(runtime.doctor()).build());
  }

  /** As every answer of the admin API: no browser may read the report as anything but JSON. */
  private static Response nosniff(Response r) {
    return Response.fromResponse(r).header("X-Content-Type-Options", "nosniff").build();
  }
}
