package io.pgbus.console;

import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The console's settings, read once at deployment and validated: a bad value fails the deployment
 * with a message that names the key, the value and what is allowed.
 *
 * @param enabled {@code pgbus.console.enabled}: false registers nothing
 * @param path {@code pgbus.console.path}: where the console lives, below the context root
 * @param api {@code pgbus.console.api}: the path of the application's REST admin API (its {@code
 *     AdminResource} subclass), below the context root
 * @param refreshSeconds {@code pgbus.console.refresh}: how often a visible page reloads its data
 */
record ConsoleConfig(boolean enabled, String path, String api, int refreshSeconds, String schema) {

  static final String ENABLED = "pgbus.console.enabled";
  static final String PATH = "pgbus.console.path";
  static final String API = "pgbus.console.api";
  static final String REFRESH = "pgbus.console.refresh";

  /**
   * The instance's schema, shown in the console's title when it is not the default; pgbus-impl
   * validates it at deployment (io.pgbus.engine.SchemaName).
   */
  static final String SCHEMA = "pgbus.schema";

  static final String DEFAULT_PATH = "/pgbus";
  static final String DEFAULT_API = "/api/pgbus/admin";
  static final int DEFAULT_REFRESH_SECONDS = 5;
  static final int MAX_REFRESH_SECONDS = 3600;

  /** One or more path segments of letters, digits, '.', '_' or '-', each after a '/'. */
  private static final Pattern PATH_SHAPE = Pattern.compile("(/[A-Za-z0-9._-]+)+");

  private static final Pattern SECONDS = Pattern.compile("([0-9]{1,4})s");

  ConsoleConfig {
    path = checkPath(PATH, path);
    api = checkPath(API, api);
    if (refreshSeconds < 1 || refreshSeconds > MAX_REFRESH_SECONDS) {
      throw invalid(REFRESH, refreshSeconds + "s", "use 1s to " + MAX_REFRESH_SECONDS + "s");
    }
  }

  /** Reads the settings from {@code settings} (a key to its value, empty when unset). */
  static ConsoleConfig read(Function<String, Optional<String>> settings) {
    String enabled = settings.apply(ENABLED).orElse("true").strip();
    if (!enabled.equals("true") && !enabled.equals("false")) {
      throw invalid(ENABLED, enabled, "use true or false");
    }
    String refresh = settings.apply(REFRESH).orElse(DEFAULT_REFRESH_SECONDS + "s").strip();
    var m = SECONDS.matcher(refresh);
    if (!m.matches()) {
      throw invalid(REFRESH, refresh, "use whole seconds, 1s to " + MAX_REFRESH_SECONDS + "s");
    }
    return new ConsoleConfig(
        Boolean.parseBoolean(enabled),
        settings.apply(PATH).orElse(DEFAULT_PATH).strip(),
        settings.apply(API).orElse(DEFAULT_API).strip(),
        Integer.parseInt(m.group(1)),
        settings.apply(SCHEMA).orElse("pgbus").strip());
  }

  private static String checkPath(String key, String value) {
    String v =
        value.length() > 1 && value.endsWith("/") ? value.substring(0, value.length() - 1) : value;
    boolean ok = PATH_SHAPE.matcher(v).matches();
    for (String segment : v.split("/")) {
      ok &= !segment.equals(".") && !segment.equals("..");
    }
    if (!ok) {
      throw invalid(
          key,
          value,
          "use a path below the context root such as /pgbus: '/' and then letters, digits, '.', '_'"
              + " or '-' per segment");
    }
    return v;
  }

  private static IllegalArgumentException invalid(String key, String value, String rule) {
    return new IllegalArgumentException(key + "=" + value + " is invalid: " + rule);
  }
}
