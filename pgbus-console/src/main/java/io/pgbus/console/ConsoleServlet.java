package io.pgbus.console;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * Serves the console: its static files from {@code META-INF/pgbus-console/} of this jar, the chart
 * library, and {@code session}, which tells the page who is logged in, whether they may act, and
 * where the admin API is. GET only; the container's constraint ({@link ConsoleInitializer}) has
 * admitted the caller before this runs. Every answer forbids framing and inline scripts (CSP).
 */
final class ConsoleServlet extends HttpServlet {
  private static final long serialVersionUID = 1L;

  private static final String ROOT = "META-INF/pgbus-console/";

  /** The console's own files: a name, no directories. */
  private static final Pattern FILE = Pattern.compile("/([a-z0-9-]+\\.(?:js|css|html|svg))");

  private static final Map<String, String> TYPES =
      Map.of(
          "js", "text/javascript;charset=UTF-8",
          "css", "text/css;charset=UTF-8",
          "html", "text/html;charset=UTF-8",
          "svg", "image/svg+xml");

  private final transient ConsoleConfig config;
  private final String echarts;

  ConsoleServlet(ConsoleConfig config) {
    this.config = config;
    Properties lib = new Properties();
    try (InputStream in = resource(ROOT + "lib.properties")) {
      lib.load(in);
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException("pgbus console: its jar lacks " + ROOT + "lib.properties", e);
    }
    this.echarts = lib.getProperty("echarts");
  }

  @Override
  protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    secure(resp);
    String path = req.getPathInfo();
    if (path == null || path.isEmpty()) {
      // Relative links in the page resolve against the trailing slash.
      resp.sendRedirect(req.getContextPath() + config.path() + "/");
      return;
    }
    if (path.equals("/")) {
      send(resp, ROOT + "index.html", TYPES.get("html"), false);
    } else if (path.equals("/session")) {
      session(req, resp);
    } else if (path.equals("/lib/echarts.min.js")) {
      send(resp, echarts, TYPES.get("js"), true);
    } else {
      var m = FILE.matcher(path);
      if (m.matches()) {
        String name = m.group(1);
        send(resp, ROOT + name, TYPES.get(name.substring(name.lastIndexOf('.') + 1)), false);
      } else {
        resp.sendError(HttpServletResponse.SC_NOT_FOUND);
      }
    }
  }

  /**
   * Never echoes a request (HttpServlet's TRACE would, credentials included); the container's
   * constraint denies TRACE first, this holds where it does not.
   */
  @Override
  protected void doTrace(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    secure(resp);
    resp.setHeader("Allow", "GET, HEAD");
    resp.sendError(HttpServletResponse.SC_METHOD_NOT_ALLOWED);
  }

  private void session(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    boolean admin = req.isUserInRole(ConsoleInitializer.ADMIN);
    String user = req.getUserPrincipal() == null ? "" : req.getUserPrincipal().getName();
    String json =
        "{\"user\":"
            + Json.string(user)
            + ",\"admin\":"
            + admin
            + ",\"api\":"
            + Json.string(req.getContextPath() + config.api() + "/")
            + ",\"refreshSeconds\":"
            + config.refreshSeconds()
            + "}";
    resp.setContentType("application/json;charset=UTF-8");
    resp.setHeader("Cache-Control", "no-store");
    resp.getOutputStream().write(json.getBytes(StandardCharsets.UTF_8));
  }

  private static void secure(HttpServletResponse resp) {
    resp.setHeader(
        "Content-Security-Policy",
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
            + " img-src 'self' data:; frame-ancestors 'none'; form-action 'self'");
    resp.setHeader("X-Content-Type-Options", "nosniff");
    resp.setHeader("X-Frame-Options", "DENY");
    resp.setHeader("Referrer-Policy", "same-origin");
  }

  private static void send(HttpServletResponse resp, String name, String type, boolean immutable)
      throws IOException {
    try (InputStream in = resource(name)) {
      if (in == null) {
        resp.sendError(HttpServletResponse.SC_NOT_FOUND);
        return;
      }
      resp.setContentType(type);
      // The library's file name carries no version, but the jar does: a day is safe enough.
      resp.setHeader("Cache-Control", immutable ? "private, max-age=86400" : "no-cache");
      in.transferTo(resp.getOutputStream());
    }
  }

  private static InputStream resource(String name) {
    return ConsoleServlet.class.getClassLoader().getResourceAsStream(name);
  }
}
