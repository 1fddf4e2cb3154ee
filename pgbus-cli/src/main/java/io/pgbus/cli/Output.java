package io.pgbus.cli;

import jakarta.json.Json;
import jakarta.json.JsonValue;
import java.util.ArrayList;
import java.util.List;

/**
 * What a command prints: one JSON document on stdout with {@code --json}, else lines and tables for
 * a person. Notes and errors go to stderr, so that stdout stays parseable.
 */
final class Output {

  private final Io io;
  private final boolean json;

  Output(Io io, boolean json) {
    this.io = io;
    this.json = json;
  }

  boolean json() {
    return json;
  }

  void json(JsonValue value) {
    io.out().println(value.toString());
  }

  /** A JSON string, or JSON null for {@code null}. */
  static JsonValue text(String s) {
    return s == null ? JsonValue.NULL : Json.createValue(s);
  }

  void line(String text) {
    io.out().println(text);
  }

  /** A note for the person at the terminal: stderr, in both modes. */
  void note(String text) {
    io.err().println("pgbus: " + text);
  }

  /** A table with a header row; columns as wide as their widest cell. */
  void table(List<String> headers, List<List<String>> rows) {
    var all = new ArrayList<List<String>>();
    all.add(headers);
    all.addAll(rows);
    int[] widths = new int[headers.size()];
    for (List<String> row : all) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    for (List<String> row : all) {
      var sb = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        sb.append(i == 0 ? "" : "  ");
        sb.append(
            i == row.size() - 1 ? row.get(i) : String.format("%-" + widths[i] + "s", row.get(i)));
      }
      io.out().println(sb.toString().stripTrailing());
    }
  }
}
