package io.pgbus.jakarta.admin;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobFilter;
import io.pgbus.engine.FairShare;
import io.pgbus.engine.InvalidConfigException;
import io.pgbus.engine.QueueLimit;
import io.pgbus.engine.QueueLimits;
import io.pgbus.jakarta.CallerTransaction;
import jakarta.annotation.security.RolesAllowed;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import jakarta.json.bind.annotation.JsonbNillable;
import jakarta.json.bind.annotation.JsonbPropertyOrder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.UriInfo;
import java.io.StringReader;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code queues/{queue}/limit}: a queue's flow control as stored and its audited changes ({@code
 * GET}), and a live change by an admin ({@code POST}, CSRF like every action) through {@link
 * QueueLimits}: the new limits replace the old for the whole fleet at once, and the change is
 * audited with the caller and the limits before and after. The parameters are checked here with
 * messages that name them, and again by pgbus.queue_limit_set in SQL. Public only because JAX-RS
 * and JSON-B reach it by reflection; {@link AdminResource} makes one per request.
 */
@RolesAllowed({AdminResource.VIEWER, AdminResource.ADMIN})
public final class QueueLimitResource {

  /** The parameters of a change; any other is refused, so a misspelled one cannot clear a limit. */
  static final Set<String> PARAMS =
      Set.of(
          "globalConcurrency",
          "keyConcurrency",
          "rateLimit",
          "rateWindowMs",
          "keyFifo",
          "keyFifoSkipDead");

  /** How many audited changes {@code GET} lists. */
  static final int HISTORY = 20;

  private final AdminCall call;
  private final CallerTransaction transaction;
  private final String queue;
  private final QueueLimits limits = new QueueLimits();

  QueueLimitResource(AdminCall call, CallerTransaction transaction, String queue) {
    this.call = call;
    this.transaction = transaction;
    this.queue = queue;
  }

  @GET
  @Produces(MediaType.APPLICATION_JSON)
  public Response read() {
    return call.read(
        () -> {
          JobFilter.all().withQueue(queue); // the same bound and message as a search's
          return AdminCall.ok(
              sql(
                  c ->
                      LimitStateJson.of(
                          queue,
                          LimitValuesJson.of(limits.read(c, queue)),
                          limits.fairShares(c).get(queue),
                          limits.history(c, queue, HISTORY).stream()
                              .map(LimitAuditJson::of)
                              .toList())));
        });
  }

  /**
   * Replaces the queue's limits with the parameters given ({@link #PARAMS}); none given removes
   * them. Answers {@code {"queue":..,"action":"limit","changed":..,"before":..,"after":..}}.
   */
  @POST
  @Produces(MediaType.APPLICATION_JSON)
  @RolesAllowed(AdminResource.ADMIN)
  public Response change(@Context UriInfo uri) {
    return call.act(
        () -> {
          JobFilter.all().withQueue(queue);
          QueueLimit wanted = wanted(queue, uri.getQueryParameters());
          String actor = call.user();
          QueueLimits.Change change = sql(c -> limits.change(c, wanted, actor));
          return AdminCall.ok(
              new LimitChangeJson(
                  queue,
                  "limit",
                  change.changed(),
                  LimitValuesJson.of(change.before()),
                  LimitValuesJson.of(change.after())));
        });
  }

  /** The limits the parameters ask for, each checked with a message that names it. */
  static QueueLimit wanted(String queue, MultivaluedMap<String, String> q) {
    for (String name : q.keySet()) {
      if (!PARAMS.contains(name)) {
        throw new InvalidFilterException(
            name,
            q.getFirst(name),
            "not a limit: use globalConcurrency, keyConcurrency, rateLimit, rateWindowMs, keyFifo"
                + " or keyFifoSkipDead (none: remove the limits)");
      }
    }
    Integer global = bounded(q, "globalConcurrency", QueueLimit.MAX, "running jobs of the queue");
    Integer key = bounded(q, "keyConcurrency", QueueLimit.MAX, "running jobs per concurrency key");
    Integer rate = bounded(q, "rateLimit", QueueLimit.MAX_RATE, "job starts per window");
    Integer windowMs =
        bounded(
            q,
            "rateWindowMs",
            (int) QueueLimit.MAX_RATE_WINDOW.toMillis(),
            "milliseconds (1 ms to 1 day)");
    Boolean fifo = bool(q, "keyFifo");
    Boolean skip = bool(q, "keyFifoSkipDead");
    if (rate != null && windowMs == null) {
      throw new InvalidFilterException(
          "rateWindowMs", null, "give the window of rateLimit " + rate + ", such as 60000");
    }
    if (windowMs != null && rate == null) {
      throw new InvalidFilterException(
          "rateLimit", null, "give the job starts allowed per window of " + windowMs + " ms");
    }
    if (Boolean.TRUE.equals(skip) && !Boolean.TRUE.equals(fifo)) {
      throw new InvalidFilterException(
          "keyFifoSkipDead",
          true,
          "needs keyFifo=true: without FIFO per key a dead job holds nothing");
    }
    if (Boolean.TRUE.equals(fifo) && key != null && key != 1) {
      throw new InvalidFilterException(
          "keyConcurrency",
          key,
          "keyFifo=true starts a key's jobs one at a time: leave it out or 1");
    }
    try {
      return new QueueLimit(
          queue,
          global,
          key,
          rate,
          windowMs == null ? null : Duration.ofMillis(windowMs),
          fifo,
          skip);
    } catch (InvalidConfigException e) {
      throw new InvalidFilterException("limit", null, e.getMessage());
    }
  }

