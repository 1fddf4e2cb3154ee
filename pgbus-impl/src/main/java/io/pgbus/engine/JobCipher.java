package io.pgbus.engine;

import io.pgbus.PgbusException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * Encryption at rest of the queues configured {@code pgbus.queue.<name>.encrypt=true}: their
 * payloads, results and stored errors are AES-GCM sealed in Java before any statement carries them,
 * and opened in Java after the claim or read, so PostgreSQL (its tables, WAL, dumps, {@code
 * pg_stat_statements}, its logs) only ever holds ciphertext.
 *
 * <p>The sealed form is a token {@code pgbus.enc.v1:<key id>:<iv>:<ciphertext+tag>} (base64url, a
 * fresh 96-bit IV from {@link SecureRandom} per seal). A payload or result column holds it as the
 * jsonb object {@code {"pgbus.enc": "<token>"}}, so no column or migration is needed and the row
 * keeps its shape wherever it is moved; an error holds the token as its text. The key id stored per
 * row lets a rotated-out key open old rows ({@link KeyRing}).
 *
 * <p>The associated data binds each token to where it belongs, so that someone who can write the
 * table cannot move ciphertext around undetected: a payload to its queue and to the payload slot; a
 * result or an error to its job id and slot (ids are unique). A payload is sealed before the insert
 * gives the job its id, so it is bound to its queue, not its id: two payloads of one queue can be
 * swapped by such a writer (docs/operations.md, "Encrypting payloads", says so).
 */
public final class JobCipher {

  /** The jsonb key of a sealed payload or result. */
  public static final String FIELD = "pgbus.enc";

  static final String PREFIX = "pgbus.enc.v1:";

  /** No queue encrypts. */
  public static final JobCipher NONE = new JobCipher(KeyRing.EMPTY, Set.of());

  private static final Pattern ENVELOPE =
      Pattern.compile("\\A\\s*\\{\\s*\"pgbus\\.enc\"\\s*:\\s*\"([A-Za-z0-9._:=-]+)\"\\s*}\\s*\\z");
  private static final Pattern TOKEN =
      Pattern.compile(
          "pgbus\\.enc\\.v1:([A-Za-z0-9._-]{1,32}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]+)");
  private static final int TAG_BITS = 128;
  private static final int IV_BYTES = 12;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final KeyRing keys;
  private final Set<String> queues;

  /**
   * @param keys the ring; must hold a key when {@code queues} is not empty
   * @param queues the queues whose jobs are sealed
   */
  public JobCipher(KeyRing keys, Set<String> queues) {
    this.keys = Objects.requireNonNull(keys, "keys");
    this.queues = Set.copyOf(queues);
    if (!this.queues.isEmpty() && keys.isEmpty()) {
      throw new IllegalArgumentException("queues " + this.queues + " encrypt but no key is given");
    }
  }

  /** Whether jobs of {@code queue} are sealed. */
  public boolean encrypts(String queue) {
    return queues.contains(queue);
  }

  /** The queues that encrypt. */
  public Set<String> queues() {
    return queues;
  }

  /** The ring. */
  public KeyRing keys() {
    return keys;
  }

  /** Whether a stored payload or result is sealed (any key). */
  public static boolean sealed(String json) {
    return json != null && ENVELOPE.matcher(json).matches();
  }

  /** The key id a stored payload, result or error was sealed with; null when not sealed. */
  public static String keyIdOf(String stored) {
    if (stored == null) {
      return null;
    }
    Matcher m = TOKEN.matcher(stored);
    return m.find() ? m.group(1) : null;
  }

  /** The payload as stored: sealed for an encrypting queue, else as given. */
  public String sealPayload(String queue, String json) {
    if (!encrypts(queue)) {
      return json;
    }
    return envelope(seal(json, aad("payload", queue, null)));
  }

  /**
   * The payload as the handler reads it. A plain payload of an encrypting queue (an SQL enqueue,
   * which cannot seal, or a job enqueued before the queue encrypted) is refused with what to do.
   */
  public String openPayload(String queue, long id, String stored) {
    Matcher m = ENVELOPE.matcher(stored);
    if (!m.matches()) {
      if (encrypts(queue)) {
        throw new PgbusException(
            queue,
            id,
            "pgbus: job "
                + id
                + " of queue '"
                + queue
                + "' has a plain payload, but pgbus.queue."
                + queue
                + ".encrypt=true: only the Java API encrypts (an SQL pgbus.enqueue cannot);"
                + " enqueue through JobQueue, or run `pgbus reencrypt "
                + queue
                + "` to encrypt the waiting jobs",
            null);
      }
      return stored;
    }
    return open(m.group(1), aad("payload", queue, null), queue, id);
  }

