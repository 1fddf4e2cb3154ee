package io.pgbus.jakarta.admin;

import io.pgbus.admin.InvalidFilterException;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The admin API's search by handler ({@code GET jobs?handler=}, and the bulk actions' filter): a
 * job's handler is the {@code @Handles} bean bound to its queue, so the handler stands for the
 * queues it is bound to in this application ({@code HandlerRegistry}). It matches the bean's class
 * name, full ({@code com.acme.OrderHandler}) or simple ({@code OrderHandler}).
 */
final class HandlerQueues {

  /** The longest handler name accepted: a Java class name. */
  static final int MAX_LENGTH = 255;

  /** How many handlers an error lists. */
  private static final int LISTED = 20;

  private static final Pattern CLASS_NAME = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$.]*");

  private HandlerQueues() {}

  /**
   * The queues {@code name}'s handler is bound to, from {@code classes} (queue to handler class
   * name); a name that is not a class name, or that no handler here has, is an {@link
   * InvalidFilterException} naming {@code handler}.
   */
  static TreeSet<String> of(String name, Map<String, String> classes) {
    if (name.isEmpty() || name.length() > MAX_LENGTH || !CLASS_NAME.matcher(name).matches()) {
      throw new InvalidFilterException(
          "handler",
          name.length() > 60 ? name.substring(0, 60) + "..." : name,
          "use a handler's class name (1 to "
              + MAX_LENGTH
              + " characters: letters, digits, '_', '$' and '.'), such as OrderHandler");
    }
    var queues = new TreeSet<String>();
    var known = new TreeSet<String>();
    classes.forEach(
        (queue, type) -> {
          String simple = type.substring(type.lastIndexOf('.') + 1);
          known.add(simple);
          if (type.equals(name) || simple.equals(name)) {
            queues.add(queue);
          }
        });
    if (queues.isEmpty()) {
      String list =
          known.isEmpty()
              ? "this application has no handler"
              : "use one of "
                  + String.join(", ", known.stream().limit(LISTED).toList())
                  + (known.size() > LISTED ? ", ..." : "");
      throw new InvalidFilterException("handler", name, list);
    }
    return queues;
  }
}
