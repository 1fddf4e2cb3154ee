/**
 * Test infrastructure for the engine, shipped in the pgbus-impl test-jar so that other modules (a
 * benchmark, for example) can reuse it.
 *
 * <p>{@link io.pgbus.engine.testing.TestPostgres} finds one PostgreSQL server per JVM; {@link
 * io.pgbus.engine.testing.TestDatabase} gives each test class a fresh, migrated database of its own
 * on it, so classes run in parallel without hearing each other's notifications. The rest are small
 * helpers: fixture factories ({@link io.pgbus.engine.testing.JobFixtures}), a row reader ({@link
 * io.pgbus.engine.testing.JobRow}), a LISTEN connection ({@link
 * io.pgbus.engine.testing.NotificationListener}), engines that stop themselves ({@link
 * io.pgbus.engine.testing.TestEngines}), and waits on conditions ({@link
 * io.pgbus.engine.testing.Await}). Tests never sleep on a guess.
 *
 * <p>For fault tests: a PostgreSQL of the test's own that starts late, stops and restarts ({@link
 * io.pgbus.engine.testing.PrivateCluster}), a listener port with switchable faults ({@link
 * io.pgbus.engine.testing.FaultyListenerConnections}), a TCP proxy that partitions the network
 * silently ({@link io.pgbus.engine.testing.TcpProxy}), a worker JVM to SIGKILL ({@link
 * io.pgbus.engine.testing.ChildJvm}), and a record of what they measured ({@link
 * io.pgbus.engine.testing.Measurements}).
 */
package io.pgbus.engine.testing;
