/**
 * The fleet test: {@link io.pgbus.fleet.FleetIT} starts two Open Liberty servers and one WildFly
 * ({@link io.pgbus.fleet.FleetServer}) on one PostgreSQL ({@link io.pgbus.fleet.FleetDatabase}),
 * drives jobs through them over SQL, kills, restarts and redeploys servers, and checks the database
 * ({@link io.pgbus.fleet.FleetSampler} watches the leader and the listeners meanwhile). {@link
 * io.pgbus.fleet.RollingUpgradeIT} (-Prolling) replaces Liberty servers of the previous release by
 * servers of the next build ({@link io.pgbus.fleet.NextBuild}) under a steady load ({@link
 * io.pgbus.fleet.LoadProducer}), with every server's readiness polled ({@link
 * io.pgbus.fleet.ReadinessWatch}).
 */
package io.pgbus.fleet;
