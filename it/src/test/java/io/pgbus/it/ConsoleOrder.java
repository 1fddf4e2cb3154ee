package io.pgbus.it;

/** The payload of the console test's jobs: an order reference to search by. */
public class ConsoleOrder {
  public String order;
}
