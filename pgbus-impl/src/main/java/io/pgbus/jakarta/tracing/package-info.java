/**
 * The OpenTelemetry adapter of {@link io.pgbus.engine.JobTracing}. Loaded reflectively by {@link
 * io.pgbus.jakarta.PgbusTracing} only when {@code io.opentelemetry.api} is on the class path, so
 * servers without OpenTelemetry deploy pgbus unchanged.
 */
package io.pgbus.jakarta.tracing;
