package io.pgbus.jakarta.admin;

import io.pgbus.JobQueue;
import io.pgbus.Schedules;
import io.pgbus.admin.JobAdmin;
import io.pgbus.engine.Fleet;
import io.pgbus.engine.JobLinks;
import io.pgbus.engine.WorkflowGraph;
import io.pgbus.jakarta.CallerTransaction;
import io.pgbus.jakarta.HandlerRegistry;
import io.pgbus.jakarta.PgbusResources;
import io.pgbus.jakarta.PgbusRuntime;
import jakarta.annotation.security.DeclareRoles;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * The REST admin API (docs/admin-api.md): jobs, queues and throughput, schedules, the fleet, the
 * doctor and the CSRF token, as JSON. This root holds no endpoint logic: each area is a
 * sub-resource ({@link JobsResource}, {@link QueuesResource}, {@link SchedulesResource}, {@link
 * FleetResource}) made per request with what it reads through ({@link JobAdmin}, {@link JobQueue},
 * {@link Schedules}, the engine's {@link io.pgbus.engine.EngineStatus} and the {@link Fleet}) and
 * the request's {@link AdminCall} (roles, CSRF, masking, failures). Like {@link
 * io.pgbus.jakarta.DoctorResource} it carries no {@code @Path} and is never mounted by itself; an
 * application opts in with a subclass:
 *
 * <pre>{@code
 * @RequestScoped
 * @Path("pgbus/admin")
 * public class PgbusAdmin extends io.pgbus.jakarta.admin.AdminResource {}
 * }</pre>
 *
 * <p>Roles: {@value #VIEWER} reads, {@value #ADMIN} reads and acts; anonymous callers get 401 and a
 * viewer's action 403. Actions are POSTs that must carry the header {@value #CSRF_HEADER} equal to
 * the cookie {@value #CSRF_COOKIE} that {@code GET csrf} sets (double submit: a page of another
 * origin can neither read the cookie nor set the header). Bad input is a 400 that names the field;
 * any other failure is a 500 with a category only, the details go to the log. Every answer carries
 * {@code X-Content-Type-Options: nosniff}.
 *
 * <p>While payloads are masked for viewers ({@code pgbus.admin.mask-payloads}), so is what reveals
 * them: a job's errors, which handlers build from the payload, and the payload search, which is for
 * admins only. Payload searches are rate-limited per user ({@link SearchBudget}), bounded in time
 * and window ({@link JobAdmin#search}); request bodies are read up to {@link
 * RequestBody#MAX_BYTES}.
 */
@RequestScoped
@DeclareRoles({AdminResource.VIEWER, AdminResource.ADMIN})
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public class AdminResource {

  /** The role that may read. */
  public static final String VIEWER = "pgbus-viewer";

  /** The role that may read and act. */
  public static final String ADMIN = "pgbus-admin";

  /** The header an action must carry, equal to the cookie {@value #CSRF_COOKIE}. */
  public static final String CSRF_HEADER = "X-Pgbus-CSRF";

  /** The cookie {@code GET csrf} sets. */
  public static final String CSRF_COOKIE = "pgbus-csrf";

  private static final SecureRandom RANDOM = new SecureRandom();

  @Inject JobAdmin admin;
  @Inject JobQueue queue;
  @Inject Schedules schedules;
  @Inject PgbusRuntime runtime;
  @Inject PgbusResources resources;
  @Inject HandlerRegistry handlers;
  @Inject CallerTransaction transaction;

  /** {@code jobs}, {@code jobs/{id}} and their actions. */
  @Path("jobs")
  public JobsResource jobs(@Context SecurityContext security, @Context HttpHeaders headers) {
    return new JobsResource(call(security, headers), admin, queue, handlers::handlerClasses);
  }

  /** {@code queues} and {@code queues/{queue}/pause|resume}. */
  @Path("queues")
  public QueuesResource queues(@Context SecurityContext security, @Context HttpHeaders headers) {
    return new QueuesResource(
        call(security, headers),
        admin,
        queue,
        () -> runtime.engine().status(),
        () -> runtime.engine().queueLimits(),
        () -> fleetModel().nodes());
  }

  /**
   * {@code queues/{queue}/limit}: the queue's flow control and its audited changes; an admin's live
   * change ({@link QueueLimitResource}).
   */
  @Path("queues/{queue}/limit")
  public QueueLimitResource queueLimit(
      @Context SecurityContext security,
      @Context HttpHeaders headers,
      @PathParam("queue") String name) {
    return new QueueLimitResource(call(security, headers), transaction, name);
  }

  /** {@code batches/{id}}: a batch, its callback and its members ({@link LinksResource}). */
  @Path("batches/{id}")
  public LinksResource batch(
      @Context SecurityContext security, @Context HttpHeaders headers, @PathParam("id") String id) {
    return new LinksResource(call(security, headers), new JobLinks(resources.dataSource()), id);
  }

  /**
   * {@code workflows/{id}} and {@code workflows/{id}/cancel|retry}: a workflow's graph, and a whole
   * workflow's cancel and retry ({@link WorkflowsResource}).
   */
  @Path("workflows/{id}")
  public WorkflowsResource workflow(
      @Context SecurityContext security, @Context HttpHeaders headers, @PathParam("id") String id) {
    return new WorkflowsResource(
        call(security, headers), new WorkflowGraph(resources.dataSource()), queue, id);
  }

  /** {@code jobs/{id}/links}: the job's batch, the jobs it waits on and those that wait on it. */
  @GET
  @Path("jobs/{id}/links")
  @Produces(MediaType.APPLICATION_JSON)
  public Response jobLinks(
      @Context SecurityContext security, @Context HttpHeaders headers, @PathParam("id") String id) {
    return new LinksResource(call(security, headers), new JobLinks(resources.dataSource()), id)
        .jobLinks();
  }

  /**
   * {@code handlers}: this application's job handlers and the queues each is bound to, for the
   * search by handler.
   */
  @GET
  @Path("handlers")
  @Produces(MediaType.APPLICATION_JSON)
  public Response handlers(@Context SecurityContext security, @Context HttpHeaders headers) {
    return call(security, headers)
        .read(
            () -> {
              var byHandler = new java.util.TreeMap<String, java.util.List<String>>();
              handlers
                  .handlerClasses()
                  .forEach(
                      (q, type) ->
                          byHandler.computeIfAbsent(type, t -> new java.util.ArrayList<>()).add(q));
              return AdminCall.ok(
                  new HandlersJson(
                      byHandler.entrySet().stream()
                          .map(e -> new HandlerJson(e.getKey(), e.getValue()))
                          .toList()));
            });
  }

  /** {@code GET handlers}: by class name. */
  public record HandlersJson(java.util.List<HandlerJson> handlers) {}

  /** A handler's class name and its queues. */
  @JsonbPropertyOrder({"handler", "queues"})
  public record HandlerJson(String handler, java.util.List<String> queues) {}

  /** {@code schedules}, {@code schedules/{name}} and their actions. */
  @Path("schedules")
  public SchedulesResource schedules(
      @Context SecurityContext security, @Context HttpHeaders headers) {
    return new SchedulesResource(call(security, headers), schedules);
  }

  /** {@code fleet}. */
  @Path("fleet")
  public FleetResource fleet(@Context SecurityContext security, @Context HttpHeaders headers) {
    return new FleetResource(
        call(security, headers), () -> fleetModel().snapshot(), () -> runtime.engine().status());
  }

  /** {@code history}: the per-minute history of the queues, for the timing charts. */
  @Path("history")
  public HistoryResource history(@Context SecurityContext security, @Context HttpHeaders headers) {
    return new HistoryResource(call(security, headers), admin);
  }

  @GET
  @Path("throughput")
  @Produces(MediaType.APPLICATION_JSON)
  public Response throughput(@Context SecurityContext security, @Context HttpHeaders headers) {
    return queues(security, headers).throughput();
  }

  /**
   * The doctor's report, for admins only, as {@link io.pgbus.jakarta.DoctorResource}: it shows the
   * configuration, the database and its connection limits.
   */
  @GET
  @Path("doctor")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response doctor(@Context SecurityContext security, @Context HttpHeaders headers) {
    // The report as the server's provider writes it, as DoctorResource does: one format for both.
    return call(security, headers).adminRead(() -> Response.ok(runtime.doctor()).build());
  }

  /**
   * A fresh CSRF token: in the body, and in the cookie {@value #CSRF_COOKIE} (HttpOnly,
   * SameSite=Strict, on the API's path); send it back as the header {@value #CSRF_HEADER} with
   * every action.
   */
  @GET
  @Path("csrf")
  @Produces(MediaType.APPLICATION_JSON)
  public Response csrf(
      @Context SecurityContext security, @Context HttpHeaders headers, @Context UriInfo uri) {
    AdminCall call = call(security, headers);
    return call.read(
        () -> {
          byte[] bytes = new byte[32];
          RANDOM.nextBytes(bytes);
          String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
          NewCookie cookie =
              new NewCookie.Builder(CSRF_COOKIE)
                  .value(token)
                  .path(uri.getBaseUri().getPath())
                  .httpOnly(true)
                  .secure(call.secure())
                  .sameSite(NewCookie.SameSite.STRICT)
                  .build();
          return Response.fromResponse(AdminCall.ok(new CsrfJson(CSRF_HEADER, token)))
              .cookie(cookie)
              .build();
        });
  }

  /** The CSRF token and the header to send it in. */
  @JsonbPropertyOrder({"header", "token"})
  public record CsrfJson(String header, String token) {}

  private AdminCall call(SecurityContext security, HttpHeaders headers) {
    return new AdminCall(security, headers, resources.adminMaskPayloads());
  }

  private Fleet fleetModel() {
    return new Fleet(resources.dataSource());
  }
}
