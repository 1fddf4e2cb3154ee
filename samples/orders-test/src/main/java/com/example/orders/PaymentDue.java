package com.example.orders;

/** The payload of a job in queue "reminders": remind the customer of an unpaid order. */
public record PaymentDue(long orderId) {}
