package io.pgbus;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A workflow ({@link JobQueue#enqueueWorkflow}): named nodes, each a job (queue, payload, options),
 * joined by edges that say when a node runs, enqueued together in the caller's transaction. A DAG
 * over the dependency edges of {@link EnqueueOptions#afterJobs}, with two more kinds of edge:
 *
 * <pre>{@code
 * EnqueuedWorkflow w = jobs.enqueueWorkflow(
 *     Workflow.named("order-42")
 *         .node("charge", "payments", new Charge(42))
 *         .node("ship", "shipping", new Ship(42)).after("charge")
 *         .node("refund", "payments", new Refund(42)).onFailure("charge")
 *         .node("review", "reviews", new Review(42)).onResult("charge", "$.amount > 1000"));
 * }</pre>
 *
 * <ul>
 *   <li>{@link #after after(parent)}: the node runs when the parent completes; a parent that dies
 *       or is cancelled cancels (or holds, {@link DependencyFailure}) the node, as a dependency;
 *   <li>{@link #onFailure onFailure(parent)}: the node runs only when the parent ends dead or
 *       cancelled; when the parent completes the edge is <em>not taken</em>;
 *   <li>{@link #onResult onResult(parent, predicate)}: the node runs when the parent completes and
 *       the SQL/JSON path predicate holds on its result ({@code jsonb_path_match(result,
 *       predicate)}, such as {@code $.approved == true}); not taken when it does not hold. A parent
 *       that dies or is cancelled cancels the node as {@code after} does.
 * </ul>
 *
 * <p><b>Several parents:</b> a node runs when <em>every</em> one of its edges is taken. As soon as
 * one edge is not taken, the node can never run: it ends {@code cancelled} with the error {@code
 * branch not taken: ...}, and its own children hear of it as of any cancel. Edges are decided in
 * the transaction that finishes the parent, so every JVM and the SQL path agree.
 *
 * <p><b>Bounds</b>, checked at enqueue by the Java API and by {@code pgbus.enqueue_workflow} alike,
 * with an error naming the node or edge: at most {@value #MAX_NODES} nodes and {@value
 * #MAX_PARENTS} parents per node; node names of 1 to {@value #MAX_NODE_NAME} printable characters,
 * each used once; edges only from nodes of this workflow, one per parent, and no cycle. A predicate
 * must parse and be a predicate (not a path such as {@code $.approved}); the database checks it. A
 * node takes a priority, attempts and a concurrency key from its options; a run time, a delay, a
 * unique key, a start-by deadline or {@code afterJobs} are refused.
 *
 * <p>A mutable builder for one call, not thread-safe. The edge methods apply to the node added
 * last.
 */
public final class Workflow {

  /** The most nodes of one workflow. */
  public static final int MAX_NODES = 1000;

  /** The most edges into one node. */
  public static final int MAX_PARENTS = EnqueueOptions.MAX_DEPENDENCIES;

  /** The longest node name, in characters. */
  public static final int MAX_NODE_NAME = 100;

  /** The longest workflow name, in characters. */
  public static final int MAX_NAME = 200;

  /** The longest predicate, in characters. */
  public static final int MAX_PREDICATE = 1000;

  /** When an edge lets its child run. */
  public enum EdgeKind {
    /** The parent completed. */
    SUCCESS,
    /** The parent ended dead or cancelled. */
    FAILURE,
    /** The parent completed and the predicate holds on its result. */
    RESULT
  }

  /**
   * An edge into a node.
   *
   * @param parent the parent node's name
   * @param kind when it is taken
   * @param predicate the SQL/JSON path predicate of a {@link EdgeKind#RESULT} edge, else null
   * @param onFailure what a parent that dies or is cancelled does to the child (success and result
   *     edges)
   */
  public record Edge(String parent, EdgeKind kind, String predicate, DependencyFailure onFailure) {
    public Edge {
      Objects.requireNonNull(parent, "parent");
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(onFailure, "onFailure");
    }
  }

  /** A node: its name, job and the edges into it, in the order given. */
  public record Node(
      String name, String queue, Object payload, EnqueueOptions options, List<Edge> edges) {
    public Node {
      edges = List.copyOf(edges);
    }
  }

  private final String name;
  private final List<String> order = new ArrayList<>();
  private final Map<String, Node> nodes = new HashMap<>();
  private String last;

  private Workflow(String name) {
    if (name == null
        || name.isBlank()
        || name.length() > MAX_NAME
        || name.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidJobException(
          null,
          "workflow name "
              + (name == null ? "null" : "'" + name + "'")
              + " must be 1 to "
              + MAX_NAME
              + " printable characters: name the work, for example Workflow.named(\"order-42\")");
    }
    this.name = name;
  }

  /** An empty workflow named {@code name} (1 to {@value #MAX_NAME} printable characters). */
  public static Workflow named(String name) {
    return new Workflow(name);
  }

  /** Adds a node with default options. */
  public Workflow node(String node, String queue, Object payload) {
    return node(node, queue, payload, EnqueueOptions.defaults());
  }

  /** Adds a node; its options may set a priority, attempts and a concurrency key. */
  public Workflow node(String node, String queue, Object payload, EnqueueOptions options) {
    QueueNames.require(queue);
    Objects.requireNonNull(payload, "payload");
    Objects.requireNonNull(options, "options");
    if (node == null
        || node.isBlank()
        || node.length() > MAX_NODE_NAME
        || node.chars().anyMatch(Character::isISOControl)) {
      throw new InvalidJobException(
          queue,
          "node name "
              + (node == null ? "null" : "'" + node + "'")
              + " of workflow '"
              + name
              + "' must be 1 to "
              + MAX_NODE_NAME
              + " printable characters");
    }
    if (nodes.containsKey(node)) {
      throw new InvalidJobException(
          queue,
          "workflow '" + name + "' names node '" + node + "' twice: give each node its own name");
    }
    if (nodes.size() >= MAX_NODES) {
      throw new InvalidJobException(
          queue,
          "workflow '"
              + name
              + "' has more than "
              + MAX_NODES
              + " nodes: split it, or let a node fan out from its handler");
    }
    if (options.runAt() != null
        || options.delay() != null
        || options.uniqueKey() != null
        || options.startBy() != null
        || !options.afterJobs().isEmpty()) {
      throw new InvalidJobException(
          queue,
          "node '"
              + node
              + "' of workflow '"
              + name
              + "' takes a priority, attempts and a concurrency key, not "
              + options
              + ": a node runs when its edges say, once");
    }
    nodes.put(node, new Node(node, queue, payload, options, List.of()));
    order.add(node);
    last = node;
    return this;
  }

  /** The node added last runs when {@code parent} completes; cancelled when it does not. */
  public Workflow after(String parent) {
    return after(parent, DependencyFailure.CANCEL);
  }

  /** The node added last runs when {@code parent} completes; {@code onFailure} when it does not. */
  public Workflow after(String parent, DependencyFailure onFailure) {
    return edge(new Edge(parent, EdgeKind.SUCCESS, null, onFailure));
  }

  /** The node added last runs only when {@code parent} ends dead or cancelled. */
  public Workflow onFailure(String parent) {
    return edge(new Edge(parent, EdgeKind.FAILURE, null, DependencyFailure.CANCEL));
  }

  /**
   * The node added last runs when {@code parent} completes and {@code predicate}, an SQL/JSON path
   * predicate such as {@code $.approved == true}, holds on its result (up to {@value
   * #MAX_PREDICATE} characters; checked by the database at enqueue).
   */
  public Workflow onResult(String parent, String predicate) {
    if (predicate == null || predicate.isBlank() || predicate.length() > MAX_PREDICATE) {
      throw new InvalidJobException(
          null,
          "predicate "
              + (predicate == null ? "null" : "'" + predicate + "'")
              + " of the edge from node '"
              + parent
              + "' to node '"
              + last
              + "' must be 1 to "
              + MAX_PREDICATE
              + " characters: write an SQL/JSON path predicate such as $.approved == true");
    }
    return edge(new Edge(parent, EdgeKind.RESULT, predicate, DependencyFailure.CANCEL));
  }

  private Workflow edge(Edge e) {
    if (last == null) {
      throw new InvalidJobException(
          null, "workflow '" + name + "': add a node before its edges (node(...).after(...))");
    }
    Node n = nodes.get(last);
    if (n.edges().stream().anyMatch(x -> x.parent().equals(e.parent()))) {
      throw new InvalidJobException(
          n.queue(),
          "node '"
              + last
              + "' of workflow '"
              + name
              + "' has two edges from node '"
              + e.parent()
              + "': keep one edge per parent");
    }
    if (n.edges().size() >= MAX_PARENTS) {
      throw new InvalidJobException(
          n.queue(),
          "node '"
              + last
              + "' of workflow '"
              + name
              + "' has more than "
              + MAX_PARENTS
              + " parents: join them through a node of their own");
    }
    var edges = new ArrayList<>(n.edges());
    edges.add(e);
    nodes.put(last, new Node(n.name(), n.queue(), n.payload(), n.options(), edges));
    return this;
  }

  public String name() {
    return name;
  }

  /** The nodes in the order added; read-only. */
  public List<Node> nodes() {
    return order.stream().map(nodes::get).toList();
  }

  /**
   * Checks what the builder could not while nodes were being added: every edge names a node of this
   * workflow, and there is no cycle. {@link JobQueue#enqueueWorkflow} calls it.
   *
   * @throws InvalidJobException naming the unknown node, or an edge of the cycle
   */
  public void validate() {
    if (order.isEmpty()) {
      throw new InvalidJobException(
          null, "workflow '" + name + "' has no node: add at least one with node(...)");
    }
    var indegree = new LinkedHashMap<String, Integer>();
    var children = new HashMap<String, List<String>>();
    for (String n : order) {
      indegree.put(n, nodes.get(n).edges().size());
      for (Edge e : nodes.get(n).edges()) {
        if (!nodes.containsKey(e.parent())) {
          throw new InvalidJobException(
              nodes.get(n).queue(),
              "node '"
                  + n
                  + "' of workflow '"
                  + name
                  + "' waits on unknown node '"
                  + e.parent()
                  + "': name a node of this workflow");
        }
        children.computeIfAbsent(e.parent(), k -> new ArrayList<>()).add(n);
      }
    }
    var ready = new ArrayDeque<String>();
    indegree.forEach(
        (n, d) -> {
          if (d == 0) {
            ready.add(n);
          }
        });
    int taken = 0;
    while (!ready.isEmpty()) {
      String n = ready.poll();
      taken++;
      for (String c : children.getOrDefault(n, List.of())) {
        if (indegree.merge(c, -1, Integer::sum) == 0) {
          ready.add(c);
        }
      }
    }
    if (taken < order.size()) {
      List<String> left = order.stream().filter(n -> indegree.get(n) > 0).toList();
      String child = left.get(0);
      String parent =
          nodes.get(child).edges().stream()
              .map(Edge::parent)
              .filter(p -> indegree.get(p) > 0)
              .findFirst()
              .orElse("?");
      throw new InvalidJobException(
          nodes.get(child).queue(),
          "workflow '"
              + name
              + "' has a cycle through the edge from node '"
              + parent
              + "' to node '"
              + child
              + "' (nodes on or below it: "
              + left
              + "): a workflow is a DAG, remove an edge of the cycle");
    }
  }

  /** The node names, in the order added; read-only. */
  public List<String> nodeNames() {
    return Collections.unmodifiableList(order);
  }
}
