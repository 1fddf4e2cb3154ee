package io.pgbus.cli;

import io.pgbus.engine.BuildVersion;
import io.pgbus.engine.Schema;
import io.pgbus.engine.SchemaWindow;
import jakarta.json.Json;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * {@code pgbus migrate}: this build's migrations, as the servers apply them at start ({@link
 * Schema#migrate}: under the migration lock, never down), for pipelines that keep DDL out of the
 * application (the servers then run with {@code pgbus.migrate=false} and a role without DDL).
 */
final class MigrateCommand implements Command {

  @Override
  public String name() {
    return "migrate";
  }

  @Override
  public String summary() {
    return "apply this build's schema migrations (run as the schema owner)";
  }

  @Override
  public String usageLine() {
    return "pgbus migrate";
  }

  @Override
  public String help() {
    return """
        Applies the pgbus schema migrations of this build, as a server does at start with
        pgbus.migrate=true: under the migration lock, so concurrent runs apply each once, and
        never down (a schema a newer build migrated is left alone). Run it as the role that owns
        the pgbus schema, so that the servers' role needs no DDL (docs/operations.md, Security).
        Exits 1 when this build cannot run on the schema afterwards.
        """;
  }

  @Override
  public int run(Invocation in) throws SQLException {
    in.args().exactly(this);
    DataSource ds = in.database().dataSource();
    String before;
    try (Connection c = ds.getConnection()) {
      before = Schema.installedVersion(c);
    }
    String after = Schema.migrate(ds, BuildVersion.current(), in.database().schema());
    SchemaWindow window;
    try (Connection c = ds.getConnection()) {
      window = SchemaWindow.read(c);
    }
    if (in.out().json()) {
      in.out()
          .json(
              Json.createObjectBuilder()
                  .add("build", BuildVersion.current().toString())
                  .add("before", Output.text(before))
                  .add("after", Output.text(after))
                  .add("inside", window.inside())
                  .add("window", window.message())
                  .build());
    } else {
      in.out()
          .line(
              (before == null
                      ? "created the pgbus schema at version " + after
                      : before.equals(after)
                          ? "the pgbus schema was at version " + after + " already"
                          : "migrated the pgbus schema from version " + before + " to " + after)
                  + "; "
                  + window.message());
    }
    return window.inside() ? 0 : CliException.FAILED;
  }
}
