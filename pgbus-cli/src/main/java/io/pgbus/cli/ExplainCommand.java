package io.pgbus.cli;

import io.pgbus.jakarta.admin.AdminParams;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;

/** {@code pgbus explain <id>}: why a job is where it is, with evidence, the fix and an ETA. */
final class ExplainCommand implements Command {

  @Override
  public String name() {
    return "explain";
  }

  @Override
  public String summary() {
    return "why a job waits (or ended): reasons with evidence, the action and when it resolves";
  }

  @Override
  public String usageLine() {
    return "pgbus explain <job id>";
  }

  @Override
  public String help() {
    return """
        The job's state and the reasons it is not running, in order, each with a stable code,
        a sentence, its evidence, the action that unblocks it and when it resolves by itself
        (SELECT pgbus.explain(<id>) in psql). Exits 2 when there is no such job.
        """;
  }

  @Override
  public int run(Invocation in) throws SQLException {
    long id = AdminParams.id(in.args().exactly(this, "job id").get(0));
    String text;
    try (Connection c = in.database().dataSource().getConnection()) {
      text = Diagnosis.explain(c, id);
    } catch (SQLException e) {
      if (Diagnosis.missing(e)) {
        throw Diagnosis.missingFunction(Diagnosis.EXPLAIN_FUNCTION);
      }
      throw e;
    }
    if (text == null) {
      throw CliException.usage(
          "no job " + id + ": it never existed or was pruned after its retention; check the id");
    }
    JsonObject explained;
    try (JsonReader r = Json.createReader(new StringReader(text))) {
      explained = r.readObject();
    }
    if (in.out().json()) {
      in.out().json(explained);
      return 0;
    }
    in.out()
        .line(
            "job "
                + id
                + " (queue "
                + plain(explained.get("queue"))
                + "): "
                + plain(explained.get("state")));
    int n = 0;
    for (JsonValue v : explained.getJsonArray("reasons")) {
      JsonObject r = v.asJsonObject();
      in.out().line("  " + ++n + ". " + plain(r.get("code")) + ": " + plain(r.get("sentence")));
      line(in, "evidence", r.get("evidence"));
      line(in, "action", r.get("action"));
      line(in, "resolves at", r.get("resolves_at"));
    }
    if (n == 0) {
      in.out().line("  no reason given");
    }
    return 0;
  }

  private static void line(Invocation in, String label, JsonValue v) {
    if (v != null && v != JsonValue.NULL) {
      in.out().line("     " + label + ": " + plain(v));
    }
  }

  /** A string without its quotes; anything else as JSON. */
  private static String plain(JsonValue v) {
    if (v == null) {
      return "?";
    }
    return v.getValueType() == JsonValue.ValueType.STRING
        ? ((jakarta.json.JsonString) v).getString()
        : v.toString();
  }
}