  private static Integer bounded(
      MultivaluedMap<String, String> q, String name, int max, String unit) {
    String v = q.getFirst(name);
    if (v == null || v.isEmpty()) {
      return null;
    }
    long n;
    try {
      n = Long.parseLong(v.strip());
    } catch (NumberFormatException e) {
      n = -1;
    }
    if (n < 1 || n > max) {
      throw new InvalidFilterException(name, v, "use 1 to " + max + " " + unit);
    }
    return (int) n;
  }

  private static Boolean bool(MultivaluedMap<String, String> q, String name) {
    String v = q.getFirst(name);
    if (v == null || v.isEmpty()) {
      return null;
    }
    return switch (v) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new InvalidFilterException(name, v, "use true or false");
    };
  }

  /** Work on one connection of the JTA datasource, in the caller's transaction or its own. */
  private <T> T sql(CallerTransaction.Work<T> work) {
    try {
      return transaction.run(work);
    } catch (SQLException e) {
      // pgbus.queue_limit_set's own checks (22023): the Java ones above should have caught them.
      if ("22023".equals(e.getSQLState())) {
        throw new InvalidFilterException("limit", null, e.getMessage());
      }
      throw new IllegalStateException("pgbus: could not change the limits of " + queue, e);
    }
  }

  /** The queue's limits as stored (null: none) and its latest audited changes, newest first. */
  @JsonbNillable
  @JsonbPropertyOrder({"queue", "limit", "fairKey", "fairWeights", "history"})
  public record LimitStateJson(
      String queue,
      LimitValuesJson limit,
      String fairKey,
      Map<String, Integer> fairWeights,
      List<LimitAuditJson> history) {

    /**
     * With the queue's fair share (V50): {@code fairKey} {@code concurrency-key} and {@code
     * fairWeights} the named tenants' weights in tenant order ({@code {}}: all weigh 1); both null
     * when the queue is served oldest first.
     */
    static LimitStateJson of(
        String queue, LimitValuesJson limit, FairShare fair, List<LimitAuditJson> history) {
      return new LimitStateJson(
          queue,
          limit,
          fair == null ? null : FairShare.CONCURRENCY_KEY,
          fair == null ? null : new TreeMap<>(fair.weights()),
          history);
    }
  }

  /** What a change did. */
  @JsonbNillable
  @JsonbPropertyOrder({"queue", "action", "changed", "before", "after"})
  public record LimitChangeJson(
      String queue,
      String action,
      boolean changed,
      LimitValuesJson before,
      LimitValuesJson after) {}

  /** One audited change: when, who, and the limits before and after (null: none). */
  @JsonbNillable
  @JsonbPropertyOrder({"at", "actor", "before", "after"})
  public record LimitAuditJson(
      String at, String actor, LimitValuesJson before, LimitValuesJson after) {
    static LimitAuditJson of(QueueLimits.Entry e) {
      JsonObject detail;
      try (JsonReader r = Json.createReader(new StringReader(e.detail()))) {
        detail = r.readObject();
      }
      return new LimitAuditJson(
          e.at().toString(),
          e.actor(),
          LimitValuesJson.of(detail.get("before")),
          LimitValuesJson.of(detail.get("after")));
    }
  }

  /**
   * A queue's limits as stored: {@code keyConcurrency} null means 1, {@code rateLimit} and {@code
   * rateWindowMs} are null without a rate limit.
   */
  @JsonbNillable
  @JsonbPropertyOrder({
    "globalConcurrency",
    "keyConcurrency",
    "rateLimit",
    "rateWindowMs",
    "keyFifo",
    "keyFifoSkipDead"
  })
  public record LimitValuesJson(
      Integer globalConcurrency,
      Integer keyConcurrency,
      Integer rateLimit,
      Long rateWindowMs,
      boolean keyFifo,
      boolean keyFifoSkipDead) {

    static LimitValuesJson of(QueueLimit l) {
      if (l == null) {
        return null;
      }
      return new LimitValuesJson(
          l.globalConcurrency(),
          l.keyConcurrency(),
          l.rateLimit(),
          l.rateWindow() == null ? null : l.rateWindow().toMillis(),
          l.fifo(),
          l.fifoSkipsDead());
    }

    static LimitValuesJson of(JsonValue v) {
      if (v == null || v.getValueType() != JsonValue.ValueType.OBJECT) {
        return null;
      }
      JsonObject o = v.asJsonObject();
      return new LimitValuesJson(
          integer(o, "globalConcurrency"),
          integer(o, "keyConcurrency"),
          integer(o, "rateLimit"),
          o.isNull("rateWindowMs") ? null : o.getJsonNumber("rateWindowMs").longValue(),
          o.getBoolean("keyFifo", false),
          o.getBoolean("keyFifoSkipDead", false));
    }

    private static Integer integer(JsonObject o, String name) {
      return !o.containsKey(name) || o.isNull(name) ? null : o.getInt(name);
    }
  }
}
