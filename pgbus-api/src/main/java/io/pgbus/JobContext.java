package io.pgbus;

import java.time.Instant;

/** What a handler knows about the job it runs. */
public interface JobContext {

  long id();

  String queue();

  /** 1 on the first run, incremented on every claim (snoozes do not count). */
  int attempt();

  int maxAttempts();

  Instant createdAt();
}
