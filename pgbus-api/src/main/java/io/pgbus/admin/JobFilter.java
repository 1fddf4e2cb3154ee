package io.pgbus.admin;

import io.pgbus.InvalidJobException;
import io.pgbus.QueueNames;
import java.time.Instant;
import java.util.Collection;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which jobs a search or a bulk action looks at: every condition set must hold, and an unset one
 * matches everything. Immutable; each {@code with} method checks its value and returns a copy.
 *
 * <pre>{@code
 * JobFilter.all().withQueue("payments").withStates(JobState.DEAD).withPayloadContaining("{\"order\":42}")
 * }</pre>
 *
 * <p>Bounds, checked here with an {@link InvalidFilterException} that names the field: the queue
 * follows {@link QueueNames}; a unique key has 1 to {@value #MAX_UNIQUE_KEY} characters; the
 * payload filter is a JSON object of at most {@value #MAX_PAYLOAD_FILTER} characters, matched with
 * jsonb containment ({@code payload @> filter}: {@code {"order":42}} finds every job whose payload
 * has {@code order} 42, whatever else it holds); the time range is on the creation time, from
 * inclusive to exclusive, and from must be before to; a list of ids holds 1 to {@value #MAX_IDS}
 * positive ids (a page's selection); an error filter has {@value #MIN_ERROR_FILTER} to {@value
 * #MAX_ERROR_FILTER} characters and matches, without regard to case, the text of a job's latest
 * error; like a payload filter it looks only at the jobs of a bounded creation window ({@link
 * JobAdmin#search}).
 */
public final class JobFilter {

  /** The longest unique key accepted, as in {@code pgbus.job.unique_key}. */
  public static final int MAX_UNIQUE_KEY = 255;

  /** The longest payload filter accepted, in characters. */
  public static final int MAX_PAYLOAD_FILTER = 1000;

  /** The most queues one filter lists ({@link #withQueues}). */
  public static final int MAX_QUEUES = 100;

  /** The most ids one filter lists: a page of a search. */
  public static final int MAX_IDS = JobAdmin.MAX_PAGE;

  /** The shortest error filter: shorter ones match nearly everything. */
  public static final int MIN_ERROR_FILTER = 3;

  /** The longest error filter accepted, in characters. */
  public static final int MAX_ERROR_FILTER = 200;

  private static final JobFilter ALL =
      new JobFilter(null, null, null, null, null, null, null, null, null, null);

  private final Long id;
  private final String queue;
  private final Set<JobState> states;
  private final String uniqueKey;
  private final String payloadContains;
  private final Instant createdFrom;
  private final Instant createdTo;
  private final Set<Long> ids;
  private final String errorContains;
  private final Set<String> queues;

  private JobFilter(
      Long id,
      String queue,
      Set<JobState> states,
      String uniqueKey,
      String payloadContains,
      Instant createdFrom,
      Instant createdTo,
      Set<Long> ids,
      String errorContains,
      Set<String> queues) {
    this.id = id;
    this.queue = queue;
    this.states = states;
    this.uniqueKey = uniqueKey;
    this.payloadContains = payloadContains;
    this.createdFrom = createdFrom;
    this.createdTo = createdTo;
    this.ids = ids;
    this.errorContains = errorContains;
    this.queues = queues;
  }

  /** Matches every job. */
  public static JobFilter all() {
    return ALL;
  }

  /** Matches the one job with this id. */
  public static JobFilter byId(long id) {
    return ALL.withId(id);
  }

  public JobFilter withId(long id) {
    if (id < 1) {
      throw new InvalidFilterException("id", id, "job ids are positive numbers");
    }
    return new JobFilter(
        id,
        queue,
        states,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        ids,
        errorContains,
        queues);
  }

  public JobFilter withQueue(String queue) {
    try {
      QueueNames.require(queue);
    } catch (InvalidJobException e) {
      throw new InvalidFilterException(
          "queue",
          queue,
          "use a lower-case letter followed by lower-case letters, digits or"
              + " '_', at most "
              + QueueNames.MAX_LENGTH
              + " characters");
    }
    return new JobFilter(
        id,
        queue,
        states,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        ids,
        errorContains,
        queues);
  }

  /**
   * Jobs of any of these queues: 1 to {@value #MAX_QUEUES} queue names, each checked as {@link
   * #withQueue} checks one. The admin API's search by handler gives the queues the handler is bound
   * to. With {@link #withQueue} too, a job must match both.
   */
  public JobFilter withQueues(Collection<String> queues) {
    if (queues == null || queues.isEmpty() || queues.size() > MAX_QUEUES) {
      throw new InvalidFilterException(
          "queues",
          queues == null ? "" : queues.size() + " queues",
          "give 1 to " + MAX_QUEUES + " queue names");
    }
    var s = new TreeSet<String>();
    for (String q : queues) {
      s.add(withQueue(q).queue);
    }
    return new JobFilter(
        id,
        queue,
        states,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        ids,
        errorContains,
        Set.copyOf(s));
  }

  public JobFilter withStates(JobState first, JobState... more) {
    EnumSet<JobState> s = EnumSet.of(Objects.requireNonNull(first, "state"), more);
    return withStates(s);
  }

  /** Jobs in any of these states; an empty collection is refused (it would match nothing). */
  public JobFilter withStates(Collection<JobState> states) {
    if (states == null || states.isEmpty()) {
      throw new InvalidFilterException("state", "", "give at least one state, or no state filter");
    }
    Set<JobState> s = Set.copyOf(EnumSet.copyOf(states));
    return new JobFilter(
        id,
        queue,
        s,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        ids,
        errorContains,
        queues);
  }

  public JobFilter withUniqueKey(String uniqueKey) {
    if (uniqueKey == null || uniqueKey.isEmpty() || uniqueKey.length() > MAX_UNIQUE_KEY) {
      throw new InvalidFilterException(
          "uniqueKey", uniqueKey, "use 1 to " + MAX_UNIQUE_KEY + " characters");
    }
    return new JobFilter(
        id,
        queue,
        states,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        ids,
        errorContains,
        queues);
  }

  /**
   * Jobs whose payload contains this JSON object (jsonb {@code @>}). The database checks that it is
   * JSON; a filter that is not is refused with the field {@code payload}.
   */
  public JobFilter withPayloadContaining(String jsonObject) {
    if (jsonObject == null || jsonObject.length() > MAX_PAYLOAD_FILTER) {
      throw new InvalidFilterException(
          "payload",
          jsonObject,
          "use a JSON object of at most " + MAX_PAYLOAD_FILTER + " characters");
    }
    if (!jsonObject.strip().startsWith("{")) {
      throw new InvalidFilterException(
          "payload", jsonObject, "use a JSON object such as {\"order\":42}");
    }
    return new JobFilter(
        id,
        queue,
        states,
        uniqueKey,
        jsonObject,
        createdFrom,
        createdTo,
        ids,
        errorContains,
        queues);
  }

  /** Jobs created at or after {@code from} and before {@code to}; either may be null (open). */
  public JobFilter withCreated(Instant from, Instant to) {
    if (from != null && to != null && !from.isBefore(to)) {
      throw new InvalidFilterException(
          "createdFrom", from, "must be before createdTo (" + to + ")");
    }
    return new JobFilter(
        id, queue, states, uniqueKey, payloadContains, from, to, ids, errorContains, queues);
  }

  /** Jobs with one of these ids: a selection of 1 to {@value #MAX_IDS} jobs, each a positive id. */
  public JobFilter withIds(Collection<Long> ids) {
    if (ids == null || ids.isEmpty() || ids.size() > MAX_IDS) {
      throw new InvalidFilterException(
          "ids", ids == null ? "" : ids.size() + " ids", "give 1 to " + MAX_IDS + " job ids");
    }
    var s = new TreeSet<Long>();
    for (Long i : ids) {
      if (i == null || i < 1) {
        throw new InvalidFilterException("ids", i, "job ids are positive numbers");
      }
      s.add(i);
    }
    return new JobFilter(
        id,
        queue,
        states,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        Set.copyOf(s),
        errorContains,
        queues);
  }

  /**
   * Jobs whose latest error contains this text, ignoring case: {@value #MIN_ERROR_FILTER} to
   * {@value #MAX_ERROR_FILTER} characters. Not indexed: it reads the errors of the jobs the other
   * filters leave within a creation window, as a payload filter does ({@link JobAdmin#search}).
   */
  public JobFilter withErrorContaining(String text) {
    if (text == null
        || text.strip().length() < MIN_ERROR_FILTER
        || text.length() > MAX_ERROR_FILTER) {
      throw new InvalidFilterException(
          "error",
          text,
          "use " + MIN_ERROR_FILTER + " to " + MAX_ERROR_FILTER + " characters of an error text");
    }
    return new JobFilter(
        id,
        queue,
        states,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        ids,
        text.strip(),
        queues);
  }

  /** The ids of a selection (never empty), or null. */
  public Set<Long> ids() {
    return ids;
  }

  /** The error text filter, or null. */
  public String errorContains() {
    return errorContains;
  }

  /** The job id, or null. */
  public Long id() {
    return id;
  }

  /** The queues of {@link #withQueues} (never empty), or null. */
  public Set<String> queues() {
    return queues;
  }

  /** The queue, or null. */
  public String queue() {
    return queue;
  }

  /** The states (never empty), or null for any state. */
  public Set<JobState> states() {
    return states;
  }

  public String uniqueKey() {
    return uniqueKey;
  }

  /** The payload containment filter (a JSON object), or null. */
  public String payloadContains() {
    return payloadContains;
  }

  public Instant createdFrom() {
    return createdFrom;
  }

  public Instant createdTo() {
    return createdTo;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof JobFilter f
        && Objects.equals(id, f.id)
        && Objects.equals(queue, f.queue)
        && Objects.equals(states, f.states)
        && Objects.equals(uniqueKey, f.uniqueKey)
        && Objects.equals(payloadContains, f.payloadContains)
        && Objects.equals(createdFrom, f.createdFrom)
        && Objects.equals(createdTo, f.createdTo)
        && Objects.equals(ids, f.ids)
        && Objects.equals(errorContains, f.errorContains)
        && Objects.equals(queues, f.queues);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        id,
        queue,
        states,
        uniqueKey,
        payloadContains,
        createdFrom,
        createdTo,
        ids,
        errorContains,
        queues);
  }

  @Override
  public String toString() {
    return "JobFilter[id="
        + id
        + ", queue="
        + queue
        + ", states="
        + states
        + ", uniqueKey="
        + uniqueKey
        + ", payload="
        + payloadContains
        + ", created="
        + createdFrom
        + ".."
        + createdTo
        + ", ids="
        + ids
        + ", error="
        + errorContains
        + ", queues="
        + queues
        + "]";
  }
}
