package io.pgbus.cli;

import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.admin.JobView;
import io.pgbus.engine.JobAdminStore;
import io.pgbus.jakarta.admin.AdminParams;
import jakarta.json.Json;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code pgbus replay} and {@code pgbus retry}: one job by id, or up to {@code --limit} by the
 * admin API's filter ({@code POST <admin API>/jobs/{id}/replay}, {@code POST jobs/replay?...}),
 * with its bounds ({@link AdminParams}, {@link JobAdmin#MAX_BULK}) and its audit entry per job,
 * naming the OS user and role. Both change jobs, so both ask first.
 */
final class JobActionCommand implements Command {

  /** Which action: its name, what it takes and what it does. */
  enum Kind {
    REPLAY("replay", JobAdminStore.Action.REPLAY, "dead", "a fresh budget of attempts"),
    RETRY("retry", JobAdminStore.Action.RETRY, "scheduled or retryable", "a run now");

    final String word;
    final JobAdminStore.Action action;
    final String takes;
    final String gives;

    Kind(String word, JobAdminStore.Action action, String takes, String gives) {
      this.word = word;
      this.action = action;
      this.takes = takes;
      this.gives = gives;
    }
  }

  /** Flag name to the admin API's query parameter of the same filter. */
  private static final Map<String, String> FILTER_FLAGS = new LinkedHashMap<>();

  static {
    FILTER_FLAGS.put("queue", "queue");
    FILTER_FLAGS.put("state", "state");
    FILTER_FLAGS.put("unique-key", "uniqueKey");
    FILTER_FLAGS.put("payload", "payload");
    FILTER_FLAGS.put("created-from", "createdFrom");
    FILTER_FLAGS.put("created-to", "createdTo");
  }

  private final Kind kind;

  JobActionCommand(Kind kind) {
    this.kind = kind;
  }

  @Override
  public String name() {
    return kind.word;
  }

  @Override
  public String summary() {
    return "give " + kind.takes + " jobs " + kind.gives + ": one by id, or many by filter";
  }

  @Override
  public String usageLine() {
    return "pgbus "
        + kind.word
        + " <job id> | pgbus "
        + kind.word
        + " (--queue <queue> ... | --all)";
  }

  @Override
  public String help() {
    return """
        Gives %s jobs %s, as the admin API's %s: one job by id, or up to --limit jobs (newest
        first) that match every filter given. Each changed job gets an audit entry naming
        cli:<user> (role <role>). Asks first; without a terminal it needs --yes. A job id that
        does not exist exits 2; one in another state changes nothing and exits 1.
          --queue <queue>           jobs of this queue
          --state <state,...>       of these states (the action takes only %s ones)
          --unique-key <key>        with this unique key
          --payload <json object>   whose payload contains this object
          --created-from <instant>  created at or after, e.g. 2026-12-01T00:00:00Z
          --created-to <instant>    created before
          --all                     no filter: every %s job, up to --limit
          --limit <n>               at most this many, 1 to %d; default %d
        """
        .formatted(
            kind.takes,
            kind.gives,
            kind.word,
            kind.takes,
            kind.takes,
            JobAdmin.MAX_BULK,
            AdminParams.DEFAULT_BULK);
  }

  /** The value of the flag for the admin API's parameter {@code param}; null when not given. */
  private static String flagValue(Args args, String param) {
    for (Map.Entry<String, String> e : FILTER_FLAGS.entrySet()) {
      if (e.getValue().equals(param)) {
        return args.value(e.getKey());
      }
    }
    return null;
  }

  @Override
  public Set<String> valueFlags() {
    var flags = new java.util.HashSet<>(FILTER_FLAGS.keySet());
    flags.add("limit");
    return flags;
  }

  @Override
  public Set<String> switches() {
    return Set.of("all");
  }

  @Override
  public int run(Invocation in) throws SQLException {
    Args args = in.args();
    List<String> p = args.positionals();
    boolean filtered = FILTER_FLAGS.keySet().stream().anyMatch(f -> args.value(f) != null);
    if (p.size() > 1
        || !p.isEmpty() && (filtered || args.has("all") || args.value("limit") != null)) {
      throw CliException.usage(
          "pgbus "
              + kind.word
              + " takes a job id or a filter, not both (was given "
              + String.join(" ", p)
              + "): "
              + usageLine());
    }
    if (p.isEmpty() && !filtered && !args.has("all")) {
      throw CliException.usage(
          "pgbus "
              + kind.word
              + " needs a job id or a filter (--queue, --state, ...); --all acts on every "
              + kind.takes
              + " job: "
              + usageLine());
    }
    Long id = p.isEmpty() ? null : AdminParams.id(p.get(0));
    JobFilter filter =
        id != null ? JobFilter.byId(id) : AdminParams.filter(param -> flagValue(args, param));
    int limit =
        id != null
            ? 1
            : AdminParams.positive("limit", args.value("limit"), AdminParams.DEFAULT_BULK);
    in.confirm(
        id != null
            ? kind.word + " job " + id
            : kind.word + " up to " + limit + " " + kind.takes + " jobs matching " + filter);
    Database db = in.database();
    String actor = db.actor();
    JobAdminStore store = new JobAdminStore();
    int changed = db.inTransaction(c -> store.jobAct(c, kind.action, filter, limit, actor));
    if (id != null && changed == 0) {
      Optional<JobView> job = db.inTransaction(c -> store.jobView(c, id));
      if (job.isEmpty()) {
        throw CliException.usage("no job " + id + ": check the id (pgbus queues, the admin API)");
      }
      throw CliException.failed(
          "job "
              + id
              + " is "
              + job.get().state().sqlName()
              + ": "
              + kind.word
              + " takes "
              + kind.takes
              + " jobs; nothing changed (pgbus explain "
              + id
              + " tells why it is where it is)");
    }
    if (in.out().json()) {
      in.out()
          .json(
              Json.createObjectBuilder().add("action", kind.word).add("changed", changed).build());
    } else {
      in.out().line(kind.word + ": " + changed + " job(s) changed");
    }
    return 0;
  }
}
