package io.pgbus.jakarta;

import io.pgbus.AuditEntry;
import io.pgbus.PgbusException;
import io.pgbus.Schedule;
import io.pgbus.ScheduleDefinition;
import io.pgbus.Schedules;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.security.Principal;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * {@link Schedules} on the JTA datasource, like {@link JtaJobQueue}: a call inside the caller's
 * transaction runs on its enlisted connection and commits or rolls back with it; without one, each
 * call commits on its own. Changes record the caller principal in {@code updated_by} and in their
 * audit entry (else the database role).
 */
@ApplicationScoped
public class JtaSchedules implements Schedules {

  @Inject PgbusRuntime runtime;
  @Inject PgbusResources resources;
  @Inject Instance<Principal> principal;

  @Override
  public Schedule create(ScheduleDefinition definition) {
    return withConnection(
        "create schedule '" + definition.name() + "'",
        c -> runtime.schedules().create(c, definition, caller()));
  }

  @Override
  public Optional<Schedule> update(ScheduleDefinition definition) {
    return withConnection(
        "update schedule '" + definition.name() + "'",
        c -> runtime.schedules().update(c, definition, caller()));
  }

  @Override
  public boolean pause(String name) {
    return withConnection(
        "pause schedule '" + name + "'", c -> runtime.schedules().pause(c, name, caller()));
  }

  @Override
  public boolean resume(String name) {
    return withConnection(
        "resume schedule '" + name + "'", c -> runtime.schedules().resume(c, name, caller()));
  }

  @Override
  public boolean delete(String name) {
    return withConnection(
        "delete schedule '" + name + "'", c -> runtime.schedules().delete(c, name, caller()));
  }

  @Override
  public List<AuditEntry> history(String name, int limit) {
    return withConnection(
        "read the history of schedule '" + name + "'",
        c -> runtime.schedules().history(c, name, limit));
  }

  @Override
  public OptionalLong trigger(String name) {
    return withConnection(
        "trigger schedule '" + name + "'",
        c -> runtime.schedules().trigger(c, name, caller(), HandledJob.id()));
  }

  @Override
  public Optional<Schedule> get(String name) {
    return withConnection("read schedule '" + name + "'", c -> runtime.schedules().get(c, name));
  }

  @Override
  public List<Schedule> list(String afterName, int limit) {
    return withConnection("list the schedules", c -> runtime.schedules().list(c, afterName, limit));
  }

  private String caller() {
    return CallerNames.name(principal);
  }

  private <T> T withConnection(String action, Function<Connection, T> work) {
    try (Connection c = resources.dataSource().getConnection()) {
      return work.apply(c);
    } catch (SQLException e) {
      throw new PgbusException(
          "pgbus could not " + action + ": the database cannot be reached (" + e.getMessage() + ")",
          e);
    }
  }
}
