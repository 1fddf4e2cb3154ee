package io.pgbus.it.support;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Just enough of the protobuf wire format to read OTLP exports in a test ({@link OtlpMetrics},
 * {@link OtlpSpans}) without a protobuf library in the test WAR.
 */
public final class Protobuf {
  private Protobuf() {}

  /**
   * Every length-delimited value of {@code field} in {@code msg} (sub-messages, strings, bytes).
   */
  static List<byte[]> fields(byte[] msg, int field) {
    var out = new ArrayList<byte[]>();
    Walk w = new Walk(msg);
    while (w.next()) {
      if (w.field == field && w.wire == 2) {
        out.add(w.bytes);
      }
    }
    return out;
  }

  /** The first length-delimited value of {@code field}, or {@code null}. */
  static byte[] first(byte[] msg, int field) {
    var all = fields(msg, field);
    return all.isEmpty() ? null : all.get(0);
  }

  /** The first length-delimited value of {@code field} as UTF-8, or {@code null}. */
  static String string(byte[] msg, int field) {
    byte[] b = first(msg, field);
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }

  /** The last varint or fixed64 value of {@code field}, or {@code missing}. */
  static long number(byte[] msg, int field, long missing) {
    long v = missing;
    Walk w = new Walk(msg);
    while (w.next()) {
      if (w.field == field && (w.wire == 0 || w.wire == 1)) {
        v = w.fixed;
      }
    }
    return v;
  }

  /** One protobuf field at a time. */
  static final class Walk {
    private final byte[] b;
    private int pos;
    int field;
    int wire;
    long fixed;
    byte[] bytes;

    Walk(byte[] b) {
      this.b = b;
    }

    boolean next() {
      if (pos >= b.length) {
        return false;
      }
      long tag = varint();
      field = (int) (tag >>> 3);
      wire = (int) (tag & 7);
      switch (wire) {
        case 0 -> fixed = varint();
        case 1 -> {
          fixed = ByteBuffer.wrap(b, pos, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
          pos += 8;
        }
        case 2 -> {
          int len = (int) varint();
          bytes = Arrays.copyOfRange(b, pos, pos + len);
          pos += len;
        }
        case 5 -> pos += 4;
        default -> throw new IllegalStateException("wire type " + wire + " at " + pos);
      }
      return true;
    }

    private long varint() {
      long v = 0;
      for (int shift = 0; ; shift += 7) {
        byte x = b[pos++];
        v |= (long) (x & 0x7f) << shift;
        if (x >= 0) {
          return v;
        }
      }
    }
  }
}
