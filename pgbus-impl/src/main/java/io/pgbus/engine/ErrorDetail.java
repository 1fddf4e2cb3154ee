package io.pgbus.engine;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * How much of a handler's exception is stored in a job's {@code errors} ({@code
 * pgbus.errors.detail}). Exception messages are where personal data leaks (an e-mail address in
 * "mailbox full: ada@example.com"), and every "Caused by" of a stack trace adds another message;
 * {@link #CLASS} keeps none of them.
 */
public enum ErrorDetail {
  /** The exception, its causes and a bounded stack trace: most to debug with (the default). */
  STACK,
  /** The exception's class and message, one line: no frames, no causes. */
  MESSAGE,
  /** The exception's class only; pgbus's own failures (a timeout) keep their message. */
  CLASS;

  /** The error text stored with the job. */
  String describe(Throwable t) {
    return switch (this) {
      case STACK -> {
        var out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        yield JobStore.truncate(out.toString());
      }
      case MESSAGE -> JobStore.truncate(t.toString());
      // pgbus's own exceptions say only what pgbus did (job id, queue, timeout), never data.
      case CLASS ->
          t.getClass().getName().startsWith(ErrorDetail.class.getPackageName() + ".")
              ? JobStore.truncate(t.toString())
              : t.getClass().getName();
    };
  }
}
