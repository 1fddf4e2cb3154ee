/** Build-time helpers for the integration tests; nothing here is deployed. */
package io.pgbus.it.support;
