package io.pgbus.jakarta.admin;

import io.pgbus.InvalidScheduleException;
import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.SearchTimeoutException;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.ws.rs.core.Cookie;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.function.Supplier;

/**
 * One request to the admin API, as every endpoint handles it: who calls and whether they may (401,
 * 403), the CSRF double submit of an action, whether payloads are masked for the caller, and how a
 * failure answers (400 naming the field, 413, 422, or 500 with a category only, the details in the
 * log). Every answer carries {@code X-Content-Type-Options: nosniff}: an error body echoes input,
 * and no browser may read it as anything but JSON.
 *
 * <p>The roles are checked here as well as declared with {@code @RolesAllowed} on the resources: a
 * server that does not enforce the annotation on JAX-RS resources still refuses.
 */
final class AdminCall {

  private static final System.Logger LOG = System.getLogger(AdminResource.class.getName());

  /**
   * Writes every answer's record, so that the wire is what the records declare on every server:
   * WildFly writes JSON entities with Jackson, which ignores the JSON-B annotations and writes
   * every null (docs/admin-api.md leaves {@code field}, {@code jobId}, {@code history} and the
   * limit's optional fields out). Yasson's default configuration, as {@code AdminJsonTest} pins it.
   * Thread-safe; it lives as long as the application's class loader.
   */
  private static final Jsonb JSONB = JsonbBuilder.create();

  /** HTTP 422: a search too broad to finish in its time (JAX-RS names no such status). */
  private static final int UNPROCESSABLE = 422;

  private final SecurityContext security;
  private final HttpHeaders headers;
  private final boolean maskPayloads;

  /**
   * @param maskPayloads {@code pgbus.admin.mask-payloads}: whether payloads, and what reveals them,
   *     are hidden from callers without the role {@value AdminResource#ADMIN}
   */
  AdminCall(SecurityContext security, HttpHeaders headers, boolean maskPayloads) {
    this.security = security;
    this.headers = headers;
    this.maskPayloads = maskPayloads;
  }

  /** A read: for viewers and admins. */
  Response read(Supplier<Response> work) {
    Response denied = denied(false);
    return nosniff(denied != null ? denied : guarded(work));
  }

  /** A read for admins only (the doctor): no CSRF token, as for any GET. */
  Response adminRead(Supplier<Response> work) {
    Response denied = denied(true);
    return nosniff(denied != null ? denied : guarded(work));
  }

  /** An action: for admins, with the CSRF header equal to the cookie, checked before any read. */
  Response act(Supplier<Response> work) {
    Response denied = denied(true);
    if (denied != null) {
      return nosniff(denied);
    }
    if (!csrfMatches()) {
      return nosniff(error(Response.Status.FORBIDDEN, "csrf", AdminResource.CSRF_HEADER, null));
    }
    return nosniff(guarded(work));
  }

  /** Whether payloads, error texts and results are hidden from this caller. */
  boolean masked() {
    return maskPayloads && !security.isUserInRole(AdminResource.ADMIN);
  }

  /** The caller's name: the key of their payload search budget. */
  String user() {
    return security.getUserPrincipal().getName();
  }

  /** Whether the request came over HTTPS: the CSRF cookie is then {@code Secure}. */
  boolean secure() {
    return security.isSecure();
  }

  /** The request body as text, refused by size before it is read ({@link RequestBody}). */
  String body(InputStream in) {
    return RequestBody.read(headers.getHeaderString(HttpHeaders.CONTENT_LENGTH), in);
  }

  /** A 200 with the record written as JSON. */
  static Response ok(Object body) {
    return json(Response.Status.OK.getStatusCode(), body);
  }

  /** The record written as JSON by {@link #JSONB}, with the status. */
  static Response json(int status, Object body) {
    return Response.status(status)
        .entity(JSONB.toJson(body))
        .type(MediaType.APPLICATION_JSON_TYPE)
        .build();
  }

  static Response error(Response.Status status, String category, String field, String message) {
    return error(status.getStatusCode(), category, field, message);
  }

  static Response error(int status, String category, String field, String message) {
    return json(status, new Problem(category, field, message));
  }

  static Response notFound(String field) {
    return error(Response.Status.NOT_FOUND, "not-found", field, null);
  }

  static Response nosniff(Response r) {
    return Response.fromResponse(r).header("X-Content-Type-Options", "nosniff").build();
  }

  private Response denied(boolean acting) {
    if (security == null || security.getUserPrincipal() == null) {
      return Response.fromResponse(
              json(
                  Response.Status.UNAUTHORIZED.getStatusCode(),
                  new Problem("unauthenticated", null, null)))
          .header(HttpHeaders.WWW_AUTHENTICATE, "Basic realm=\"pgbus\"")
          .build();
    }
    boolean allowed =
        security.isUserInRole(AdminResource.ADMIN)
            || (!acting && security.isUserInRole(AdminResource.VIEWER));
    return allowed ? null : error(Response.Status.FORBIDDEN, "forbidden", null, null);
  }

  private boolean csrfMatches() {
    String header = headers.getHeaderString(AdminResource.CSRF_HEADER);
    Cookie cookie = headers.getCookies().get(AdminResource.CSRF_COOKIE);
    if (header == null || header.isEmpty() || cookie == null || cookie.getValue() == null) {
      return false;
    }
    return MessageDigest.isEqual(
        header.getBytes(StandardCharsets.UTF_8),
        cookie.getValue().getBytes(StandardCharsets.UTF_8));
  }

  private static Response guarded(Supplier<Response> work) {
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
}
