package io.pgbus.engine;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.postgresql.PGConnection;
import org.postgresql.PGStatement;

/**
 * Keeps pgbus's own statements working behind a transaction-mode pooler (PgBouncer before 1.21, or
 * without {@code max_prepared_statements}), and says so when they do not.
 *
 * <p>pgjdbc prepares a statement on the server (a named {@code S_n}) from its fifth execution on
 * one connection ({@code prepareThreshold}, default 5). A transaction-mode pooler hands each
 * transaction to whichever server connection is free, so the named statement is missing there
 * ({@code prepared statement "S_2" does not exist}), or another client's is ({@code already
 * exists}, {@code bind message supplies 3 parameters}): issue #33 saw handlers run four times and
 * jobs go dead while readiness said UP.
 *
 * <p>So every statement pgbus makes on the JTA datasource goes through {@link #wrap}: once {@link
 * #inspect} saw a pooler (the backend pid the connection announced at start is not the backend's:
 * PgBouncer announces a key of its own; or two statements ran on two backends), or once such an
 * error was seen anyway, each statement is made with {@code prepareThreshold=0} (unnamed, parsed
 * per execution, as pgjdbc does for its first four anyway). The application's own statements on the
 * same datasource are not touched: {@link #inspect} logs the datasource setting that fixes them.
 * Every such error pgbus meets is counted ({@link #fault}): readiness is DOWN and the doctor FAILs
 * with {@link #CATEGORY} for {@link #FAULT_WINDOW} after the last one.
 */
public final class PoolerGuard {

  private static final System.Logger LOG = System.getLogger(PoolerGuard.class.getName());

  /** The public category of readiness and the doctor. */
  public static final String CATEGORY = "pooler breaks prepared statements";

  /** How long readiness stays DOWN after the last prepared-statement error. */
  public static final Duration FAULT_WINDOW = Duration.ofSeconds(60);

  private static final String BACKEND = "SELECT pg_catalog.pg_backend_pid()";

  /** What {@link #inspect} saw; {@code reportedPid} is 0 when the driver could not say. */
  public record Session(int reportedPid, int firstPid, int secondPid) {

    /** Whether the statements ran on the backend the connection announced, and on one backend. */
    public boolean direct() {
      return firstPid == secondPid && (reportedPid == 0 || reportedPid == firstPid);
    }

    /** The evidence, for a log line or the doctor. */
    public String describe() {
      if (firstPid != secondPid) {
        return "backend " + firstPid + " then " + secondPid + " on one connection";
      }
      if (reportedPid != 0 && reportedPid != firstPid) {
        return "the connection announced backend "
            + reportedPid
            + " but its statements ran on backend "
            + firstPid;
      }
      return "backend " + firstPid + " throughout";
    }
  }

  private volatile boolean unprepared;
  private volatile String seen;
  private final AtomicLong faults = new AtomicLong();
  private volatile long lastFaultNanos;
  private volatile String lastFault;
  private volatile long loggedAtNanos;

  /**
   * Reads which backend two statements on {@code c} run on, against the backend pid the driver was
   * told at connect. Two auto-commit statements may land on two backends behind a pooler; in a
   * transaction they cannot, but the announced pid still differs (PgBouncer announces its own).
   */
  public static Session inspect(Connection c) throws SQLException {
    int reported = 0;
    try {
      reported = c.unwrap(PGConnection.class).getBackendPID();
    } catch (SQLException | RuntimeException | LinkageError e) {
      // Not pgjdbc, or a wrapper that does not unwrap: judge by the two statements alone.
    }
    return new Session(reported, backend(c), backend(c));
  }

  private static int backend(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(BACKEND)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /**
   * Inspects a connection of {@code dataSource} (the raw one, not {@link #wrap}ped) and, behind a
   * pooler, makes pgbus's statements unprepared from now on. Returns what it saw.
   */
  public Session inspect(DataSource dataSource) throws SQLException {
    Session s;
    int threshold = -1;
    try (Connection c = dataSource.getConnection()) {
      s = inspect(c);
      try {
        threshold = c.unwrap(PGConnection.class).getPrepareThreshold();
      } catch (SQLException | RuntimeException | LinkageError e) {
        // unknown
      }
    }
    if (!s.direct() && !unprepared) {
      unprepared = true;
      LOG.log(
          System.Logger.Level.WARNING,
          "pgbus: the JTA datasource goes through a transaction-mode pooler ({0}); pgbus''s own"
              + " statements are not prepared on the server from now on (prepareThreshold=0)."
              + "{1}",
          s.describe(),
          threshold == 0
              ? ""
              : " The application's own statements on this datasource are (prepareThreshold="
                  + threshold
                  + "): add prepareThreshold=0 to the datasource (docs/operations.md, \"Behind"
                  + " PgBouncer\").");
    }
    seen = s.describe();
    return s;
  }

  /** Whether pgbus's statements are made with {@code prepareThreshold=0}. */
  public boolean unprepared() {
    return unprepared;
  }

  /** What the last {@link #inspect} saw, or null before one. */
  public String seen() {
    return seen;
  }

  /** How many prepared-statement errors pgbus's own statements met. */
  public long faults() {
    return faults.get();
  }

  /**
   * The category while a prepared-statement error is younger than {@link #FAULT_WINDOW}, else null.
   */
  public String problem() {
    return faults.get() > 0 && System.nanoTime() - lastFaultNanos < FAULT_WINDOW.toNanos()
        ? CATEGORY
        : null;
  }

  /** The last prepared-statement error's text (for the log and the doctor), or null. */
  public String lastFault() {
    return lastFault;
  }

  /**
   * Whether {@code t} (or a cause) is what a transaction-mode pooler does to server-side prepared
   * statements: SQLSTATE 26000 (prepared statement does not exist), 42P05 (already exists), or a
   * protocol violation naming a prepared statement (bind message supplies n parameters).
   */
  public static boolean isFault(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      if (c instanceof SQLException e && e.getSQLState() != null) {
        String state = e.getSQLState();
        String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
        if (state.equals("26000")
            || state.equals("42P05")
            || (state.equals("08P01") && message.contains("prepared statement"))) {
          return true;
        }
      }
    }
    return false;
  }

