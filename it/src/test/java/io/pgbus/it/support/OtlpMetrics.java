package io.pgbus.it.support;

import static io.pgbus.it.support.Protobuf.fields;
import static io.pgbus.it.support.Protobuf.first;

import java.nio.charset.StandardCharsets;

/**
 * Reads a cumulative sum out of an OTLP ExportMetricsServiceRequest (protobuf), enough for a test:
 * resource_metrics(1) > scope_metrics(2) > metrics(2) {name(1), sum(7) > data_points(1)
 * {attributes(7) {key(1), value(2) > string_value(1)}, as_double(4), as_int(6)}}.
 */
public final class OtlpMetrics {
  private OtlpMetrics() {}

  /** The counter in the newest export that has it (cumulative), or -1. */
  public static long latest(java.util.List<byte[]> exports, String name, String queue) {
    for (int i = exports.size() - 1; i >= 0; i--) {
      long v = sum(exports.get(i), name, queue);
      if (v >= 0) {
        return v;
      }
    }
    return -1;
  }

  /** The value of counter {@code name} for attribute queue=queue in one export, or -1 if absent. */
  public static long sum(byte[] request, String name, String queue) {
    long[] found = {-1};
    for (byte[] rm : fields(request, 1)) {
      for (byte[] sm : fields(rm, 2)) {
        for (byte[] m : fields(sm, 2)) {
          byte[] n = first(m, 1);
          if (n == null || !name.equals(new String(n, StandardCharsets.UTF_8))) {
            continue;
          }
          for (byte[] sum : fields(m, 7)) {
            for (byte[] dp : fields(sum, 1)) {
              if (hasQueue(dp, queue)) {
                found[0] = Math.max(found[0], 0) + value(dp);
              }
            }
          }
        }
      }
    }
    return found[0];
  }

  private static boolean hasQueue(byte[] dp, String queue) {
    for (byte[] kv : fields(dp, 7)) {
      byte[] k = first(kv, 1);
      byte[] v = first(kv, 2);
      byte[] s = v == null ? null : first(v, 1);
      if (k != null
          && s != null
          && "queue".equals(new String(k, StandardCharsets.UTF_8))
          && queue.equals(new String(s, StandardCharsets.UTF_8))) {
        return true;
      }
    }
    return false;
  }

  private static long value(byte[] dp) {
    Protobuf.Walk w = new Protobuf.Walk(dp);
    long v = 0;
    while (w.next()) {
      if (w.field == 6 && w.wire == 1) {
        v = w.fixed;
      } else if (w.field == 4 && w.wire == 1) {
        v = (long) Double.longBitsToDouble(w.fixed);
      }
    }
    return v;
  }
}
