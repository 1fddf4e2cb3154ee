package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A loop whose round lost its connection goes on on a fresh thread of its executor (issue #33:
 * Liberty keeps a loop thread's broken pooled connection for as long as the thread's task runs),
 * and any other failure leaves it where it is; a stop still ends it, and an executor that refuses
 * leaves it on its thread.
 */
class LoopMoveTest {

  /** Rounds that fail as told, recording the thread of each. */
  private static final class Rounds extends Loop {
    final List<Thread> threads = new CopyOnWriteArrayList<>();
    final List<SQLException> failures;
    final CountDownLatch done;
    final ErrorBackoff errors =
        new ErrorBackoff("test loop", Duration.ofMillis(1), Duration.ofMillis(1), () -> {});

    Rounds(List<SQLException> failures, int rounds) {
      this.failures = new CopyOnWriteArrayList<>(failures);
      this.done = new CountDownLatch(rounds);
    }

    @Override
    protected void loop() throws InterruptedException {
      runRounds(
          () -> {
            threads.add(Thread.currentThread());
            done.countDown();
            if (!failures.isEmpty()) {
              throw failures.remove(0);
            }
            signal().await(TimeUnit.MILLISECONDS.toNanos(5));
            return true;
          },
          errors,
          () -> {});
    }
  }

  private static final AtomicInteger made = new AtomicInteger();

  private static java.util.concurrent.Executor newThreads() {
    return EngineThreads.eachOnItsOwn(r -> new Thread(r, "loop-" + made.incrementAndGet()));
  }

  @Test
  void aRoundThatLostItsConnectionMovesTheLoopToAFreshThread() throws Exception {
    var loop = new Rounds(List.of(new SQLException("I/O error", "08006")), 3);
    loop.start(newThreads());

    assertThat(loop.done.await(10, TimeUnit.SECONDS)).isTrue();
    boolean stopped = loop.stop(Duration.ofSeconds(5));

    assertThat(loop.threads.get(1)).isNotSameAs(loop.threads.get(0));
    assertThat(loop.threads.get(2)).isSameAs(loop.threads.get(1));
    assertThat(stopped).isTrue();
    assertThat(loop.hasEnded()).isTrue();
  }

  @Test
  void anyOtherFailureLeavesTheLoopOnItsThread() throws Exception {
    var loop = new Rounds(List.of(new SQLException("deadlock", "40P01")), 3);
    loop.start(newThreads());

    assertThat(loop.done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(loop.stop(Duration.ofSeconds(5))).isTrue();

    assertThat(loop.threads).hasSizeGreaterThanOrEqualTo(3);
    assertThat(loop.threads).allMatch(t -> t == loop.threads.get(0));
  }

  @Test
  void anExecutorThatRefusesTheMoveLeavesTheLoopOnItsThread() throws Exception {
    var loop = new Rounds(List.of(new SQLException("I/O error", "08006")), 3);
    var first = new AtomicInteger();
    loop.start(
        task -> {
          if (first.getAndIncrement() > 0) {
            throw new RejectedExecutionException("the application is stopping");
          }
          new Thread(task, "only").start();
        });

    assertThat(loop.done.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(loop.stop(Duration.ofSeconds(5))).isTrue();

    assertThat(loop.threads).allMatch(t -> t.getName().equals("only"));
  }
}
