package io.pgbus.engine;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * Port: opens the dedicated connection the {@link Notifier} LISTENs on. It must reach PostgreSQL
 * directly or through a session-mode pooler: a transaction-mode pooler accepts LISTEN and then
 * never delivers. The notifier owns what this returns and closes it on its own thread.
 */
@FunctionalInterface
public interface ListenerConnections {
  Connection open() throws SQLException;
}
