package io.pgbus.engine;

import io.pgbus.Schedules;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;

/**
 * The doctor: checks what an operator would check, each with a status and a one-line fix, and
 * spells out the direct-connection budget so capacity can be planned from the report alone. It
 * costs a handful of statements and runs only when asked (and once at start-up).
 */
public final class Doctor {

  private static final System.Logger LOG = System.getLogger(Doctor.class.getName());

  public enum Status {
    OK,
    WARN,
    FAIL
  }

  /** One check: what was found, and what to do about it when it is not OK. */
  public record Check(String name, Status status, String detail, String fix) {}

  /**
   * The direct-connection budget of one JVM and of a fleet.
   *
   * @param listenerPerJvm LISTEN connections each JVM pins (always 1 with capsules, else 0)
   * @param poolMax the JTA datasource's maximum pool size, or null when unknown
   * @param capsuleThreads worker threads over all capsules
   * @param perJvm connections one JVM may open at most, or null when the pool size is unknown
   * @param serverMaxConnections the server's max_connections
   * @param reservedConnections superuser_reserved_connections
   * @param maxJvms how many such JVMs fit in the server's non-reserved slots, or null
   * @param formula the budget for N JVMs, spelled out
   */
  public record Budget(
      int listenerPerJvm,
      Integer poolMax,
      int capsuleThreads,
      Integer perJvm,
      Integer serverMaxConnections,
      Integer reservedConnections,
      Integer maxJvms,
      String formula) {}

  public record Report(Status status, List<Check> checks, Budget budget) {

    /** This report with {@code extra} at the end, its status the worse of both. */
    public Report plus(Check extra) {
      var all = new ArrayList<>(checks);
      all.add(extra);
      Status worst = extra.status().compareTo(status) > 0 ? extra.status() : status;
      return new Report(worst, List.copyOf(all), budget);
    }

    /** The report as log lines. */
    public String toText() {
      var sb = new StringBuilder("pgbus doctor: ").append(status);
      for (Check c : checks) {
        sb.append("\n  [").append(c.status()).append("] ").append(c.name()).append(": ");
        sb.append(c.detail());
        if (c.status() != Status.OK && c.fix() != null) {
          sb.append("\n         fix: ").append(c.fix());
        }
      }
      return sb.toString();
    }
  }

  private static final String SERVER =
      """
      SELECT pg_catalog.current_setting('server_version'), pg_catalog.current_database(),
             pg_catalog.current_setting('max_connections')::int,
             pg_catalog.current_setting('superuser_reserved_connections')::int
      """;

  /*
   * The oldest snapshot in this database that another session holds (backend_xmin), or the oldest
   * prepared transaction. While it lives, VACUUM keeps every row version deleted or updated after
   * it: pruned jobs, claimed and completed rows stay as dead tuples in pgbus.job and its indexes.
   * Only sessions of this database count: another database's snapshot does not hold back this
   * one's tables (replication slots and hot_standby_feedback do; they are not read here). The
   * age is the transaction's (its snapshot is at least that young under REPEATABLE READ; a READ
   * COMMITTED one holds a snapshot only while a statement runs). The last column counts client sessions whose details this role may not see
   * (pg_read_all_stats shows them).
   */
  private static final String HORIZON =
      """
      WITH holder AS (
        SELECT a.pid::text AS who, a.usename::text AS usr, a.application_name AS app,
               a.state AS state,
               pg_catalog.now() - a.xact_start AS held,
               pg_catalog.age(a.backend_xmin) AS xids
        FROM pg_catalog.pg_stat_activity a
        WHERE a.datname = pg_catalog.current_database()
          AND a.backend_xmin IS NOT NULL
          AND a.pid <> pg_catalog.pg_backend_pid()
          AND a.xact_start IS NOT NULL
        UNION ALL
        SELECT 'prepared transaction ' || p.gid, p.owner::text, NULL, 'prepared',
               pg_catalog.now() - p.prepared, pg_catalog.age(p.transaction)
        FROM pg_catalog.pg_prepared_xacts p
        WHERE p.database = pg_catalog.current_database()
      )
      SELECT h.who, h.usr, h.app, h.state,
             pg_catalog.floor(pg_catalog.date_part('epoch', h.held))::bigint, h.xids,
             (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity a
              WHERE a.datname = pg_catalog.current_database()
                AND a.backend_type = 'client backend' AND a.state IS NULL)
      FROM (SELECT 1) one LEFT JOIN LATERAL
           (SELECT * FROM holder ORDER BY held DESC LIMIT 1) h ON true
      """;

