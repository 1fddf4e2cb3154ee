package com.example.orders;

import io.pgbus.EnqueueOptions;
import io.pgbus.JobQueue;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;

/**
 * Places orders. The order row and its two jobs are written in the caller's transaction: all of
 * them commit, or none. In the container the JobQueue is {@code @Inject}ed and joins the JTA
 * transaction; here it is handed in, so a plain test can give it one.
 */
public class OrderService {

  /** How long a customer has to pay before the reminder. */
  public static final Duration PAYMENT_WINDOW = Duration.ofDays(1);

  private final JobQueue jobs;

  public OrderService(JobQueue jobs) {
    this.jobs = jobs;
  }

  /** Inserts the order and enqueues its charge and its payment reminder; returns its id. */
  public long place(Connection c, String customer, long cents) throws SQLException {
    long id;
    try (PreparedStatement ps =
        c.prepareStatement(
            "INSERT INTO orders (customer, cents, status) VALUES (?, ?, 'placed') RETURNING id")) {
      ps.setString(1, customer);
      ps.setLong(2, cents);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        id = rs.getLong(1);
      }
    }
    jobs.enqueue("orders", new OrderPlaced(id), EnqueueOptions.defaults().withMaxAttempts(5));
    jobs.enqueue(
        "reminders", new PaymentDue(id), EnqueueOptions.defaults().withDelay(PAYMENT_WINDOW));
    return id;
  }
}
