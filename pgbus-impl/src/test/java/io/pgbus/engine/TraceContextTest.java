package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The enqueuer's W3C trace context is stored with the job (schema V6) from Java and from SQL, is
 * handed back at the claim, and is untrusted input: SQL refuses an invalid one with an error that
 * names it, the table refuses it from a plain INSERT, and Java drops what the table would refuse.
 */
class TraceContextTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  static final String PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  static final String STATE = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

  private final JobStore store = new JobStore();

  /** A tracing port that always reports the same context, as an enqueue inside a span would. */
  private static final class FixedTrace implements JobTracing {
    private final TraceContext trace;

    FixedTrace(TraceContext trace) {
      this.trace = trace;
    }

    @Override
    public TraceContext capture() {
      return trace;
    }

    @Override
    public JobFunction around(JobFunction jobs) {
      return jobs;
    }
  }

  private List<ClaimedJob> claim(String queue) throws SQLException {
    try (Connection c = db.connect()) {
      return store.jobClaim(c, List.of(queue), 10, "w", Duration.ofMinutes(1));
    }
  }

  @Test
  void aJobEnqueuedInATraceCarriesItsContextToTheClaim() throws Exception {
    Engine engine =
        Engine.builder(EngineConfig.builder().build(), db.dataSource())
            .tracing(new FixedTrace(new TraceContext(PARENT, STATE)))
            .build();
    try (Connection c = db.connect()) {
      engine.jobs().enqueue(c, NewJob.of("traced", "{}"));
      engine.jobs().enqueueAll(c, List.of(NewJob.of("traced", "{}"), NewJob.of("traced", "{}")));
    }

    List<ClaimedJob> jobs = claim("traced");

    assertThat(jobs).hasSize(3);
    assertThat(jobs)
        .allSatisfy(j -> assertThat(j.trace()).isEqualTo(new TraceContext(PARENT, STATE)));
  }

  @Test
  void aJobEnqueuedOutsideATraceStoresNothing() throws Exception {
    Engine engine = Engine.builder(EngineConfig.builder().build(), db.dataSource()).build();
    try (Connection c = db.connect()) {
      engine.jobs().enqueue(c, NewJob.of("plain", "{}"));
      engine.jobs().enqueueAll(c, List.of(NewJob.of("plain", "{}")));
    }

    assertThat(claim("plain")).extracting(ClaimedJob::trace).containsExactly(null, null);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE trace_parent IS NOT NULL"))
        .isZero();
  }

  @Test
  void anEnqueueFromSqlStoresTheTraceparentItIsGiven() throws Exception {
    sql("SELECT pgbus.enqueue('sql', '{}', trace_parent => ?, trace_state => ?)", PARENT, STATE);
    sql("SELECT pgbus.enqueue_job('sql', '{}', NULL, 0, 25, NULL, ?, NULL)", PARENT);
    sql(
        """
        SELECT pgbus.enqueue_many(ARRAY['sql', 'sql'], ARRAY['{}', '{}']::jsonb[],
                                  ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0], ARRAY[1, 1],
                                  trace_parents => ARRAY[?, NULL])
        """,
        PARENT);

    assertThat(claim("sql"))
        .extracting(ClaimedJob::trace)
        .containsExactly(
            new TraceContext(PARENT, STATE),
            new TraceContext(PARENT, null),
            new TraceContext(PARENT, null),
            null);
  }

  @Test
  void everyEnqueueCallWrittenForSchemaV5StillWorks() throws Exception {
    sql("SELECT pgbus.enqueue('old', '{}')");
    sql("SELECT pgbus.enqueue('old', '{}', NULL, 0, 25, 'k')");
    sql("SELECT * FROM pgbus.enqueue_job('old', '{}', NULL, 0, 25, 'k2')");
    sql(
        "SELECT pgbus.enqueue_many(ARRAY['old'], ARRAY['{}']::jsonb[], ARRAY[NULL]::timestamptz[],"
            + " ARRAY[0], ARRAY[1])");
    sql(
        "SELECT pgbus.enqueue_many(ARRAY['old'], ARRAY['{}']::jsonb[], ARRAY[NULL]::timestamptz[],"
            + " ARRAY[0], ARRAY[1], ARRAY['k3'])");

    assertThat(db.jobCount("old", "available")).isEqualTo(5);
  }

  @Test
  void anInvalidTraceparentFromSqlIsRefusedNamingTheValueAndWritesNothing() {
    for (String bad :
        List.of(
            "bogus",
            PARENT.toUpperCase(),
            "01" + PARENT.substring(2),
            PARENT + "-",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01")) {
      assertThatThrownBy(() -> sql("SELECT pgbus.enqueue('bad', '{}', trace_parent => ?)", bad))
          .hasMessageContaining("invalid trace_parent '" + bad + "'")
          .hasMessageContaining("queue bad")
          .hasMessageContaining("W3C traceparent of version 00");
      assertThatThrownBy(
              () ->
                  sql(
                      "SELECT pgbus.enqueue_many(ARRAY['bad'], ARRAY['{}']::jsonb[],"
                          + " ARRAY[NULL]::timestamptz[], ARRAY[0], ARRAY[1], NULL, ARRAY[?])",
                      bad))
          .hasMessageContaining("invalid trace_parent");
    }
    assertThatThrownBy(
            () ->
                sql(
                    "SELECT pgbus.enqueue('bad', '{}', trace_parent => ?, trace_state => ?)",
                    PARENT,
                    "a=b\nc=d"))
        .hasMessageContaining("invalid trace_state");
    assertThatThrownBy(
            () ->
                sql(
                    "SELECT pgbus.enqueue('bad', '{}', trace_parent => ?, trace_state => ?)",
                    PARENT,
                    "a=" + "x".repeat(511)))
        .hasMessageContaining("at most 512");
    assertThatThrownBy(() -> sql("SELECT pgbus.enqueue('bad', '{}', trace_state => 'a=b')"))
        .hasMessageContaining("trace_state without trace_parent");
    assertThat(db.jobCount()).isZero();
  }

  @Test
  void theTableRefusesABadTraceparentFromAPlainInsert() {
    assertThatThrownBy(
            () ->
                sql(
                    "INSERT INTO pgbus.job (queue, state, payload, trace_parent)"
                        + " VALUES ('raw', 'available', '{}', ?)",
                    PARENT.replace('a', 'A')))
        .hasMessageContaining("job_trace_parent_check");
    assertThatThrownBy(
            () ->
                sql(
                    "INSERT INTO pgbus.job (queue, state, payload, trace_state)"
                        + " VALUES ('raw', 'available', '{}', 'a=b')"))
        .hasMessageContaining("job_trace_state_check");
  }

  @Test
  void javaDropsAContextTheTableWouldRefuse() {
    assertThat(TraceContext.of(null, STATE)).isNull();
    assertThat(TraceContext.of("bogus", STATE)).isNull();
    assertThat(TraceContext.of(PARENT.toUpperCase(), null)).isNull();
    assertThat(TraceContext.of(PARENT, "a=b\n")).isEqualTo(new TraceContext(PARENT, null));
    assertThat(TraceContext.of(PARENT, "x".repeat(513))).isEqualTo(new TraceContext(PARENT, null));
    assertThat(TraceContext.of(PARENT, "")).isEqualTo(new TraceContext(PARENT, null));
    assertThat(TraceContext.of(PARENT, STATE)).isEqualTo(new TraceContext(PARENT, STATE));
    assertThatThrownBy(() -> new TraceContext("bogus", null))
        .hasMessageContaining("invalid traceparent 'bogus'");
  }

  private static void sql(String sql, Object... args) throws SQLException {
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        ps.setObject(i + 1, args[i]);
      }
      try (ResultSet ignored = ps.executeQuery()) {
        // Only the error matters.
      }
    }
  }
}