  /** A claimed job with its payload opened. */
  ClaimedJob open(ClaimedJob job) {
    String payload = openPayload(job.queue(), job.id(), job.payload());
    if (payload.equals(job.payload())) {
      return job;
    }
    return new ClaimedJob(
        job.id(),
        job.queue(),
        job.priority(),
        payload,
        job.attempt(),
        job.maxAttempts(),
        job.createdAt(),
        job.runAt(),
        job.trace(),
        job.attemptBase(),
        job.runAs(),
        job.workflowId());
  }

  /** A handler's result as stored: sealed for an encrypting queue. */
  public String sealResult(String queue, long id, String json) {
    return encrypts(queue) ? envelope(seal(json, aad("result", null, id))) : json;
  }

  /** A stored result as written: opened when sealed (any queue: a result is bound to its id). */
  public String openResult(long id, String stored) {
    if (stored == null) {
      return null;
    }
    Matcher m = ENVELOPE.matcher(stored);
    return m.matches() ? open(m.group(1), aad("result", null, id), null, id) : stored;
  }

  /** A failure's text as stored: the token alone for an encrypting queue. */
  public String sealError(String queue, long id, String text) {
    return encrypts(queue) ? seal(text, aad("error", null, id)) : text;
  }

  /**
   * A stored error text with its token opened; text around it (the store's "cancelled: ") stays.
   */
  public String openError(long id, String stored) {
    if (stored == null) {
      return null;
    }
    Matcher m = TOKEN.matcher(stored);
    if (!m.find()) {
      return stored;
    }
    return stored.substring(0, m.start())
        + open(m.group(), aad("error", null, id), null, id)
        + stored.substring(m.end());
  }

  /** A sealed token of {@code plain} under the newest key. */
  private String seal(String plain, String aad) {
    String kid = keys.newest();
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    try {
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(Cipher.ENCRYPT_MODE, keys.key(kid), new GCMParameterSpec(TAG_BITS, iv));
      c.updateAAD((aad + kid).getBytes(StandardCharsets.UTF_8));
      byte[] ct = c.doFinal(plain.getBytes(StandardCharsets.UTF_8));
      Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
      return PREFIX + kid + ":" + b64.encodeToString(iv) + ":" + b64.encodeToString(ct);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("pgbus could not encrypt with AES/GCM: " + e, e);
    }
  }

  private String open(String token, String aad, String queue, long id) {
    Matcher m = TOKEN.matcher(token);
    if (!m.matches()) {
      throw new PgbusException(
          queue, id, "pgbus: job " + id + " holds a malformed encrypted value", null);
    }
    String kid = m.group(1);
    var key = keys.key(kid);
    if (key == null) {
      throw new PgbusException(
          queue,
          id,
          "pgbus: job "
              + id
              + " was encrypted with key '"
              + kid
              + "', which this server does not have (it has "
              + keys.ids()
              + "): add it to pgbus.encryption.key-ids, and keep a key there until"
              + " `pgbus reencrypt` moved every row to the newest",
          null);
    }
    try {
      Base64.Decoder b64 = Base64.getUrlDecoder();
      Cipher c = Cipher.getInstance("AES/GCM/NoPadding");
      c.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, b64.decode(m.group(2))));
      c.updateAAD((aad + kid).getBytes(StandardCharsets.UTF_8));
      return new String(c.doFinal(b64.decode(m.group(3))), StandardCharsets.UTF_8);
    } catch (AEADBadTagException e) {
      throw new PgbusException(
          queue,
          id,
          "pgbus: an encrypted value of job "
              + id
              + " does not verify under key '"
              + kid
              + "': it was changed, moved from another row or queue, or the key under that id is"
              + " not the one that sealed it",
          null);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new PgbusException(
          queue, id, "pgbus: job " + id + " holds an encrypted value that cannot be read", e);
    }
  }

  private static String envelope(String token) {
    return "{\"" + FIELD + "\":\"" + token + "\"}";
  }

  /** What a token is bound to besides its key id (appended when sealing and opening). */
  private static String aad(String slot, String queue, Long id) {
    return PREFIX + slot + "|" + (queue == null ? "" : queue) + "|" + (id == null ? "" : id) + "|";
  }
}
