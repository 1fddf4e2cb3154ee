package io.pgbus.engine.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on 127.0.0.1 that can cut the network silently, as a partition or a dead host does:
 * while {@link #partition partitioned}, bytes in both directions are swallowed without a FIN or a
 * RST, and new connections are dropped at once. {@link #heal} closes what the partition left behind
 * and lets new connections through again.
 */
public final class TcpProxy implements AutoCloseable {

  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private volatile boolean partitioned;
  private volatile boolean closed;

  private TcpProxy(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "tcp-proxy-" + server.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** A proxy to {@code host:port}, listening on a free port of 127.0.0.1. */
  public static TcpProxy to(String host, int port) {
    try {
      return new TcpProxy(host, port);
    } catch (IOException e) {
      throw new UncheckedIOException("could not open a proxy port", e);
    }
  }

  public int port() {
    return server.getLocalPort();
  }

  /** From now on, nothing gets through, and nobody is told. */
  public void partition() {
    partitioned = true;
  }

  /** Ends the partition: connections it left half-dead are closed, new ones go through. */
  public void heal() {
    partitioned = false;
    closeAll();
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    closeAll();
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = server.accept();
        if (partitioned) {
          client.close();
          continue;
        }
        Socket upstream = new Socket();
        upstream.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
        open.add(client);
        open.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        if (closed) {
          return;
        }
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[8192];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  if (!partitioned) {
                    out.write(buffer, 0, n);
                    out.flush();
                  }
                }
              } catch (IOException ignored) {
                // one side closed
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private void closeAll() {
    for (Socket s : open) {
      closeQuietly(s);
    }
    open.clear();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }
}
