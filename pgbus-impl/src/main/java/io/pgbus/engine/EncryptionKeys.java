package io.pgbus.engine;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.Function;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * Reads the {@link KeyRing} from the server's own stores, once, at start; every problem fails the
 * deployment with an {@link InvalidConfigException} that names the setting and the fix.
 *
 * <ul>
 *   <li>{@code pgbus.encryption.key-ids}: the key ids, oldest first; the last seals new jobs.
 *   <li>{@code pgbus.encryption.keystore} (+ {@code -type}, {@code -password}): a PKCS12 or JCEKS
 *       file read with {@link KeyStore}: the file of a Liberty {@code <keyStore>} holding secret
 *       key entries, or the file of a WildFly Elytron {@code credential-store}, whose secret-key
 *       credentials it finds under Elytron's own alias ({@code <alias>/secretkeycredential/aes/}).
 *   <li>{@code pgbus.encryption.key.<id>}: a base64 key from MicroProfile Config (a secret), for an
 *       id the keystore does not hold, or without a keystore.
 * </ul>
 */
public final class EncryptionKeys {

  public static final String KEY_IDS = "pgbus.encryption.key-ids";
  public static final String KEYSTORE = "pgbus.encryption.keystore";
  public static final String KEYSTORE_TYPE = "pgbus.encryption.keystore-type";
  public static final String KEYSTORE_PASSWORD = "pgbus.encryption.keystore-password";

  /** The family of MicroProfile Config keys: {@code pgbus.encryption.key.<id>}. */
  public static final String KEY_PREFIX = "pgbus.encryption.key.";

  /** The fixed keys, for the misspelling check. */
  public static final List<String> SETTINGS =
      List.of(KEY_IDS, KEYSTORE, KEYSTORE_TYPE, KEYSTORE_PASSWORD);

  private EncryptionKeys() {}

  /**
   * The ring the settings name; {@link KeyRing#EMPTY} when {@code pgbus.encryption.key-ids} is not
   * set. {@code queues}: the queues that encrypt, for the message when no key is configured.
   */
  public static KeyRing load(Function<String, Optional<String>> source, List<String> queues) {
    List<String> ids = list(source.apply(KEY_IDS).orElse(""));
    if (ids.isEmpty()) {
      if (!queues.isEmpty()) {
        throw new InvalidConfigException(
            KEY_IDS,
            "pgbus.queue."
                + queues.get(0)
                + ".encrypt=true but "
                + KEY_IDS
                + " is not set: name the key(s), oldest first, e.g. "
                + KEY_IDS
                + "=k1, and provide each in "
                + KEYSTORE
                + " or as "
                + KEY_PREFIX
                + "k1=<base64 of 32 random bytes> (docs/operations.md, \"Encrypting payloads\")");
      }
      return KeyRing.EMPTY;
    }
    KeyStore store = keystore(source);
    char[] password = source.apply(KEYSTORE_PASSWORD).orElse("").toCharArray();
    var keys = new LinkedHashMap<String, SecretKey>();
    for (String id : ids) {
      if (!KeyRing.KEY_ID.matcher(id).matches()) {
        throw new InvalidConfigException(
            KEY_IDS,
            KEY_IDS
                + " names '"
                + id
                + "', which is not a key id: use 1 to 32 letters, digits, '.', '_' or '-',"
                + " starting with a letter or digit");
      }
      if (keys.containsKey(id)) {
        throw new InvalidConfigException(
            KEY_IDS, KEY_IDS + " names '" + id + "' twice: list each key once, oldest first");
      }
      SecretKey key = fromStore(store, id, password, source);
      if (key == null) {
        key = fromConfig(source, id);
      }
      if (key == null) {
        throw new InvalidConfigException(
            KEY_IDS,
            KEY_IDS
                + " names key '"
                + id
                + "', which "
                + (store == null
                    ? "is not set: set " + KEY_PREFIX + id + "=<base64 key>, or " + KEYSTORE
                    : "is neither a secret key entry of "
                        + source.apply(KEYSTORE).orElse("")
                        + " (alias '"
                        + id
                        + "' or Elytron's '"
                        + elytronAlias(id)
                        + "') nor set as "
                        + KEY_PREFIX
                        + id
                        + ": add it to the store, or remove it from "
                        + KEY_IDS));
      }
      int bits = key.getEncoded().length * 8;
      if (bits != 128 && bits != 192 && bits != 256) {
        throw new InvalidConfigException(
            KEY_IDS,
            "key '"
                + id
                + "' is "
                + bits
                + " bits; AES-GCM needs a 128, 192 or 256-bit key (256 recommended): replace it,"
                + " e.g. keytool -genseckey -keyalg AES -keysize 256 -alias "
                + id);
      }
      keys.put(id, new SecretKeySpec(key.getEncoded(), "AES"));
    }
    return KeyRing.of(keys);
  }

