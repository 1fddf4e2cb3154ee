package io.pgbus.jakarta;

import io.pgbus.Handles;
import io.pgbus.JobHandler;
import io.pgbus.JobTransaction;
import io.pgbus.Outcome;
import io.pgbus.PgbusException;
import io.pgbus.QueueNames;
import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.QueuePolicy;
import io.pgbus.engine.RunningJob;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Finds every {@link JobHandler} bean, binds it to the queue named by its {@link Handles}, and runs
 * jobs through it with the payload mapped by JSON-B to the handler's type argument.
 */
@ApplicationScoped
public class HandlerRegistry {

  private record Binding(Instance.Handle<JobHandler<?>> handle, Type payloadType) {}

  @Inject @Any Instance<JobHandler<?>> handlers;

  private final Map<String, Binding> byQueue = new HashMap<>();
  private final List<QueuePolicy> policies = new ArrayList<>();
  private final Set<String> handlerTransactions = new HashSet<>();
  private Jsonb jsonb;

  @PostConstruct
  void discover() {
    jsonb = JsonbBuilder.create();
    for (Instance.Handle<JobHandler<?>> handle : handlers.handles()) {
      Bean<JobHandler<?>> bean = handle.getBean();
      Class<?> type = bean.getBeanClass();
      Handles handles = type.getAnnotation(Handles.class);
      if (handles == null) {
        throw new PgbusException(
            "pgbus: handler "
                + type.getName()
                + " has no @Handles annotation; add"
                + " @Handles(\"<queue>\") to bind it to a queue");
      }
      var binding = new Binding(handle, payloadType(bean.getTypes()));
      for (String queue : handles.value()) {
        QueuePolicy policy = policy(QueueNames.require(queue), handles, type);
        if (!policy.isEmpty()) {
          policies.add(policy);
        }
        if (handles.transaction() == JobTransaction.HANDLER) {
          handlerTransactions.add(queue);
        }
        Binding previous = byQueue.put(QueueNames.require(queue), binding);
        if (previous != null) {
          throw new PgbusException(
              "pgbus: queue '"
                  + queue
                  + "' has two handlers: "
                  + type.getName()
                  + " and "
                  + previous.handle().getBean().getBeanClass().getName()
                  + "; keep one");
        }
      }
    }
  }

  @PreDestroy
  void close() {
    JsonbRelease.release(jsonb);
  }

  /**
   * The policy the attributes of {@code handles} give {@code queue}, read as if they were its
   * pgbus.queue.<name>.* keys, so they are checked exactly as those are; an error names the handler
   * and the attribute.
   */
  static QueuePolicy policy(String queue, Handles handles, Class<?> type) {
    var attributes = new HashMap<String, String>();
    var values = new HashMap<String, String>();
    put(attributes, values, queue, "job-timeout", "jobTimeout", handles.jobTimeout());
    put(
        attributes,
        values,
        queue,
        "max-attempts",
        "maxAttempts",
        handles.maxAttempts() == 0 ? "" : Integer.toString(handles.maxAttempts()));
    put(attributes, values, queue, "retry.base", "retryBase", handles.retryBase());
    put(attributes, values, queue, "retry.cap", "retryCap", handles.retryCap());
    try {
      return PgbusSettings.queuePolicy(queue, key -> Optional.ofNullable(values.get(key)));
    } catch (InvalidConfigException e) {
      String attribute =
          attributes.entrySet().stream()
              .filter(a -> e.getMessage().contains(a.getKey()))
              .map(Map.Entry::getValue)
              .findFirst()
              .orElse("an attribute");
      throw new PgbusException(
          "pgbus: handler "
              + type.getName()
              + ": @Handles("
              + attribute
              + ") for queue '"
              + queue
              + "' is invalid ("
              + e.keyedMessage()
              + "); fix the annotation, or override it with the configuration key");
    }
  }

  private static void put(
      Map<String, String> attributes,
      Map<String, String> values,
      String queue,
      String suffix,
      String attribute,
      String value) {
    if (!value.isEmpty()) {
      String key = QueuePolicy.KEY_PREFIX + queue + "." + suffix;
      attributes.put(key, attribute + " = \"" + value + "\"");
      values.put(key, value.strip());
    }
  }

  /** What the {@link Handles} attributes set for their queues; config keys win over them. */
  public List<QueuePolicy> policies() {
    return List.copyOf(policies);
  }

