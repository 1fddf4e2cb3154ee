/** Developer tools outside the product: the embedded PostgreSQL that ./run-demo starts. */
package io.pgbus.tools;
