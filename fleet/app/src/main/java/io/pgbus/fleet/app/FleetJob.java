package io.pgbus.fleet.app;

/** The payload of a fleet job, mapped from JSON by JSON-B: how long the handler works. */
public class FleetJob {
  public int sleepMs;

  public FleetJob() {}
}
