package io.pgbus.jakarta;

import java.lang.reflect.Method;
import java.security.PrivilegedExceptionAction;
import java.util.Hashtable;
import javax.security.auth.Subject;
import javax.security.auth.login.LoginContext;
import javax.security.auth.login.LoginException;

/**
 * Open Liberty: an identity assertion by hashtable login. A Subject whose private credentials hold
 * a Hashtable with the user id alone ({@code AttributeNameConstants.WSCREDENTIAL_USERID}, no
 * password) logs in through the JAAS entry {@code system.DEFAULT}, whose hashtable login module
 * builds the user's credential from the configured user registry (groups included, so role mappings
 * apply), and fails when the registry has no such user. The work then runs with that Subject as the
 * invocation and caller subject ({@code WSSubject.doAs}). Needs the feature {@code appSecurity}; no
 * server configuration beyond the registry the application already uses.
 */
final class LibertyRunAs implements RunAsIdentity {

  /**
   * The value of {@code com.ibm.wsspi.security.token.AttributeNameConstants.WSCREDENTIAL_USERID}.
   */
  static final String USER_ID = "com.ibm.wsspi.security.cred.userId";

  /** Liberty's system login that takes a hashtable assertion. */
  static final String LOGIN = "system.DEFAULT";

  private static final String WS_SUBJECT = "com.ibm.websphere.security.auth.WSSubject";

  private final Method doAs;

  private LibertyRunAs(Method doAs) {
    this.doAs = doAs;
  }

  /** This implementation when Liberty's security API is visible through {@code loader}. */
  static LibertyRunAs find(ClassLoader loader) {
    try {
      Class<?> ws = Class.forName(WS_SUBJECT, true, loader);
      return new LibertyRunAs(ws.getMethod("doAs", Subject.class, PrivilegedExceptionAction.class));
    } catch (ReflectiveOperationException | LinkageError e) {
      return null;
    }
  }

  @Override
  public String server() {
    return "Open Liberty";
  }

  @Override
  public Object enter(Object subject, PrivilegedExceptionAction<?> action)
      throws ReflectiveOperationException {
    return doAs.invoke(null, subject, action);
  }

  @Override
  public Object identity(String user) throws Refused {
    Subject asserted = new Subject();
    var credential = new Hashtable<String, Object>();
    credential.put(USER_ID, user);
    asserted.getPrivateCredentials().add(credential);
    try {
      // Liberty's modules call the handler whatever the login: one that answers nothing leaves
      // the hashtable in the Subject as the only source, so no password is asked for.
      LoginContext login = new LoginContext(LOGIN, asserted, callbacks -> {});
      login.login();
      return login.getSubject();
    } catch (LoginException | RuntimeException e) {
      throw new Refused(
          "Open Liberty refused the identity of user '"
              + user
              + "' (a hashtable login through "
              + LOGIN
              + "): "
              + e
              + "; the user must exist in the server's user registry, and server.xml must allow"
              + " the login: <authentication id=\"Basic\" allowHashtableLoginWithIdOnly=\"true\"/>"
              + " (\"all modules ignored\" means it does not)",
          e);
    }
  }
}
