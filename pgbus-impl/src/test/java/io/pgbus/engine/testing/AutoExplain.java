package io.pgbus.engine.testing;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The plans of every statement a session runs, nested ones (a function's) included, sent to the
 * session as NOTICEs in JSON with actual row counts and buffers: a test reads them from the
 * statement's warnings. auto_explain ships with PostgreSQL's contrib modules; LOAD needs a
 * superuser, as the test server's admin user is.
 */
public final class AutoExplain {

  private AutoExplain() {}

  /** Turns auto_explain on for this session. */
  public static void on(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute("LOAD 'auto_explain'");
      st.execute("SET auto_explain.log_min_duration = 0");
      st.execute("SET auto_explain.log_analyze = on");
      st.execute("SET auto_explain.log_buffers = on");
      st.execute("SET auto_explain.log_nested_statements = on");
      st.execute("SET auto_explain.log_format = json");
      st.execute("SET auto_explain.log_level = notice");
      st.execute("SET client_min_messages = notice");
    }
  }

  /** The plans among these warnings, in the order the statements ended. */
  public static List<JsonObject> plans(SQLWarning warnings) {
    List<JsonObject> plans = new ArrayList<>();
    for (SQLWarning w = warnings; w != null; w = w.getNextWarning()) {
      String m = w.getMessage();
      int brace = m.indexOf('{');
      if (brace >= 0 && m.contains("\"Plan\"")) {
        plans.add(Json.createReader(new StringReader(m.substring(brace))).readObject());
      }
    }
    return plans;
  }
}
