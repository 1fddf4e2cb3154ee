package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pgbus.EnqueueOptions;
import io.pgbus.InvalidJobException;
import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.JobFixtures;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Flow control (V14): a global limit per queue and a limit per concurrency key hold across several
 * engines on one database, enforced by the claim alone; bad limits and keys write nothing.
 */
class FlowControlTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.queue_limit");

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  private final JobStore store = new JobStore();

  /** One handler run: which job, and when it started and ended (System.nanoTime, one JVM). */
  record Run(long id, String key, long start, long end) {}

  @Test
  void aGlobalLimitOfFiveHoldsAcrossThreeEnginesOfEightSlots() throws Exception {
    int total = 2_000;
    Set<Long> enqueued = Set.copyOf(JobFixtures.in(db).enqueue("limited", total));
    var runs = new ConcurrentLinkedQueue<Run>();
    Set<Long> handled = ConcurrentHashMap.newKeySet();
    var duplicates = new AtomicInteger();
    var sampledMax = new AtomicLong();
    var sampledRows = new AtomicLong();
    var samples = new AtomicInteger();
    var sampling = new AtomicBoolean(true);
    Thread sampler =
        new Thread(
            () -> {
              try (Connection c = db.helperConnection();
                  var ps =
                      c.prepareStatement(
                          // What the limit bounds (V19): executions, the distinct lanes of
                          // the queue's running jobs. A lane's jobs are all running at once
                          // (claimed together) but run one after another, so the rows in
                          // state running may exceed the limit; the lanes may not.
                          "SELECT pgbus.claim_executions('limited'), count(*) FROM pgbus.job"
                              + " WHERE queue = 'limited' AND state = 'running'")) {
                while (sampling.get()) {
                  try (var rs = ps.executeQuery()) {
                    rs.next();
                    sampledMax.accumulateAndGet(rs.getLong(1), Math::max);
                    sampledRows.accumulateAndGet(rs.getLong(2), Math::max);
                    samples.incrementAndGet();
                  }
                  // About a sample per millisecond: enough to see a sixth running job, which
                  // lives for milliseconds, without a tight loop that loads the database.
                  java.util.concurrent.locks.LockSupport.parkNanos(500_000);
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    sampler.start();
    long t0 = System.nanoTime();
    try {
      for (int e = 0; e < 3; e++) {
        EngineConfig config =
            engines
                .config()
                .capsule("main", 8, "limited")
                .queueLimit(new QueueLimit("limited", 5, null))
                .build();
        engines.start(
            config,
            (job, tx) -> {
              long start = System.nanoTime();
              if (!handled.add(job.id())) {
                duplicates.incrementAndGet();
              }
              Thread.sleep(2 + job.id() % 3);
              runs.add(new Run(job.id(), null, start, System.nanoTime()));
              return Outcome.complete();
            });
      }
      Await.until(
          "every job to complete",
          Duration.ofMinutes(10),
          () -> db.jobCount("limited", "completed") == total);
    } finally {
      sampling.set(false);
      sampler.join();
    }
    long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
    int overlap = maxOverlap(List.copyOf(runs));
    System.out.printf(
        "[measure] global limit 5, 3 engines x 8 slots, %d jobs: %d ms, max executions sampled"
            + " %d, max running rows sampled %d (%d samples), max handler overlap %d%n",
        total, elapsedMs, sampledMax.get(), sampledRows.get(), samples.get(), overlap);

    assertThat(sampledMax.get())
        .as("executions (lanes of running jobs), sampled")
        .isBetween(1L, 5L);
    assertThat(overlap).as("overlapping handler runs").isBetween(2, 5);
    assertThat(duplicates).as("jobs run twice").hasValue(0);
    assertThat(handled).as("jobs run").isEqualTo(enqueued);
    assertThat(db.jobCount("limited", "completed")).isEqualTo(total);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE attempt <> 1")).isZero();
  }

  @Test
  void aKeyLimitOfOneKeepsEachKeyToOneRunningJobWhileKeysRunInParallel() throws Exception {
    int keys = 100;
    int perKey = 20;
    var jobs = new ArrayList<NewJob>();
    for (int n = 0; n < perKey; n++) {
      for (int k = 0; k < keys; k++) {
        jobs.add(
            new NewJob(
                "keyed",
                "{\"k\":" + k + "}",
                EnqueueOptions.defaults().withConcurrencyKey("customer-" + k)));
      }
    }
    try (Connection c = db.connect()) {
      store.jobInsertMany(c, jobs);
    }
    var runs = new ConcurrentLinkedQueue<Run>();
    for (int e = 0; e < 3; e++) {
      engines.start(
          engines.config().capsule("main", 8, "keyed").build(),
          (job, tx) -> {
            long start = System.nanoTime();
            Thread.sleep(2);
            String key = job.payload().replaceAll("\\D", "");
            runs.add(new Run(job.id(), key, start, System.nanoTime()));
            return Outcome.complete();
          });
    }
    Await.until(
        "every job to complete",
        Duration.ofMinutes(10),
        () -> db.jobCount("keyed", "completed") == keys * perKey);

    Map<String, List<Run>> byKey = new HashMap<>();
    runs.forEach(r -> byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r));
    int worstKey = byKey.values().stream().mapToInt(FlowControlTest::maxOverlap).max().orElse(0);
    int all = maxOverlap(List.copyOf(runs));
    System.out.printf(
        "[measure] key limit 1, %d keys x %d jobs, 3 engines x 8 slots: max overlap per key %d,"
            + " across keys %d%n",
        keys, perKey, worstKey, all);
    assertThat(runs).hasSize(keys * perKey);
    assertThat(byKey).hasSize(keys);
    assertThat(worstKey).as("overlapping runs of one key").isEqualTo(1);
    // Different keys run in parallel (how many at once depends on the machine: 4-5 at load).
    assertThat(all).as("overlapping runs across keys").isGreaterThan(1);
  }

  @Test
  void theClaimTakesNoMoreThanTheLimitLeavesAndTakesMoreWhenARunningJobEnds() throws Exception {
    JobFixtures.in(db).enqueue("capped", 5);
    try (Connection c = db.connect()) {
      new QueueLimitStore().queueLimitWrite(c, new QueueLimit("capped", 2, null), "test");
      List<ClaimedJob> first = claim(c, "capped", 10);
      assertThat(first).hasSize(2);
      assertThat(claim(c, "capped", 10)).as("at the limit").isEmpty();
      assertThat(new QueueLimitStore().queueLimitStatus(c))
          .as("what the doctor, readiness and the admin API show")
          .containsExactly(new QueueLimitStatus("capped", 2, 1, 2, 3, 0));
      assertThat(QueueLimitStatus.describe(new QueueLimitStore().queueLimitStatus(c)))
          .isEqualTo(
              "capped(global 2, per key 1: 2 running, 3 waiting on the limit, 0 on a worker)");
      assertThat(store.jobComplete(c, first.get(0))).isTrue();
      assertThat(claim(c, "capped", 10)).as("one slot freed").hasSize(1);
      // Keys count within one claim too: three jobs of one key, one at a time.
      for (int i = 0; i < 3; i++) {
        JobFixtures.in(db).enqueue("one_key", EnqueueOptions.defaults().withConcurrencyKey("same"));
      }
      JobFixtures.in(db).enqueue("one_key", EnqueueOptions.defaults().withConcurrencyKey("other"));
      JobFixtures.in(db).enqueue("one_key");
      List<ClaimedJob> keyed = claim(c, "one_key", 10);
      assertThat(keyed).as("one of 'same', one of 'other', the job without a key").hasSize(3);
      assertThat(claim(c, "one_key", 10)).isEmpty();
      new QueueLimitStore().queueLimitWrite(c, new QueueLimit("one_key", null, 2), "test");
      assertThat(claim(c, "one_key", 10)).as("'same' may now run two").hasSize(1);
    }
  }

  @Test
  void aGlobalLimitHoldsAcrossALeaderChangeAndAListenerKill() throws Exception {
    int total = 1_200;
    Set<Long> enqueued = Set.copyOf(JobFixtures.in(db).enqueue("resilient", total));
    var runs = new ConcurrentLinkedQueue<Run>();
    Set<Long> handled = ConcurrentHashMap.newKeySet();
    var duplicates = new AtomicInteger();
    var started = new ArrayList<Engine>();
    for (int e = 0; e < 3; e++) {
      started.add(
          engines.start(
              engines
                  .config()
                  // A follower looks at the lease with each heartbeat: a third of this TTL.
                  .set(ExecutionConfig.HEARTBEAT_TTL, Duration.ofSeconds(6))
                  .leaderTtl(Duration.ofSeconds(6))
                  .capsule("main", 4, "resilient")
                  .queueLimit(new QueueLimit("resilient", 3, null))
                  .build(),
              (job, tx) -> {
                long start = System.nanoTime();
                if (!handled.add(job.id())) {
                  duplicates.incrementAndGet();
                }
                Thread.sleep(3 + job.id() % 3);
                runs.add(new Run(job.id(), null, start, System.nanoTime()));
                return Outcome.complete();
              }));
    }
    Await.until(
        "a leader", Duration.ofSeconds(30), () -> started.stream().anyMatch(Engine::leader));
    Await.until("a quarter done", Duration.ofMinutes(5), () -> handled.size() >= total / 4);
    Engine leader = started.stream().filter(Engine::leader).findFirst().orElseThrow();
    leader.stop();
    started.remove(leader);
    Await.until(
        "another engine to lead",
        Duration.ofMinutes(2),
        () -> started.stream().anyMatch(Engine::leader));
    Await.until("half done", Duration.ofMinutes(5), () -> handled.size() >= total / 2);
    long killed =
        db.queryLong(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                + " WHERE application_name = ? AND datname = current_database()",
            Channels.LISTENER_APPLICATION_NAME);
    Await.until(
        "every job to complete",
        Duration.ofMinutes(10),
        () -> db.jobCount("resilient", "completed") == total);
    for (Engine e : started) {
      TestEngines.awaitDelivering(e);
    }
    int overlap = maxOverlap(List.copyOf(runs));
    System.out.printf(
        "[measure] global limit 3, 3 engines x 4 slots, %d jobs, leader stopped at 1/4, %d"
            + " listeners killed at 1/2: max handler overlap %d%n",
        total, killed, overlap);
    assertThat(killed).as("listener backends terminated").isEqualTo(2);
    assertThat(overlap).as("overlapping handler runs").isBetween(2, 3);
    assertThat(duplicates).as("jobs run twice").hasValue(0);
    assertThat(handled).isEqualTo(enqueued);
  }

  @Test
  void aLimitCountsLanesSoAGroupedClaimTakesItsGroupsUnderOneUnitEach() throws Exception {
    JobFixtures.in(db).enqueue("grouped", 30);
    try (Connection c = db.connect()) {
      new QueueLimitStore().queueLimitWrite(c, new QueueLimit("grouped", 2, null), "test");
      List<List<ClaimedJob>> lanes =
          store.jobClaimInLanes(c, List.of("grouped"), 40, 8, "tester", Duration.ofMinutes(5));
      assertThat(lanes)
          .as("8 free slots, 5 jobs a slot, a limit of 2: two lanes of 5")
          .map(List::size)
          .containsExactly(5, 5);
      assertThat(db.queryLong("SELECT pgbus.claim_executions('grouped')")).isEqualTo(2);
      assertThat(
              store.jobClaimInLanes(c, List.of("grouped"), 40, 8, "tester", Duration.ofMinutes(5)))
          .as("at the limit")
          .isEmpty();
      // A lane holds its unit until its last job leaves running.
      for (ClaimedJob job : lanes.get(0).subList(0, 4)) {
        assertThat(store.jobComplete(c, job)).isTrue();
      }
      assertThat(
              store.jobClaimInLanes(c, List.of("grouped"), 40, 8, "tester", Duration.ofMinutes(5)))
          .as("one job of the lane still running")
          .isEmpty();
      assertThat(store.jobComplete(c, lanes.get(0).get(4))).isTrue();
      assertThat(
              store.jobClaimInLanes(c, List.of("grouped"), 40, 8, "tester", Duration.ofMinutes(5)))
          .as("the lane ended: one new lane")
          .map(List::size)
          .containsExactly(5);
      // A claim without lanes (SQL callers, pgbus.claim's four arguments): each job its own.
      assertThat(claim(c, "grouped", 10)).as("at the limit again").isEmpty();
    }
  }

  @Test
  void aLimitEqualToTheSlotsKeepsTheClaimedGroupsWhole() throws Exception {
    // Counting claimed rows, a limit of 8 on 8 slots let a claim take one job per free slot, so
    // jobs-per-transaction=auto never grew a group (W1 at 0.08x the unlimited run). Counting
    // lanes, the groups grow as without a limit.
    int total = 3_000;
    JobFixtures.in(db).enqueue("whole", total);
    Engine engine =
        engines.start(
            engines
                .config()
                .capsule("main", 8, "whole")
                .queueLimit(new QueueLimit("whole", 8, null))
                .build(),
            (job, tx) -> Outcome.complete());
    Await.until(
        "every job to complete",
        Duration.ofMinutes(5),
        () -> db.jobCount("whole", "completed") == total);
    Capsule capsule = engine.capsules().get(0);
    double perClaim = (double) capsule.status().claimed() / capsule.status().claims();
    System.out.printf(
        "[measure] limit 8 on 8 slots, %d jobs: %d claims, %.1f jobs per claim%n",
        total, capsule.status().claims(), perClaim);
    assertThat(perClaim).as("jobs per claim (1 when groups collapse)").isGreaterThan(8.0);
  }

  @Test
  void aClaimThatFindsTheLimitReachedTakesNoLock() throws Exception {
    JobFixtures.in(db).enqueue("full", 3);
    try (Connection c = db.connect();
        Connection holder = db.connect()) {
      new QueueLimitStore().queueLimitWrite(c, new QueueLimit("full", 1, null), "test");
      assertThat(claim(c, "full", 10)).hasSize(1);
      holder.setAutoCommit(false);
      try (var st = holder.createStatement()) {
        st.execute("SELECT 1 FROM pgbus.queue_limit WHERE queue::text = 'full' FOR UPDATE");
      }
      try (var st = c.createStatement()) {
        st.execute("SET lock_timeout = '2s'");
      }
      // Were it to lock the row it would wait for the holder, and fail after 2 s.
      long t0 = System.nanoTime();
      assertThat(claim(c, "full", 10)).isEmpty();
      assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2));
      holder.rollback();
    }
  }

  @Test
  void aRateOfOneHundredPerSecondHoldsAcrossTwoEnginesForTenSeconds() throws Exception {
    int total = 1_000;
    JobFixtures.in(db).enqueue("rated", total);
    QueueLimit rate = new QueueLimit("rated", null, null, 100, Duration.ofSeconds(1));
    var startsBySecond = new ConcurrentHashMap<Long, AtomicInteger>();
    long t0 = System.nanoTime();
    for (int e = 0; e < 2; e++) {
      engines.start(
          engines.config().capsule("main", 8, "rated").queueLimit(rate).build(),
          (job, tx) -> {
            startsBySecond
                .computeIfAbsent(System.currentTimeMillis() / 1000, k -> new AtomicInteger())
                .incrementAndGet();
            return Outcome.complete();
          });
    }
    Await.until(
        "every job to complete",
        Duration.ofMinutes(3),
        () -> db.jobCount("rated", "completed") == total);
    long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
    // Starts as the database counts them: each job's claim time, in the limit's windows (1 s,
    // laid end to end from the epoch).
    Map<Long, Long> perWindow = new java.util.TreeMap<>();
    try (Connection c = db.helperConnection();
        var rs =
            c.createStatement()
                .executeQuery(
                    "SELECT floor(extract(epoch FROM attempted_at))::bigint, count(*)"
                        + " FROM pgbus.job WHERE queue = 'rated' GROUP BY 1")) {
      while (rs.next()) {
        perWindow.put(rs.getLong(1), rs.getLong(2));
      }
    }
    long spanMs =
        db.queryLong(
            "SELECT (extract(epoch FROM max(attempted_at) - min(attempted_at)) * 1000)::bigint"
                + " FROM pgbus.job WHERE queue = 'rated'");
    int handlerMax = startsBySecond.values().stream().mapToInt(AtomicInteger::get).max().orElse(0);
    System.out.printf(
        "[measure] rate 100/1s, 2 engines x 8 slots, %d jobs: %d ms, starts per window %s (%d"
            + " windows), first to last start %d ms, most handler starts in a clock second %d%n",
        total, elapsedMs, perWindow.values(), perWindow.size(), spanMs, handlerMax);

    assertThat(perWindow.values().stream().mapToLong(Long::longValue).sum()).isEqualTo(total);
    assertThat(perWindow.values()).as("starts per window").allMatch(n -> n <= 100);
    assertThat(perWindow)
        .as("1,000 starts need ten windows at least")
        .hasSizeGreaterThanOrEqualTo(10);
    // Ten windows from the first start to the last: more than 8 s, wherever in its window the
    // first start fell.
    assertThat(spanMs).as("first to last start").isGreaterThan(8_000);
    // Capsules wake for the next window rather than at the poll ceiling (60 s): ten windows in
    // well under a minute, even on a loaded machine.
    assertThat(elapsedMs).as("elapsed").isLessThan(60_000);
    // The handlers start within moments of their claim; a clock second can straddle two windows.
    assertThat(handlerMax).as("handler starts in one clock second").isLessThanOrEqualTo(200);
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.job WHERE attempt <> 1")).isZero();
  }

  @Test
  void aRateLimitTakesNoMoreThanTheWindowLeavesAndCountsAcrossClaims() throws Exception {
    JobFixtures.in(db).enqueue("windowed", 30);
    try (Connection c = db.connect()) {
      new QueueLimitStore()
          .queueLimitWrite(
              c, new QueueLimit("windowed", null, null, 10, Duration.ofHours(1)), "test");
      assertThat(store.jobClaimInLanes(c, List.of("windowed"), 8, 8, "t", Duration.ofMinutes(5)))
          .map(List::size)
          .as("eight lanes of one")
          .hasSize(8);
      assertThat(claim(c, "windowed", 10)).as("two left in this window").hasSize(2);
      assertThat(claim(c, "windowed", 10)).as("the window is spent").isEmpty();
      assertThat(db.queryLong("SELECT rate_count FROM pgbus.queue_limit WHERE queue = 'windowed'"))
          .isEqualTo(10);
      assertThat(QueueLimitStatus.describe(new QueueLimitStore().queueLimitStatus(c)))
          .as("what the doctor, readiness and the admin API show")
          .isEqualTo(
              "windowed(global none, per key 1, rate 10 per 1h: 10 started this window: 10"
                  + " running, 20 waiting on the limit, 0 on a worker)");
      // Pretend the window is over: the next one allows ten more.
      db.update(
          "UPDATE pgbus.queue_limit SET rate_window_start = rate_window_start - interval '1 hour'"
              + " WHERE queue = 'windowed'");
      assertThat(claim(c, "windowed", 30)).as("a new window").hasSize(10);
    }
  }

  @Test
  void aFifoQueueStartsEachKeysJobsInEnqueueOrderOneAtATimeWhileKeysRunInParallel()
      throws Exception {
    int keys = 10;
    int perKey = 20;
    var jobs = new ArrayList<NewJob>();
    for (int n = 0; n < perKey; n++) {
      for (int k = 0; k < keys; k++) {
        jobs.add(
            new NewJob(
                "fifo",
                "{\"k\":" + k + ",\"n\":" + n + "}",
                EnqueueOptions.defaults().withConcurrencyKey("customer-" + k)));
      }
    }
    try (Connection c = db.connect()) {
      store.jobInsertMany(c, jobs);
    }
    QueueLimit fifo = new QueueLimit("fifo", null, null, null, null, true, null);
    var runs = new ConcurrentLinkedQueue<Run>();
    var order = new ConcurrentHashMap<String, List<Integer>>();
    for (int e = 0; e < 2; e++) {
      engines.start(
          engines.config().capsule("main", 8, "fifo").queueLimit(fifo).build(),
          (job, tx) -> {
            long start = System.nanoTime();
            String[] kn = job.payload().replaceAll("[^0-9,]", "").split(",");
            order
                .computeIfAbsent(
                    kn[0], k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                .add(Integer.parseInt(kn[1]));
            Thread.sleep(1);
            runs.add(new Run(job.id(), kn[0], start, System.nanoTime()));
            return Outcome.complete();
          });
    }
    Await.until(
        "every job to complete",
        Duration.ofMinutes(5),
        () -> db.jobCount("fifo", "completed") == keys * perKey);
    Map<String, List<Run>> byKey = new HashMap<>();
    runs.forEach(r -> byKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r));
    int worstKey = byKey.values().stream().mapToInt(FlowControlTest::maxOverlap).max().orElse(0);
    int all = maxOverlap(List.copyOf(runs));
    System.out.printf(
        "[measure] FIFO per key, %d keys x %d jobs, 2 engines x 8 slots: max overlap per key %d,"
            + " across keys %d%n",
        keys, perKey, worstKey, all);
    List<Integer> enqueueOrder = java.util.stream.IntStream.range(0, perKey).boxed().toList();
    assertThat(order).hasSize(keys);
    order.forEach(
        (k, started) -> assertThat(started).as("start order of key %s", k).isEqualTo(enqueueOrder));
    assertThat(worstKey).as("overlapping runs of one key").isEqualTo(1);
    assertThat(all).as("overlapping runs across keys").isGreaterThan(1);
  }

  @Test
  void underFifoARetryKeepsItsPlaceAndADeadJobHoldsItsKeyOrLetsItPassAsConfigured()
      throws Exception {
    var jobs = JobFixtures.in(db);
    var keyA = EnqueueOptions.defaults().withConcurrencyKey("a");
    var once = EnqueueOptions.defaults().withConcurrencyKey("d").withMaxAttempts(1);
    try (Connection c = db.connect()) {
      var limits = new QueueLimitStore();
      limits.queueLimitWrite(
          c, new QueueLimit("fifo_retry", null, null, null, null, true, null), "t");
      limits.queueLimitWrite(
          c, new QueueLimit("fifo_hold", null, null, null, null, true, false), "t");
      limits.queueLimitWrite(
          c, new QueueLimit("fifo_pass", null, null, null, null, true, true), "t");

      // A retry keeps its place: the key waits for it, however long its backoff.
      long a1 = jobs.enqueue("fifo_retry", keyA);
      long a2 = jobs.enqueue("fifo_retry", keyA);
      long b1 = jobs.enqueue("fifo_retry", EnqueueOptions.defaults().withConcurrencyKey("b"));
      List<ClaimedJob> first = claim(c, "fifo_retry", 10);
      assertThat(first).map(ClaimedJob::id).containsExactly(a1, b1);
      assertThat(store.jobFail(c, first.get(0), "boom", Duration.ofHours(1)).dead()).isFalse();
      assertThat(claim(c, "fifo_retry", 10)).as("a2 waits for a1's retry").isEmpty();
      db.update("UPDATE pgbus.job SET run_at = now() WHERE id = ?", a1);
      List<ClaimedJob> retried = claim(c, "fifo_retry", 10);
      assertThat(retried).map(ClaimedJob::id).as("a1 again, before a2").containsExactly(a1);
      assertThat(store.jobComplete(c, retried.get(0))).isTrue();
      assertThat(claim(c, "fifo_retry", 10)).map(ClaimedJob::id).containsExactly(a2);

      // A dead job holds its key's later jobs until it is replayed (the default) ...
      long h1 = jobs.enqueue("fifo_hold", once);
      long h2 = jobs.enqueue("fifo_hold", once);
      ClaimedJob held = claim(c, "fifo_hold", 10).get(0);
      assertThat(held.id()).isEqualTo(h1);
      assertThat(store.jobFail(c, held, "boom", Duration.ofSeconds(1)).dead()).isTrue();
      assertThat(claim(c, "fifo_hold", 10)).as("h2 held by dead h1").isEmpty();
      var status = new java.util.HashMap<String, QueueLimitStatus>();
      new QueueLimitStore().queueLimitStatus(c).forEach(l -> status.put(l.queue(), l));
      assertThat(status.get("fifo_hold").waitingOnLimit())
          .as("h2 waits on its key's dead head, which the doctor and the admin API show")
          .isEqualTo(1);
      assertThat(status.get("fifo_hold").waitingOnWorker()).isZero();
      assertThat(QueueLimitStatus.describe(List.of(status.get("fifo_hold"))))
          .isEqualTo(
              "fifo_hold(global none, per key 1, FIFO per key (a dead job holds its key): 0"
                  + " running, 1 waiting on the limit, 0 on a worker)");
      assertThat(status.get("fifo_pass").describeFifo())
          .isEqualTo(", FIFO per key (a dead job lets the later ones pass)");
      assertThat(store.jobReplayDead(c, h1, "t")).isTrue();
      assertThat(claim(c, "fifo_hold", 10))
          .map(ClaimedJob::id)
          .as("h1 replayed")
          .containsExactly(h1);
      // ... or lets them pass (key-fifo-skip-dead).
      long p1 = jobs.enqueue("fifo_pass", once);
      long p2 = jobs.enqueue("fifo_pass", once);
      ClaimedJob passed = claim(c, "fifo_pass", 10).get(0);
      assertThat(passed.id()).isEqualTo(p1);
      assertThat(store.jobFail(c, passed, "boom", Duration.ofSeconds(1)).dead()).isTrue();
      assertThat(claim(c, "fifo_pass", 10)).map(ClaimedJob::id).containsExactly(p2);
      assertThat(h2).isPositive();
    }
  }

  @Test
  void anEngineWritesItsLimitsAtStartAndTheLastToStartWithoutThemRemovesThem() throws Exception {
    engines.start(
        engines
            .config()
            .capsule("main", 2, "published")
            .queueLimit(new QueueLimit("published", 3, 2))
            .build(),
        (job, tx) -> Outcome.complete());
    assertThat(
            db.queryLong(
                "SELECT global_concurrency * 10 + key_concurrency FROM pgbus.queue_limit"
                    + " WHERE queue = 'published'"))
        .isEqualTo(32);
    Engine other =
        engines.start(
            engines.config().capsule("main", 2, "published").build(),
            (job, tx) -> Outcome.complete());
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_limit")).isZero();
    assertThat(other.queueLimits()).isEmpty();
  }

  @Test
  void badLimitsAndKeysAreRefusedWithTheValueAndTheFixAndWriteNothing() throws Exception {
    assertThatThrownBy(() -> new QueueLimit("q", 0, null))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining("pgbus.queue.q.global-concurrency=0 is invalid: use 1 to 100000");
    assertThatThrownBy(() -> new QueueLimit("q", null, -1))
        .hasMessageContaining("pgbus.queue.q.key-concurrency=-1 is invalid");
    String longKey = "k".repeat(256);
    assertThatThrownBy(() -> EnqueueOptions.defaults().withConcurrencyKey(longKey))
        .isInstanceOf(InvalidJobException.class)
        .hasMessageContaining("256 characters long: use at most 255");
    assertThatThrownBy(() -> EnqueueOptions.defaults().withConcurrencyKey(" "))
        .hasMessageContaining("concurrency key must not be blank");

    assertThat(sqlError("SELECT pgbus.queue_limit_set('q', 0)"))
        .contains("global concurrency 0 for queue q is invalid: use 1 to 100000");
    assertThat(sqlError("SELECT pgbus.queue_limit_set('q', NULL, 100001)"))
        .contains("key concurrency 100001 for queue q is invalid");
    assertThat(sqlError("SELECT pgbus.enqueue('q', '{}', concurrency_key => repeat('k', 256))"))
        .contains("invalid concurrency key")
        .contains("256 characters");
    assertThat(
            sqlError(
                "SELECT pgbus.enqueue_many(ARRAY['q', 'q'], ARRAY['{}', '{}']::jsonb[],"
                    + " ARRAY[NULL, NULL]::timestamptz[], ARRAY[0, 0], ARRAY[25, 25],"
                    + " concurrency_keys => ARRAY['ok', ''])"))
        .contains("invalid concurrency key ''");
    assertThatThrownBy(() -> new QueueLimit("q", null, null, 100, null))
        .isInstanceOf(InvalidConfigException.class)
        .hasMessageContaining(
            "pgbus.queue.q.rate-limit=100 has no window: set pgbus.queue.q.rate-window too");
    assertThatThrownBy(() -> new QueueLimit("q", null, null, null, Duration.ofMinutes(1)))
        .hasMessageContaining("pgbus.queue.q.rate-window=1m has no rate");
    assertThatThrownBy(() -> new QueueLimit("q", null, null, 0, Duration.ofMinutes(1)))
        .hasMessageContaining("pgbus.queue.q.rate-limit=0 is invalid: use 1 to 1000000");
    assertThatThrownBy(() -> new QueueLimit("q", null, null, 5, Duration.ZERO))
        .hasMessageContaining("pgbus.queue.q.rate-window=0")
        .hasMessageContaining("is invalid: use 1ms to 1d");
    assertThat(sqlError("SELECT pgbus.queue_limit_set('q', rate_limit => 100)"))
        .contains("rate limit 100 for queue q has no window: pass rate_window too");
    assertThat(sqlError("SELECT pgbus.queue_limit_set('q', rate_limit => 0, rate_window => '1s')"))
        .contains("rate limit 0 for queue q is invalid");
    assertThat(sqlError("SELECT pgbus.queue_limit_set('q', rate_limit => 5, rate_window => '0s')"))
        .contains("is invalid: use 1 millisecond to 1 day");
    assertThat(sqlError("SELECT pgbus.queue_limit_set('q', rate_window => '1 minute')"))
        .contains("has no rate limit");
    assertThatThrownBy(() -> new QueueLimit("q", null, null, null, null, null, true))
        .hasMessageContaining(
            "pgbus.queue.q.key-fifo-skip-dead=true needs pgbus.queue.q.key-fifo=true");
    assertThatThrownBy(() -> new QueueLimit("q", null, 2, null, null, true, null))
        .hasMessageContaining("pgbus.queue.q.key-concurrency=2 contradicts pgbus.queue.q.key-fifo");
    assertThat(sqlError("SELECT pgbus.queue_limit_set('q', key_fifo_skip_dead => true)"))
        .contains("key_fifo_skip_dead for queue q needs key_fifo");
    assertThat(
            sqlError("SELECT pgbus.queue_limit_set('q', key_concurrency => 3, key_fifo => true)"))
        .contains("key concurrency 3 for queue q contradicts key_fifo");
    assertThat(db.jobCount()).isZero();
    assertThat(db.queryLong("SELECT count(*) FROM pgbus.queue_limit")).isZero();
  }

  /** The error message of a statement that must fail. */
  private static String sqlError(String sql) {
    try (Connection c = db.connect();
        var st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      return e.getMessage();
    }
    throw new AssertionError("no error from " + sql);
  }

  private List<ClaimedJob> claim(Connection c, String queue, int max) throws SQLException {
    return store.jobClaim(c, List.of(queue), max, "tester", Duration.ofMinutes(5));
  }

  /** The most runs that overlap at any moment: a sweep over starts (+1) and ends (-1). */
  static int maxOverlap(List<Run> runs) {
    var events = new ArrayList<long[]>();
    for (Run r : runs) {
      events.add(new long[] {r.start(), 1});
      events.add(new long[] {r.end(), -1});
    }
    // At equal times an end goes first: a run that ends as another starts does not overlap it.
    events.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
    int now = 0;
    int max = 0;
    for (long[] e : events) {
      now += (int) e[1];
      max = Math.max(max, now);
    }
    return max;
  }
}
