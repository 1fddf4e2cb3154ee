package io.pgbus.jakarta;

import jakarta.enterprise.inject.Instance;
import java.security.Principal;
import java.util.Set;

/**
 * The caller principal's name for pgbus.job.enqueued_by and pgbus.audit.actor. The containers name
 * an unauthenticated caller with a placeholder ("UNAUTHENTICATED" on Liberty, "anonymous" on
 * WildFly); pgbus records {@code null} instead, which the database turns into its role
 * (session_user), so "nobody logged in" reads the same on both servers.
 */
final class CallerNames {

  /** The CHECK on pgbus.job.enqueued_by and pgbus.audit.actor (V7__audit.sql). */
  static final int MAX_LENGTH = 256;

  private static final Set<String> UNAUTHENTICATED = Set.of("UNAUTHENTICATED", "anonymous");

  private CallerNames() {}

  static String name(Instance<Principal> principal) {
    String name = fullName(principal);
    if (name == null) {
      return null;
    }
    return name.length() <= MAX_LENGTH ? name : name.substring(0, MAX_LENGTH);
  }

  /**
   * As {@link #name}, but never cut: the user a handler runs as must be the caller exactly ({@link
   * RunAsQueues}), and a name too long for the column is refused there.
   */
  static String fullName(Instance<Principal> principal) {
    String name;
    try {
      if (!principal.isResolvable()) {
        return null;
      }
      Principal p = principal.get();
      name = p == null ? null : p.getName();
    } catch (RuntimeException e) {
      // Outside any request or EJB call (a startup thread, a handler) some containers throw.
      return null;
    }
    if (name == null || name.isBlank() || UNAUTHENTICATED.contains(name)) {
      return null;
    }
    return name;
  }
}
