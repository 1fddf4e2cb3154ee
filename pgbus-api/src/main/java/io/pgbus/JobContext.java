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

  /**
   * Whether an operator cancelled this job while it runs ({@link JobQueue#cancel} from any JVM).
   * pgbus has then interrupted the handler's thread as well; a cooperative handler that does not
   * block checks this at safe points and stops, by returning or throwing. Whatever it returns, the
   * job ends {@code cancelled} and the handler's transaction rolls back. A handler that ignores
   * both runs on until its job timeout, as before.
   *
   * @return {@code false} unless a cancel of this very attempt was requested and heard
   */
  default boolean cancellationRequested() {
    return false;
  }
}
