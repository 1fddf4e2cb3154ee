package io.pgbus.jakarta;

import io.pgbus.engine.ClaimedJob;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Puts the job id, queue and attempt into the server's log context while a handler runs, so that
 * every line the handler logs (java.util.logging, System.Logger, or a facade over them) carries
 * them as fields: {@code pgbus_job_id}, {@code pgbus_queue}, {@code pgbus_attempt}.
 *
 * <ul>
 *   <li>Open Liberty: {@code com.ibm.websphere.logging.hpel.LogRecordContext} (an ibm-api package,
 *       visible to applications). JSON logging shows its entries as {@code ext_pgbus_job_id} etc.
 *   <li>WildFly: {@code org.jboss.logging.MDC} (an implicit module of every deployment). The json
 *       formatter shows it under {@code "mdc"}, a pattern formatter with {@code %X{pgbus_job_id}}.
 * </ul>
 *
 * <p>Both are found reflectively, so pgbus compiles against neither and runs on servers that have
 * neither (then this does nothing). Entries are removed when the handler returns or throws.
 */
final class JobLogFields {

  static final String JOB_ID = "pgbus_job_id";
  static final String QUEUE = "pgbus_queue";
  static final String ATTEMPT = "pgbus_attempt";

  /** The contexts found: put(String, String-or-Object) and remove(String) of each. */
  private record Context(MethodHandle put, MethodHandle remove) {}

  private final List<Context> contexts;

  private JobLogFields(List<Context> contexts) {
    this.contexts = contexts;
  }

  /** The log contexts that {@code loader} can see. */
  static JobLogFields of(ClassLoader loader) {
    var found = new ArrayList<Context>();
    // static void addExtension(String, String); static boolean removeExtension(String)
    find(
            loader,
            "com.ibm.websphere.logging.hpel.LogRecordContext",
            "addExtension",
            MethodType.methodType(void.class, String.class, String.class),
            "removeExtension",
            MethodType.methodType(boolean.class, String.class))
        .ifPresent(found::add);
    // static Object put(String, Object); static void remove(String)
    find(
            loader,
            "org.jboss.logging.MDC",
            "put",
            MethodType.methodType(Object.class, String.class, Object.class),
            "remove",
            MethodType.methodType(void.class, String.class))
        .ifPresent(found::add);
    return new JobLogFields(List.copyOf(found));
  }

  /** Whether any server log context was found. */
  boolean active() {
    return !contexts.isEmpty();
  }

  /** Adds the job's fields to the current thread's log context. */
  void enter(ClaimedJob job) {
    for (Context c : contexts) {
      try {
        c.put().invoke(JOB_ID, Long.toString(job.id()));
        c.put().invoke(QUEUE, job.queue());
        c.put().invoke(ATTEMPT, Integer.toString(job.attempt()));
      } catch (Throwable e) {
        // Logging context is a convenience: never fail a job for it.
      }
    }
  }

  /** Removes them again. */
  void exit() {
    for (Context c : contexts) {
      try {
        c.remove().invoke(JOB_ID);
        c.remove().invoke(QUEUE);
        c.remove().invoke(ATTEMPT);
      } catch (Throwable e) {
        // As above.
      }
    }
  }

  private static Optional<Context> find(
      ClassLoader loader,
      String className,
      String put,
      MethodType putType,
      String remove,
      MethodType removeType) {
    try {
      Class<?> type = Class.forName(className, true, loader);
      MethodHandles.Lookup lookup = MethodHandles.publicLookup();
      return Optional.of(
          new Context(
              lookup
                  .findStatic(type, put, putType)
                  .asType(MethodType.methodType(void.class, String.class, String.class)),
              lookup
                  .findStatic(type, remove, removeType)
                  .asType(MethodType.methodType(void.class, String.class))));
    } catch (ReflectiveOperationException | LinkageError e) {
      return Optional.empty();
    }
  }
}