  /** Records {@code t} when it {@link #isFault is a fault}, and makes statements unprepared. */
  public void noticed(Throwable t) {
    if (!isFault(t)) {
      return;
    }
    faults.incrementAndGet();
    lastFaultNanos = System.nanoTime();
    lastFault = String.valueOf(t.getMessage());
    unprepared = true;
    long now = System.nanoTime();
    if (loggedAtNanos == 0 || now - loggedAtNanos > Duration.ofMinutes(1).toNanos()) {
      loggedAtNanos = now;
      LOG.log(
          System.Logger.Level.ERROR,
          "pgbus: "
              + CATEGORY
              + " ("
              + t.getMessage()
              + "): the JTA datasource goes through a transaction-mode pooler; pgbus's own"
              + " statements are unprepared from now on, but add prepareThreshold=0 to the"
              + " datasource for the application's (docs/operations.md, \"Behind PgBouncer\")",
          t);
    }
  }

  /**
   * {@code dataSource} with every statement pgbus makes through it guarded: unprepared when {@link
   * #unprepared}, and its errors {@link #noticed}.
   */
  public DataSource wrap(DataSource dataSource) {
    return (DataSource)
        Proxy.newProxyInstance(
            PoolerGuard.class.getClassLoader(),
            new Class<?>[] {DataSource.class},
            new Forward(dataSource, this::connection));
  }

  private Object connection(Method m, Object result) throws SQLException {
    if (result instanceof Connection c && m.getName().equals("getConnection")) {
      try {
        unprepare(c);
      } catch (SQLException | RuntimeException e) {
        // The first touch of a container's connection enlists it in the caller's transaction: a
        // connection that died in the pool (a pooler restart) fails here. Hand it back and fail
        // the caller, as its own first statement would have; carrying on with a handle whose
        // enlistment failed left Liberty's managed connection "still in a transaction", never
        // back in the pool (issue #33: the pool exhausted after a PgBouncer restart).
        try {
          c.close();
        } catch (SQLException | RuntimeException closing) {
          e.addSuppressed(closing);
        }
        noticed(e);
        throw e;
      }
      return Proxy.newProxyInstance(
          PoolerGuard.class.getClassLoader(),
          new Class<?>[] {Connection.class},
          new Forward(c, (method, r) -> statement(c, r)));
    }
    return result;
  }

  /*
   * The connection's threshold too, not only each statement's: pgjdbc names its COMMIT and
   * ROLLBACK on the server unless the connection's prepareThreshold is 0 (a guarded statement's
   * transaction failed at its commit with "S_1 already exists"). The physical connection returns to
   * the container's pool so: the application's statements on it are then unprepared too, which is
   * what they need behind a transaction-mode pooler.
   */
  private void unprepare(Connection c) throws SQLException {
    if (!unprepared) {
      return;
    }
    PGConnection pg;
    try {
      pg = c.unwrap(PGConnection.class);
    } catch (SQLException | RuntimeException | LinkageError e) {
      return; // Not pgjdbc underneath: nothing to unprepare.
    }
    // Not caught: on a container's handle this is the first call, and its failure is the
    // connection's (see connection()).
    if (pg.getPrepareThreshold() != 0) {
      pg.setPrepareThreshold(0);
    }
  }

  private Object statement(Connection c, Object result) throws SQLException {
    if (!(result instanceof Statement st)) {
      return result;
    }
    if (unprepared) {
      unprepare(c);
      try {
        st.unwrap(PGStatement.class).setPrepareThreshold(0);
      } catch (SQLException | RuntimeException | LinkageError e) {
        // Not pgjdbc underneath: nothing to unprepare.
      }
    }
    Class<?> type =
        st instanceof CallableStatement
            ? CallableStatement.class
            : st instanceof PreparedStatement ? PreparedStatement.class : Statement.class;
    return Proxy.newProxyInstance(
        PoolerGuard.class.getClassLoader(), new Class<?>[] {type}, new Forward(st, (x, r) -> r));
  }

  /** What a proxy does with a call's result before returning it. */
  private interface Then {
    Object apply(Method m, Object result) throws SQLException;
  }

  /**
   * Forwards every call to {@code target}, notices the SQL errors, answers unwrap and isWrapperFor
   * for the proxy itself first, and hands results to {@code then}.
   */
  private final class Forward implements InvocationHandler {
    private final Object target;
    private final Then then;

    Forward(Object target, Then then) {
      this.target = target;
      this.then = then;
    }

    @Override
    public Object invoke(Object proxy, Method m, Object[] args) throws Throwable {
      switch (m.getName()) {
        case "unwrap":
          if (args != null && args.length == 1 && ((Class<?>) args[0]).isInstance(proxy)) {
            return proxy;
          }
          break;
        case "isWrapperFor":
          if (args != null && args.length == 1 && ((Class<?>) args[0]).isInstance(proxy)) {
            return true;
          }
          break;
        case "equals":
          return args[0] == proxy;
        case "hashCode":
          return System.identityHashCode(proxy);
        case "toString":
          return "pgbus-guarded " + target;
        default:
          break;
      }
      try {
        return then.apply(m, m.invoke(target, args));
      } catch (InvocationTargetException e) {
        noticed(e.getCause());
        throw e.getCause();
      }
    }
  }
}
