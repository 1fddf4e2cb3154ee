package io.pgbus;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Binds a {@link JobHandler} bean to the queues whose jobs it runs. A queue has at most one
 * handler; a handler may serve several queues.
 *
 * <pre>{@code
 * @ApplicationScoped
 * @Handles("emails")
 * public class EmailHandler implements JobHandler<Email> { ... }
 * }</pre>
 *
 * <p>The other attributes set the execution policy of these queues, overriding the global settings;
 * left at their defaults they override nothing. MicroProfile Config wins over them, attribute by
 * attribute: {@code pgbus.queue.<name>.job-timeout}, {@code .max-attempts}, {@code .retry.base} and
 * {@code .retry.cap}. Durations are written as in the configuration ({@code 500ms}, {@code 30s},
 * {@code 5m}, {@code 2h}, {@code PT30S}); a bad value fails the deployment with a message that
 * names the handler and the value.
 *
 * <pre>{@code
 * @Handles(value = "exports", jobTimeout = "20m", maxAttempts = 3, retryBase = "1m")
 * }</pre>
 *
 * <p>A handler whose jobs run longer than a transaction may last declares {@code transaction =
 * JobTransaction.HANDLER}: it then opens its own transactions, and the job's completion is
 * committed on its own (see {@link JobTransaction#HANDLER} for the trade-off).
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface Handles {
  /** The queue names. */
  String[] value();

  /**
   * How long a handler of these queues may run before it is interrupted; shorter than {@code
   * pgbus.lease}. Empty: {@code pgbus.job-timeout}.
   */
  String jobTimeout() default "";

  /**
   * The attempts of a job enqueued to these queues without {@link EnqueueOptions#withMaxAttempts},
   * 1 to 1000. 0: {@value EnqueueOptions#DEFAULT_MAX_ATTEMPTS}. Applies where the job is enqueued,
   * so in the JVM that enqueues it.
   */
  int maxAttempts() default 0;

  /** The first backoff after a failed attempt. Empty: {@code pgbus.retry.base}. */
  String retryBase() default "";

  /** The longest backoff. Empty: {@code pgbus.retry.cap}. */
  String retryCap() default "";

  /**
   * Which transaction the handler runs in: {@link JobTransaction#CONTAINER} (one per attempt, the
   * job's completion included) or {@link JobTransaction#HANDLER} (its own, for jobs longer than a
   * transaction).
   */
  JobTransaction transaction() default JobTransaction.CONTAINER;
}
