package io.pgbus.jakarta;

import jakarta.enterprise.context.RequestScoped;

/**
 * The REST admin API at its first name: it moved to {@link io.pgbus.jakarta.admin.AdminResource}.
 * An application's subclass of this one keeps working unchanged, with every endpoint and constant
 * ({@link #VIEWER}, {@link #ADMIN}, {@link #CSRF_HEADER}, {@link #CSRF_COOKIE}) inherited.
 *
 * @deprecated subclass {@link io.pgbus.jakarta.admin.AdminResource} instead; this name goes in a
 *     later release.
 */
@Deprecated
@RequestScoped
public class AdminResource extends io.pgbus.jakarta.admin.AdminResource {}
