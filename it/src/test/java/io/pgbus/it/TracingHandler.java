package io.pgbus.it;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Notes the span each attempt runs in (TracingIT; TraceExportIT reads the exported spans instead);
 * fails the first attempt so that the retry is traced too.
 */
@ApplicationScoped
@Handles({"it_trace", "it_trace_export"})
public class TracingHandler implements JobHandler<Marker> {

  /** The span context of every attempt, in order. */
  public static final List<SpanContext> SEEN = new CopyOnWriteArrayList<>();

  @Override
  public Outcome handle(Marker marker, JobContext context) {
    SEEN.add(Span.current().getSpanContext());
    if (context.attempt() == 1) {
      throw new IllegalStateException("first attempt of " + marker.text + " fails");
    }
    return Outcome.complete();
  }
}
