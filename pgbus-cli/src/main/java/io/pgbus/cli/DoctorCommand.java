package io.pgbus.cli;

import io.pgbus.engine.Doctor;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import java.sql.SQLException;
import java.util.Set;

/**
 * {@code pgbus doctor}: the servers' doctor for the database alone ({@link
 * Doctor#examineDatabase}): the schema, paused and limited queues, schedules, a pooler and the
 * transaction horizon.
 */
final class DoctorCommand implements Command {

  @Override
  public String name() {
    return "doctor";
  }

  @Override
  public String summary() {
    return "examine the database: schema, paused queues, limits, schedules, pooler, horizon";
  }

  @Override
  public String usageLine() {
    return "pgbus doctor [--strict]";
  }

  @Override
  public String help() {
    return """
        The doctor of the servers (GET /.../doctor) for the database alone: the schema and this
        build's window, paused and limited queues, schedules that cannot run, a transaction-mode
        pooler and the oldest snapshot held elsewhere. A server's own checks (listener, pool,
        connection budget) are in its doctor. Exits 1 when a check FAILs.
          --strict   exit 1 on a WARN too
        """;
  }

  @Override
  public Set<String> switches() {
    return Set.of("strict");
  }

  @Override
  public int run(Invocation in) throws SQLException {
    in.args().exactly(this);
    Doctor.Report report =
        Doctor.examineDatabase(in.database().dataSource(), in.settings().engine());
    if (in.out().json()) {
      JsonArrayBuilder checks = Json.createArrayBuilder();
      for (Doctor.Check c : report.checks()) {
        checks.add(
            Json.createObjectBuilder()
                .add("name", c.name())
                .add("status", c.status().name())
                .add("detail", c.detail())
                .add("fix", Output.text(c.status() == Doctor.Status.OK ? null : c.fix())));
      }
      in.out()
          .json(
              Json.createObjectBuilder()
                  .add("status", report.status().name())
                  .add("checks", checks)
                  .build());
    } else {
      in.out().line(report.toText());
    }
    boolean failed =
        report.status() == Doctor.Status.FAIL
            || in.args().has("strict") && report.status() == Doctor.Status.WARN;
    return failed ? CliException.FAILED : 0;
  }
}
