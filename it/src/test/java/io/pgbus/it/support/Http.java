package io.pgbus.it.support;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/** Plain HTTP requests against the test server, as an operator's probe would make them. */
public final class Http {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private Http() {}

  public record Response(int status, String body, java.net.http.HttpHeaders headers) {

    /** The value of the cookie {@code name} this response sets, or null. */
    public String cookie(String name) {
      for (String c : headers.allValues("Set-Cookie")) {
        if (c.startsWith(name + "=")) {
          int end = c.indexOf(';');
          return c.substring(name.length() + 1, end < 0 ? c.length() : end);
        }
      }
      return null;
    }
  }

  public static Response get(String url) throws Exception {
    return send(HttpRequest.newBuilder(URI.create(url)));
  }

  /** A GET with HTTP Basic credentials. */
  public static Response get(String url, String user, String password) throws Exception {
    String credentials =
        Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    return send(
        HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Basic " + credentials));
  }

  /** A POST without a body, as a form that submits an order would make it. */
  public static Response post(String url) throws Exception {
    return send(HttpRequest.newBuilder(URI.create(url)).POST(HttpRequest.BodyPublishers.noBody()));
  }

  /** A POST without a body and with one header (a client's {@code traceparent}, say). */
  public static Response post(String url, String header, String value) throws Exception {
    return send(
        HttpRequest.newBuilder(URI.create(url))
            .header(header, value)
            .POST(HttpRequest.BodyPublishers.noBody()));
  }

  /**
   * A request with optional HTTP Basic credentials ({@code user} null: anonymous) and headers given
   * as name, value, name, value...; a POST has no body.
   */
  public static Response request(
      String method, String url, String user, String password, String... headers) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url)).method(method, HttpRequest.BodyPublishers.noBody());
    if (user != null) {
      b.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return send(b);
  }

  /** {@link #request}, with a JSON body. */
  public static Response requestWithBody(
      String method, String url, String user, String password, String json, String... headers)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .method(method, HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8))
            .header("Content-Type", "application/json");
    if (user != null) {
      b.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return send(b);
  }

  /** {@link #requestWithBody}, sent chunked: without a Content-Length. */
  public static Response requestStreaming(
      String method, String url, String user, String password, String json, String... headers)
      throws Exception {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .method(
                method,
                HttpRequest.BodyPublishers.ofInputStream(
                    () -> new java.io.ByteArrayInputStream(bytes)))
            .header("Content-Type", "application/json");
    if (user != null) {
      b.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
    }
    return send(b);
  }

  private static Response send(HttpRequest.Builder request) throws Exception {
    HttpResponse<String> r =
        CLIENT.send(
            request.timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    return new Response(r.statusCode(), r.body(), r.headers());
  }

  /** The server root (scheme, host, port) of an Arquillian deployment URL. */
  public static String root(java.net.URL deploymentUrl) {
    return deploymentUrl.getProtocol()
        + "://"
        + deploymentUrl.getHost()
        + ":"
        + deploymentUrl.getPort();
  }
}
