/**
 * The fleet test: {@link io.pgbus.fleet.FleetIT} starts two Open Liberty servers and one WildFly
 * ({@link io.pgbus.fleet.FleetServer}) on one PostgreSQL ({@link io.pgbus.fleet.FleetDatabase}),
 * drives jobs through them over SQL, kills, restarts and redeploys servers, and checks the database
 * ({@link io.pgbus.fleet.FleetSampler} watches the leader and the listeners meanwhile).
 */
package io.pgbus.fleet;
