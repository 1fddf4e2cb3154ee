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
 */
package io.pgbus.engine;
