package io.pgbus.it.support;

import static io.pgbus.it.support.Protobuf.fields;
import static io.pgbus.it.support.Protobuf.first;
import static io.pgbus.it.support.Protobuf.number;
import static io.pgbus.it.support.Protobuf.string;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the spans out of OTLP ExportTraceServiceRequests (protobuf), enough for a test:
 * resource_spans(1) > scope_spans(2) > spans(2) {trace_id(1), span_id(2), parent_span_id(4),
 * name(5), kind(6), attributes(9) {key(1), value(2) > string_value(1) | int_value(3)}, status(15)
 * {message(2), code(3)}}.
 */
public final class OtlpSpans {
  private OtlpSpans() {}

  /** SpanKind CONSUMER in the OTLP enum. */
  public static final int CONSUMER = 5;

  /** Status code ERROR in the OTLP enum (0 unset, 1 ok). */
  public static final int ERROR = 2;

  /**
   * One exported span; ids in lower-case hex as OpenTelemetry's API shows them, attribute values as
   * text; parentSpanId is empty for a root span.
   */
  public record ExportedSpan(
      String traceId,
      String spanId,
      String parentSpanId,
      String name,
      int kind,
      Map<String, String> attributes,
      int statusCode) {}

  /** Every span in every export, in export order. */
  public static List<ExportedSpan> all(List<byte[]> exports) {
    var out = new ArrayList<ExportedSpan>();
    for (byte[] request : exports) {
      for (byte[] rs : fields(request, 1)) {
        for (byte[] ss : fields(rs, 2)) {
          for (byte[] span : fields(ss, 2)) {
            out.add(span(span));
          }
        }
      }
    }
    return out;
  }

  private static ExportedSpan span(byte[] span) {
    var attributes = new LinkedHashMap<String, String>();
    for (byte[] kv : fields(span, 9)) {
      byte[] value = first(kv, 2);
      if (value == null) {
        continue;
      }
      String s = string(value, 1);
      attributes.put(
          string(kv, 1), s != null ? s : Long.toString(number(value, 3, Long.MIN_VALUE)));
    }
    byte[] status = first(span, 15);
    return new ExportedSpan(
        hex(first(span, 1)),
        hex(first(span, 2)),
        hex(first(span, 4)),
        string(span, 5),
        (int) number(span, 6, 0),
        attributes,
        status == null ? 0 : (int) number(status, 3, 0));
  }

  private static String hex(byte[] id) {
    return id == null ? "" : HexFormat.of().formatHex(id);
  }
}
