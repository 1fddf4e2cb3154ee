package io.pgbus.jakarta;

import jakarta.transaction.TransactionSynchronizationRegistry;
import javax.naming.InitialContext;
import javax.naming.NamingException;

/**
 * The container's {@link TransactionSynchronizationRegistry}, looked up once; when the lookup fails
 * (never seen on a Jakarta EE server) it says so once, with what pgbus does instead.
 */
final class TransactionRegistry {

  private static final System.Logger LOG = System.getLogger(TransactionRegistry.class.getName());
  private static final String NAME = "java:comp/TransactionSynchronizationRegistry";

  private final String withoutIt;
  private volatile TransactionSynchronizationRegistry registry;
  private volatile boolean missing;

  /**
   * @param withoutIt what pgbus does without the registry, for the one warning
   */
  TransactionRegistry(String withoutIt) {
    this.withoutIt = withoutIt;
  }

  /** The registry, or null when it cannot be looked up. */
  TransactionSynchronizationRegistry get() {
    TransactionSynchronizationRegistry r = registry;
    if (r != null || missing) {
      return r;
    }
    try {
      r = InitialContext.doLookup(NAME);
      registry = r;
      return r;
    } catch (NamingException e) {
      missing = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus could not look up {0} ({1}): {2}",
          NAME,
          e.getMessage(),
          withoutIt);
      return null;
    }
  }
}
