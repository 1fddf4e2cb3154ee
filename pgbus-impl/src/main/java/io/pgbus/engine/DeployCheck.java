package io.pgbus.engine;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The deploy gate (issue #25): what a new build would break in the live database, checked before
 * its engine starts. Four questions: does every queue with waiting jobs have a handler in this
 * build or a live reader elsewhere in the fleet ({@code pgbus.node}); do the next waiting payloads
 * of each handled queue map onto its handler's payload type; does every enabled schedule's queue
 * have a handler; and which flow-control limits and payload limit this build's configuration
 * changes against what the database holds. The first three are {@linkplain Finding#blocking()
 * blocking}: under {@code pgbus.deploy-check=fail} readiness stays DOWN while one holds. The last
 * is a list of what this deploy changes, never blocking. See docs/operations.md, "The deploy gate".
 */
public final class DeployCheck {

  /** What the gate does with its findings ({@code pgbus.deploy-check}). */
  public enum Mode {
    /** Not checked. */
    OFF,
    /** Checked; findings go to the log and the doctor; the engine starts. */
    WARN,
    /** As WARN, and a blocking finding keeps readiness DOWN and the engine stopped. */
    FAIL
  }

  /** The kind of a finding. */
  public enum Kind {
    UNHANDLED_QUEUE,
    PAYLOAD_MISMATCH,
    SCHEDULE_WITHOUT_HANDLER,
    CONFIG_CHANGE
  }

  /**
   * One finding: its kind, the queue it is about, and one line for the log and the doctor.
   *
   * @param kind what was found
   * @param queue the queue
   * @param detail what, with the numbers an operator needs
   */
  public record Finding(Kind kind, String queue, String detail) {

    /** True when it stops a rollout under {@link Mode#FAIL}. */
    public boolean blocking() {
      return kind != Kind.CONFIG_CHANGE;
    }

    @Override
    public String toString() {
      return label() + ": " + detail;
    }

    /**
     * The kind and the queue only, for readiness (which anyone may read): a detail may quote a
     * payload.
     */
    public String summary() {
      return queue == null ? label() : label() + " '" + queue + "'";
    }

    private String label() {
      return kind.name().toLowerCase(Locale.ROOT).replace('_', ' ');
    }
  }

  /**
   * How this build reads a queue's payloads: the reason a payload does not map onto the handler's
   * type, or null when it maps. In the server, JSON-B onto the {@code T} of the queue's {@code
   * JobHandler<T>}, as the runtime maps each job before its handler runs.
   */
  @FunctionalInterface
  public interface PayloadReader {
    String mismatch(String queue, String payload);
  }

  /** The waiting payloads sampled per handled queue: the next ones to run. */
  public static final int SAMPLE = 20;

  /** The most queues and schedules read: a gate must not become a scan of a huge table. */
  static final int MAX_QUEUES = 1_000;

  // The queues with waiting jobs: a loose index scan of job_claim_idx (partial on the waiting
  // states, queue first), one index probe per queue, never a read of the jobs themselves.
  private static final String WAITING_QUEUES =
      """
      WITH RECURSIVE q(queue, n) AS (
        (SELECT j.queue::text, 1 FROM pgbus.job j
          WHERE j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
          ORDER BY j.queue LIMIT 1)
        UNION ALL
        SELECT (SELECT j.queue::text FROM pgbus.job j
                 WHERE j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
                   AND j.queue::text OPERATOR(pg_catalog.>) q.queue
                 ORDER BY j.queue LIMIT 1),
               q.n OPERATOR(pg_catalog.+) 1
          FROM q WHERE q.queue IS NOT NULL AND q.n OPERATOR(pg_catalog.<) ?)
      SELECT queue FROM q WHERE queue IS NOT NULL
      """;

  // The next waiting jobs of a queue in claim order (job_claim_idx).
  private static final String SAMPLE_PAYLOADS =
      """
      SELECT j.id, j.payload::text FROM pgbus.job j
       WHERE j.queue::text OPERATOR(pg_catalog.=) ?::text
         AND j.state OPERATOR(pg_catalog.=) ANY ('{available,scheduled,retryable}')
       ORDER BY j.queue, j.priority, j.run_at, j.id
       LIMIT ?
      """;

  private static final String ENABLED_SCHEDULES =
      """
      SELECT s.name, s.queue::text FROM pgbus.schedule s
       WHERE NOT s.paused ORDER BY s.name LIMIT ?
      """;

  private static final String PAYLOAD_LIMIT = "SELECT max_payload_bytes FROM pgbus.setting";

  private DeployCheck() {}

  /**
   * Runs the gate on the caller's connection.
   *
   * @param config this build's configuration (its capsules, limits and payload limit)
   * @param handled the queues this build has a handler for
   * @param payloads how this build maps a queue's payloads
   */
  public static List<Finding> run(
      Connection c, EngineConfig config, Set<String> handled, PayloadReader payloads)
      throws SQLException {
    var findings = new ArrayList<Finding>();
    List<String> waiting = waitingQueues(c);
    Map<String, String> readers = liveReaders(c, config.workerId());
    for (String q : waiting) {
      if (!handled.contains(q) && !readers.containsKey(q)) {
        findings.add(
            new Finding(
                Kind.UNHANDLED_QUEUE,
                q,
                "queue '"
                    + q
                    + "' has waiting jobs, but this build has no handler for it (@Handles(\""
                    + q
                    + "\")) and no live engine elsewhere reads it"));
      }
    }
    for (String q : waiting) {
      if (handled.contains(q)) {
        payloadFindings(c, q, payloads, findings);
      }
    }
    scheduleFindings(c, handled, readers, findings);
    configFindings(c, config, findings);
    return List.copyOf(findings);
  }

  /** The findings as one line each, blocking ones first; "no findings" when there are none. */
  public static String describe(List<Finding> findings) {
    if (findings.isEmpty()) {
      return "no findings";
    }
    var sorted = new ArrayList<>(findings);
    sorted.sort((a, b) -> Boolean.compare(b.blocking(), a.blocking()));
    var sb = new StringBuilder();
    for (Finding f : sorted) {
      sb.append(sb.isEmpty() ? "" : "; ").append(f);
    }
    return sb.toString();
  }

  /**
   * The findings as the doctor's "deploy check": FAIL for a blocking one under {@link Mode#FAIL},
   * WARN for any other finding (a limit that differs after this build started means another build
   * wrote it: docs/schema.md, "Flow control"), OK without findings.
   */
  public static Doctor.Check check(List<Finding> findings, Mode mode) {
    String name = "deploy check";
    String setting = "pgbus.deploy-check=" + mode.name().toLowerCase(Locale.ROOT);
    if (findings.isEmpty()) {
      return new Doctor.Check(name, Doctor.Status.OK, "no findings (" + setting + ")", null);
    }
    boolean blocking = !blocking(findings).isEmpty();
    return new Doctor.Check(
        name,
        blocking && mode == Mode.FAIL ? Doctor.Status.FAIL : Doctor.Status.WARN,
        describe(findings) + " (" + setting + ")",
        blocking
            ? "deploy a handler for each queue named (@Handles), keep a build that reads it"
                + " running until its jobs are done, or delete or move the jobs and schedules"
                + " (admin API); a payload that does not map needs a handler type that reads"
                + " both shapes until the old jobs are done"
            : "intended? the newest build's limits win (docs/schema.md, \"Flow control\"):"
                + " make the configurations agree");
  }

  /** The blocking findings of {@code findings}. */
  public static List<Finding> blocking(Collection<Finding> findings) {
    return findings.stream().filter(Finding::blocking).toList();
  }

  static List<String> waitingQueues(Connection c) throws SQLException {
    var out = new ArrayList<String>();
    try (PreparedStatement ps = c.prepareStatement(WAITING_QUEUES)) {
      ps.setInt(1, MAX_QUEUES);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }

  // Queue -> the worker id of one live engine other than this one whose capsules read it.
  private static Map<String, String> liveReaders(Connection c, String self) throws SQLException {
    var out = new LinkedHashMap<String, String>();
    for (NodeStore.Node n : new NodeStore().nodes(c, NodeStore.PRUNE_AFTER)) {
      if (!n.alive() || n.workerId().equals(self)) {
        continue;
      }
      for (NodeStore.NodeCapsule cap : n.capsules()) {
        for (String q : cap.queues()) {
          out.putIfAbsent(q, n.workerId());
        }
      }
    }
    return out;
  }

  private static void payloadFindings(
      Connection c, String queue, PayloadReader payloads, List<Finding> findings)
      throws SQLException {
    int read = 0;
    int bad = 0;
    String first = null;
    try (PreparedStatement ps = c.prepareStatement(SAMPLE_PAYLOADS)) {
      ps.setString(1, queue);
      ps.setInt(2, SAMPLE);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          read++;
          String why = payloads.mismatch(queue, rs.getString(2));
          if (why != null) {
            bad++;
            if (first == null) {
              first = "job " + rs.getLong(1) + ": " + why;
            }
          }
        }
      }
    }
    if (bad > 0) {
      findings.add(
          new Finding(
              Kind.PAYLOAD_MISMATCH,
              queue,
              bad
                  + " of the next "
                  + read
                  + " waiting payloads of queue '"
                  + queue
                  + "' do not map onto its handler's payload type in this build (first: "
                  + first
                  + ")"));
    }
  }

  private static void scheduleFindings(
      Connection c, Set<String> handled, Map<String, String> readers, List<Finding> findings)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(ENABLED_SCHEDULES)) {
      ps.setInt(1, MAX_QUEUES);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String q = rs.getString(2);
          if (!handled.contains(q) && !readers.containsKey(q)) {
            findings.add(
                new Finding(
                    Kind.SCHEDULE_WITHOUT_HANDLER,
                    q,
                    "schedule '"
                        + rs.getString(1)
                        + "' enqueues to queue '"
                        + q
                        + "', which has no handler in this build and no live reader elsewhere"));
          }
        }
      }
    }
  }

  /**
   * What this build's start will write over the database's values: each capsule queue's limits
   * (docs/schema.md, "Flow control") and the payload limit. Listed, never blocking: a deploy that
   * changes a limit means to.
   */
  private static void configFindings(Connection c, EngineConfig config, List<Finding> findings)
      throws SQLException {
    Map<String, QueueLimitStatus> stored = new LinkedHashMap<>();
    for (QueueLimitStatus s : new QueueLimitStore().queueLimitStatus(c)) {
      stored.put(s.queue(), s);
    }
    Map<String, FairShare> fair = new QueueLimits().fairShares(c);
    for (String q : new TreeSet<>(config.queues())) {
      String mine = describe(describe(config.queueLimit(q)), config.fairShare(q));
      QueueLimitStatus s = stored.get(q);
      String theirs = describe(s == null ? NO_LIMIT : describe(s), fair.get(q));
      if (!mine.equals(theirs)) {
        findings.add(
            new Finding(
                Kind.CONFIG_CHANGE,
                q,
                "queue '" + q + "' limits: database " + theirs + ", this build " + mine));
      }
    }
    try (PreparedStatement ps = c.prepareStatement(PAYLOAD_LIMIT);
        ResultSet rs = ps.executeQuery()) {
      if (rs.next() && rs.getInt(1) != config.maxPayloadBytes()) {
        findings.add(
            new Finding(
                Kind.CONFIG_CHANGE,
                null,
                "payload limit (pgbus.max-payload-bytes): database "
                    + rs.getInt(1)
                    + " bytes, this build "
                    + config.maxPayloadBytes()));
      }
    }
  }

  static final String NO_LIMIT = "none";

  /** The limits and the fair share (V50) as one comparable text. */
  static String describe(String limits, FairShare fair) {
    if (fair == null) {
      return limits;
    }
    return limits.equals(NO_LIMIT) ? fair.describe() : limits + ", " + fair.describe();
  }

  /** A queue's limits as one comparable text; a key limit of 1 alone is no limit. */
  static String describe(QueueLimit l) {
    return describe(
        l.globalConcurrency(),
        l.keyConcurrency() == null ? 1 : l.keyConcurrency(),
        l.rateLimit(),
        l.rateWindow(),
        l.fifo(),
        l.fifoSkipsDead());
  }

  static String describe(QueueLimitStatus s) {
    return describe(
        s.globalConcurrency(),
        s.keyConcurrency(),
        s.rateLimit(),
        s.rateWindow(),
        s.keyFifo(),
        s.keyFifoSkipDead());
  }

  private static String describe(
      Integer global, int perKey, Integer rate, Duration window, boolean fifo, boolean skipDead) {
    var parts = new ArrayList<String>();
    if (global != null) {
      parts.add("global " + global);
    }
    if (perKey != 1) {
      parts.add("per key " + perKey);
    }
    if (rate != null) {
      parts.add("rate " + rate + "/" + Durations.format(Objects.requireNonNull(window)));
    }
    if (fifo) {
      parts.add(skipDead ? "fifo (skips dead)" : "fifo");
    }
    return parts.isEmpty() ? NO_LIMIT : String.join(", ", parts);
  }
}
