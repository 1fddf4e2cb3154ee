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
 * <p>{@code jobsPerTransaction} is {@link #AUTO} (the default, {@code auto} in the settings), 1, or
 * a fixed upper bound up to {@link #MAX_JOBS_PER_TRANSACTION}. Above 1 (and under {@code auto},
 * once a backlog shows) a slot runs several claimed jobs one after another in one transaction and
 * completes them with one statement, so each job's business writes still commit exactly with its
 * completion. If any handler fails, the transaction rolls back, the failing job's attempt is
 * recorded alone, and the others run again without spending an attempt. {@link Grouping} decides
 * how many jobs a slot takes; 1 means never group.
 */
public record CapsuleConfig(
    String name, List<String> queues, int concurrency, int jobsPerTransaction) {

  /** Most jobs one transaction may carry. */
  public static final int MAX_JOBS_PER_TRANSACTION = 100;

  /**
   * Adaptive jobs per transaction, the default: a lone job runs at once in a transaction of its
   * own; a backlog runs in transactions of up to {@link Grouping#AUTO_MAX} jobs (see {@link
   * Grouping}).
   */
  public static final int AUTO = 0;

  /**
   * Most queues one capsule lists. Its claim and the ticker's statement take the list as one array
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
    if (jobsPerTransaction != AUTO
        && (jobsPerTransaction < 1 || jobsPerTransaction > MAX_JOBS_PER_TRANSACTION)) {
      throw new IllegalArgumentException(
          "capsule '"
              + name
              + "' jobs-per-transaction "
              + jobsPerTransaction
              + " is out of range: use auto (CapsuleConfig.AUTO) or 1 to "
              + MAX_JOBS_PER_TRANSACTION);
    }
  }

  /** Adaptive jobs per transaction ({@link #AUTO}), the default. */
  public CapsuleConfig(String name, List<String> queues, int concurrency) {
    this(name, queues, concurrency, AUTO);
  }

  /** Whether the capsule sizes its transactions by the backlog ({@link #AUTO}). */
  public boolean adaptive() {
    return jobsPerTransaction == AUTO;
  }
}
