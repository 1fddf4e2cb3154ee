package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import java.security.Principal;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/**
 * Logs one line through java.util.logging and records what the server's log context held at that
 * moment: Liberty's LogRecordContext extensions, or WildFly's MDC (read reflectively, as pgbus
 * writes them, so the test WAR compiles against neither).
 */
@ApplicationScoped
@Handles("it_logfields")
public class LogFieldsHandler implements JobHandler<Marker> {

  /** The log context seen by each job, by job id. */
  public static final Map<Long, Map<String, String>> SEEN = new ConcurrentHashMap<>();

  private static final Logger LOG = Logger.getLogger(LogFieldsHandler.class.getName());

  @Inject Instance<Principal> principal;

  @Override
  public Outcome handle(Marker marker, JobContext context) throws Exception {
    LOG.info("pgbus IT handler line for " + marker.text);
    Map<String, String> seen = logContext();
    seen.put("handler.principal", principalName());
    SEEN.put(context.id(), seen);
    return Outcome.complete();
  }

  /** Who the handler runs as, for docs/operations.md "Which identity a handler runs as". */
  private String principalName() {
    try {
      Principal p = principal.get();
      return p == null ? "null" : p.getName();
    } catch (RuntimeException e) {
      return e.getClass().getSimpleName();
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, String> logContext() throws Exception {
    var map = new HashMap<String, String>();
    ClassLoader loader = LogFieldsHandler.class.getClassLoader();
    try {
      Class.forName("com.ibm.websphere.logging.hpel.LogRecordContext", true, loader)
          .getMethod("getExtensions", Map.class)
          .invoke(null, map);
    } catch (ClassNotFoundException notLiberty) {
      Map<String, Object> mdc =
          (Map<String, Object>)
              Class.forName("org.jboss.logging.MDC", true, loader).getMethod("getMap").invoke(null);
      mdc.forEach((k, v) -> map.put(k, String.valueOf(v)));
    }
    return map;
  }
}
