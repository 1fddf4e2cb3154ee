/**
 * The pgbus engine: plain Java over JDBC, free of container APIs.
 *
 * <p>{@link io.pgbus.engine.Engine} wires the roles together: {@link io.pgbus.engine.Notifier} owns
 * the one LISTEN connection and turns notifications into {@link io.pgbus.engine.Wake}s; each {@link
 * io.pgbus.engine.Capsule} claims for its ordered queues and hands jobs to the {@link
 * io.pgbus.engine.JobRunner}; the {@link io.pgbus.engine.Maintainer} rescues expired leases, prunes
 * old jobs and enqueues due cron runs ({@link io.pgbus.engine.CronJob}) on the leader the {@link
 * io.pgbus.engine.Elector} chose; the {@link io.pgbus.engine.Ticker} is the one safety-net poll per
 * JVM, and the {@link io.pgbus.engine.Watchdog} interrupts handlers past their timeout. All SQL for
 * the job table lives in {@link io.pgbus.engine.JobStore}. Every long-running loop is a {@link
 * io.pgbus.engine.Loop}: started once, stopped at any time, sleeping on a {@link
 * io.pgbus.engine.WakeSignal} that a stop rings. The container adapters plug in through three
 * ports: {@link io.pgbus.engine.Transactions}, {@link io.pgbus.engine.ListenerConnections} and
 * {@link io.pgbus.engine.JobFunction}. {@link io.pgbus.engine.SyncRunner} runs jobs and cron ticks
 * on the caller's thread for the test kit (pgbus-test), through the same claim and runner.
 *
 * <p>{@link io.pgbus.engine.Jobs} holds the job operations (enqueue, pause, cancel, replay, the
 * audit trail) on the caller's connection; it needs no running engine. Each role reads its own
 * small config record ({@link io.pgbus.engine.TickerConfig}, {@link
 * io.pgbus.engine.ListenerConfig}, ...), gathered in {@link io.pgbus.engine.EngineConfig}; each
 * record declares its keys as {@link io.pgbus.engine.Setting}s and names them in its errors.
 *
 * <h2>The files, by what they are for</h2>
 *
 * <p>No class of this package reads a thread-local: what a handler may ask is passed to it ({@code
 * RunningJob}), and the job that enqueues another is named in the request ({@code
 * NewJob.parentJobId}).
 *
 * <dl>
 *   <dt>Wiring and the loop idiom
 *   <dd>{@code Engine} (builds and runs the roles), {@code EngineThreads}, {@code EngineStatus}
 *       (the one snapshot readiness, metrics and the admin API read), {@code Loop}, {@code
 *       WakeSignal}, {@code ErrorBackoff} (every retry's waits), {@code IdleBackoff}, {@code
 *       StopLog}, {@code WorkerIds}, {@code Durations}.
 *   <dt>Ports to the container
 *   <dd>{@code Transactions} ({@code JdbcTransactions} in Java SE), {@code ListenerConnections},
 *       {@code JobFunction}, {@code JobTracing}, {@code JobEvents}.
 *   <dt>Waking
 *   <dd>{@code Notifier} (the LISTEN connection), {@code Channels} (every NOTIFY channel's name),
 *       {@code Wake}, {@code ListenerState}, {@code Ticker} (the tick: poll, heartbeat, probe,
 *       leader lease), {@code NodeReporter}.
 *   <dt>Claiming
 *   <dd>{@code Capsule} (a worker group and its loop), {@code ClaimReasons} (why it claims), {@code
 *       Slots} (busy slots, held jobs), {@code Claimer} (the claim statement), {@code ClaimFloors},
 *       {@code Grouping}, {@code ClaimedJob} (a claimed row, a plain value).
 *   <dt>Running a job
 *   <dd>{@code BatchRunner} (several jobs in one transaction), {@code JobRunner} (one attempt: the
 *       handler, its outcome, a failure's record), {@code RunningJob} (the handler's {@code
 *       JobContext}), {@code JobProgress}, {@code Watchdog} (timeouts and cancels), {@code
 *       RunningStatement}, {@code RetryPolicy}, {@code ErrorDetail}, {@code SyncRunner}.
 *   <dt>Cancelling a running job
 *   <dd>{@code CancelRequest}, {@code HeardCancels}, {@code EarlyCancels}, {@code
 *       ThrottledWarning}.
 *   <dt>The leader's upkeep
 *   <dd>{@code Elector}, {@code Maintainer} (its tasks: rescue, prune, schedules), {@code
 *       ScheduleEnqueuer}.
 *   <dt>Job operations and schedules, on the caller's connection
 *   <dd>{@code Jobs}, {@code NewJob}, {@code TraceContext}, {@code ScheduleBook}, {@code CronJob},
 *       {@code CronSchedule}, {@code Failures}.
 *   <dt>SQL, one store per table or concern
 *   <dd>{@code JobStore}, {@code JobAdminStore}, {@code LinkStore} (batches and dependencies),
 *       {@code QueueStore}, {@code QueueLimitStore}, {@code LeaderStore}, {@code NodeStore}, {@code
 *       FleetStore}, {@code ScheduleStore}, {@code AuditStore}, {@code SettingStore}, {@code
 *       ArchiveStore} (finished jobs into pgbus.job_history, V33).
 *   <dt>Schema
 *   <dd>{@code Schema}, {@code SchemaMigrator}, {@code MigrationDataSource}.
 *   <dt>Configuration
 *   <dd>{@code EngineConfig}, {@code ExecutionConfig}, {@code CapsuleConfig}, {@code TickerConfig},
 *       {@code ListenerConfig}, {@code ElectorConfig}, {@code MaintainerConfig}, {@code
 *       RetentionConfig}, {@code QueuePolicy}, {@code QueueLimit}, {@code Setting}, {@code
 *       SettingSource}, {@code InvalidConfigException} (the one refusal type, the adapter's too).
 *   <dt>What operators read
 *   <dd>{@code Doctor}, {@code DatabaseProblem}, {@code QueueLimitStatus}.
 * </dl>
 */
package io.pgbus.engine;