  private Doctor() {}

  /**
   * Examines an engine and its database.
   *
   * @param poolMax the JTA datasource's maximum pool size as configured, or null if unknown
   * @param poolSetting the setting that declares it, named in the fix
   */
  public static Report examine(
      Engine engine, DataSource dataSource, Integer poolMax, String poolSetting) {
    EngineConfig config = engine.config();
    int threads = config.capsules().stream().mapToInt(CapsuleConfig::concurrency).sum();
    var checks = new ArrayList<Check>();
    checks.add(
        new Check(
            "config",
            Status.OK,
            String.format(
                Locale.ROOT,
                "%d capsule(s) over queues %s, %d worker thread(s); poll ceiling %s, poll interval"
                    + " %s, lease %s; %d cron(s)%s",
                config.capsules().size(),
                config.queues(),
                threads,
                config.ticker().ceiling(),
                config.ticker().interval(),
                config.execution().lease(),
                config.crons().size(),
                config.crons().isEmpty()
                    ? ""
                    : " "
                        + config.crons().stream().map(CronJob::name).toList()
                        + " (enqueued by the maintenance leader)"),
            null));

    Server server = database(dataSource, config, checks);
    checks.add(listener(engine));
    checks.add(wakes(engine.status().wakes()));
    checks.add(pool(poolMax, threads, poolSetting));
    Budget budget =
        budget(
            engine,
            poolMax,
            threads,
            server.maxConnections(),
            server.reserved(),
            server.poolerServers());
    checks.add(new Check("connection budget", Status.OK, budget.formula(), null));
    return report(checks, budget);
  }

  /**
   * Examines the database alone, as the command line does ({@code pgbus doctor}): the database, the
   * schema, paused and limited queues, schedules, a pooler and the transaction horizon, with {@code
   * config}'s queues and horizon setting. No engine, so no listener, pool or budget: the report's
   * budget is null.
   */
  public static Report examineDatabase(DataSource dataSource, EngineConfig config) {
    var checks = new ArrayList<Check>();
    database(dataSource, config, checks);
    return report(checks, null);
  }

  private static Report report(List<Check> checks, Budget budget) {
    Status worst = Status.OK;
    for (Check c : checks) {
      if (c.status().compareTo(worst) > 0) {
        worst = c.status();
      }
    }
    return new Report(worst, List.copyOf(checks), budget);
  }

  /** What the budget needs of the server; nulls when it could not be read. */
  private record Server(Integer maxConnections, Integer reserved, Integer poolerServers) {}

  /*
   * Behind a pooler: the backends of this database connected from the pooler's address (the
   * address this statement's backend sees), the listeners excluded; a role without
   * pg_read_all_stats sees its own only, so this is at least the pooler's server pool now.
   */
  private static final String POOLER_SERVERS =
      """
      SELECT pg_catalog.count(*)::int
      FROM pg_catalog.pg_stat_activity a
      WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
        AND a.backend_type OPERATOR(pg_catalog.=) 'client backend'::text
        AND a.client_addr OPERATOR(pg_catalog.=) (
          SELECT s.client_addr FROM pg_catalog.pg_stat_activity s
          WHERE s.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid())
        AND COALESCE(a.application_name, ''::text) OPERATOR(pg_catalog.<>) '%s'::text
      """
          .formatted(Channels.LISTENER_APPLICATION_NAME); // a literal: mapped onto the schema

