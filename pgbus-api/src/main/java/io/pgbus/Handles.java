package io.pgbus;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Binds a {@link JobHandler} bean to the queue whose jobs it runs. One handler per queue.
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
  /** The queue name. */
  String value();
}
