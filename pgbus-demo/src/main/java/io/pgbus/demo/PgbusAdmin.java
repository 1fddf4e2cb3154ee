package io.pgbus.demo;

import io.pgbus.jakarta.admin.AdminResource;
import jakarta.annotation.security.RolesAllowed;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/**
 * The demo opts in to pgbus's REST admin API at {@code /api/pgbus/admin} (docs/admin-api.md), which
 * the console at {@code /pgbus} builds on: users admin/admin (pgbus-admin) and viewer/viewer
 * (pgbus-viewer) on the demo server. The roles are AdminResource's own (reads for both, actions for
 * pgbus-admin only, declared on its methods); they are repeated here so that the subclass says who
 * may call it.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
@RequestScoped
@Path("pgbus/admin")
public class PgbusAdmin extends AdminResource {}
