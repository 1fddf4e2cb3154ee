package io.pgbus.engine;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A pgbus build's release version, {@code major.minor.patch}: what the compatibility window
 * compares with the builds a schema serves ({@code pgbus.schema_compat}, docs/schema.md). A
 * qualifier ({@code -SNAPSHOT}, {@code -rc1}) is dropped: a snapshot of 0.2.0 runs where 0.2.0
 * runs, so that main, built as the next release's snapshot, passes the window that release will.
 *
 * @param major the major version
 * @param minor the minor version
 * @param patch the patch version
 */
public record BuildVersion(int major, int minor, int patch) implements Comparable<BuildVersion> {

  /** Each part's bound, as the CHECK of pgbus.schema_compat has it (six digits). */
  static final int MAX_PART = 999_999;

  // The parts, then an optional qualifier; nothing else (a bound on input from the database).
  private static final Pattern FORM =
      Pattern.compile("([0-9]{1,6})\\.([0-9]{1,6})\\.([0-9]{1,6})(?:-[A-Za-z0-9.-]{1,64})?");

  private static final String RESOURCE = "pgbus-build.properties";

  private static final BuildVersion CURRENT = load();

  public BuildVersion {
    if (major < 0 || minor < 0 || patch < 0) {
      throw new IllegalArgumentException(
          "a pgbus build version has no negative part: " + major + "." + minor + "." + patch);
    }
    if (major > MAX_PART || minor > MAX_PART || patch > MAX_PART) {
      throw new IllegalArgumentException(
          "a pgbus build version has at most six digits a part: "
              + major
              + "."
              + minor
              + "."
              + patch);
    }
  }

  /** This build's version, from the Maven project version filtered into pgbus-build.properties. */
  public static BuildVersion current() {
    return CURRENT;
  }

  /**
   * Parses {@code major.minor.patch}, with an optional qualifier.
   *
   * @throws IllegalArgumentException naming the text when it has another form
   */
  public static BuildVersion parse(String text) {
    Matcher m = text == null ? null : FORM.matcher(text);
    if (m == null || !m.matches()) {
      throw new IllegalArgumentException(
          "not a pgbus build version (major.minor.patch, for example 0.2.0): " + text);
    }
    return new BuildVersion(
        Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
  }

  private static BuildVersion load() {
    try (InputStream in = BuildVersion.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException(
            "pgbus-impl has no " + RESOURCE + ": the jar was not built by its Maven build");
      }
      var p = new Properties();
      p.load(in);
      return parse(p.getProperty("version"));
    } catch (IOException e) {
      throw new IllegalStateException("pgbus could not read its " + RESOURCE, e);
    }
  }

  @Override
  public int compareTo(BuildVersion o) {
    int c = Integer.compare(major, o.major);
    if (c == 0) {
      c = Integer.compare(minor, o.minor);
    }
    return c == 0 ? Integer.compare(patch, o.patch) : c;
  }

  /** True when this build is older than {@code o}. */
  public boolean olderThan(BuildVersion o) {
    return compareTo(o) < 0;
  }

  @Override
  public String toString() {
    return major + "." + minor + "." + patch;
  }
}
