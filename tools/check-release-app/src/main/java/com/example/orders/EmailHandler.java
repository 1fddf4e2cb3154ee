package com.example.orders;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import javax.sql.DataSource;

/** README step 4: a handler. */
@ApplicationScoped
@Handles("emails")
public class EmailHandler implements JobHandler<Email> {
  @Resource(lookup = "jdbc/pgbus")
  DataSource ds; // joins the job's transaction

  @Override
  public Outcome handle(Email email, JobContext job) throws Exception {
    return Outcome.complete();
  }
}
