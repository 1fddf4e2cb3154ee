package io.pgbus.engine;

import io.pgbus.QueueNames;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A named worker group: an ordered queue list (strict priority, earlier queues always win) and
 * how many jobs it runs at once.
 */
public record CapsuleConfig(String name, List<String> queues, int concurrency) {

  private static final Pattern NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,62}");

  public CapsuleConfig {
    Objects.requireNonNull(name, "capsule name");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "invalid capsule name '" + name + "': use a letter followed by letters, digits, '_' or '-'");
    }
    if (queues == null || queues.isEmpty()) {
      throw new IllegalArgumentException("capsule '" + name + "' lists no queues");
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
  }
}
