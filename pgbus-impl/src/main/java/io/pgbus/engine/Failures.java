package io.pgbus.engine;

import io.pgbus.InvalidJobException;
import io.pgbus.PgbusException;
import java.sql.SQLException;

/** Turns SQL failures into pgbus exceptions whose message says what to do. */
final class Failures {
  private Failures() {}

  static PgbusException of(String queue, String action, SQLException e) {
    String state = e.getSQLState() == null ? "" : e.getSQLState();
    String message = e.getMessage();
    if (state.equals("22023")
        || state.equals("23502")
        || state.equals("23514")
        || state.equals("22P02")) {
      // invalid_parameter_value, not_null_violation, check_violation: raised by pgbus SQL;
      // invalid_text_representation: a payload that is not JSON.
      return new InvalidJobException(queue, "pgbus could not " + action + ": " + message);
    }
    if (state.equals("3F000") || state.equals("42P01") || state.equals("42883")) {
      // invalid_schema_name, undefined_table, undefined_function: the schema is not there.
      return new PgbusException(
          queue,
          null,
          "pgbus could not "
              + action
              + ": the pgbus schema is missing or older than this build ("
              + message
              + "); start pgbus once with pgbus.migrate=true, or apply the migrations in"
              + " io/pgbus/db/migration",
          e);
    }
    if (state.startsWith("08")) {
      return new PgbusException(
          queue,
          null,
          "pgbus could not " + action + ": the database cannot be reached (" + message + ")",
          e);
    }
    return new PgbusException(queue, null, "pgbus could not " + action + ": " + message, e);
  }
}
