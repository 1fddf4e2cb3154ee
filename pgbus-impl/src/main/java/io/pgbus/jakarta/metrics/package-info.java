/**
 * The optional MicroProfile Metrics adapter. Nothing outside this package refers to MP Metrics
 * types, and this package is loaded reflectively, so the application deploys on servers without MP
 * Metrics. Metric names are stable and listed in docs/configuration.md.
 */
package io.pgbus.jakarta.metrics;
