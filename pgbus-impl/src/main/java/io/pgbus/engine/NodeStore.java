package io.pgbus.engine;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The SQL of {@code pgbus.node} (V10, V13): one row per running engine with capsules, written when
 * it starts and when its listener changes state, deleted when it stops, and renewed by the
 * heartbeat that rides on the poll ({@link #nodeTick}, the SQL function {@code pgbus.tick}): every
 * third of {@code heartbeat_ttl_ms} while the engine runs jobs, at every poll while it is idle. A
 * row is live while its listener backend ({@code listener_pid}, named {@value
 * Channels#LISTENER_APPLICATION_NAME} as {@link FleetStore} finds them) is in pg_stat_activity, or
 * while its {@code seen_at} is fresh.
 */
public final class NodeStore {

  /**
   * One engine as its row says, and whether its listener backend is live now.
   *
   * @param seenAt its last heartbeat (or other change of its row)
   * @param heartbeatTtl the TTL it wrote ({@code pgbus.heartbeat.ttl}); null for an engine that
   *     does not heartbeat (older than V13)
   * @param beating whether {@code seenAt} is younger than {@code heartbeatTtl}
   */
  public record Node(
      String workerId,
      String host,
      Long pid,
      Instant startedAt,
      Instant seenAt,
      String listener,
      String mode,
      boolean connected,
      List<NodeCapsule> capsules,
      Duration heartbeatTtl,
      boolean beating) {

    /**
     * Alive: its heartbeat is younger than its TTL, or its LISTEN connection is open. Not the
     * heartbeat alone: an idle JVM beats once per poll ceiling (60 s by default), which may be
     * longer than its TTL (30 s); one that runs jobs beats every third of its TTL. Stale otherwise.
     */
    public boolean alive() {
      return beating || connected;
    }
  }

  /**
   * The leader prunes a row not seen for this long, or {@link #PRUNE_AFTER_TTLS} TTLs if longer.
   */
  public static final Duration PRUNE_AFTER = Duration.ofHours(1);

  /** See {@link #PRUNE_AFTER}. */
  public static final int PRUNE_AFTER_TTLS = 10;

  // The rows of JVMs that died without deleting theirs (a clean stop deletes its row). A live JVM
  // whose row was pruned (an idle one with a poll ceiling over an hour) writes it again at its next
  // tick, which finds it gone. pgbus.node has a row per JVM: no batching needed.
  private static final String PRUNE =
      """
      DELETE FROM pgbus.node
       WHERE seen_at OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-)
             pg_catalog.make_interval(secs => GREATEST(?::float8,
               COALESCE(heartbeat_ttl_ms::float8, 0::float8) OPERATOR(pg_catalog.*) ?::float8)))
      RETURNING worker_id
      """;

  /** A capsule of a node: the queues it reads, in priority order. */
  public record NodeCapsule(String name, List<String> queues, int concurrency) {}

  // started_at is kept across updates: it is when the engine started, not the last change.
  private static final String UPSERT =
      """
      INSERT INTO pgbus.node AS n
             (worker_id, host, pid, started_at, seen_at, listener, mode, listener_pid, capsules,
              heartbeat_ttl_ms)
      VALUES (?, ?, ?, pg_catalog.now(), pg_catalog.now(), ?, ?, ?, ?::jsonb, ?)
      ON CONFLICT (worker_id) DO UPDATE
         SET seen_at = pg_catalog.now(), listener = excluded.listener, mode = excluded.mode,
             listener_pid = excluded.listener_pid, capsules = excluded.capsules,
             heartbeat_ttl_ms = excluded.heartbeat_ttl_ms
      """;

  // pgbus.tick (R__tick.sql): heartbeat, self-probe, leader check and poll in one statement.
  private static final String TICK =
      """
      SELECT queue, run_at, due, leader, leader_ms, node_found, renewed
        FROM pgbus.tick(?::text[], ?::text, ?::boolean, ?::bigint[], ?::integer[], ?::float8,
                        ?::text, ?::text, ?::text)
      """;

  /**
   * What one tick saw. {@code leader} null: no live lease; {@code nodeFound} null when the tick did
   * not beat, false when this engine's row is gone (it should be written again).
   */
  record Tick(
      Map<String, JobStore.QueueHead> heads,
      String leader,
      long leaderMillis,
      Boolean nodeFound,
      int renewed) {}

  private static final String DELETE = "DELETE FROM pgbus.node WHERE worker_id = ?::text";

  // A listener backend is this node's when its pid matches and it started before the row's last
  // change (a pid reused by a later backend of another JVM does not count). Rows of JVMs that died
  // without deleting theirs stay out of the answer once older than the given age. OPERATOR(...)
  // has the precedence of any other operator: hence the parentheses. Anyone may write the table
  // by SQL: a row whose capsules are not what an engine writes is listed without capsules
  // (pgbus.node_capsules_valid), where jsonb_to_recordset would fail the whole read.
  private static final String NODES =
      """
      SELECT n.worker_id, n.host, n.pid, n.started_at, n.seen_at, n.listener, n.mode,
             a.pid IS NOT NULL AS connected, c.name, c.queues, c.concurrency, n.heartbeat_ttl_ms,
             COALESCE(n.seen_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-)
               pg_catalog.make_interval(
                 secs => n.heartbeat_ttl_ms::float8 OPERATOR(pg_catalog./) 1000.0::float8)),
               false) AS beating
        FROM pgbus.node n
        LEFT JOIN pg_catalog.pg_stat_activity a
          ON a.pid OPERATOR(pg_catalog.=) n.listener_pid
         AND a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
         AND a.application_name OPERATOR(pg_catalog.=) '%s'::text
         AND a.backend_start OPERATOR(pg_catalog.<=) n.seen_at
        LEFT JOIN LATERAL pg_catalog.jsonb_to_recordset(
               CASE WHEN pgbus.node_capsules_valid(n.capsules) THEN n.capsules
                    ELSE '[]'::jsonb END)
               AS c(name text, queues text[], concurrency integer) ON true
       WHERE a.pid IS NOT NULL
          OR n.seen_at OPERATOR(pg_catalog.>)
             (pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.make_interval(secs => ?))
       ORDER BY n.started_at, n.worker_id, c.name
      """
          .formatted(Channels.LISTENER_APPLICATION_NAME); // a literal: mapped onto the schema

  /** Inserts or updates this engine's row; {@code listenerPid} null when it has no listener. */
  public void nodeUpsert(
      Connection c,
      String workerId,
      String host,
      long pid,
      ListenerState state,
      Integer listenerPid,
      List<CapsuleConfig> capsules,
      Duration heartbeatTtl)
      throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(UPSERT)) {
      ps.setString(1, workerId);
      ps.setString(2, host);
      ps.setLong(3, pid);
      ps.setString(4, state.name().toLowerCase(Locale.ROOT));
      ps.setString(5, state.delivering() ? "notify" : "polling");
      if (listenerPid == null) {
        ps.setNull(6, Types.INTEGER);
      } else {
        ps.setInt(6, listenerPid);
      }
      ps.setString(7, capsulesJson(capsules));
      ps.setInt(8, Math.toIntExact(heartbeatTtl.toMillis()));
      ps.executeUpdate();
    }
  }

  /**
   * One tick: when {@code beat}, renews this node's seen_at and the leases of {@code alive} to
   * {@code lease} from now; NOTIFYs {@code probeChannel} with {@code probePayload} when the channel
   * is not null; reads the live holder of the lease {@code leaderName} (null: skip) and the heads
   * of {@code queues}.
   */
  Tick nodeTick(
      Connection c,
      List<String> queues,
      String workerId,
      boolean beat,
      List<ClaimedJob> alive,
      Duration lease,
      String probeChannel,
      String probePayload,
      String leaderName)
      throws SQLException {
    Long[] ids = new Long[alive.size()];
    Integer[] attempts = new Integer[alive.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = alive.get(i).id();
      attempts[i] = alive.get(i).attempt();
    }
    try (PreparedStatement ps = c.prepareStatement(TICK)) {
      ps.setArray(1, c.createArrayOf("text", queues.toArray(String[]::new)));
      ps.setString(2, workerId);
      ps.setBoolean(3, beat);
      ps.setArray(4, c.createArrayOf("bigint", ids));
      ps.setArray(5, c.createArrayOf("integer", attempts));
      ps.setDouble(6, lease.toMillis());
      ps.setString(7, probeChannel);
      ps.setString(8, probePayload);
      ps.setString(9, leaderName);
      var heads = new LinkedHashMap<String, JobStore.QueueHead>();
      String leader = null;
      long leaderMs = 0;
      Boolean found = null;
      int renewed = 0;
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String queue = rs.getString(1);
          if (queue == null) {
            leader = rs.getString(4);
            leaderMs = rs.getLong(5);
            boolean f = rs.getBoolean(6);
            found = rs.wasNull() ? null : f;
            renewed = rs.getInt(7);
          } else {
            heads.put(
                queue,
                new JobStore.QueueHead(
                    rs.getObject(2, OffsetDateTime.class).toInstant(), rs.getBoolean(3)));
          }
        }
      }
      return new Tick(heads, leader, leaderMs, found, renewed);
    }
  }

  /** Deletes this engine's row; true when there was one. */
  public boolean nodeDelete(Connection c, String workerId) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(DELETE)) {
      ps.setString(1, workerId);
      return ps.executeUpdate() > 0;
    }
  }

  /**
   * Every node whose listener is connected, and those not connected whose last change is younger
   * than {@code keepUnconnected}, oldest start first.
   */
  public List<Node> nodes(Connection c, Duration keepUnconnected) throws SQLException {
    Map<String, Node> out = new LinkedHashMap<>();
    try (PreparedStatement ps = c.prepareStatement(NODES)) {
      ps.setDouble(1, keepUnconnected.toMillis() / 1000.0);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          String worker = rs.getString(1);
          Node node = out.get(worker);
          if (node == null) {
            long pid = rs.getLong(3);
            Long pidOrNull = rs.wasNull() ? null : pid;
            node =
                new Node(
                    worker,
                    rs.getString(2),
                    pidOrNull,
                    instant(rs.getObject(4, OffsetDateTime.class)),
                    instant(rs.getObject(5, OffsetDateTime.class)),
                    rs.getString(6),
                    rs.getString(7),
                    rs.getBoolean(8),
                    new ArrayList<>(),
                    ttl(rs.getObject(12, Integer.class)),
                    rs.getBoolean(13));
            out.put(worker, node);
          }
          String capsule = rs.getString(9);
          if (capsule != null) {
            Array queues = rs.getArray(10);
            List<String> names = queues == null ? List.of() : List.of((String[]) queues.getArray());
            node.capsules().add(new NodeCapsule(capsule, names, rs.getInt(11)));
          }
        }
      }
    }
    return out.values().stream()
        .map(
            n ->
                new Node(
                    n.workerId(),
                    n.host(),
                    n.pid(),
                    n.startedAt(),
                    n.seenAt(),
                    n.listener(),
                    n.mode(),
                    n.connected(),
                    List.copyOf(n.capsules()),
                    n.heartbeatTtl(),
                    n.beating()))
        .toList();
  }

  private static Duration ttl(Integer ms) {
    return ms == null ? null : Duration.ofMillis(ms);
  }

  /**
   * Deletes the rows of JVMs not seen for {@link #PRUNE_AFTER}, or {@link #PRUNE_AFTER_TTLS} times
   * their heartbeat TTL if that is longer; returns their worker ids.
   */
  public List<String> nodePrune(Connection c) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(PRUNE)) {
      ps.setDouble(1, PRUNE_AFTER.toMillis() / 1000.0);
      ps.setDouble(2, PRUNE_AFTER_TTLS / 1000.0);
      var gone = new ArrayList<String>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          gone.add(rs.getString(1));
        }
      }
      return gone;
    }
  }

  private static Instant instant(OffsetDateTime t) {
    return t == null ? null : t.toInstant();
  }

  /** The capsules as a JSON array; capsule and queue names are validated identifiers. */
  static String capsulesJson(List<CapsuleConfig> capsules) {
    var sb = new StringBuilder("[");
    for (CapsuleConfig cc : capsules) {
      if (sb.length() > 1) {
        sb.append(',');
      }
      sb.append("{\"name\":").append(quote(cc.name())).append(",\"queues\":[");
      for (int i = 0; i < cc.queues().size(); i++) {
        sb.append(i == 0 ? "" : ",").append(quote(cc.queues().get(i)));
      }
      sb.append("],\"concurrency\":").append(cc.concurrency()).append('}');
    }
    return sb.append(']').toString();
  }

  private static String quote(String s) {
    var sb = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      if (ch == '"' || ch == '\\') {
        sb.append('\\').append(ch);
      } else if (ch < 0x20) {
        sb.append(String.format("\\u%04x", (int) ch));
      } else {
        sb.append(ch);
      }
    }
    return sb.append('"').toString();
  }
}
