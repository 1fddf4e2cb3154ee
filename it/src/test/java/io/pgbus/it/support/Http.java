package io.pgbus.it.support;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Plain HTTP GETs against the test server, as an operator's probe would make them. */
public final class Http {
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private Http() {}

  public record Response(int status, String body) {}

  public static Response get(String url) throws Exception {
    HttpResponse<String> r =
        CLIENT.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
    return new Response(r.statusCode(), r.body());
  }

  /** The server root (scheme, host, port) of an Arquillian deployment URL. */
  public static String root(java.net.URL deploymentUrl) {
    return deploymentUrl.getProtocol() + "://" + deploymentUrl.getHost() + ":" + deploymentUrl.getPort();
  }
}
