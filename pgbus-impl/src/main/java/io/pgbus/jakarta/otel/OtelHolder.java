package io.pgbus.jakarta.otel;

import io.opentelemetry.api.OpenTelemetry;
import jakarta.inject.Inject;

/**
 * Receives the server's OpenTelemetry (MicroProfile Telemetry 2 makes it a CDI bean) by field
 * injection. Not a bean itself: {@link OtelMetrics} creates it as an unmanaged instance, which
 * keeps OpenTelemetry types out of CDI discovery on servers that lack them.
 */
public class OtelHolder {
  @Inject OpenTelemetry openTelemetry;
}
