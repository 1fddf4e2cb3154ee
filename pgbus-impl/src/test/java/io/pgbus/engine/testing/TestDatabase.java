package io.pgbus.engine.testing;

import io.pgbus.engine.BuildVersion;
import io.pgbus.engine.Schema;
import io.pgbus.engine.SchemaName;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A fresh database of its own for one test class, on the {@link TestPostgres} server: created with
 * a random name before the class, migrated with {@link Schema#migrate} (unless {@link #empty()}),
 * and dropped with {@code WITH (FORCE)} after it. Notifications are per database, so classes that
 * run in parallel never hear each other.
 *
 * <pre>{@code
 * @RegisterExtension static final TestDatabase db = TestDatabase.migrated();
 * }</pre>
 *
 * Outside JUnit, {@link #create()} and {@link #close()} do the same by hand.
 */
public final class TestDatabase
    implements BeforeAllCallback, BeforeEachCallback, AfterAllCallback, AutoCloseable {

  private static final Pattern URL =
      Pattern.compile("(jdbc:postgresql://[^/?]*)(?:/[^?]*)?(\\?.*)?");

  private final boolean migrate;
  private final java.util.List<String> emptiedBeforeEach;
  private final SchemaName schema;
  private volatile String name;
  private volatile PGSimpleDataSource dataSource;
  private volatile String url;
  private volatile PGSimpleDataSource helperDataSource;
  private volatile boolean hostile;

  private TestDatabase(
      boolean migrate, java.util.List<String> emptiedBeforeEach, SchemaName schema) {
    this.migrate = migrate;
    this.emptiedBeforeEach = emptiedBeforeEach;
    this.schema = schema;
  }

  /** A database with the pgbus schema installed. */
  public static TestDatabase migrated() {
    return new TestDatabase(true, java.util.List.of(), SchemaName.DEFAULT);
  }

  /** A database without the pgbus schema, for migration tests. */
  public static TestDatabase empty() {
    return new TestDatabase(false, java.util.List.of(), SchemaName.DEFAULT);
  }

  /**
   * This database with the instance in schema {@code name} ({@code pgbus.schema}) as well: migrated
   * there too, and every connection it hands out (pgbus's and the helpers') runs its SQL, written
   * against {@code pgbus.}, in that schema. The default schema stays installed beside it.
   */
  public TestDatabase inSchema(String name) {
    return new TestDatabase(migrate, emptiedBeforeEach, SchemaName.of(name));
  }

  /** The schema of the instance the connections map to. */
  public SchemaName schema() {
    return schema;
  }

  /**
   * This database, with {@code tables} emptied before each test (in the order given; the test
   * class's own {@code @BeforeEach} methods run after), so that no test class repeats the header.
   * Table names are the test's own constants, never input.
   */
  public TestDatabase emptiedBeforeEach(String... tables) {
    for (String t : tables) {
      if (!t.matches("[a-z_]+(\\.[a-z_]+)?")) {
        throw new IllegalArgumentException("not a table name: " + t);
      }
    }
    return new TestDatabase(migrate, java.util.List.of(tables), schema);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    for (String table : emptiedBeforeEach) {
      update("DELETE FROM " + table);
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) throws SQLException {
    create(context.getRequiredTestClass().getSimpleName());
  }

  @Override
  public void afterAll(ExtensionContext context) throws SQLException {
    List<String> hits;
    try {
      hits = name == null ? List.of() : lookAlikesRun();
    } finally {
      close();
    }
    if (!hits.isEmpty()) {
      throw new AssertionError(
          "pgbus resolved "
              + hits.size()
              + " look-alike(s) planted in schema public (see HostilePublic): a statement or"
              + " function that resolves an operator or function through the caller's search_path."
              + " Qualify it (OPERATOR(pg_catalog.=), pg_catalog.f(...)) or make its argument"
              + " types exact.\n  "
              + String.join("\n  ", hits));
    }
  }

  /** Creates (and, unless empty, migrates) the database; returns this. */
  public TestDatabase create() throws SQLException {
    return create("db");
  }

  private TestDatabase create(String label) throws SQLException {
    String tag = label.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
    tag = tag.substring(0, Math.min(tag.length(), 30));
    String dbName =
        "pgbus_test_" + tag + "_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    // Migrated databases are copies of a template that holds the schema and a hostile public
    // (HostilePublic), unless that is turned off.
    String template = migrate && HostilePublic.enabled() ? HostileTemplate.name() : null;
    try (Connection admin = DriverManager.getConnection(TestPostgres.adminUrl());
        Statement st = admin.createStatement()) {
      // The name is made here from [a-z0-9_], so quoting it is enough; CREATE DATABASE takes no
      // bind parameters.
      st.execute(
          "CREATE DATABASE \""
              + dbName
              + "\""
              + (template == null ? "" : " TEMPLATE \"" + template + "\""));
      // Test data need not survive a crash of the server: skip the WAL flush on commit.
      st.execute("ALTER DATABASE \"" + dbName + "\" SET synchronous_commit = off");
    }
    String dbUrl = withDatabase(TestPostgres.adminUrl(), dbName);
    var ds = new PGSimpleDataSource();
    ds.setUrl(dbUrl);
    ds.setApplicationName("pgbus-test");
    this.name = dbName;
    this.url = dbUrl;
    this.dataSource = ds;
    var helpers = new PGSimpleDataSource();
    helpers.setUrl(dbUrl);
    helpers.setApplicationName("pgbus-test-helper");
    // The look-alikes in public do not record the test's own statements: they are for pgbus's.
    this.helperDataSource = helpers;
    if (migrate && template == null) {
      Schema.migrate(ds);
    }
    if (migrate && !schema.isDefault()) {
      Schema.migrate(ds, BuildVersion.current(), schema);
    }
    this.hostile = template != null;
    return this;
  }

  /**
   * What the look-alikes in public recorded (empty when pgbus resolved none of them, or when the
   * database has none).
   */
  public List<String> lookAlikesRun() throws SQLException {
    if (!hostile) {
      return List.of();
    }
    try (Connection c = helperDataSource.getConnection()) {
      return HostilePublic.hits(c);
    }
  }

  /** Drops the database, closing whatever connections are still open on it. */
  @Override
  public void close() throws SQLException {
    String dbName = name;
    if (dbName == null) {
      return;
    }
    name = null;
    try (Connection admin = DriverManager.getConnection(TestPostgres.adminUrl());
        Statement st = admin.createStatement()) {
      st.execute("DROP DATABASE IF EXISTS \"" + dbName + "\" WITH (FORCE)");
    }
  }

  /** The database's name. */
  public String name() {
    return requireCreated().getDatabaseName();
  }

  /** A non-pooling datasource: each {@code getConnection} opens a new connection. */
  public DataSource dataSource() {
    return schema.wrap(requireCreated());
  }

  /** A JDBC URL to this database, for {@link DriverManager}. */
  public String jdbcUrl() {
    requireCreated();
    return url;
  }

  /** A new connection in auto-commit; the caller closes it. */
  public Connection connect() throws SQLException {
    return dataSource().getConnection();
  }

  /**
   * A new connection in auto-commit for the test's own SQL: a look-alike planted in public that it
   * runs is not recorded as pgbus's (HostilePublic). Hand {@link #connect()} to pgbus.
   */
  public Connection helperConnection() throws SQLException {
    requireCreated();
    return schema.wrap(helperDataSource).getConnection();
  }

  /** Runs one statement in auto-commit; returns the update count. */
  public int update(String sql, Object... args) {
    try (Connection c = helperConnection();
        PreparedStatement ps = prepare(c, sql, args)) {
      return ps.executeUpdate();
    } catch (SQLException e) {
      throw new IllegalStateException("failed: " + sql, e);
    }
  }

  /** The first column of the first row, as a long (0 for SQL NULL). */
  public long queryLong(String sql, Object... args) {
    return firstColumn(sql, args, rs -> rs.getLong(1));
  }

  /** The first column of the first row, as text (null for SQL NULL). */
  public String queryText(String sql, Object... args) {
    return firstColumn(sql, args, rs -> rs.getString(1));
  }

  private interface Column<T> {
    T read(ResultSet rs) throws SQLException;
  }

  private <T> T firstColumn(String sql, Object[] args, Column<T> column) {
    try (Connection c = helperConnection();
        PreparedStatement ps = prepare(c, sql, args);
        ResultSet rs = ps.executeQuery()) {
      if (!rs.next()) {
        throw new IllegalStateException("no row: " + sql);
      }
      return column.read(rs);
    } catch (SQLException e) {
      throw new IllegalStateException("failed: " + sql, e);
    }
  }

  /** The first column of every row, as longs. */
  public List<Long> queryLongs(String sql, Object... args) {
    try (Connection c = helperConnection();
        PreparedStatement ps = prepare(c, sql, args);
        ResultSet rs = ps.executeQuery()) {
      var out = new ArrayList<Long>();
      while (rs.next()) {
        out.add(rs.getLong(1));
      }
      return out;
    } catch (SQLException e) {
      throw new IllegalStateException("failed: " + sql, e);
    }
  }

  /** How many jobs there are in total. */
  public long jobCount() {
    return queryLong("SELECT count(*) FROM pgbus.job");
  }

  /** How many jobs of a queue are in the given state. */
  public long jobCount(String queue, String state) {
    return queryLong(
        "SELECT count(*) FROM pgbus.job WHERE queue = ? AND state = ?::pgbus.job_state",
        queue,
        state);
  }

  /** The job's row as it is now. */
  public JobRow job(long id) {
    requireCreated();
    return JobRow.find(schema.wrap(helperDataSource), id);
  }

  /** The jobs of a queue, by id. */
  public List<JobRow> jobs(String queue) {
    requireCreated();
    return JobRow.inQueue(schema.wrap(helperDataSource), queue);
  }

  /** Opens a LISTEN connection on the channels of these queues ({@code pgbus_<queue>}). */
  public NotificationListener listen(String... queues) throws SQLException {
    return NotificationListener.open(dataSource(), queues);
  }

  /** The admin URL with its database replaced, keeping host, port and parameters (user, ...). */
  static String withDatabase(String jdbcUrl, String database) {
    var m = URL.matcher(jdbcUrl);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "not a jdbc:postgresql://host[:port]/database[?parameters] URL: " + jdbcUrl);
    }
    return m.group(1) + "/" + database + (m.group(2) == null ? "" : m.group(2));
  }

  private static PreparedStatement prepare(Connection c, String sql, Object... args)
      throws SQLException {
    PreparedStatement ps = c.prepareStatement(sql);
    for (int i = 0; i < args.length; i++) {
      ps.setObject(i + 1, args[i]);
    }
    return ps;
  }

  private PGSimpleDataSource requireCreated() {
    PGSimpleDataSource ds = dataSource;
    if (ds == null || name == null) {
      throw new IllegalStateException(
          "the test database is not there: register TestDatabase with @RegisterExtension on a"
              + " static field, or call create()");
    }
    return ds;
  }
}
