package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import com.ibm.websphere.logging.hpel.LogRecordContext;
import io.pgbus.engine.ClaimedJob;
import io.pgbus.engine.testing.ClaimedJobs;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * While a handler runs, the job id, queue and attempt are in the server's log context (here the
 * stand-in for Liberty's LogRecordContext), and they are gone afterwards.
 */
class JobLogFieldsTest {

  private final ClaimedJob job = ClaimedJobs.claimed(42L, "reports", 3);

  @Test
  void aRunningJobsIdQueueAndAttemptAreLogFieldsUntilItReturns() {
    JobLogFields fields = JobLogFields.of(getClass().getClassLoader());
    assertThat(fields.active()).isTrue();

    fields.enter(job);
    assertThat(extensions())
        .containsEntry("pgbus_job_id", "42")
        .containsEntry("pgbus_queue", "reports")
        .containsEntry("pgbus_attempt", "3");

    fields.exit();
    assertThat(extensions()).doesNotContainKeys("pgbus_job_id", "pgbus_queue", "pgbus_attempt");
  }

  @Test
  void aServerWithoutALogContextRunsJobsWithoutFields() {
    JobLogFields fields = JobLogFields.of(ClassLoader.getPlatformClassLoader());
    assertThat(fields.active()).isFalse();
    fields.enter(job);
    fields.exit();
  }

  private static Map<String, String> extensions() {
    var map = new HashMap<String, String>();
    LogRecordContext.getExtensions(map);
    return map;
  }
}
