package io.pgbus.cli;

import io.pgbus.QueueNames;
import io.pgbus.engine.BuildVersion;
import io.pgbus.engine.DeployCheck;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.SchemaWindow;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code pgbus check}: may a build run on this database? Its compatibility window ({@link
 * SchemaWindow}), then the deploy gate ({@link DeployCheck}) for the queues it handles and the
 * configuration it is given, before a rollout instead of during it.
 */
final class CheckCommand implements Command {

  @Override
  public String name() {
    return "check";
  }

  @Override
  public String summary() {
    return "the schema window and the deploy gate for a build about to roll out";
  }

  @Override
  public String usageLine() {
    return "pgbus check [--build <version>] [--handles <queue,...>]";
  }

  @Override
  public String help() {
    return """
        Answers before a rollout what a server's start would: whether the build runs on this
        schema (its compatibility window, docs/schema.md) and what the deploy gate finds
        (docs/operations.md, "The deploy gate"): queues with waiting jobs that neither the build
        nor a live engine reads, enabled schedules without a handler, and the limits its
        configuration changes (listed, never failing). Exits 1 outside the window or on a blocking
        finding. The gate's payload check needs the handler classes: the server runs it at start.
          --build <version>        the build to check (default: this one, %s)
          --handles <queue,...>    the queues the build has handlers for (default: the queues of
                                   its capsules, pgbus.capsule.<name>.queues given as keys)
        """
        .formatted(BuildVersion.current());
  }

  @Override
  public Set<String> valueFlags() {
    return Set.of("build", "handles");
  }

  @Override
  public int run(Invocation in) throws SQLException {
    in.args().exactly(this);
    String buildText = in.args().value("build");
    BuildVersion build = buildText == null ? BuildVersion.current() : BuildVersion.parse(buildText);
    EngineConfig config = in.settings().engine();
    Set<String> handled = handled(in.args().value("handles"), config);
    SchemaWindow window;
    List<DeployCheck.Finding> findings = List.of();
    try (Connection c = in.database().dataSource().getConnection()) {
      c.setReadOnly(true);
      window = SchemaWindow.read(c, build);
      if (window.inside()) {
        // The payload check maps payloads onto handler types, which only the build itself has.
        findings = DeployCheck.run(c, config, handled, (queue, payload) -> null);
      }
    }
    List<DeployCheck.Finding> blocking = DeployCheck.blocking(findings);
    boolean ok = window.inside() && blocking.isEmpty();
    if (in.out().json()) {
      JsonArrayBuilder list = Json.createArrayBuilder();
      for (DeployCheck.Finding f : findings) {
        list.add(
            Json.createObjectBuilder()
                .add("kind", f.kind().name().toLowerCase(java.util.Locale.ROOT))
                .add("queue", Output.text(f.queue()))
                .add("blocking", f.blocking())
                .add("detail", f.detail()));
      }
      in.out()
          .json(
              Json.createObjectBuilder()
                  .add("ok", ok)
                  .add("build", build.toString())
                  .add("schema", Output.text(window.installed()))
                  .add("inside", window.inside())
                  .add("window", window.message())
                  .add("handles", Json.createArrayBuilder(handled))
                  .add("findings", list)
                  .build());
    } else {
      in.out().line((window.inside() ? "schema: OK: " : "schema: FAIL: ") + window.message());
      if (window.inside()) {
        in.out()
            .line(
                (blocking.isEmpty() ? "deploy gate: OK: " : "deploy gate: FAIL: ")
                    + DeployCheck.describe(findings)
                    + " (handles "
                    + handled
                    + ")");
      }
    }
    return ok ? 0 : CliException.FAILED;
  }

  private static Set<String> handled(String flag, EngineConfig config) {
    if (flag == null) {
      return new TreeSet<>(config.queues());
    }
    var queues = new TreeSet<String>();
    for (String q : new ArrayList<>(Arrays.asList(flag.split(",")))) {
      if (!q.isBlank()) {
        queues.add(QueueNames.require(q.strip()));
      }
    }
    return queues;
  }
}
