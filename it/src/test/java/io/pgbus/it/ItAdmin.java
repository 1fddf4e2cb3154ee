package io.pgbus.it;

import io.pgbus.jakarta.admin.AdminResource;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/** How an application opts in to the REST admin API: a subclass with a path of its own. */
@RequestScoped
@Path("pgbus/admin")
public class ItAdmin extends AdminResource {}
