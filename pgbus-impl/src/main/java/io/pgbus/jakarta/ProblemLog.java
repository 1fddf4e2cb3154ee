package io.pgbus.jakarta;

/**
 * Logs a database problem in full (the driver's text, which health never shows) once each time it
 * changes, and at DEBUG while it stays the same: a probe every second, or a start retried every 5
 * s, must not write the same WARNING forever.
 */
final class ProblemLog {

  private final System.Logger log;
  private String last; // guarded by this: the last problem logged in full

  ProblemLog(System.Logger log) {
    this.log = log;
  }

  /** A problem of {@code category}, seen while doing {@code what}. */
  void seen(String what, String category, Throwable e) {
    String full = category + ": " + e.getMessage();
    boolean changed;
    synchronized (this) {
      changed = !full.equals(last);
      last = full;
    }
    log.log(
        changed ? System.Logger.Level.WARNING : System.Logger.Level.DEBUG,
        "{0}: {1} ({2})",
        what,
        category,
        e.getMessage());
  }

  /** The problem is gone (the database answers again, the deploy gate passes); says so once. */
  void solved() {
    String had;
    synchronized (this) {
      had = last;
      last = null;
    }
    if (had != null) {
      // Its category first: not every problem was the database's.
      String category = had.substring(0, had.indexOf(": "));
      log.log(System.Logger.Level.INFO, "pgbus: solved, no longer {0}", category);
    }
  }
}
