/**
 * The pgbus web console: a servlet, registered by {@link io.pgbus.console.ConsoleInitializer} at
 * {@code pgbus.console.path} behind a security constraint for the roles pgbus-viewer and
 * pgbus-admin, that serves the console's static pages. The pages build on the REST admin API
 * (docs/admin-api.md); nothing here touches the database.
 */
package io.pgbus.console;
