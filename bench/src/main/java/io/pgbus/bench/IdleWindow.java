package io.pgbus.bench;

import java.util.Map;
import java.util.function.Predicate;

/**
 * What one database saw during an idle window: statements by kind (pg_stat_statements), committed
 * transactions (pg_stat_database; flushed by backends with a delay of up to about 10 s, so only
 * roughly aligned with the window), and its client connections at the end.
 *
 * @param engines how many engines (JVMs) shared the database
 */
record IdleWindow(
    double seconds,
    int engines,
    Map<StatementKind, Long> calls,
    long xacts,
    Map<String, Long> connections,
    Map<String, double[]> queries) {

  static IdleWindow between(
      ServerStats.Snapshot before,
      ServerStats.Snapshot after,
      int engines,
      Map<String, Long> connections) {
    return new IdleWindow(
        after.seconds(before),
        engines,
        after.callsSince(before),
        after.xactCommit() - before.xactCommit(),
        connections,
        after.queriesSince(before));
  }

  /** Statements per second of the kinds that match. */
  double rate(Predicate<StatementKind> kinds) {
    return calls.entrySet().stream()
            .filter(e -> kinds.test(e.getKey()))
            .mapToLong(Map.Entry::getValue)
            .sum()
        / seconds;
  }

  double total() {
    return rate(k -> true);
  }

  /** Everything but the leader's duties, averaged over all engines (the leader included). */
  double perEngineWithoutLeader() {
    return rate(k -> !k.leaderDuty()) / engines;
  }

  /**
   * What one follower JVM pays: its share of what every engine does (poll, self-probe), plus its
   * share of the candidate reads, which only the N - 1 followers make. For a lone engine, just the
   * first part.
   */
  double perFollower() {
    double shared = rate(k -> !k.leaderDuty() && k != StatementKind.ELECTION_READ) / engines;
    return shared + (engines > 1 ? rate(k -> k == StatementKind.ELECTION_READ) / (engines - 1) : 0);
  }

  double leaderDuties() {
    return rate(StatementKind::leaderDuty);
  }

  double xactsPerSecond() {
    return xacts / seconds;
  }

  long connectionCount() {
    return connections.values().stream().mapToLong(Long::longValue).sum();
  }

  long listenerConnections() {
    return connections.entrySet().stream()
        .filter(e -> e.getKey().contains("listener"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }
}
