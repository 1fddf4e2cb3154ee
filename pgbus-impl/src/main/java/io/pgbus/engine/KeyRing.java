package io.pgbus.engine;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.crypto.SecretKey;

/**
 * The AES keys pgbus encrypts jobs with, by key id, oldest first: the last one seals every new
 * payload, result and error; every one of them opens what it sealed, so a rotated-out key stays
 * until {@code pgbus reencrypt} moved its rows to the newest (docs/operations.md, "Encrypting
 * payloads"). Built once at start from the server's stores ({@link EncryptionKeys}), checked there.
 */
public final class KeyRing {

  /** A key id: what the envelope stores per row, so a short name without the envelope's ':'. */
  static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,31}");

  /** No keys: nothing can be sealed. */
  public static final KeyRing EMPTY = new KeyRing(new LinkedHashMap<>());

  private final Map<String, SecretKey> keys;
  private final String newest;

  private KeyRing(LinkedHashMap<String, SecretKey> keys) {
    this.keys = Collections.unmodifiableMap(keys);
    String last = null;
    for (String id : keys.keySet()) {
      last = id;
    }
    this.newest = last;
  }

  /**
   * A ring of {@code keys} in their order, oldest first. Each id matches {@link #KEY_ID} and each
   * key is 16, 24 or 32 bytes (AES-128, -192, -256); the caller names the settings in its errors.
   */
  static KeyRing of(LinkedHashMap<String, SecretKey> keys) {
    for (var e : keys.entrySet()) {
      if (!KEY_ID.matcher(e.getKey()).matches()) {
        throw new IllegalArgumentException("key id '" + e.getKey() + "' is not a key id");
      }
      int n = Objects.requireNonNull(e.getValue(), e.getKey()).getEncoded().length;
      if (n != 16 && n != 24 && n != 32) {
        throw new IllegalArgumentException(
            "key '" + e.getKey() + "' is " + n * 8 + " bits; AES needs 128, 192 or 256");
      }
    }
    return new KeyRing(new LinkedHashMap<>(keys));
  }

  /** The id of the key that seals new data; null for an empty ring. */
  public String newest() {
    return newest;
  }

  /** The key of {@code id}, or null when this ring lacks it. */
  SecretKey key(String id) {
    return keys.get(id);
  }

  /** The key ids, oldest first. */
  public List<String> ids() {
    return List.copyOf(keys.keySet());
  }

  public boolean isEmpty() {
    return keys.isEmpty();
  }
}
