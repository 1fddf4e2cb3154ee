package io.pgbus.engine;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;

/**
 * A short, public name for why the database did not answer as expected: what readiness and the
 * doctor show. Driver text names the host and port, the user, and Flyway's dump of the failed
 * statement; it belongs in the server log, not in an unauthenticated health response.
 */
public final class DatabaseProblem {

  public static final String UNREACHABLE = "database unreachable";
  public static final String AUTHENTICATION = "authentication failed";
  public static final String NO_DATABASE = "database does not exist";
  public static final String PERMISSION = "permission denied";
  public static final String SCHEMA_MISSING = "schema missing";
  public static final String SCHEMA_OUTDATED = "schema outdated";

  /** A contract migration of a newer build raised the oldest build the schema serves past this. */
  public static final String SCHEMA_TOO_NEW = "schema too new";

  public static final String MIGRATION = "migration failed";
  public static final String OTHER = "database error";

  private DatabaseProblem() {}

  /** The category of {@code failure}, judged by the SQLSTATEs and exceptions in its chain. */
  public static String of(Throwable failure) {
    boolean flyway = false;
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      flyway |= t.getClass().getName().startsWith("org.flywaydb.");
      if (t instanceof SQLException e && e.getSQLState() != null) {
        String category = ofState(e.getSQLState());
        if (category != null) {
          return category;
        }
      }
      if (t instanceof ConnectException
          || t instanceof UnknownHostException
          || t instanceof NoRouteToHostException
          || t instanceof SocketTimeoutException
          || t instanceof SQLTransientConnectionException
          || t instanceof SQLNonTransientConnectionException) {
        return UNREACHABLE;
      }
    }
    return flyway ? MIGRATION : OTHER;
  }

  private static String ofState(String state) {
    if (state.startsWith("28")) {
      return AUTHENTICATION; // invalid_authorization_specification, invalid_password
    }
    if (state.startsWith("08") || state.startsWith("57P")) {
      return UNREACHABLE; // connection exceptions; admin/crash shutdown, cannot connect now
    }
    return switch (state) {
      case "3D000" -> NO_DATABASE;
      case "42501" -> PERMISSION;
      case "3F000", "42P01", "42883" -> SCHEMA_MISSING;
      default -> null;
    };
  }
}