  /** The checks that read the database, added to {@code checks}. */
  private static Server database(DataSource dataSource, EngineConfig config, List<Check> checks) {
    Integer maxConnections = null;
    Integer reserved = null;
    Integer poolerServers = null;
    try (Connection c = dataSource.getConnection()) {
      try (PreparedStatement ps = c.prepareStatement(SERVER);
          ResultSet rs = ps.executeQuery()) {
        rs.next();
        maxConnections = rs.getInt(3);
        reserved = rs.getInt(4);
        checks.add(
            new Check(
                "database",
                Status.OK,
                "PostgreSQL " + rs.getString(1) + ", database " + rs.getString(2),
                null));
      }
      Check schema = schema(c);
      checks.add(schema);
      if (schema.status() == Status.OK) {
        checks.add(paused(config, c));
        checks.add(limited(c));
        checks.add(schedules(c));
      }
      Check pooler = pooler(c);
      checks.add(pooler);
      if (pooler.status() != Status.OK) {
        try (PreparedStatement ps = c.prepareStatement(POOLER_SERVERS)) {
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            poolerServers = rs.getInt(1);
          }
        }
      }
      checks.add(horizon(c, config.maintainer().horizonWarn()));
    } catch (SQLException e) {
      String category = DatabaseProblem.of(e);
      // The driver's text (host, port, user) goes to the log; the report shows the category.
      LOG.log(System.Logger.Level.WARNING, "pgbus doctor: {0}: {1}", category, e.getMessage());
      checks.add(
          new Check(
              "database",
              Status.FAIL,
              category,
              "check the datasource's host, port, database and credentials (PGBUS_DB_* in"
                  + " liberty-config) and that PostgreSQL is up"));
    }
    return new Server(maxConnections, reserved, poolerServers);
  }

  private static Check schema(Connection c) throws SQLException {
    SchemaWindow window = SchemaWindow.read(c);
    if (window.inside()) {
      return new Check("schema", Status.OK, window.explain(), null);
    }
    return new Check("schema", Status.FAIL, window.explain(), window.fix());
  }

  /**
   * Which queues pgbus.queue_limit limits (V14), and how many of their due jobs wait on a limit
   * rather than on a worker. Informational: a limit is a choice, so it never warns.
   */
  static Check limited(Connection c) throws SQLException {
    List<QueueLimitStatus> limits = new QueueLimitStore().queueLimitStatus(c);
    if (limits.isEmpty()) {
      return new Check("flow control", Status.OK, "no queue is limited", null);
    }
    var fair = new QueueLimits().fairShares(c);
    var parts = new ArrayList<String>();
    for (QueueLimitStatus l : limits) {
      FairShare f = fair.get(l.queue());
      parts.add(
          String.format(
              Locale.ROOT,
              "%s (global %s, per key %d%s%s%s: %d running, %d waiting on the limit, %d on a"
                  + " worker)",
              l.queue(),
              l.globalConcurrency() == null ? "none" : l.globalConcurrency().toString(),
              l.keyConcurrency(),
              l.describeFifo(),
              l.describeRate(),
              f == null ? "" : ", " + f.describe(),
              l.running(),
              l.waitingOnLimit(),
              l.waitingOnWorker()));
    }
    return new Check("flow control", Status.OK, "limited: " + String.join("; ", parts), null);
  }

  /** The most unreadable schedules the schedules check names; the rest are counted. */
  static final int NAMED_SCHEDULES = 10;

  /**
   * Schedules whose stored row cannot run (issue #23): an unknown zone or an expression that does
   * not parse, written by SQL or by another release. The leader skips them and runs the others.
   */
  static Check schedules(Connection c) throws SQLException {
    var store = new ScheduleStore();
    var bad = new ArrayList<String>();
    int total = 0;
    int unreadable = 0;
    String after = null;
    List<ScheduleStore.Row> page;
    do {
      page = store.scheduleList(c, after, Schedules.MAX_PAGE);
      for (ScheduleStore.Row r : page) {
        total++;
        if (!r.schedule().readable()) {
          unreadable++;
          if (bad.size() < NAMED_SCHEDULES) {
            bad.add(r.schedule().problem());
          }
        }
        after = r.schedule().name();
      }
    } while (page.size() == Schedules.MAX_PAGE);
    if (unreadable == 0) {
      return new Check("schedules", Status.OK, total + " schedule(s), all can run", null);
    }
    return new Check(
        "schedules",
        Status.WARN,
        unreadable
            + " of "
            + total
            + " schedule(s) cannot run and are skipped (the others run): "
            + String.join("; ", bad)
            + (unreadable > bad.size() ? "; and " + (unreadable - bad.size()) + " more" : ""),
        "fix each with Schedules.update or POST /admin/schedules/<name>, or delete it with"
            + " Schedules.delete or POST /admin/schedules/<name>/delete");
  }

  private static Check paused(EngineConfig config, Connection c) throws SQLException {
    List<String> paused = new QueueStore().queuesPaused(c);
    if (paused.isEmpty()) {
      return new Check("paused queues", Status.OK, "none", null);
    }
    var read = new ArrayList<>(paused);
    read.retainAll(config.queues());
    return new Check(
        "paused queues",
        Status.WARN,
        "paused: "
            + paused
            + (read.isEmpty() ? "" : "; this JVM's capsules read " + read)
            + "; their jobs wait",
        "intended? if not: JobQueue.resume(queue) or SELECT pgbus.resume('<queue>')");
  }

  // A transaction-mode pooler hands each transaction to whichever server connection is free, so
  // two auto-commit statements on one client connection can land on two backends; but an idle
  // pool hands back the same one (issue #33: 1 warning in 17 reports). The backend pid the
  // connection announced at its start tells every time: PgBouncer announces a key of its own.
  private static Check pooler(Connection c) throws SQLException {
    PoolerGuard.Session s = PoolerGuard.inspect(c);
    if (!s.direct()) {
      return new Check(
          "pooler",
          Status.WARN,
          "the datasource goes through a transaction-mode pooler ("
              + s.describe()
              + "); pgbus's own statements are unprepared (prepareThreshold=0), and each JVM"
              + " costs PostgreSQL its direct LISTEN connection (see the budget)",
          "give the listener a direct connection (pgbus.listener.url=jdbc:postgresql://<database"
              + " host>:5432/<db>) and add prepareThreshold=0 to the JTA datasource for the"
              + " application's statements (docs/operations.md, \"Behind PgBouncer\")");
    }
    return new Check(
        "pooler", Status.OK, "no transaction-mode pooler seen (" + s.describe() + ")", null);
  }

  /**
   * FAIL while pgbus's statements met a prepared-statement error of a transaction-mode pooler
   * within {@link PoolerGuard#FAULT_WINDOW} (readiness is DOWN meanwhile), WARN after.
   */
  public static Check preparedStatements(PoolerGuard guard) {
    String fix =
        "add prepareThreshold=0 to the JTA datasource (docs/operations.md, \"Behind PgBouncer\")";
    if (guard.problem() != null) {
      return new Check(
          "prepared statements",
          Status.FAIL,
          PoolerGuard.CATEGORY + ": " + guard.faults() + " error(s), the last within a minute",
          fix);
    }
    if (guard.faults() > 0) {
      return new Check(
          "prepared statements",
          Status.WARN,
          guard.faults()
              + " error(s) of a pooler with prepared statements, none for a minute; pgbus's own"
              + " statements are unprepared now",
          fix);
    }
    return new Check(
        "prepared statements",
        Status.OK,
        guard.unprepared()
            ? "none failed; pgbus's statements are unprepared (a pooler is in front)"
            : "none failed",
        null);
  }

  /**
   * Warns when a transaction elsewhere has held a snapshot longer than {@code warnAfter}: it keeps
   * VACUUM from removing what pgbus deletes and updates, so the job table and its indexes grow and
   * claims slow down until it ends (docs/operations.md "A long transaction elsewhere").
   */
  static Check horizon(Connection c, Duration warnAfter) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(HORIZON);
        ResultSet rs = ps.executeQuery()) {
      rs.next();
      String who = rs.getString(1);
      long hidden = rs.getLong(7);
      String unseen =
          hidden == 0
              ? ""
              : "; "
                  + hidden
                  + " session(s) of other roles are hidden from this role (grant it"
                  + " pg_read_all_stats to see them)";
      String name = "transaction horizon";
      if (who == null) {
        return new Check(name, Status.OK, "no other session holds a snapshot" + unseen, null);
      }
      long heldSeconds = rs.getLong(5);
      String holder =
          (who.startsWith("prepared") ? who : "pid " + who)
              + " (user "
              + rs.getString(2)
              + (rs.getString(3) == null || rs.getString(3).isEmpty()
                  ? ""
                  : ", application '" + rs.getString(3) + "'")
              + ", "
              + rs.getString(4)
              + ")";
      String detail =
          "the oldest snapshot is held by "
              + holder
              + " for "
              + Durations.format(Duration.ofSeconds(heldSeconds))
              + ", "
              + rs.getLong(6)
              + " transaction(s) ago"
              + unseen;
      if (heldSeconds < warnAfter.toSeconds()) {
        return new Check(name, Status.OK, detail, null);
      }
      return new Check(
          name,
          Status.WARN,
          detail
              + ": vacuum cannot remove the jobs pgbus deletes or updates after it, so pgbus.job"
              + " and its indexes grow and claims slow down until it ends",
          who.startsWith("prepared")
              ? "COMMIT PREPARED or ROLLBACK PREPARED '"
                  + who.substring("prepared transaction ".length())
                  + "'"
              : "end that transaction (commit it, or SELECT pg_terminate_backend("
                  + who
                  + ")); keep long reports off the queue's database (a replica without"
                  + " hot_standby_feedback) or bound them with idle_in_transaction_session_timeout"
                  + " and statement_timeout; warns after "
                  + MaintainerConfig.HORIZON_WARN.key()
                  + "="
                  + Durations.format(warnAfter));
    }
  }

  private static Check listener(Engine engine) {
    if (engine.config().capsules().isEmpty()) {
      return new Check("listener", Status.OK, "no capsules: this JVM only enqueues", null);
    }
    ListenerState s = engine.listenerState();
    Notifier n = engine.notifier();
    String error = n == null || n.lastError() == null ? "" : " (" + n.lastError() + ")";
    return switch (s) {
      case DELIVERING ->
          new Check(
              "listener",
              Status.OK,
              "delivering: the self-probe came back; capsules rely on NOTIFY",
              null);
      case STARTING ->
          new Check(
              "listener",
              Status.WARN,
              "starting: the first self-probe has not come back yet" + error,
              "wait a few seconds; if it stays here, see the listener's log lines");
      case DEGRADED ->
          new Check(
              "listener",
              Status.WARN,
              "degraded: a self-probe did not come back, notifications are being lost"
                  + error
                  + "; capsules poll every "
                  + engine.config().ticker().interval(),
              "point the listener at the database directly (pgbus.listener.url), not through a"
                  + " transaction-mode pooler");
      case RECONNECTING ->
          new Check(
              "listener",
              Status.WARN,
              "reconnecting"
                  + error
                  + "; capsules poll every "
                  + engine.config().ticker().interval(),
              "check that the database is up and accepts connections from this host");
      case FAILED ->
          new Check(
              "listener",
              Status.FAIL,
              "failed" + error + "; capsules poll every " + engine.config().ticker().interval(),
              "the application does not see the PostgreSQL driver; on WildFly put"
                  + " jboss-deployment-structure.xml with the module org.postgresql into the EAR's"
                  + " META-INF, for the deployment and the WAR's sub-deployment (docs/wildfly.md)");
      case STOPPED ->
          new Check("listener", Status.WARN, "stopped", "the engine is not running: see readiness");
    };
  }

  /**
   * Which wake mode runs, and what any NOTIFY costs: PostgreSQL serialises the commits of all
   * transactions that notified, instance-wide, each holding one lock through its WAL flush.
   */
  static Check wakes(EngineStatus.Wakes w) {
    String others =
        "; any other NOTIFY on this PostgreSQL (your own pg_notify, another library's) makes its"
            + " commit wait its turn behind every notifying commit of the instance";
    if (w.mode() == WakeMode.IN_TRANSACTION) {
      return new Check(
          "wakes",
          Status.OK,
          "in-transaction: every enqueuing commit takes PostgreSQL's instance-wide notification"
              + " lock through its WAL flush, so enqueuing commits go one at a time"
              + others,
          null);
    }
    String counts =
        String.format(
            Locale.ROOT,
            "coalesced: Java enqueues wake after their commit (%d in-process; %d queue(s) to the"
                + " other JVMs in %d NOTIFY statement(s), %d coalesced, %d failed)",
            w.local(),
            w.sent(),
            w.statements(),
            w.coalesced(),
            w.failed());
    return w.failed() == 0
        ? new Check("wakes", Status.OK, counts + others, null)
        : new Check(
            "wakes",
            Status.WARN,
            counts + ": the other JVMs found those jobs by their poll",
            "see the WakeSender warnings in the log (the database's connections or load)");
  }

  private static Check pool(Integer poolMax, int threads, String poolSetting) {
    int needed = threads + 2;
    if (poolMax == null) {
      return new Check(
          "pool",
          Status.WARN,
          "the JTA datasource's pool size is unknown; "
              + threads
              + " capsule thread(s) each hold a connection while a job runs",
          "declare it in " + poolSetting + " (the maxPoolSize of the JTA datasource)");
    }
    if (poolMax < needed) {
      return new Check(
          "pool",
          Status.WARN,
          "pool of "
              + poolMax
              + " for "
              + threads
              + " capsule thread(s) plus claims and"
              + " enqueues: workers can starve for connections",
          "raise maxPoolSize of the JTA datasource to at least "
              + needed
              + ", or lower capsule concurrency");
    }
    return new Check(
        "pool", Status.OK, "pool of " + poolMax + " for " + threads + " capsule thread(s)", null);
  }

  static Budget budget(
      Engine engine, Integer poolMax, int threads, Integer maxConnections, Integer reserved) {
    return budget(engine, poolMax, threads, maxConnections, reserved, null);
  }

  /**
   * The budget per JVM. Without a pooler each JVM costs PostgreSQL its LISTEN connection and its
   * whole JTA pool. Behind a transaction-mode pooler ({@code poolerServers} non-null: the server
   * connections the pooler holds now, counted from PostgreSQL) the pool connects to the pooler:
   * each JVM costs PostgreSQL its direct LISTEN connection only, and the pooler's server pool is
   * paid once for all JVMs.
   */
  static Budget budget(
      Engine engine,
      Integer poolMax,
      int threads,
      Integer maxConnections,
      Integer reserved,
      Integer poolerServers) {
    int listener = engine.config().capsules().isEmpty() ? 0 : 1;
    int free = maxConnections == null ? 0 : maxConnections - (reserved == null ? 0 : reserved);
    if (poolerServers != null) {
      Integer maxJvms =
          maxConnections == null || listener == 0
              ? null
              : Math.max(0, (free - poolerServers) / listener);
      var f = new StringBuilder();
      f.append("behind a transaction-mode pooler: per JVM ")
          .append(listener)
          .append(" direct LISTEN connection to PostgreSQL; the JTA pool (")
          .append(poolMax == null ? "P" : poolMax)
          .append(") connects to the pooler, which holds ")
          .append(poolerServers)
          .append(" server connection(s) now for all JVMs; for N JVMs: N x ")
          .append(listener)
          .append(" + ")
          .append(poolerServers)
          .append(" (without the pooler: N x ")
          .append(poolMax == null ? "(" + listener + " + P)" : listener + poolMax)
          .append(")");
      if (maxConnections != null) {
        f.append("; the server allows ")
            .append(maxConnections)
            .append(" connections (")
            .append(reserved)
            .append(" reserved for superusers)");
        if (maxJvms != null) {
          f.append(", room for about ").append(maxJvms).append(" JVM(s) behind this pooler");
        }
      }
      return new Budget(
          listener, poolMax, threads, listener, maxConnections, reserved, maxJvms, f.toString());
    }
    Integer perJvm = poolMax == null ? null : listener + poolMax;
    Integer maxJvms =
        perJvm == null || maxConnections == null || perJvm == 0 ? null : Math.max(0, free / perJvm);
    var f = new StringBuilder();
    f.append("per JVM: ")
        .append(listener)
        .append(" LISTEN connection (direct, never through a" + " transaction-mode pooler) + ");
    f.append(poolMax == null ? "P" : poolMax).append(" (JTA datasource maxPoolSize) = ");
    f.append(perJvm == null ? (listener + " + P") : perJvm);
    f.append("; for N JVMs: N x ").append(perJvm == null ? "(" + listener + " + P)" : perJvm);
    if (maxConnections != null) {
      f.append("; the server allows ")
          .append(maxConnections)
          .append(" connections (")
          .append(reserved)
          .append(" reserved for superusers)");
      if (maxJvms != null) {
        f.append(", room for ").append(maxJvms).append(" JVM(s) of this shape");
      }
    }
    return new Budget(
        listener, poolMax, threads, perJvm, maxConnections, reserved, maxJvms, f.toString());
  }
}
