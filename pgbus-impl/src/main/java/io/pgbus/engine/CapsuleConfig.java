package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A named worker group: an ordered queue list (strict priority, earlier queues always win), how
 * many transactions it runs at once, and how many jobs share one transaction.
 *
 * <p>{@code jobsPerTransaction} above 1 trades latency under failure for throughput: a slot runs up
 * to that many claimed jobs one after another in one transaction and completes them with one
 * statement, so each job's business writes still commit exactly with its completion. If any handler
 * fails, the transaction rolls back and the other jobs run again one per transaction.
 */
public record CapsuleConfig(
    String name, List<String> queues, int concurrency, int jobsPerTransaction) {

  /** Most jobs one transaction may carry. */
  public static final int MAX_JOBS_PER_TRANSACTION = 100;

  /**
   * Most queues one capsule lists. Its claim and the poller's statement take the list as one array
   * and visit it in order; split a longer list over several capsules.
   */
  public static final int MAX_QUEUES = 1000;

  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,62}");

  public CapsuleConfig {
    Objects.requireNonNull(name, "capsule name");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "invalid capsule name '"
              + name
              + "': use a letter followed by letters, digits, '_' or '-'");
    }
    if (queues == null || queues.isEmpty()) {
      throw new IllegalArgumentException("capsule '" + name + "' lists no queues");
    }
    if (queues.size() > MAX_QUEUES) {
      throw new IllegalArgumentException(
          "capsule '"
              + name
              + "' lists "
              + queues.size()
              + " queues (pgbus.capsule."
              + name
              + ".queues), over the limit of "
              + MAX_QUEUES
              + ": split them over several capsules");
    }
    queues = List.copyOf(queues);
    var seen = new HashSet<String>();
    for (String q : queues) {
      QueueNames.require(q);
      if (!seen.add(q)) {
        throw new IllegalArgumentException("capsule '" + name + "' lists queue '" + q + "' twice");
      }
    }
    if (concurrency < 1 || concurrency > 1000) {
      throw new IllegalArgumentException(
          "capsule '" + name + "' concurrency " + concurrency + " is out of range: use 1 to 1000");
    }
    if (jobsPerTransaction < 1 || jobsPerTransaction > MAX_JOBS_PER_TRANSACTION) {
      throw new IllegalArgumentException(
          "capsule '"
              + name
              + "' jobs-per-transaction "
              + jobsPerTransaction
              + " is out of range: use 1 to "
              + MAX_JOBS_PER_TRANSACTION);
    }
  }

  /** One job per transaction. */
  public CapsuleConfig(String name, List<String> queues, int concurrency) {
    this(name, queues, concurrency, 1);
  }
}