  /** How a WildFly Elytron credential store names an AES secret-key credential in its keystore. */
  static String elytronAlias(String id) {
    return id.toLowerCase(Locale.ROOT) + "/secretkeycredential/aes/";
  }

  private static KeyStore keystore(Function<String, Optional<String>> source) {
    Optional<String> file = source.apply(KEYSTORE);
    if (file.isEmpty() || file.get().isBlank()) {
      return null;
    }
    String type = source.apply(KEYSTORE_TYPE).orElse("PKCS12");
    Path path = Path.of(file.get());
    if (!Files.isReadable(path)) {
      throw new InvalidConfigException(
          KEYSTORE,
          KEYSTORE
              + "="
              + file.get()
              + ": no readable file there; point it at the PKCS12 or JCEKS file that holds the"
              + " keys (a Liberty keyStore's location, or a WildFly credential-store's file)");
    }
    try (InputStream in = Files.newInputStream(path)) {
      KeyStore ks = KeyStore.getInstance(type);
      ks.load(in, source.apply(KEYSTORE_PASSWORD).orElse("").toCharArray());
      return ks;
    } catch (java.security.KeyStoreException e) {
      throw new InvalidConfigException(
          KEYSTORE_TYPE,
          KEYSTORE_TYPE
              + "="
              + type
              + " is not a keystore type this JVM knows: use PKCS12 or JCEKS");
    } catch (IOException | GeneralSecurityException e) {
      throw new InvalidConfigException(
          KEYSTORE_PASSWORD,
          "pgbus cannot open "
              + KEYSTORE
              + "="
              + file.get()
              + " as "
              + type
              + " ("
              + e.getMessage()
              + "): check "
              + KEYSTORE_PASSWORD
              + " and "
              + KEYSTORE_TYPE);
    }
  }

  private static SecretKey fromStore(
      KeyStore store, String id, char[] password, Function<String, Optional<String>> source) {
    if (store == null) {
      return null;
    }
    for (String alias : List.of(id, elytronAlias(id))) {
      try {
        if (!store.containsAlias(alias)) {
          continue;
        }
        if (!store.entryInstanceOf(alias, KeyStore.SecretKeyEntry.class)) {
          throw new InvalidConfigException(
              KEY_IDS,
              "entry '"
                  + alias
                  + "' of "
                  + source.apply(KEYSTORE).orElse("")
                  + " is not a secret key: create an AES key there, e.g. keytool -genseckey"
                  + " -keyalg AES -keysize 256 -alias "
                  + id);
        }
        var entry =
            (KeyStore.SecretKeyEntry)
                store.getEntry(alias, new KeyStore.PasswordProtection(password));
        return entry.getSecretKey();
      } catch (GeneralSecurityException e) {
        throw new InvalidConfigException(
            KEYSTORE_PASSWORD,
            "pgbus cannot read key '"
                + alias
                + "' of "
                + source.apply(KEYSTORE).orElse("")
                + " ("
                + e.getMessage()
                + "): its entry password must be "
                + KEYSTORE_PASSWORD);
      }
    }
    return null;
  }

  private static SecretKey fromConfig(Function<String, Optional<String>> source, String id) {
    Optional<String> b64 = source.apply(KEY_PREFIX + id);
    if (b64.isEmpty()) {
      return null;
    }
    try {
      return new SecretKeySpec(Base64.getDecoder().decode(b64.get().strip()), "AES");
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigException(
          KEY_PREFIX + id,
          KEY_PREFIX
              + id
              + " is not base64: set it to the base64 of 32 random bytes, e.g. the output of"
              + " `openssl rand -base64 32`");
    }
  }

  private static List<String> list(String csv) {
    var out = new ArrayList<String>();
    for (String s : csv.split(",")) {
      if (!s.isBlank()) {
        out.add(s.strip());
      }
    }
    return out;
  }
}
