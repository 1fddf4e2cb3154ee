package io.pgbus.test;

import io.pgbus.Handles;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import io.pgbus.QueueNames;
import io.pgbus.engine.RunningJob;
import io.pgbus.jakarta.HandledJob;
import io.pgbus.jakarta.HandlerRegistry;
import java.lang.reflect.Type;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The handlers a plain test registers, bound to queues by {@link Handles} as the runtime binds its
 * beans, or by name; payloads are mapped with JSON-B to the handler's type argument.
 */
final class Handlers {

  private record Binding(JobHandler<Object> handler, Type payloadType) {}

  private final Map<String, Binding> byQueue = new LinkedHashMap<>();

  /** Binds a handler to the queues of its {@code @Handles}. */
  void add(JobHandler<?> handler) {
    Class<?> type = handler.getClass();
    Handles handles = type.getAnnotation(Handles.class);
    if (handles == null) {
      throw new IllegalArgumentException(
          "pgbus-test: handler "
              + type.getName()
              + " has no @Handles annotation: annotate it as in production, or register it with"
              + " handler(\"<queue>\", PayloadType.class, handler)");
    }
    Type payloadType = payloadType(type);
    for (String queue : handles.value()) {
      bind(queue, handler, payloadType);
    }
  }

  /** Binds a handler (a lambda, say) to one queue. */
  void add(String queue, Type payloadType, JobHandler<?> handler) {
    bind(queue, handler, payloadType);
  }

  private void bind(String queue, JobHandler<?> handler, Type payloadType) {
    @SuppressWarnings("unchecked")
    var binding = new Binding((JobHandler<Object>) handler, payloadType);
    Binding previous = byQueue.putIfAbsent(QueueNames.require(queue), binding);
    if (previous != null) {
      throw new IllegalArgumentException(
          "pgbus-test: queue '"
              + queue
              + "' has two handlers: "
              + handler.getClass().getName()
              + " and "
              + previous.handler().getClass().getName()
              + "; keep one");
    }
  }

  Set<String> queues() {
    return byQueue.keySet();
  }

  /** Runs the job's handler as the runtime does: the job current for {@link JdbcJobQueue}. */
  Outcome invoke(RunningJob job) throws Exception {
    Binding b = byQueue.get(job.queue());
    if (b == null) {
      throw new PgbusException(
          job.queue(), job.id(), "pgbus-test: no handler for queue '" + job.queue() + "'", null);
    }
    Object payload = HandlerRegistry.payload(Json.jsonb(), job, b.payloadType());
    return HandlerRegistry.withJsonResult(
        Json.jsonb(), HandledJob.call(job, () -> b.handler().handle(payload, job)));
  }

  /** The {@code T} of the {@code JobHandler<T>} a class implements, or Object. */
  private static Type payloadType(Class<?> type) {
    var types = new HashSet<Type>();
    for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
      types.addAll(List.of(c.getGenericInterfaces()));
    }
    return HandlerRegistry.payloadType(types);
  }
}
