package io.pgbus.demo;

import io.pgbus.jakarta.AdminResource;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/**
 * The demo opts in to pgbus's REST admin API at {@code /api/pgbus/admin} (docs/admin-api.md), which
 * the console at {@code /pgbus} builds on: users admin/admin (pgbus-admin) and viewer/viewer
 * (pgbus-viewer) on the demo server.
 */
@RequestScoped
@Path("pgbus/admin")
public class PgbusAdmin extends AdminResource {}
