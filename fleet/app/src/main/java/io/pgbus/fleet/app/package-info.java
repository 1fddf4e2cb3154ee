/**
 * The fleet's application: what a user would write to run jobs with pgbus. {@link
 * io.pgbus.fleet.app.FleetHandler} runs the jobs and writes one business row per attempt in the
 * job's transaction, naming the server; {@link io.pgbus.fleet.app.QueueResource} pauses and resumes
 * a queue through the injected {@code JobQueue}. FleetIT (module pgbus-fleet-it) deploys it on
 * three servers and checks the rows.
 */
package io.pgbus.fleet.app;
