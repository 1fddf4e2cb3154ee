/**
 * Arquillian integration tests, one suite for both runtimes: a managed Open Liberty (the default)
 * or a managed WildFly ({@code -Pwildfly}); what differs per server is in {@link
 * io.pgbus.it.support.TestServer}, the WARs are built by {@link io.pgbus.it.PgbusWars}.
 */
package io.pgbus.it;
