package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Expand, then contract (docs/schema.md, "The compatibility window"): the previous release keeps
 * running on the schema this build migrates, so every {@code pgbus.*} function it may call must
 * still accept its calls and return what it expects. The previous release's functions are in
 * {@value #LIST} (test resources): name, arguments (name and type, as named calls use both), how
 * many trailing ones have defaults, and the result type. An {@code R__} change that drops a
 * function, renames or retypes a parameter, adds one without a default, or changes a result type
 * fails here, naming the function; so does one that drops a default the old calls relied on.
 *
 * <p>With {@code -Dpgbus.compat.write=true} the test writes the list from this build's schema
 * instead: run it when cutting a release, so that the list is that release's.
 */
class FunctionCompatibilityTest {

  static final String LIST = "src/test/resources/io/pgbus/compat/previous-release-functions.txt";

  /** The system property that makes this test rewrite the list. */
  static final String WRITE = "pgbus.compat.write";

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  // Input arguments as "name type" (identity arguments: IN, INOUT, VARIADIC), the number of
  // trailing arguments with a default, and the result as a call sees it.
  private static final String FUNCTIONS =
      """
      SELECT p.proname::text, pg_catalog.pg_get_function_identity_arguments(p.oid),
             p.pronargdefaults, pg_catalog.pg_get_function_result(p.oid)
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'pgbus'
       ORDER BY 1, 2
      """;

  /** One function as a caller sees it. */
  record Signature(String name, List<String> args, int defaults, String result) {

    static Signature parse(String line) {
      // name(arg type, arg type) defaults=N returns TYPE
      int open = line.indexOf('(');
      int close = line.lastIndexOf(") defaults=");
      int returns = line.indexOf(" returns ", close);
      String inner = line.substring(open + 1, close);
      return new Signature(
          line.substring(0, open),
          inner.isEmpty() ? List.of() : List.of(inner.split(", ")),
          Integer.parseInt(line.substring(close + ") defaults=".length(), returns)),
          line.substring(returns + " returns ".length()));
    }

    String line() {
      return name + "(" + String.join(", ", args) + ") defaults=" + defaults + " returns " + result;
    }

    /**
     * Why a call the {@code old} signature accepted fails on this one, or null: every old argument
     * in its place with its name and type, every added one defaulted, every call that left out old
     * defaulted arguments still complete, the same result type.
     */
    String breaks(Signature old) {
      List<String> in = inputs(args);
      List<String> oldIn = inputs(old.args);
      if (in.size() < oldIn.size() || !in.subList(0, oldIn.size()).equals(oldIn)) {
        return "its arguments changed: (" + String.join(", ", args) + ")";
      }
      // Output columns (OUT parameters) may be added at the end: callers read theirs by name.
      List<String> out = outputs(args);
      List<String> oldOut = outputs(old.args);
      if (out.size() < oldOut.size() || !out.subList(0, oldOut.size()).equals(oldOut)) {
        return "its output columns changed: (" + String.join(", ", args) + ")";
      }
      int added = in.size() - oldIn.size();
      if (defaults < added + old.defaults) {
        return "it has "
            + defaults
            + " defaulted argument(s), old calls need "
            + (added + old.defaults);
      }
      if (!result.equals(old.result)) {
        return "it returns " + result;
      }
      return null;
    }
  }

  private static List<String> inputs(List<String> args) {
    return args.stream().filter(a -> !a.startsWith("OUT ")).toList();
  }

  private static List<String> outputs(List<String> args) {
    return args.stream().filter(a -> a.startsWith("OUT ")).toList();
  }

  @Test
  void everyFunctionThePreviousReleaseCallsStillTakesItsCallsAndReturnsItsType() throws Exception {
    Map<String, Signature> current = current();
    Path list = Path.of(LIST);
    if (Boolean.getBoolean(WRITE)) {
      var lines = new ArrayList<String>();
      lines.add(
          "# The pgbus.* functions of the previous release, as FunctionCompatibilityTest reads");
      lines.add(
          "# them: written by that test with -Dpgbus.compat.write=true when a release is cut.");
      lines.add(
          "# Schema version " + Schema.EXPECTED_VERSION + ", pgbus " + BuildVersion.current());
      current.values().forEach(s -> lines.add(s.line()));
      Files.write(list, lines, StandardCharsets.UTF_8);
      return;
    }
    var broken = new ArrayList<String>();
    for (String line : Files.readAllLines(list, StandardCharsets.UTF_8)) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      Signature old = Signature.parse(line);
      Signature now = current.get(old.name());
      String why = now == null ? "it is gone" : now.breaks(old);
      if (why != null) {
        broken.add("pgbus." + old.line() + ": " + why);
      }
    }
    assertThat(broken)
        .as(
            "the previous release calls these functions as listed in %s; an R__ change broke"
                + " them. Keep the old signature (add parameters at the end, with defaults) and"
                + " drop it only in a contract migration of a later release that raises"
                + " pgbus.schema_compat.oldest_build (docs/schema.md, \"The compatibility"
                + " window\")",
            LIST)
        .isEmpty();
  }

  @Test
  void aChangedSignatureIsCaught() {
    var old = Signature.parse("pause(queue text, reason text) defaults=1 returns boolean");
    assertThat(
            Signature.parse("pause(queue text, reason text) defaults=1 returns boolean")
                .breaks(old))
        .isNull();
    assertThat(
            Signature.parse("pause(queue text, reason text, who text) defaults=2 returns boolean")
                .breaks(old))
        .as("a parameter added at the end with a default")
        .isNull();
    assertThat(
            Signature.parse("pause(queue text, reason text, who text) defaults=1 returns boolean")
                .breaks(old))
        .contains("defaulted");
    assertThat(
            Signature.parse("pause(queue text, why text) defaults=1 returns boolean").breaks(old))
        .contains("arguments changed");
    assertThat(
            Signature.parse("pause(queue text, reason text) defaults=0 returns boolean")
                .breaks(old))
        .contains("defaulted");
    assertThat(
            Signature.parse("pause(queue text, reason text) defaults=1 returns void").breaks(old))
        .contains("returns void");
    assertThat(Signature.parse("pause(queue text) defaults=0 returns boolean").breaks(old))
        .contains("arguments changed");
    var withOut = Signature.parse("e(q text, OUT id bigint) defaults=0 returns record");
    assertThat(
            Signature.parse("e(q text, OUT id bigint, OUT dup boolean) defaults=0 returns record")
                .breaks(withOut))
        .as("an output column added at the end")
        .isNull();
    assertThat(
            Signature.parse("e(q text, OUT ident bigint) defaults=0 returns record")
                .breaks(withOut))
        .contains("output columns changed");
  }

  private static Map<String, Signature> current() throws Exception {
    var out = new LinkedHashMap<String, Signature>();
    try (Connection c = db.helperConnection();
        PreparedStatement ps = c.prepareStatement(FUNCTIONS);
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        String args = rs.getString(2);
        out.put(
            rs.getString(1),
            new Signature(
                rs.getString(1),
                args.isEmpty() ? List.of() : List.of(args.split(", ")),
                rs.getInt(3),
                rs.getString(4)));
      }
    }
    return out;
  }
}
