package io.pgbus.engine.testing;

import io.pgbus.Outcome;
import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.JobEvents;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@link JobEvents} that remembers every attempt, so a test can wait for "job 7 finished" or "2,000
 * attempts completed" instead of sleeping. {@code finished} is called after the job's transaction
 * ended, so what it reports is committed.
 */
public final class RecordingEvents implements JobEvents {

  /** One finished attempt: what the job became (null for dead or a lost lease). */
  public record Finished(ClaimedJob job, Outcome.Kind kind) {}

  private final List<ClaimedJob> started = new CopyOnWriteArrayList<>();
  private final List<Finished> finished = new CopyOnWriteArrayList<>();

  @Override
  public void started(ClaimedJob job) {
    started.add(job);
  }

  @Override
  public void finished(ClaimedJob job, Outcome.Kind kind, long nanos) {
    finished.add(new Finished(job, kind));
  }

  public List<ClaimedJob> started() {
    return List.copyOf(started);
  }

  public List<Finished> finished() {
    return List.copyOf(finished);
  }

  /** Waits until {@code count} attempts have finished with {@code kind}. */
  public void awaitFinished(Outcome.Kind kind, int count, Duration timeout) {
    Await.until(
        count + " attempts finished as " + kind,
        timeout,
        () -> finished.stream().filter(f -> f.kind() == kind).count(),
        n -> n >= count);
  }

  /** Waits for the attempt {@code attempt} of job {@code id} to finish; returns what it became. */
  public Finished awaitFinished(long id, int attempt, Duration timeout) {
    return Await.until(
        "job " + id + " attempt " + attempt + " to finish",
        timeout,
        () ->
            finished.stream()
                .filter(f -> f.job().id() == id && f.job().attempt() == attempt)
                .findFirst()
                .orElse(null),
        f -> f != null);
  }
}
