package io.pgbus.test;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Payloads and handlers of the kit's tests (public: JSON-B maps them by reflection). */
public final class Payloads {
  private Payloads() {}

  public record Order(long id, String customer) {}

  /** Records each order it handles; fails an order whose customer is "fail". */
  @Handles({"orders", "orders_too"})
  public static final class OrderHandler implements JobHandler<Order> {
    final List<Order> handled = new CopyOnWriteArrayList<>();

    @Override
    public Outcome handle(Order order, JobContext job) {
      if (order.customer().equals("fail")) {
        throw new IllegalStateException("cannot take the order of " + order.customer());
      }
      handled.add(order);
      return Outcome.complete();
    }
  }

  /** What {@link ReceiptHandler} returns: mapped to the job's result with JSON-B. */
  public record Receipt(long orderId, String status) {}

  /** Completes each order with a {@link Receipt} as its result. */
  @Handles("receipts")
  public static final class ReceiptHandler implements JobHandler<Order> {
    @Override
    public Outcome handle(Order order, JobContext job) {
      return Outcome.complete(new Receipt(order.id(), "paid"));
    }
  }

  /** No @Handles. */
  public static final class Unbound implements JobHandler<Order> {
    @Override
    public Outcome handle(Order order, JobContext job) {
      return Outcome.complete();
    }
  }
}
