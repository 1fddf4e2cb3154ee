/**
 * The pgbus benchmark: pgbus's engine and a raw pgjdbc queue, side by side on one real PostgreSQL,
 * under the same workloads in the same run, so every figure can be read as a ratio against the
 * baseline. {@link io.pgbus.bench.Bench} is the entry point; docs/performance.md says how to run it
 * and how to read what it prints.
 */
package io.pgbus.bench;
