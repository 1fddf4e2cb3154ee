package io.pgbus.cli;

import io.pgbus.QueueNames;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobState;
import io.pgbus.admin.QueueStats;
import io.pgbus.engine.Durations;
import io.pgbus.engine.JobAdminStore;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonValue;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code pgbus queues [<queue>]}: every queue's depth per state (the admin API's counts: the live
 * jobs exact up to {@link JobAdmin#COUNT_CAP}, the statistics' estimate past it), its pause, and
 * from {@code pgbus.queue_blockers} the jobs a free slot would claim now and the others by cause.
 */
final class QueuesCommand implements Command {

  private static final List<JobState> SHOWN =
      List.of(
          JobState.SCHEDULED,
          JobState.AVAILABLE,
          JobState.RETRYABLE,
          JobState.RUNNING,
          JobState.DEAD);

  @Override
  public String name() {
    return "queues";
  }

  @Override
  public String summary() {
    return "each queue's depth, pause, jobs runnable now and jobs blocked by cause";
  }

  @Override
  public String usageLine() {
    return "pgbus queues [<queue>]";
  }

  @Override
  public String help() {
    return """
        Every queue that has jobs, is paused or is read by the configured capsules (or the one
        named): its jobs per state (counted up to %d; past it the table statistics' estimate,
        shown as ~n; %d+ where the statistics had it smaller), whether it is paused,
        how long its oldest due job has waited, the waiting jobs a free slot would claim now and
        the others by cause (pgbus.queue_blockers; explain one job with pgbus explain <id>).
        """
        .formatted(JobAdmin.COUNT_CAP, JobAdmin.COUNT_CAP);
  }

  @Override
  public int run(Invocation in) throws SQLException {
    List<String> p = in.args().positionals();
    if (p.size() > 1) {
      in.args().exactly(this, "queue");
    }
    String only = p.isEmpty() ? null : QueueNames.require(p.get(0));
    List<String> known = only == null ? in.settings().engine().queues() : List.of(only);
    List<QueueStats> stats;
    Map<String, Diagnosis.Blockers> blockers;
    try (Connection c = in.database().dataSource().getConnection()) {
      c.setReadOnly(true);
      stats = new JobAdminStore().queueStats(c, known, JobAdmin.COUNT_CAP);
      try {
        blockers = Diagnosis.blockers(c, only);
      } catch (SQLException e) {
        if (!Diagnosis.missing(e)) {
          throw e;
        }
        blockers = null;
        in.out()
            .note(
                Diagnosis.BLOCKERS_FUNCTION
                    + " is missing (a schema older than this command line): runnable now and"
                    + " blocked are left out; pgbus migrate with this build adds it");
      }
    }
    if (only != null) {
      stats = stats.stream().filter(s -> s.queue().equals(only)).toList();
    }
    if (in.out().json()) {
      in.out().json(json(stats, blockers));
    } else {
      table(in.out(), stats, blockers);
    }
    return 0;
  }

  private static JsonValue json(List<QueueStats> stats, Map<String, Diagnosis.Blockers> blockers) {
    JsonArrayBuilder queues = Json.createArrayBuilder();
    for (QueueStats s : stats) {
      JsonObjectBuilder counts = Json.createObjectBuilder();
      for (JobState state : JobState.values()) {
        counts.add(state.sqlName(), s.counts().getOrDefault(state, 0L));
      }
      JsonObjectBuilder q =
          Json.createObjectBuilder()
              .add("queue", s.queue())
              .add("paused", s.paused())
              .add("counts", counts)
              .add(
                  "countsCapped",
                  Json.createArrayBuilder(
                      s.capped().stream().map(JobState::sqlName).sorted().toList()))
              .add(
                  "countsEstimated",
                  Json.createArrayBuilder(
                      s.estimated().stream().map(JobState::sqlName).sorted().toList()))
              .add("oldestWaitingMs", s.oldestWaiting().toMillis());
      Diagnosis.Blockers b = blockers == null ? null : blockers.get(s.queue());
      if (blockers == null) {
        q.addNull("waiting").addNull("runnableNow").addNull("blocked");
      } else {
        JsonObjectBuilder causes = Json.createObjectBuilder();
        if (b != null) {
          b.blocked().forEach(causes::add);
        }
        q.add("waiting", b == null ? 0 : b.waiting())
            .add("runnableNow", b == null ? 0 : b.runnableNow())
            .add("blocked", causes);
      }
      queues.add(q);
    }
    return Json.createObjectBuilder()
        .add("countCap", JobAdmin.COUNT_CAP)
        .add("queues", queues)
        .build();
  }

  private static void table(
      Output out, List<QueueStats> stats, Map<String, Diagnosis.Blockers> blockers) {
    var headers = new ArrayList<String>(List.of("QUEUE", "PAUSED"));
    SHOWN.forEach(s -> headers.add(s.sqlName().toUpperCase(java.util.Locale.ROOT)));
    headers.addAll(List.of("OLDEST", "RUNNABLE", "BLOCKED"));
    var rows = new ArrayList<List<String>>();
    for (QueueStats s : stats) {
      var row = new ArrayList<String>(List.of(s.queue(), s.paused() ? "yes" : "no"));
      for (JobState state : SHOWN) {
        long n = s.counts().getOrDefault(state, 0L);
        row.add(
            s.estimated().contains(state)
                ? "~" + n
                : s.capped().contains(state) ? n + "+" : Long.toString(n));
      }
      row.add(
          // Whole seconds once it is a second or more: 114s reads better than 113856ms.
          s.oldestWaiting().isZero()
              ? "-"
              : Durations.format(
                  s.oldestWaiting().toSeconds() > 0
                      ? Duration.ofSeconds(s.oldestWaiting().toSeconds())
                      : s.oldestWaiting()));
      Diagnosis.Blockers b = blockers == null ? null : blockers.get(s.queue());
      if (blockers == null) {
        row.addAll(List.of("?", "?"));
      } else if (b == null) {
        row.addAll(List.of("0", "-"));
      } else {
        row.add(Long.toString(b.runnableNow()));
        var causes = new ArrayList<String>();
        b.blocked().forEach((cause, n) -> causes.add(cause + "=" + n));
        row.add(causes.isEmpty() ? "-" : String.join(",", causes));
      }
      rows.add(row);
    }
    if (rows.isEmpty()) {
      out.line("no queues: no jobs, no paused queue, no capsule configured");
      return;
    }
    out.table(headers, rows);
  }
}
