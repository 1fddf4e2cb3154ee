/**
 * The public face of pgbus: what applications compile against.
 *
 * <p>Enqueue with {@link io.pgbus.JobQueue}, handle with a CDI bean that implements {@link
 * io.pgbus.JobHandler} and carries {@link io.pgbus.Handles}, and report what happened with an
 * {@link io.pgbus.Outcome}. Nothing here depends on a container or on PostgreSQL.
 */
package io.pgbus;
