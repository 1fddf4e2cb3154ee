package io.pgbus.test;

/**
 * One attempt that a {@link TestWorker} ran, and where it left the job.
 *
 * @param attempt 1 on the first run (snoozes give theirs back)
 * @param state what the job became: {@code completed}, {@code retryable} (failed, attempts left),
 *     {@code dead} (failed its last attempt), {@code scheduled} (snoozed) or {@code cancelled}
 * @param error the error the attempt recorded ({@code retryable}, {@code dead}, {@code cancelled}),
 *     else {@code null}
 */
public record JobRun(long jobId, String queue, int attempt, String state, String error) {

  /** Whether the handler completed the job. */
  public boolean completed() {
    return "completed".equals(state);
  }

  @Override
  public String toString() {
    return "job "
        + jobId
        + " attempt "
        + attempt
        + " -> "
        + state
        + (error == null ? "" : " (" + firstLine(error) + ")");
  }

  private static String firstLine(String s) {
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }
}
