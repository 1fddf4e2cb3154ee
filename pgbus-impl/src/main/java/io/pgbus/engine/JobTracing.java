package io.pgbus.engine;

/**
 * Port: carries a trace from the enqueuer to the handler. A container adapter implements it with
 * OpenTelemetry (io.pgbus.jakarta.tracing); the engine knows only the W3C strings. {@link #NONE} is
 * the default and costs nothing: no capture at enqueue, the job function runs as given.
 */
public interface JobTracing {

  /** No tracing: jobs carry no trace context and handlers run without a span. */
  JobTracing NONE =
      new JobTracing() {
        @Override
        public TraceContext capture() {
          return null;
        }

        @Override
        public JobFunction around(JobFunction jobs) {
          return jobs;
        }
      };

  /** The context the enqueuing thread runs in, or {@code null} when it is in no trace. */
  TraceContext capture();

  /**
   * The job function to run instead of {@code jobs}: it runs each attempt in a span whose parent is
   * the job's stored {@link ClaimedJob#trace()} and records the outcome. Called once, at build.
   */
  JobFunction around(JobFunction jobs);
}
