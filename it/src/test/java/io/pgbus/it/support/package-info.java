/**
 * Helpers for the integration tests: building and configuring test WARs for this run's server
 * ({@link io.pgbus.it.support.TestServer}), waiting on conditions, SQL for assertions. Some of them
 * are added to the WARs and run inside the server too.
 */
package io.pgbus.it.support;
