package io.pgbus.it;

import io.pgbus.Handles;
import io.pgbus.JobContext;
import io.pgbus.JobHandler;
import io.pgbus.Outcome;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The handler of the encrypting queue of {@link EncryptionIT}: notes the marker it was given in
 * memory only (a business row would put it in the database in plain), echoes it as its result, and
 * fails with it in the message when the marker asks.
 */
@ApplicationScoped
@Handles("it_secret")
public class SecretHandler implements JobHandler<Marker> {

  /** The marker texts handlers saw, by text. */
  public static final Map<String, Boolean> SEEN = new ConcurrentHashMap<>();

  @Override
  public Outcome handle(Marker marker, JobContext context) {
    SEEN.put(marker.text, true);
    if (marker.fail) {
      throw new IllegalStateException("the handler failed on " + marker.text);
    }
    return Outcome.completeJson("{\"echo\": \"" + marker.text + "\"}");
  }
}
