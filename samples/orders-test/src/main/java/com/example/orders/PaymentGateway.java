package com.example.orders;

/** Charges a customer; throws when the payment is declined. */
public interface PaymentGateway {
  void charge(long orderId, long cents) throws Exception;
}
