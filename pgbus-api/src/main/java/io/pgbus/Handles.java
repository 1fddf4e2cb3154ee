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
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface Handles {
  /** The queue names. */
  String[] value();
}
