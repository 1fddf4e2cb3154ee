/**
 * pgbus-test: the test kit for applications that use pgbus, in the spirit of River's {@code
 * rivertest} and db-scheduler's {@code ManualScheduler}.
 *
 * <ul>
 *   <li>{@link io.pgbus.test.PgbusAssertions}: a job was (or was not) enqueued with a payload, seen
 *       from inside the enqueuing transaction or after its commit;
 *   <li>{@link io.pgbus.test.TestWorker}: runs a queue's due jobs on the test's thread through the
 *       real claim, handler transaction, retry policy and failure recording;
 *   <li>{@link io.pgbus.test.TestClock}: a fixed clock that the test moves forward, which makes
 *       delayed jobs, retries and cron runs due;
 *   <li>{@link io.pgbus.test.PgbusTest}: the schema, a clean slate between tests, and a {@code
 *       JobQueue} for code under test outside a container;
 *   <li>{@link io.pgbus.test.PgbusTestKit}: the same worker and clock inside an Arquillian test,
 *       with handlers resolved by the runtime's own registry.
 * </ul>
 *
 * Its public signatures use only pgbus-api and the JDK.
 */
package io.pgbus.test;
