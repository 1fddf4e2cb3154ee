/** Arquillian integration tests on a managed Open Liberty; see {@link io.pgbus.it.Deployments}. */
package io.pgbus.it;
