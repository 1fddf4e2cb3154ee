package io.pgbus.console;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;

/**
 * One file the console serves, read once from its jar: the bytes, their gzip form (kept only when
 * it saves at least a tenth) and an ETag from their SHA-256, so a browser that has the file gets a
 * 304 and no body, and one that asked for gzip gets echarts' megabyte as a third of it.
 */
final class StaticFile {

  /** Below this size gzip's header and the extra header line cost more than they save. */
  static final int MIN_GZIP_BYTES = 1024;

  private final byte[] plain;
  private final byte[] gzipped;
  private final String etag;
  private final String type;

  StaticFile(byte[] plain, String type) {
    this.plain = plain;
    this.type = type;
    byte[] z = plain.length >= MIN_GZIP_BYTES ? gzip(plain) : null;
    this.gzipped = z != null && z.length <= plain.length * 9L / 10 ? z : null;
    this.etag = "\"" + HexFormat.of().formatHex(sha256(plain), 0, 12) + "\"";
  }

  /** The file at {@code name} on the class path, or null when there is none. */
  static StaticFile read(String name, String type) {
    try (InputStream in = StaticFile.class.getClassLoader().getResourceAsStream(name)) {
      return in == null ? null : new StaticFile(in.readAllBytes(), type);
    } catch (IOException e) {
      throw new UncheckedIOException("pgbus console: cannot read " + name + " from its jar", e);
    }
  }

  String etag() {
    return etag;
  }

  String type() {
    return type;
  }

  /** Whether an {@code If-None-Match} header names this version (or is {@code *}). */
  boolean matches(String ifNoneMatch) {
    if (ifNoneMatch == null) {
      return false;
    }
    for (String tag : ifNoneMatch.split(",")) {
      String t = tag.strip();
      // A weak validator (W/"...") from a proxy that re-encoded the body names the same bytes.
      if (t.equals("*") || t.equals(etag) || t.equals("W/" + etag)) {
        return true;
      }
    }
    return false;
  }

  /** The gzip body when the request's {@code Accept-Encoding} allows it, else null. */
  byte[] gzippedFor(String acceptEncoding) {
    return gzipped != null && acceptsGzip(acceptEncoding) ? gzipped : null;
  }

  byte[] plain() {
    return plain;
  }

  /**
   * Whether gzip is listed and not refused with {@code q=0} (RFC 9110, 12.5.3). Only the explicit
   * token counts: every browser names it, and a bare {@code *} is rare enough to get plain bytes.
   */
  static boolean acceptsGzip(String acceptEncoding) {
    if (acceptEncoding == null) {
      return false;
    }
    for (String part : acceptEncoding.toLowerCase(Locale.ROOT).split(",")) {
      String[] p = part.split(";");
      if (p[0].strip().equals("gzip")) {
        for (int i = 1; i < p.length; i++) {
          if (p[i].replace(" ", "").matches("q=0(\\.0{0,3})?")) {
            return false;
          }
        }
        return true;
      }
    }
    return false;
  }

  private static byte[] gzip(byte[] bytes) {
    var out = new ByteArrayOutputStream(bytes.length / 3);
    try (var z = new GZIPOutputStream(out)) {
      z.write(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }
}
