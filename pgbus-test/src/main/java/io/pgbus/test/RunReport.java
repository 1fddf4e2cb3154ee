package io.pgbus.test;

import java.util.List;

/** What a {@link TestWorker#drain} ran, in order. */
public record RunReport(String queue, List<JobRun> runs) {

  public RunReport {
    runs = List.copyOf(runs);
  }

  /** How many attempts ran. */
  public int count() {
    return runs.size();
  }

  /** How many attempts left their job in {@code state} ({@code completed}, {@code dead}, ...). */
  public int count(String state) {
    return (int) runs.stream().filter(r -> r.state().equals(state)).count();
  }

  /** How many attempts completed their job. */
  public int completed() {
    return count("completed");
  }

  @Override
  public String toString() {
    return "queue '" + queue + "': " + (runs.isEmpty() ? "nothing ran" : runs.toString());
  }
}
