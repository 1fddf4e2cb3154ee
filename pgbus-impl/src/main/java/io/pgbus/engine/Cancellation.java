package io.pgbus.engine;

/**
 * Whether an operator asked to cancel one running attempt of a job ({@code JobQueue.cancel} on a
 * running job, heard through the {@link Notifier} and checked against the database). Set once, by
 * the {@link Watchdog} right before it interrupts the handler; read by the handler through {@link
 * io.pgbus.JobContext#cancellationRequested()}. Equal only to itself, so two claims of the same job
 * never share one.
 */
public final class Cancellation {

  private volatile boolean requested;

  boolean requested() {
    return requested;
  }

  void request() {
    requested = true;
  }

  @Override
  public String toString() {
    return requested ? "cancellation requested" : "not cancelled";
  }
}
