package io.pgbus.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * The schema one pgbus instance lives in ({@code pgbus.schema}, default {@code pgbus}), and
 * everything named after it: the SQL, the LISTEN/NOTIFY channels, the advisory lock keys. Every
 * statement pgbus has is written against {@code pgbus.}; {@link #sql} maps that text onto this
 * schema, and {@link #wrap(DataSource)} makes every connection do so (see docs/architecture.md, "An
 * instance per schema"). For the default schema every mapping is the identity: the same text
 * reaches the server, the same channels and keys are used, and nothing is wrapped.
 */
public final class SchemaName {

  /** The configuration key. */
  public static final String KEY = "pgbus.schema";

  /** The schema every statement is written against, and the default. */
  public static final SchemaName DEFAULT = new SchemaName("pgbus");

  // PostgreSQL's identifier limit (NAMEDATALEN - 1); lower case, so that no quoting is needed.
  private static final int MAX_BYTES = 63;
  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");

  // A channel is at most 63 bytes and a queue name at most 48 characters: with its '_' or '-', a
  // channel's prefix may take 14. A longer schema's prefix is shortened with a hash (see tag()).
  private static final int MAX_TAG = 14;

  /*
   * What the mapping rewrites, in one pass:
   * - "pgbus." starting a qualified name or custom setting (pgbus.job, pgbus.wake): not inside a
   *   longer name, and not a configuration key quoted in a message (pgbus.worker-id,
   *   pgbus.history.retention, pgbus.maintenance=true): SQL names a column through an alias, never
   *   as pgbus.table.column; nor the sealed payload's field 'pgbus.enc' (JobCipher), which is data;
   * - the schema in a pinned search_path (pg_catalog, pgbus, pg_temp) and in 'pgbus'::regnamespace;
   * - a channel literal ('pgbus_' || queue, 'pgbus-cancel', ...): see channel().
   */
  private static final Pattern PGBUS =
      Pattern.compile(
          "(?<![\\w$.\"])pgbus(?=\\.[a-z_])(?!\\.[a-z_]+(?:[-=]|\\.[a-z_]))(?!\\.enc(?![\\w]))"
              + "|(?<=pg_catalog, )pgbus(?=, pg_temp)"
              + "|(?<=')pgbus(?='::regnamespace)"
              + "|(?<=')(pgbus)(?=[-_])");

  // Engine statements are a few hundred constant texts; a statement built per call is mapped
  // again rather than filling the cache.
  private static final int CACHE_LIMIT = 4096;

  private final String name;
  private final String tag;
  private final Map<String, String> mapped = new ConcurrentHashMap<>();

  private SchemaName(String name) {
    this.name = name;
    this.tag = tag(name);
  }

  /**
   * The schema {@code value} names.
   *
   * @throws InvalidConfigException naming {@value #KEY}, the value and the fix, when it is not a
   *     lower-case identifier of at most 63 bytes, or is a schema pgbus must not take ({@code
   *     public}, {@code information_schema}, {@code pg_*}) or a reserved setting prefix ({@code
   *     plpgsql})
   */
  public static SchemaName of(String value) {
    String v = value == null ? "" : value.strip();
    String problem = problem(v);
    if (problem != null) {
      String keyed =
          KEY
              + "="
              + (value == null ? "" : value)
              + " "
              + problem
              + ": use a lower-case SQL identifier of at most "
              + MAX_BYTES
              + " bytes (a letter or _, then letters, digits or _), such as pgbus or"
              + " billing_jobs, or remove the key for the default schema pgbus";
      throw new InvalidConfigException(KEY, keyed);
    }
    return v.equals(DEFAULT.name) ? DEFAULT : new SchemaName(v);
  }

  private static String problem(String v) {
    if (v.isEmpty()) {
      return "is empty";
    }
    if (!IDENTIFIER.matcher(v).matches()) {
      return IDENTIFIER.matcher(v.toLowerCase(Locale.ROOT)).matches()
          ? "has upper-case letters, which PostgreSQL folds to lower case"
          : "is not an SQL identifier";
    }
    if (v.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES) {
      return "is longer than " + MAX_BYTES + " bytes, which PostgreSQL would truncate";
    }
    if (v.equals("public") || v.equals("information_schema") || v.startsWith("pg_")) {
      return "is a schema PostgreSQL or every role shares";
    }
    if (v.equals("plpgsql")) {
      // pgbus's custom settings (pgbus.wake, ...) take the schema's name as their prefix.
      return "is a setting prefix PL/pgSQL reserves";
    }
    return null;
  }

  /** The schema's name, as it is written in SQL (it needs no quotes). */
  public String name() {
    return name;
  }

  /** Whether this is the default schema, whose every mapping is the identity. */
  public boolean isDefault() {
    return this == DEFAULT;
  }

  /** {@code sql}, written against {@code pgbus.}, for this schema. */
  public String sql(String sql) {
    if (sql == null || this == DEFAULT || !sql.contains("pgbus")) {
      return sql;
    }
    String known = mapped.get(sql);
    if (known != null) {
      return known;
    }
    Matcher m = PGBUS.matcher(sql);
    String result = m.replaceAll(r -> r.group(1) != null ? Matcher.quoteReplacement(tag) : name);
    if (mapped.size() < CACHE_LIMIT) {
      mapped.put(sql, result);
    }
    return result;
  }

  /**
   * The channel that {@code channel}, a channel of the default schema ({@code pgbus_<queue>},
   * {@code pgbus-cancel}, see {@link Channels}), is in this schema: the same with {@code pgbus}
   * replaced by {@code <schema>:}, so two instances never hear each other, and none can be taken
   * for the default's. A schema of more than 13 bytes is shortened to 4 characters, '~' and a hash.
   */
  public String channel(String channel) {
    return channel.startsWith(DEFAULT.name)
        ? tag + channel.substring(DEFAULT.name.length())
        : channel;
  }

  /**
   * The default schema's name of {@code channel}, a channel of this schema (the inverse of {@link
   * #channel}); a channel of no pgbus instance is returned as it is.
   */
  public String unchannel(String channel) {
    return this != DEFAULT && channel.startsWith(tag)
        ? DEFAULT.name + channel.substring(tag.length())
        : channel;
  }

  /**
   * The advisory lock key of this schema for the lock whose key in the default schema is {@code
   * key}: two instances never wait for each other's lock.
   */
  public long lockKey(long key) {
    if (this == DEFAULT) {
      return key;
    }
    byte[] h = sha256(name);
    long salt = 0;
    for (int i = 0; i < Long.BYTES; i++) {
      salt = salt << 8 | (h[i] & 0xff);
    }
    return key ^ salt;
  }

  /**
   * {@code dataSource} whose connections run their SQL text in this schema: itself for the default
   * schema or when it already does.
   */
  public DataSource wrap(DataSource dataSource) {
    return SchemaConnections.wrap(this, dataSource);
  }

  /** {@code connections} whose connections run their SQL text in this schema. */
  public ListenerConnections wrap(ListenerConnections connections) {
    return this == DEFAULT ? connections : () -> SchemaConnections.wrap(this, connections.open());
  }

  private static String tag(String name) {
    if (name.equals("pgbus")) {
      return name;
    }
    if (name.length() + 1 <= MAX_TAG) {
      return name + ":";
    }
    return name.substring(0, 4) + "~" + HexFormat.of().formatHex(sha256(name), 0, 4) + ":";
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SchemaName s && s.name.equals(name);
  }

  @Override
  public int hashCode() {
    return name.hashCode();
  }

  @Override
  public String toString() {
    return name;
  }
}