  /**
   * The queues whose handler declares {@code transaction = JobTransaction.HANDLER}: it runs outside
   * any transaction of pgbus's.
   */
  public Set<String> handlerTransactions() {
    return Set.copyOf(handlerTransactions);
  }

  /**
   * Each queue's handler in this application, by the handler bean's class name (the admin API's
   * search by handler, {@code GET jobs?handler=}).
   */
  public Map<String, String> handlerClasses() {
    var out = new java.util.TreeMap<String, String>();
    byQueue.forEach((q, b) -> out.put(q, b.handle().getBean().getBeanClass().getName()));
    return out;
  }

  /** The queues that have a handler. */
  public Set<String> queues() {
    return Collections.unmodifiableSet(byQueue.keySet());
  }

  /**
   * Runs the job's handler in the caller's (the job's) transaction, or in none for a queue of
   * {@link #handlerTransactions()}, with the job current on the thread for the call ({@link
   * HandledJob}). Public for pgbus-test, whose in-container worker resolves handlers exactly as the
   * runtime does.
   */
  public Outcome invoke(RunningJob job) throws Exception {
    Binding b = byQueue.get(job.queue());
    if (b == null) {
      throw new PgbusException(
          job.queue(),
          job.id(),
          "pgbus: no handler for queue '"
              + job.queue()
              + "'; add a bean that implements"
              + " JobHandler and carries @Handles(\""
              + job.queue()
              + "\")",
          null);
    }
    Object payload = payload(jsonb, job, b.payloadType());
    @SuppressWarnings("unchecked")
    JobHandler<Object> handler = (JobHandler<Object>) b.handle().get();
    return withJsonResult(jsonb, HandledJob.call(job, () -> handler.handle(payload, job)));
  }

  /**
   * Why {@code payload} does not map onto the payload type of {@code queue}'s handler, or null when
   * it maps (or the queue has no handler here): the deploy gate's question, answered by the same
   * JSON-B mapping {@link #invoke} does before a handler runs. The reason is cut to {@value
   * #MISMATCH_MAX} characters: it quotes a payload that is user data of any size.
   */
  public String payloadMismatch(String queue, String payload) {
    Binding b = byQueue.get(queue);
    return b == null ? null : payloadMismatch(jsonb, b.payloadType(), payload);
  }

  /** Why {@code payload} does not map onto {@code type} with {@code jsonb}; null when it does. */
  static String payloadMismatch(Jsonb jsonb, Type type, String payload) {
    try {
      jsonb.fromJson(payload, type);
      return null;
    } catch (RuntimeException e) {
      return bounded(type.getTypeName() + ": " + e.getMessage());
    }
  }

  // A JSON-B implementation may quote the payload in its message: user data of any size.
  static String bounded(String why) {
    return why.length() <= MISMATCH_MAX ? why : why.substring(0, MISMATCH_MAX) + "...";
  }

  static final int MISMATCH_MAX = 300;

  /**
   * A result object mapped to JSON text with JSON-B, as payloads are; the engine stores only JSON
   * text. Shared with pgbus-test.
   */
  public static Outcome withJsonResult(Jsonb jsonb, Outcome outcome) {
    if (outcome == null || outcome.result() == null) {
      return outcome;
    }
    return Outcome.completeJson(jsonb.toJson(outcome.result()));
  }

  /**
   * The job's payload mapped to {@code type}; a payload that does not map fails the attempt with a
   * message naming the job and the type. Shared with pgbus-test, whose handlers get their payloads
   * as the runtime's do.
   */
  public static Object payload(Jsonb jsonb, RunningJob job, Type type) {
    try {
      return jsonb.fromJson(job.payload(), type);
    } catch (RuntimeException e) {
      throw new PgbusException(
          job.queue(),
          job.id(),
          "pgbus: payload of job "
              + job.id()
              + " does not map to "
              + type.getTypeName()
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /**
   * The payload type of a handler with these types: the {@code T} of its {@code JobHandler<T>}, or
   * Object. Shared with pgbus-test.
   */
  public static Type payloadType(Set<Type> beanTypes) {
    for (Type t : beanTypes) {
      if (t instanceof ParameterizedType p && p.getRawType() == JobHandler.class) {
        Type arg = p.getActualTypeArguments()[0];
        return arg instanceof Class<?> || arg instanceof ParameterizedType ? arg : Object.class;
      }
    }
    return Object.class;
  }
}
