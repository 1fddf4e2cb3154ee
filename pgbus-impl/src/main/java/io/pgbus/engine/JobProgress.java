package io.pgbus.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One attempt's progress reports ({@link io.pgbus.JobContext#progress}), coalesced: a report is
 * written at once when the last write is at least {@link #INTERVAL} old, else held, and the latest
 * held one goes out with the next report past the interval or when the handler returns ({@link
 * #flush}). So a handler that reports in a tight loop costs about one statement a second. Writing
 * is enabled only while the handler runs ({@link #attach}, {@link #detach}); a report after that is
 * dropped, and the write's fence (id, attempt, running) refuses one that races the end.
 */
public final class JobProgress {

  /** The least time between two writes of one job's progress. */
  static final Duration INTERVAL = Duration.ofSeconds(1);

  /** Writes one report, in a statement of its own; never throws (logs instead). */
  @FunctionalInterface
  interface Writer {
    void write(Report report);
  }

  /** One report, as stored: {@code at} is when the handler made it. */
  record Report(int percent, String message, Instant at) {}

  private Writer writer;
  private Report held;
  private long lastWriteNanos;
  private boolean written;
  private final AtomicInteger writes = new AtomicInteger();

  synchronized void attach(Writer w) {
    writer = w;
  }

  /** Records a report (already validated); writes it now or holds it. */
  void report(int percent, String message) {
    Report toWrite;
    Writer w;
    synchronized (this) {
      if (writer == null) {
        return;
      }
      Report r = new Report(percent, message, Instant.now());
      long now = System.nanoTime();
      if (written && now - lastWriteNanos < INTERVAL.toNanos()) {
        held = r;
        return;
      }
      toWrite = r;
      held = null;
      written = true;
      lastWriteNanos = now;
      w = writer;
    }
    write(w, toWrite);
  }

  /**
   * Writes the held report, if any; the handler returned (called before its outcome is applied).
   */
  void flush() {
    Report toWrite;
    Writer w;
    synchronized (this) {
      if (writer == null || held == null) {
        return;
      }
      toWrite = held;
      held = null;
      lastWriteNanos = System.nanoTime();
      w = writer;
    }
    write(w, toWrite);
  }

  /** The handler returned: later reports are dropped. */
  synchronized void detach() {
    writer = null;
    held = null;
  }

  /** How many reports were handed to the writer, for tests and metrics. */
  int writes() {
    return writes.get();
  }

  private void write(Writer w, Report r) {
    writes.incrementAndGet();
    w.write(r);
  }

  @Override
  public String toString() {
    return "progress(" + writes.get() + " writes)";
  }
}
