package io.pgbus.jakarta;

import io.pgbus.InvalidScheduleException;
import io.pgbus.JobQueue;
import io.pgbus.Schedule;
import io.pgbus.Schedules;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobPage;
import io.pgbus.admin.JobState;
import io.pgbus.admin.JobView;
import io.pgbus.admin.QueueStats;
import io.pgbus.admin.SearchTimeoutException;
import io.pgbus.admin.Throughput;
import io.pgbus.engine.Durations;
import io.pgbus.engine.Engine;
import io.pgbus.engine.EngineStatus;
import io.pgbus.engine.FleetStore;
import io.pgbus.engine.ListenerState;
import io.pgbus.engine.NodeStore;
import jakarta.annotation.security.DeclareRoles;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Cookie;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.NewCookie;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.core.UriInfo;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The REST admin API (docs/admin-api.md): jobs (search, one, actions), queues, throughput, crons,
 * schedules (list, one, create, update, actions), fleet and the doctor, as JSON. Like {@link
 * DoctorResource} it carries no {@code @Path} and is never mounted by itself; an application opts
 * in with a subclass:
 *
 * <pre>{@code
 * @RequestScoped
 * @Path("pgbus/admin")
 * public class PgbusAdmin extends AdminResource {}
 * }</pre>
 *
 * <p>Roles: {@value #VIEWER} reads, {@value #ADMIN} reads and acts; anonymous callers get 401 and a
 * viewer's action 403. The roles are checked here as well as declared (a server that does not
 * enforce {@code @RolesAllowed} on JAX-RS resources still refuses). Actions are POSTs that must
 * carry the header {@value #CSRF_HEADER} equal to the cookie {@value #CSRF_COOKIE} that {@code GET
 * csrf} sets (double submit: a page of another origin can neither read the cookie nor set the
 * header). Bad input is a 400 that names the field; any other failure is a 500 with a category
 * only, the details go to the log. Every answer carries {@code X-Content-Type-Options: nosniff}.
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

  /** The default page size of a search, and of a bulk action's limit. */
  static final int DEFAULT_PAGE = 50;

  /** How many audit entries GET schedules/{name} shows, newest first. */
  static final int SCHEDULE_HISTORY = 20;

  static final int DEFAULT_BULK = 1000;

  private static final System.Logger LOG = System.getLogger(AdminResource.class.getName());
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Payload searches per user, for every subclass in this application. */
  private static final SearchBudget SEARCHES = new SearchBudget(System::nanoTime);

  /** HTTP 422: a search too broad to finish in its time (JAX-RS names no such status). */
  private static final int UNPROCESSABLE = 422;

  @Inject JobAdmin admin;
  @Inject JobQueue queue;
  @Inject Schedules schedules;
  @Inject PgbusRuntime runtime;
  @Inject PgbusResources resources;

  @GET
  @Path("jobs")
  @Produces(MediaType.APPLICATION_JSON)
  public Response jobs(@Context SecurityContext security, @Context UriInfo uri) {
    return read(
        security,
        () -> {
          MultivaluedMap<String, String> q = uri.getQueryParameters();
          boolean masked = masked(security);
          if (q.getFirst("payload") != null) {
            // Whether a job matches tells what its payload holds: a masked PIN took 200 guesses.
            if (masked) {
              return error(
                  Response.Status.FORBIDDEN,
                  "forbidden",
                  "payload",
                  "a payload search is for the role "
                      + ADMIN
                      + " while pgbus.admin.mask-payloads is on: it tells what masked payloads"
                      + " hold");
            }
            long wait = SEARCHES.take(security.getUserPrincipal().getName());
            if (wait > 0) {
              return Response.fromResponse(
                      error(
                          Response.Status.TOO_MANY_REQUESTS,
                          "rate-limited",
                          "payload",
                          "at most "
                              + SearchBudget.BURST
                              + " payload searches at once per user, then one a second: retry in "
                              + wait
                              + " s"))
                  .header(HttpHeaders.RETRY_AFTER, wait)
                  .build();
            }
          }
          JobFilter filter = AdminParams.filter(q);
          Long before = AdminParams.number("before", q.getFirst("before"));
          int limit = AdminParams.positive("limit", q.getFirst("limit"), DEFAULT_PAGE);
          JobPage page = admin.search(filter, before, limit);
          var jobs = new ArrayList<Map<String, Object>>(page.jobs().size());
          for (JobView j : page.jobs()) {
            jobs.add(job(j, false, masked));
          }
          var body = new LinkedHashMap<String, Object>();
          body.put("jobs", jobs);
          body.put("next", page.next() == null ? null : String.valueOf(page.next()));
          return Response.ok(body).build();
        });
  }

  @GET
  @Path("jobs/{id}")
  @Produces(MediaType.APPLICATION_JSON)
  public Response job(@Context SecurityContext security, @PathParam("id") String id) {
    return read(
        security,
        () -> {
          long jobId = AdminParams.id(id);
          return admin
              .job(jobId)
              .map(j -> Response.ok(job(j, true, masked(security))).build())
              .orElseGet(() -> error(Response.Status.NOT_FOUND, "not-found", "id", null));
        });
  }

  @POST
  @Path("jobs/{id}/{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response actOnOne(
      @Context SecurityContext security,
      @Context HttpHeaders headers,
      @PathParam("id") String id,
      @PathParam("action") String action) {
    return act(security, headers, () -> changed(action, JobFilter.byId(AdminParams.id(id)), 1));
  }

  @POST
  @Path("jobs/{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response actOnMany(
      @Context SecurityContext security,
      @Context HttpHeaders headers,
      @Context UriInfo uri,
      @PathParam("action") String action) {
    return act(
        security,
        headers,
        () -> {
          MultivaluedMap<String, String> q = uri.getQueryParameters();
          return changed(
              action,
              AdminParams.filter(q),
              AdminParams.positive("limit", q.getFirst("limit"), DEFAULT_BULK));
        });
  }

  /**
   * Pauses or resumes a queue for every JVM ({@link JobQueue#pause}): {@code POST
   * queues/{queue}/pause} or {@code .../resume}. Answers whether it changed anything and the pause
   * now in force: {@code {"queue":"mail","action":"pause","changed":true,"paused":true}}.
   */
  @POST
  @Path("queues/{queue}/{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response pauseOrResume(
      @Context SecurityContext security,
      @Context HttpHeaders headers,
      @PathParam("queue") String name,
      @PathParam("action") String action) {
    return act(
        security,
        headers,
        () -> {
          JobFilter.all().withQueue(name); // the same bound and message as a search's
          boolean changed =
              switch (action) {
                case "pause" -> queue.pause(name);
                case "resume" -> queue.resume(name);
                default ->
                    throw new InvalidFilterException("action", action, "use pause or resume");
              };
          var body = new LinkedHashMap<String, Object>();
          body.put("queue", name);
          body.put("action", action);
          body.put("changed", changed);
          body.put("paused", action.equals("pause"));
          return Response.ok(body).build();
        });
  }

  @GET
  @Path("queues")
  @Produces(MediaType.APPLICATION_JSON)
  public Response queues(@Context SecurityContext security) {
    return read(
        security,
        () -> {
          Engine engine = runtime.engine();
          List<NodeStore.Node> nodes = nodes();
          var limits = new java.util.HashMap<String, io.pgbus.engine.QueueLimitStatus>();
          engine.queueLimits().forEach(l -> limits.put(l.queue(), l));
          var out = new ArrayList<Map<String, Object>>();
          for (QueueStats s : admin.queues()) {
            var m = new LinkedHashMap<String, Object>();
            m.put("queue", s.queue());
            var counts = new LinkedHashMap<String, Object>();
            for (JobState state : JobState.values()) {
              counts.put(state.sqlName(), s.counts().getOrDefault(state, 0L));
            }
            m.put("counts", counts);
            m.put("countsCapped", s.capped().stream().map(JobState::sqlName).sorted().toList());
            m.put("oldestWaitingMs", s.oldestWaiting().toMillis());
            m.put("paused", s.paused());
            m.put("limit", limit(limits.get(s.queue())));
            m.put("readers", readers(engine, nodes, s.queue()));
            out.add(m);
          }
          return Response.ok(Map.of("countCap", JobAdmin.COUNT_CAP, "queues", out)).build();
        });
  }

  /**
   * A queue's flow control (V14), or null when it has none: its limits, its running jobs, and its
   * due jobs waiting on a limit or on a worker.
   */
  private static Map<String, Object> limit(io.pgbus.engine.QueueLimitStatus l) {
    if (l == null) {
      return null;
    }
    var m = new LinkedHashMap<String, Object>();
    m.put("globalConcurrency", l.globalConcurrency());
    m.put("keyConcurrency", l.keyConcurrency());
    if (l.keyFifo()) {
      m.put("keyFifo", true);
      m.put("keyFifoSkipDead", l.keyFifoSkipDead());
    }
    m.put("running", l.running());
    m.put("waitingOnLimit", l.waitingOnLimit());
    m.put("waitingOnWorker", l.waitingOnWorker());
    if (l.rateLimit() != null) {
      m.put("rateLimit", l.rateLimit());
      m.put("rateWindowMs", l.rateWindow().toMillis());
      m.put("startsInWindow", l.startsInWindow());
    }
    return m;
  }

  @GET
  @Path("throughput")
  @Produces(MediaType.APPLICATION_JSON)
  public Response throughput(@Context SecurityContext security) {
    return read(
        security,
        () -> {
          var out = new ArrayList<Map<String, Object>>();
          for (Throughput t : admin.throughput()) {
            out.add(
                Map.of(
                    "queue",
                    t.queue(),
                    "minute",
                    t.minute().toString(),
                    "completed",
                    t.completed(),
                    "dead",
                    t.dead()));
          }
          return Response.ok(Map.of("windowMinutes", 60, "points", out)).build();
        });
  }

  /**
   * Schedules by name: {@code ?after=<name>&limit=<1..500>}; {@code next} is the next page's after.
   */
  @GET
  @Path("schedules")
  @Produces(MediaType.APPLICATION_JSON)
  public Response scheduleList(@Context SecurityContext security, @Context UriInfo uri) {
    return read(
        security,
        () -> {
          MultivaluedMap<String, String> q = uri.getQueryParameters();
          int limit = AdminParams.positive("limit", q.getFirst("limit"), DEFAULT_PAGE);
          List<Schedule> page = schedules.list(q.getFirst("after"), limit);
          boolean masked = masked(security);
          var out = new ArrayList<Map<String, Object>>(page.size());
          for (Schedule s : page) {
            out.add(ScheduleJson.toMap(s, masked));
          }
          var body = new LinkedHashMap<String, Object>();
          body.put("schedules", out);
          body.put("next", page.size() == limit ? page.get(page.size() - 1).name() : null);
          return Response.ok(body).build();
        });
  }

  @GET
  @Path("schedules/{name}")
  @Produces(MediaType.APPLICATION_JSON)
  public Response schedule(@Context SecurityContext security, @PathParam("name") String name) {
    return read(
        security,
        () ->
            schedules
                .get(name)
                .map(
                    s -> {
                      // Its latest audit entries (V18): who changed or triggered it, and when.
                      Map<String, Object> m = ScheduleJson.toMap(s, masked(security));
                      m.put(
                          "history",
                          ScheduleJson.history(schedules.history(name, SCHEDULE_HISTORY)));
                      return Response.ok(m).build();
                    })
                .orElseGet(() -> error(Response.Status.NOT_FOUND, "not-found", "name", null)));
  }

  /** Creates a schedule from a JSON body ({@link ScheduleJson}); 201 with it as stored. */
  @POST
  @Path("schedules")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response scheduleCreate(
      @Context SecurityContext security, @Context HttpHeaders headers, InputStream body) {
    return act(
        security,
        headers,
        () ->
            Response.status(Response.Status.CREATED)
                .entity(
                    ScheduleJson.toMap(
                        schedules.create(ScheduleJson.definition(body(headers, body), null)),
                        false))
                .build());
  }

  /** Replaces a schedule's definition from a JSON body; 404 when there is none. */
  @POST
  @Path("schedules/{name}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response scheduleUpdate(
      @Context SecurityContext security,
      @Context HttpHeaders headers,
      @PathParam("name") String name,
      InputStream body) {
    return act(
        security,
        headers,
        () ->
            schedules
                .update(ScheduleJson.definition(body(headers, body), name))
                .map(s -> Response.ok(ScheduleJson.toMap(s, false)).build())
                .orElseGet(() -> error(Response.Status.NOT_FOUND, "not-found", "name", null)));
  }

  /**
   * {@code POST schedules/{name}/pause|resume|delete|trigger}: {@code
   * {"name":..,"action":..,"changed":true}}, with {@code jobId} for a trigger; 404 when there is no
   * such schedule.
   */
  @POST
  @Path("schedules/{name}/{action}")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response scheduleAct(
      @Context SecurityContext security,
      @Context HttpHeaders headers,
      @PathParam("name") String name,
      @PathParam("action") String action) {
    return act(
        security,
        headers,
        () -> {
          var body = new LinkedHashMap<String, Object>();
          body.put("name", name);
          body.put("action", action);
          boolean found;
          switch (action) {
            case "pause" -> found = schedules.pause(name);
            case "resume" -> found = schedules.resume(name);
            case "delete" -> found = schedules.delete(name);
            case "trigger" -> {
              var job = schedules.trigger(name);
              found = job.isPresent();
              if (found) {
                body.put("jobId", String.valueOf(job.getAsLong()));
              }
            }
            default ->
                throw new InvalidFilterException(
                    "action", action, "use pause, resume, delete or trigger");
          }
          if (!found) {
            return error(Response.Status.NOT_FOUND, "not-found", "name", null);
          }
          body.put("changed", true);
          return Response.ok(body).build();
        });
  }

  @GET
  @Path("fleet")
  @Produces(MediaType.APPLICATION_JSON)
  public Response fleet(@Context SecurityContext security) {
    return read(
        security,
        () -> {
          Engine engine = runtime.engine();
          var body = new LinkedHashMap<String, Object>();
          try (Connection c = resources.dataSource().getConnection()) {
            String leader = engine.leaderHolder(c);
            body.put("leader", leader);
            var listeners = new ArrayList<Map<String, Object>>();
            for (FleetStore.ListenerBackend b : new FleetStore().listeners(c)) {
              var m = new LinkedHashMap<String, Object>();
              m.put("pid", b.pid());
              m.put("clientAddress", b.clientAddress());
              m.put("since", text(b.since()));
              listeners.add(m);
            }
            body.put("listeners", listeners);
            body.put("nodes", nodesJson(new NodeStore().nodes(c, KEEP_UNCONNECTED), leader));
          } catch (SQLException e) {
            throw new IllegalStateException("read the fleet: " + e.getMessage(), e);
          }
          EngineStatus now = engine.status();
          ListenerState listener = now.listener().state();
          var self = new LinkedHashMap<String, Object>();
          self.put("worker", now.workerId());
          self.put("leader", now.leader());
          self.put("listener", PgbusRuntime.listenerLabel(listener));
          self.put("mode", listener.delivering() ? "notify" : "polling");
          var capsules = new ArrayList<Map<String, Object>>();
          for (EngineStatus.CapsuleStatus c : now.capsules()) {
            var m = new LinkedHashMap<String, Object>();
            m.put("name", c.name());
            m.put("queues", c.queues());
            m.put("concurrency", c.concurrency());
            m.put("inFlight", c.inFlight());
            capsules.add(m);
          }
          self.put("capsules", capsules);
          body.put("self", self);
          return Response.ok(body).build();
        });
  }

  /** How long a node row whose JVM is not connected is still shown (it died without stopping). */
  static final Duration KEEP_UNCONNECTED = Duration.ofDays(1);

  private List<NodeStore.Node> nodes() {
    try (Connection c = resources.dataSource().getConnection()) {
      return new NodeStore().nodes(c, KEEP_UNCONNECTED);
    } catch (SQLException e) {
      throw new IllegalStateException("read the nodes: " + e.getMessage(), e);
    }
  }

  /** The capsules that read a queue: this JVM's, and each capsule of every other connected node. */
  private static List<Map<String, Object>> readers(
      Engine engine, List<NodeStore.Node> nodes, String queue) {
    var readers = new ArrayList<Map<String, Object>>();
    EngineStatus now = engine.status();
    String self = now.workerId();
    for (EngineStatus.CapsuleStatus c : now.capsules()) {
      if (c.queues().contains(queue)) {
        readers.add(Map.of("capsule", c.name(), "worker", self));
      }
    }
    for (NodeStore.Node n : nodes) {
      if (!n.connected() || n.workerId().equals(self)) {
        continue;
      }
      for (NodeStore.NodeCapsule c : n.capsules()) {
        if (c.queues().contains(queue)) {
          readers.add(Map.of("capsule", c.name(), "worker", n.workerId()));
        }
      }
    }
    return readers;
  }

  private static List<Map<String, Object>> nodesJson(List<NodeStore.Node> nodes, String leader) {
    var out = new ArrayList<Map<String, Object>>();
    for (NodeStore.Node n : nodes) {
      var m = new LinkedHashMap<String, Object>();
      m.put("worker", n.workerId());
      m.put("host", n.host());
      m.put("pid", n.pid());
      m.put("connected", n.connected());
      m.put("leader", n.workerId().equals(leader));
      m.put("listener", n.listener());
      m.put("mode", n.mode());
      m.put("startedAt", text(n.startedAt()));
      m.put("seenAt", text(n.seenAt()));
      m.put("heartbeatTtl", n.heartbeatTtl() == null ? null : Durations.format(n.heartbeatTtl()));
      m.put("alive", n.alive());
      var capsules = new ArrayList<Map<String, Object>>();
      for (NodeStore.NodeCapsule c : n.capsules()) {
        capsules.add(
            Map.of("name", c.name(), "queues", c.queues(), "concurrency", c.concurrency()));
      }
      m.put("capsules", capsules);
      out.add(m);
    }
    return out;
  }

  /**
   * The doctor's report, for admins only, as {@link DoctorResource}: it shows the configuration,
   * the database and its connection limits.
   */
  @GET
  @Path("doctor")
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(ADMIN)
  public Response doctor(@Context SecurityContext security) {
    Response denied = denied(security, true);
    return nosniff(denied != null ? denied : guarded(() -> Response.ok(runtime.doctor()).build()));
  }

  /**
   * A fresh CSRF token: in the body, and in the cookie {@value #CSRF_COOKIE} (HttpOnly,
   * SameSite=Strict, on the API's path); send it back as the header {@value #CSRF_HEADER} with
   * every action.
   */
  @GET
  @Path("csrf")
  @Produces(MediaType.APPLICATION_JSON)
  public Response csrf(@Context SecurityContext security, @Context UriInfo uri) {
    return read(
        security,
        () -> {
          byte[] bytes = new byte[32];
          RANDOM.nextBytes(bytes);
          String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
          NewCookie cookie =
              new NewCookie.Builder(CSRF_COOKIE)
                  .value(token)
                  .path(uri.getBaseUri().getPath())
                  .httpOnly(true)
                  .secure(security.isSecure())
                  .sameSite(NewCookie.SameSite.STRICT)
                  .build();
          return Response.ok(Map.of("header", CSRF_HEADER, "token", token)).cookie(cookie).build();
        });
  }

  // ---------------------------------------------------------------------------------------------

  private Response changed(String action, JobFilter filter, int limit) {
    int n =
        switch (action) {
          case "replay" -> admin.replayDead(filter, limit);
          case "retry" -> admin.retryNow(filter, limit);
          case "cancel" -> admin.cancelWaiting(filter, limit);
          case "delete" -> admin.deleteFinished(filter, limit);
          default ->
              throw new InvalidFilterException(
                  "action", action, "use replay, retry, cancel or delete");
        };
    return Response.ok(Map.of("action", action, "changed", n)).build();
  }

  private Response read(SecurityContext security, Supplier<Response> work) {
    Response denied = denied(security, false);
    return nosniff(denied != null ? denied : guarded(work));
  }

  private Response act(SecurityContext security, HttpHeaders headers, Supplier<Response> work) {
    Response denied = denied(security, true);
    if (denied != null) {
      return nosniff(denied);
    }
    if (!csrfMatches(headers)) {
      return nosniff(error(Response.Status.FORBIDDEN, "csrf", CSRF_HEADER, null));
    }
    return nosniff(guarded(work));
  }

  /** An error body echoes input: no browser may read it as anything but JSON. */
  static Response nosniff(Response r) {
    return Response.fromResponse(r).header("X-Content-Type-Options", "nosniff").build();
  }

  private static String body(HttpHeaders headers, InputStream in) {
    return RequestBody.read(headers.getHeaderString(HttpHeaders.CONTENT_LENGTH), in);
  }

  private static Response denied(SecurityContext security, boolean acting) {
    if (security == null || security.getUserPrincipal() == null) {
      return Response.status(Response.Status.UNAUTHORIZED)
          .header(HttpHeaders.WWW_AUTHENTICATE, "Basic realm=\"pgbus\"")
          .entity(Map.of("error", "unauthenticated"))
          .type(MediaType.APPLICATION_JSON)
          .build();
    }
    boolean allowed = security.isUserInRole(ADMIN) || (!acting && security.isUserInRole(VIEWER));
    return allowed ? null : error(Response.Status.FORBIDDEN, "forbidden", null, null);
  }

  private static boolean csrfMatches(HttpHeaders headers) {
    String header = headers.getHeaderString(CSRF_HEADER);
    Cookie cookie = headers.getCookies().get(CSRF_COOKIE);
    if (header == null || header.isEmpty() || cookie == null || cookie.getValue() == null) {
      return false;
    }
    return MessageDigest.isEqual(
        header.getBytes(StandardCharsets.UTF_8),
        cookie.getValue().getBytes(StandardCharsets.UTF_8));
  }

  private Response guarded(Supplier<Response> work) {
    try {
      return work.get();
    } catch (InvalidFilterException e) {
      return error(Response.Status.BAD_REQUEST, "bad-request", e.field(), e.getMessage());
    } catch (InvalidScheduleException e) {
      return error(Response.Status.BAD_REQUEST, "bad-request", "schedule", e.getMessage());
    } catch (RequestBody.TooLarge e) {
      return error(Response.Status.REQUEST_ENTITY_TOO_LARGE, "too-large", "body", e.getMessage());
    } catch (SearchTimeoutException e) {
      LOG.log(System.Logger.Level.INFO, "pgbus admin API search timed out", e);
      return error(UNPROCESSABLE, "search-timeout", null, e.getMessage());
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "pgbus admin API request failed", e);
      return error(Response.Status.INTERNAL_SERVER_ERROR, "internal", null, null);
    }
  }

  private static Response error(Response.Status status, String category, String field, String msg) {
    return error(status.getStatusCode(), category, field, msg);
  }

  private static Response error(int status, String category, String field, String msg) {
    var body = new LinkedHashMap<String, Object>();
    body.put("error", category);
    if (field != null) {
      body.put("field", field);
    }
    if (msg != null) {
      body.put("message", msg);
    }
    return Response.status(status).entity(body).type(MediaType.APPLICATION_JSON).build();
  }

  private boolean masked(SecurityContext security) {
    return resources.settings().adminMaskPayloads() && !security.isUserInRole(ADMIN);
  }

  private static Map<String, Object> job(JobView j, boolean full, boolean masked) {
    var m = new LinkedHashMap<String, Object>();
    m.put("id", String.valueOf(j.id()));
    m.put("queue", j.queue());
    m.put("state", j.state().sqlName());
    m.put("priority", j.priority());
    m.put("attempt", j.attempt());
    m.put("maxAttempts", j.maxAttempts());
    m.put("runAt", text(j.runAt()));
    m.put("createdAt", text(j.createdAt()));
    m.put("attemptedAt", text(j.attemptedAt()));
    m.put("finalizedAt", text(j.finalizedAt()));
    m.put("attemptedBy", j.attemptedBy());
    m.put("leaseExpiresAt", text(j.leaseExpiresAt()));
    m.put("uniqueKey", j.uniqueKey());
    m.put("enqueuedBy", j.enqueuedBy());
    m.put("correlationId", j.correlationId());
    // Handlers build error texts from the payload (a card number, an address): masked with it.
    m.put("lastError", masked ? null : j.lastError());
    m.put("progress", j.progress());
    if (full) {
      m.put("payload", masked ? null : j.payload());
      m.put("payloadMasked", masked);
      m.put("errors", masked ? null : j.errors());
      m.put("result", masked ? null : j.result());
      m.put("batchId", j.batchId() == null ? null : String.valueOf(j.batchId()));
      m.put("dependencies", j.dependencies());
    }
    return m;
  }

  private static String text(Instant at) {
    return at == null ? null : at.toString();
  }
}
