package com.example.orders;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import javax.sql.DataSource;

/**
 * Charges a placed order and marks it paid, in the job's transaction. A declined payment throws:
 * the attempt fails and pgbus retries it with backoff.
 */
@ApplicationScoped
@Handles("orders")
public class OrderHandler implements JobHandler<OrderPlaced> {

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Inject PaymentGateway payments;

  protected OrderHandler() {} // for CDI

  public OrderHandler(DataSource ds, PaymentGateway payments) {
    this.ds = ds;
    this.payments = payments;
  }

  @Override
  public Outcome handle(OrderPlaced order, JobContext job) throws Exception {
    try (Connection c = ds.getConnection()) {
      long cents;
      try (PreparedStatement ps =
          c.prepareStatement("SELECT cents FROM orders WHERE id = ? AND status = 'placed'")) {
        ps.setLong(1, order.orderId());
        try (ResultSet rs = ps.executeQuery()) {
          if (!rs.next()) {
            return Outcome.cancel("order " + order.orderId() + " is not waiting for payment");
          }
          cents = rs.getLong(1);
        }
      }
      payments.charge(order.orderId(), cents);
      try (PreparedStatement ps =
          c.prepareStatement("UPDATE orders SET status = 'paid' WHERE id = ?")) {
        ps.setLong(1, order.orderId());
        ps.executeUpdate();
      }
    }
    return Outcome.complete();
  }
}
