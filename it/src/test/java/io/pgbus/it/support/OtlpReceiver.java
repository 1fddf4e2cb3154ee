package io.pgbus.it.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A stand-in OTLP/HTTP collector: accepts POST /v1/metrics and /v1/traces (protobuf) and keeps the
 * bodies of each. Plain sockets, no JDK HTTP server, so it runs inside any application server's
 * class loader; the exporter's HTTP/1.1 POST with Content-Length or chunked body, plain or gzip, is
 * all it speaks.
 */
public final class OtlpReceiver implements AutoCloseable {

  private final ServerSocket server;
  private final List<byte[]> bodies = new CopyOnWriteArrayList<>();
  private final List<byte[]> traces = new CopyOnWriteArrayList<>();
  private final Thread thread;

  public OtlpReceiver(int port) throws IOException {
    server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
    thread = new Thread(this::serve, "otlp-receiver");
    thread.setDaemon(true);
    thread.start();
  }

  /** A port free right now, for a deployment's configuration. */
  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * MP Config lines that turn the server's OpenTelemetry SDK on for one application and point its
   * metrics at this receiver every second. Liberty reads the per-signal keys; WildFly (SmallRye
   * OpenTelemetry) the general ones.
   */
  public static List<String> config(int port) {
    return List.of(
        "otel.sdk.disabled=false",
        "otel.service.name=pgbus-it-otel",
        "otel.metrics.exporter=otlp",
        "otel.traces.exporter=none",
        "otel.logs.exporter=none",
        "otel.exporter.otlp.protocol=http/protobuf",
        "otel.exporter.otlp.endpoint=http://127.0.0.1:" + port,
        "otel.exporter.otlp.metrics.protocol=http/protobuf",
        "otel.exporter.otlp.metrics.endpoint=http://127.0.0.1:" + port + "/v1/metrics",
        "otel.metric.export.interval=1000");
  }

  /**
   * MP Config lines that turn the server's OpenTelemetry SDK on for one application and send its
   * spans to this receiver, each batch a tenth of a second after it starts (the default is 5 s);
   * metrics and logs are not exported.
   */
  public static List<String> tracesConfig(int port) {
    return List.of(
        "otel.sdk.disabled=false",
        "otel.service.name=pgbus-it-traces",
        "otel.traces.exporter=otlp",
        "otel.metrics.exporter=none",
        "otel.logs.exporter=none",
        "otel.exporter.otlp.protocol=http/protobuf",
        "otel.exporter.otlp.endpoint=http://127.0.0.1:" + port,
        "otel.exporter.otlp.traces.protocol=http/protobuf",
        "otel.exporter.otlp.traces.endpoint=http://127.0.0.1:" + port + "/v1/traces",
        "otel.traces.sampler=always_on",
        "otel.bsp.schedule.delay=100");
  }

  /** The bodies of POST /v1/metrics, in arrival order. */
  public List<byte[]> bodies() {
    return List.copyOf(bodies);
  }

  /** The bodies of POST /v1/traces, in arrival order. */
  public List<byte[]> traces() {
    return List.copyOf(traces);
  }

  private void serve() {
    while (!server.isClosed()) {
      try (Socket s = server.accept()) {
        s.setSoTimeout(10_000);
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        // Keep-alive: several requests can come on one connection.
        while (true) {
          String head = readHead(in);
          if (head == null) {
            break;
          }
          String lower = head.toLowerCase(Locale.ROOT);
          byte[] body;
          if (lower.contains("transfer-encoding: chunked")) {
            body = readChunked(in);
          } else {
            int i = lower.indexOf("content-length:");
            int len =
                i < 0
                    ? 0
                    : Integer.parseInt(lower.substring(i + 15, lower.indexOf('\r', i)).trim());
            body = in.readNBytes(len);
          }
          if (lower.contains("content-encoding: gzip")) {
            // WildFly's exporter (SmallRye OpenTelemetry, Vert.x) compresses.
            body =
                new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(body))
                    .readAllBytes();
          }
          if (head.startsWith("POST /v1/metrics")) {
            bodies.add(body);
          } else if (head.startsWith("POST /v1/traces")) {
            traces.add(body);
          }
          out.write(
              "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
          out.flush();
        }
      } catch (IOException | RuntimeException e) {
        // Next connection.
      }
    }
  }

  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) >= 0) {
      b.write(c);
      byte[] a = b.toByteArray();
      int n = a.length;
      if (n >= 4 && a[n - 4] == '\r' && a[n - 3] == '\n' && a[n - 2] == '\r' && a[n - 1] == '\n') {
        return b.toString(StandardCharsets.US_ASCII);
      }
    }
    return null;
  }

  private static byte[] readChunked(InputStream in) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      String line = readLine(in);
      int size = Integer.parseInt(line.split(";")[0].trim(), 16);
      if (size == 0) {
        readLine(in);
        return body.toByteArray();
      }
      body.write(in.readNBytes(size));
      readLine(in);
    }
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    int c;
    while ((c = in.read()) >= 0 && c != '\n') {
      if (c != '\r') {
        b.write(c);
      }
    }
    return b.toString(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
