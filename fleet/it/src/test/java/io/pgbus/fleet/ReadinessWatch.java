package io.pgbus.fleet;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Polls {@code /health/ready} of each watched server every 200 ms, as a platform's readiness probe
 * would, and records every poll's state and every transition. A state is {@code UP} (200 with
 * pgbus's check in the answer), {@code DOWN} (503, with the answer kept as the reason), {@code
 * NO-ANSWER} (refused, reset or timed out after {@link #TIMEOUT}) or {@code OTHER}.
 */
final class ReadinessWatch implements AutoCloseable {

  static final Duration INTERVAL = Duration.ofMillis(200);

  /** Longer than a platform's default (1 s on Kubernetes): a loaded 2-core machine is slow. */
  static final Duration TIMEOUT = Duration.ofSeconds(5);

  record Poll(long atMillis, String server, String state, String body) {}

  private final Map<String, FleetServer> watched = new ConcurrentHashMap<>();
  private final Map<String, String> lastState = new LinkedHashMap<>();
  private final List<Poll> polls = new ArrayList<>();
  private final List<Poll> transitions = new ArrayList<>();
  private final CountDownLatch stop = new CountDownLatch(1);
  private final Thread thread = new Thread(this::run, "readiness-watch");
  private final long start = System.nanoTime();

  ReadinessWatch() {
    thread.setDaemon(true);
  }

  ReadinessWatch start() {
    thread.start();
    return this;
  }

  void watch(FleetServer s) {
    watched.put(s.name, s);
  }

  void unwatch(FleetServer s) {
    watched.remove(s.name);
  }

  /** Milliseconds since the watch started: the clock of every {@link Poll}. */
  long now() {
    return (System.nanoTime() - start) / 1_000_000;
  }

  private void run() {
    try {
      do {
        long t0 = System.nanoTime();
        // All at once, so that one slow server does not delay the others' polls.
        Map<FleetServer, CompletableFuture<Poll>> round = new LinkedHashMap<>();
        for (FleetServer s : List.copyOf(watched.values())) {
          round.put(s, poll(s));
        }
        round.forEach((s, p) -> record(s, p.join()));
        long left = INTERVAL.toNanos() - (System.nanoTime() - t0);
        if (stop.await(Math.max(0, left), TimeUnit.NANOSECONDS)) {
          return;
        }
      } while (true);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private CompletableFuture<Poll> poll(FleetServer s) {
    long at = now();
    return FleetServer.HTTP
        .sendAsync(
            HttpRequest.newBuilder(URI.create(s.readyUrl())).timeout(TIMEOUT).build(),
            HttpResponse.BodyHandlers.ofString())
        .handle(
            (r, e) -> {
              if (e != null) {
                Throwable cause = e instanceof CompletionException ? e.getCause() : e;
                String why =
                    cause instanceof HttpTimeoutException
                        ? "timed out after " + TIMEOUT
                        : String.valueOf(cause);
                return new Poll(at, s.name, "NO-ANSWER", why);
              }
              String state;
              if (r.statusCode() == 200 && r.body().contains("\"pgbus\"")) {
                state = "UP";
              } else if (r.statusCode() == 503) {
                state = "DOWN";
              } else {
                state = "OTHER " + r.statusCode();
              }
              return new Poll(at, s.name, state, r.body().replaceAll("\\s+", " "));
            });
  }

  private synchronized void record(FleetServer s, Poll p) {
    polls.add(p);
    if (!p.state().equals(lastState.put(s.name, p.state()))) {
      transitions.add(p);
    }
  }

  synchronized List<Poll> polls() {
    return List.copyOf(polls);
  }

  synchronized List<Poll> transitions() {
    return List.copyOf(transitions);
  }

  @Override
  public void close() throws InterruptedException {
    stop.countDown();
    thread.join(TIMEOUT.toMillis() * 2);
  }
}
