/**
 * The operator's view: {@link io.pgbus.admin.JobAdmin} searches and acts on jobs, shared by the
 * REST admin API and applications' own tools.
 */
package io.pgbus.admin;
