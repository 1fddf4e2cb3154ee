package io.pgbus.it;

import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/**
 * An application written before the admin API moved to {@code io.pgbus.jakarta.admin}: its subclass
 * of the old name keeps working (issue #24).
 */
@RequestScoped
@Path("pgbus/legacy-admin")
@SuppressWarnings("deprecation")
public class ItLegacyAdmin extends io.pgbus.jakarta.AdminResource {}
