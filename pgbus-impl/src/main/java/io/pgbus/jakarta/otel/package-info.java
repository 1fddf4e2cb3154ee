/**
 * The optional OpenTelemetry metrics adapter, for servers without MicroProfile Metrics (WildFly,
 * Liberty with mpTelemetry only). Nothing outside this package refers to OpenTelemetry types, and
 * it is loaded reflectively, so the application deploys on servers without the OpenTelemetry API.
 */
package io.pgbus.jakarta.otel;
