package io.pgbus.engine;

import java.util.regex.Pattern;

/**
 * The W3C trace context an enqueuer ran in, stored with its job ({@code pgbus.job.trace_parent},
 * {@code trace_state}, schema V6) so that the handler's span continues that trace. Values come from
 * a tracing library or from a SQL caller, so they are checked here as the database checks them:
 * {@link #of} returns {@code null} for a traceparent the table would refuse (the job is then
 * enqueued without a trace, never refused for it), and drops a tracestate it would refuse.
 */
public record TraceContext(String traceParent, String traceState) {

  /** Version 00: 00-{32 hex trace id}-{16 hex parent id}-{2 hex flags}, lower case. */
  private static final Pattern TRACE_PARENT =
      Pattern.compile("00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}");

  /** What propagators must keep (W3C Trace Context 3.3.1.5), printable ASCII. */
  static final int TRACE_STATE_LIMIT = 512;

  private static final Pattern TRACE_STATE = Pattern.compile("[\\x20-\\x7e]{0,512}");

  public TraceContext {
    if (traceParent == null || !TRACE_PARENT.matcher(traceParent).matches()) {
      throw new IllegalArgumentException(
          "invalid traceparent '"
              + traceParent
              + "': pass a W3C traceparent of version 00"
              + " (00-<32 hex>-<16 hex>-<2 hex>, lower case, ids not all zero)");
    }
    if (traceState != null && !TRACE_STATE.matcher(traceState).matches()) {
      throw new IllegalArgumentException(
          "invalid tracestate: pass at most 512 printable ASCII characters, or none");
    }
  }

  /** The context, or {@code null} when {@code traceParent} is missing or invalid. */
  public static TraceContext of(String traceParent, String traceState) {
    if (traceParent == null || !TRACE_PARENT.matcher(traceParent).matches()) {
      return null;
    }
    String state =
        traceState == null || traceState.isEmpty() || !TRACE_STATE.matcher(traceState).matches()
            ? null
            : traceState;
    return new TraceContext(traceParent, state);
  }
}
