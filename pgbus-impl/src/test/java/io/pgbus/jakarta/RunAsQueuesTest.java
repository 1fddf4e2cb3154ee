package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.InvalidJobException;
import io.pgbus.engine.InvalidConfigException;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Which queues run their handler as the enqueuer, read as a deployment reads it; the refusals that
 * fail the deployment, and the enqueue refused without a caller.
 */
class RunAsQueuesTest {

  private static RunAsQueues read(Map<String, String> m) {
    return RunAsQueues.read(k -> Optional.ofNullable(m.get(k)), m.keySet());
  }

  @Test
  void onlyQueuesSetToEnqueuerRunAsTheEnqueuer() {
    RunAsQueues q =
        read(
            Map.of(
                "pgbus.queue.reports.run-as", " Enqueuer ",
                "pgbus.queue.mail.run-as", "container",
                "pgbus.queue.mail.encrypt", "true"));
    assertThat(q.queues()).containsExactly("reports");
    assertThat(q.runsAsEnqueuer("mail")).isFalse();
    assertThat(read(Map.of())).isSameAs(RunAsQueues.NONE);
  }

  @Test
  void aBadValueOrQueueNameFailsTheDeploymentNamingTheKey() {
    assertThatThrownBy(() -> read(Map.of("pgbus.queue.reports.run-as", "caller")))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> assertThat(e.key()).isEqualTo("pgbus.queue.reports.run-as"))
        .hasMessageContaining("pgbus.queue.reports.run-as=caller is not a run-as mode")
        .hasMessageContaining("set it to enqueuer");
    assertThatThrownBy(() -> read(Map.of("pgbus.queue.Bad-Name.run-as", "enqueuer")))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e -> assertThat(e.key()).isEqualTo("pgbus.queue.Bad-Name.run-as"));
  }

  @Test
  void anEnqueueWithoutACallerIsRefusedNamingTheQueueAndTheFix() {
    RunAsQueues q = read(Map.of("pgbus.queue.reports.run-as", "enqueuer"));
    assertThat(q.runAs("reports", "alice")).isEqualTo("alice");
    assertThat(q.runAs("mail", "alice")).isNull();
    assertThat(q.runAs("mail", null)).isNull();
    assertThatThrownBy(() -> q.runAs("reports", null))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("queue 'reports' runs its handler as the user who enqueued the job")
        .hasMessageContaining("no authenticated caller")
        .hasMessageContaining("pgbus.queue.reports.run-as=container");
  }

  @Test
  void theKeyIsAKnownQueueSetting() {
    assertThat(io.pgbus.engine.QueuePolicy.SUFFIXES).contains("run-as");
  }
}
