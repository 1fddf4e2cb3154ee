package io.pgbus.admin;

import io.pgbus.PgbusException;

/**
 * An admin request was refused before anything was read or written: a filter, a page size or a bulk
 * limit out of its bounds. {@link #field()} names the input, and the message names the bad value
 * (cut to 80 characters) and the allowed range.
 */
public class InvalidFilterException extends PgbusException {
  private static final long serialVersionUID = 1L;

  private final String field;

  public InvalidFilterException(String field, Object value, String rule) {
    super("invalid " + field + " " + shown(value) + ": " + rule);
    this.field = field;
  }

  /** The name of the bad input, as in the REST API ({@code state}, {@code payload}, ...). */
  public String field() {
    return field;
  }

  static String shown(Object value) {
    if (value == null) {
      return "(none)";
    }
    String s = String.valueOf(value);
    String cut = s.length() > 80 ? s.substring(0, 80) + "...(" + s.length() + " chars)" : s;
    return "'" + cut.replace("\n", "\\n").replace("\r", "\\r") + "'";
  }
}
