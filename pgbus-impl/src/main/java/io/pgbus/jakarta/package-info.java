/**
 * The thin Jakarta EE adapter over the engine: the startup singleton that owns the engine and its
 * one LISTEN connection, CDI wake events, handler discovery, JTA transactions, the JobQueue bean,
 * MicroProfile Config and Health. Nothing here decides how jobs are claimed or retried.
 */
package io.pgbus.jakarta;
