package com.example.orders;

/** The payload of a job in queue "orders": charge the order and mark it paid. */
public record OrderPlaced(long orderId) {}
