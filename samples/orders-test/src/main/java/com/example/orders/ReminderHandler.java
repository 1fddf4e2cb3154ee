package com.example.orders;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import java.sql.Connection;
import java.sql.PreparedStatement;
import javax.sql.DataSource;

/** A day after an order: reminds the customer when it is still unpaid. */
@ApplicationScoped
@Handles("reminders")
public class ReminderHandler implements JobHandler<PaymentDue> {

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  protected ReminderHandler() {} // for CDI

  public ReminderHandler(DataSource ds) {
    this.ds = ds;
  }

  @Override
  public Outcome handle(PaymentDue due, JobContext job) throws Exception {
    try (Connection c = ds.getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "UPDATE orders SET reminded = true WHERE id = ? AND status = 'placed'")) {
      ps.setLong(1, due.orderId());
      ps.executeUpdate();
    }
    return Outcome.complete();
  }
}
