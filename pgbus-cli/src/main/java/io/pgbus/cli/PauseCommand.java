package io.pgbus.cli;

import io.pgbus.QueueNames;
import io.pgbus.engine.Jobs;
import jakarta.json.Json;
import java.sql.SQLException;

/**
 * {@code pgbus pause <queue>} and {@code pgbus resume <queue>}: for every JVM on the database, as
 * {@code POST <admin API>/queues/<queue>/pause|resume}, audited as the OS user and role. A pause
 * stops work, so it asks first ({@link Invocation#confirm}); a resume does not.
 */
final class PauseCommand implements Command {

  private final boolean pause;

  PauseCommand(boolean pause) {
    this.pause = pause;
  }

  @Override
  public String name() {
    return pause ? "pause" : "resume";
  }

  @Override
  public String summary() {
    return pause
        ? "pause a queue for every JVM (running jobs finish; enqueue goes on)"
        : "resume a paused queue; its workers wake at once";
  }

  @Override
  public String usageLine() {
    return "pgbus " + name() + " <queue>";
  }

  @Override
  public String help() {
    return pause
        ? """
          Pauses the queue for every JVM on the database: no engine claims its jobs from the
          commit on; jobs already running finish, and enqueues go on (they wait). Audited as
          cli:<user> (role <role>). Asks first; without a terminal it needs --yes.
          """
        : """
          Resumes a paused queue: its workers everywhere are woken at commit. Audited as
          cli:<user> (role <role>).
          """;
  }

  @Override
  public int run(Invocation in) throws SQLException {
    String queue = QueueNames.require(in.args().exactly(this, "queue").get(0));
    if (pause) {
      in.confirm("pause queue '" + queue + "' for every JVM");
    }
    Database db = in.database();
    Jobs jobs = new Jobs(in.settings().engine());
    String actor = db.actor();
    boolean changed =
        db.inTransaction(c -> pause ? jobs.pause(c, queue, actor) : jobs.resume(c, queue, actor));
    if (in.out().json()) {
      in.out()
          .json(
              Json.createObjectBuilder()
                  .add("queue", queue)
                  .add("action", name())
                  .add("changed", changed)
                  .add("paused", pause)
                  .build());
    } else {
      in.out()
          .line(
              "queue '"
                  + queue
                  + "' "
                  + (changed
                      ? (pause ? "paused" : "resumed")
                      : (pause ? "was paused already" : "was not paused")));
    }
    return 0;
  }
}
