package io.pgbus.console;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Serves the console: its static files from {@code META-INF/pgbus-console/} of this jar, the chart
 * library, and {@code session}, which tells the page who is logged in, whether they may act, and
 * where the admin API is. GET only; the container's constraint ({@link ConsoleInitializer}) has
 * admitted the caller before this runs. Every answer forbids framing and inline scripts (CSP).
 *
 * <p>Transfer: each file goes out gzipped when the browser asked for it, with an ETag. The page and
 * the console's modules revalidate ({@code no-cache}: a second load costs a 304 each, no body), so
 * a new build is seen at once; the chart library has the version in its URL ({@code
 * lib/echarts-<version>.min.js}) and is cached for a year without a request.
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

  /** A year: the chart library's URL changes with its version. */
  private static final String IMMUTABLE = "private, max-age=31536000, immutable";

  /** Revalidate every time: the console's own files keep their names across builds. */
  private static final String REVALIDATE = "private, no-cache";

  private final transient ConsoleConfig config;
  private final String echarts;
  private final String echartsPath;

  /** The files read so far, by resource name: a handful, each read and compressed once. */
  private final transient Map<String, StaticFile> files = new ConcurrentHashMap<>();

  ConsoleServlet(ConsoleConfig config) {
    this.config = config;
    Properties lib = new Properties();
    try (InputStream in = resource(ROOT + "lib.properties")) {
      lib.load(in);
    } catch (IOException | NullPointerException e) {
      throw new IllegalStateException("pgbus console: its jar lacks " + ROOT + "lib.properties", e);
    }
    this.echarts = lib.getProperty("echarts");
    this.echartsPath = "/lib/echarts-" + lib.getProperty("echarts.version") + ".min.js";
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
      send(req, resp, ROOT + "index.html", TYPES.get("html"), REVALIDATE);
    } else if (path.equals("/session")) {
      session(req, resp);
    } else if (path.equals(echartsPath)) {
      send(req, resp, echarts, TYPES.get("js"), IMMUTABLE);
    } else {
      var m = FILE.matcher(path);
      if (m.matches()) {
        String name = m.group(1);
        send(
            req,
            resp,
            ROOT + name,
            TYPES.get(name.substring(name.lastIndexOf('.') + 1)),
            REVALIDATE);
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
            + ",\"schema\":"
            + Json.string(config.schema())
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

  private void send(
      HttpServletRequest req, HttpServletResponse resp, String name, String type, String caching)
      throws IOException {
    StaticFile file = files.computeIfAbsent(name, n -> StaticFile.read(n, type));
    if (file == null) {
      resp.sendError(HttpServletResponse.SC_NOT_FOUND);
      return;
    }
    resp.setHeader("Cache-Control", caching);
    resp.setHeader("ETag", file.etag());
    // Caches must keep the gzip and the plain answer apart.
    resp.setHeader("Vary", "Accept-Encoding");
    if (file.matches(req.getHeader("If-None-Match"))) {
      resp.setStatus(HttpServletResponse.SC_NOT_MODIFIED);
      return;
    }
    resp.setContentType(file.type());
    byte[] gzipped = file.gzippedFor(req.getHeader("Accept-Encoding"));
    byte[] body = gzipped == null ? file.plain() : gzipped;
    if (gzipped != null) {
      resp.setHeader("Content-Encoding", "gzip");
    }
    resp.setContentLength(body.length);
    if (!"HEAD".equals(req.getMethod())) {
      resp.getOutputStream().write(body);
    }
  }

  private static InputStream resource(String name) {
    return ConsoleServlet.class.getClassLoader().getResourceAsStream(name);
  }
}
