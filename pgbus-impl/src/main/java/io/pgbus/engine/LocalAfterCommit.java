package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * {@link AfterCommit} in Java SE: an enqueue on an auto-commit connection wakes right after its
 * statement; one inside a transaction of {@link JdbcTransactions} (a handler's, the engine's own)
 * wakes after that transaction commits. On any other connection pgbus cannot see the commit, so the
 * database wakes, inside the transaction.
 */
final class LocalAfterCommit implements AfterCommit {

  private final Consumer<Wake> delivery;
  // The connections inside a JdbcTransactions transaction now, by identity.
  private final Map<Connection, PendingWake> open =
      Collections.synchronizedMap(new IdentityHashMap<>());

  LocalAfterCommit(Consumer<Wake> delivery) {
    this.delivery = Objects.requireNonNull(delivery, "delivery");
  }

  @Override
  public PendingWake pending(Connection c) throws SQLException {
    PendingWake p = open.get(c);
    if (p != null) {
      return p;
    }
    return c.getAutoCommit() ? PendingWake.immediate(delivery) : null; // pgjdbc: no round trip
  }

  /** {@code c} begins a transaction whose commit its owner reports with {@link #committed}. */
  PendingWake begin(Connection c) {
    PendingWake p = PendingWake.atCommit(delivery);
    open.put(c, p);
    return p;
  }

  /** The transaction of {@code c} ended; nothing it collected is delivered. */
  void ended(Connection c) {
    open.remove(c);
  }
}
