package io.pgbus.jakarta.metrics;

import jakarta.inject.Inject;
import org.eclipse.microprofile.metrics.MetricRegistry;

/**
 * Receives the application MetricRegistry by real field injection. Liberty's registry producer
 * reads the injection point, so a programmatic {@code CDI.current().select(...)} yields null. Not a
 * bean (no bean-defining annotation): {@link MpMetrics} creates it as an unmanaged instance, which
 * keeps MP Metrics types out of CDI discovery on servers that lack them.
 */
public class RegistryHolder {
  @Inject MetricRegistry registry;
}
