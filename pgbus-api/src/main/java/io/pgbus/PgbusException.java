package io.pgbus;

/**
 * The root of every exception pgbus throws. It carries the queue and the job id when they are
 * known, so a log line can name both.
 */
public class PgbusException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final String queue;
  private final Long jobId;

  public PgbusException(String message) {
    this(null, null, message, null);
  }

  public PgbusException(String message, Throwable cause) {
    this(null, null, message, cause);
  }

  public PgbusException(String queue, Long jobId, String message, Throwable cause) {
    super(message, cause);
    this.queue = queue;
    this.jobId = jobId;
  }

  /** The queue involved, or {@code null}. */
  public String queue() {
    return queue;
  }

  /** The job involved, or {@code null}. */
  public Long jobId() {
    return jobId;
  }
}
