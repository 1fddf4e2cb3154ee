package io.pgbus.fleet;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * The build a rolling upgrade moves to: main's fleet EAR with a test-only expand migration added to
 * the migrations of the pgbus-impl jar inside it (EAR, then its WAR, then {@code
 * WEB-INF/lib/pgbus-impl-*.jar}). It goes into pgbus-impl's own migration folder rather than a
 * second jar of its own because Flyway finds {@code io/pgbus/db/migration} on Liberty only through
 * the marker file in it, and two jars holding that folder would depend on how each server's class
 * loader lists them; one folder in one jar is what a release would ship.
 */
final class NextBuild {

  private static final String WAR = "pgbus-fleet-app.war";
  private static final String IMPL_PREFIX = "WEB-INF/lib/pgbus-impl-";
  private static final String MIGRATIONS = "io/pgbus/db/migration/";

  private NextBuild() {}

  /**
   * Writes {@code to}: {@code ear} with {@code migration} (a test resource's name, {@code
   * rolling/V…__….sql}) added to pgbus-impl's migrations. Fails when the EAR lacks the WAR or the
   * jar, or already holds a migration of that name.
   */
  static Path withMigration(Path ear, String migration, Path to) throws IOException {
    String file = migration.substring(migration.lastIndexOf('/') + 1);
    byte[] sql;
    try (InputStream in = NextBuild.class.getClassLoader().getResourceAsStream(migration)) {
      if (in == null) {
        throw new IllegalStateException("no test resource " + migration);
      }
      sql = in.readAllBytes();
    }
    int[] patched = new int[1];
    byte[] out =
        rewrite(
            Files.readAllBytes(ear),
            (name, war) -> {
              if (!name.equals(WAR)) {
                return war;
              }
              return rewrite(
                  war,
                  (inner, jar) -> {
                    if (!inner.startsWith(IMPL_PREFIX) || !inner.endsWith(".jar")) {
                      return jar;
                    }
                    patched[0]++;
                    return add(jar, MIGRATIONS + file, sql);
                  });
            });
    if (patched[0] != 1) {
      throw new IllegalStateException(
          ear + ": expected one " + IMPL_PREFIX + "*.jar inside " + WAR + ", found " + patched[0]);
    }
    Files.createDirectories(to.getParent());
    Path tmp = to.resolveSibling(to.getFileName() + ".tmp");
    Files.write(tmp, out);
    return Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING);
  }

  interface EntryRewrite {
    byte[] apply(String name, byte[] content) throws IOException;
  }

  /** A copy of the zip {@code archive} with each file entry's content passed through {@code f}. */
  private static byte[] rewrite(byte[] archive, EntryRewrite f) throws IOException {
    return copy(archive, f, List.of());
  }

  /** A copy of the zip {@code archive} with one more file; fails if it already has one so named. */
  private static byte[] add(byte[] archive, String name, byte[] content) throws IOException {
    return copy(
        archive,
        (n, c) -> {
          if (n.equals(name)) {
            throw new IllegalStateException("the jar already holds " + name);
          }
          return c;
        },
        List.of(new ZipEntryContent(name, content)));
  }

  private record ZipEntryContent(String name, byte[] content) {}

  private static byte[] copy(byte[] archive, EntryRewrite f, List<ZipEntryContent> extra)
      throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(archive.length + 4096);
    try (ZipInputStream in = new ZipInputStream(new java.io.ByteArrayInputStream(archive));
        ZipOutputStream out = new ZipOutputStream(bytes)) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        // A fresh entry: the old one's sizes and CRC do not fit rewritten content.
        ZipEntry copy = new ZipEntry(e.getName());
        copy.setTime(e.getTime());
        out.putNextEntry(copy);
        if (!e.isDirectory()) {
          out.write(f.apply(e.getName(), in.readAllBytes()));
        }
        out.closeEntry();
      }
      for (ZipEntryContent x : extra) {
        out.putNextEntry(new ZipEntry(x.name()));
        out.write(x.content());
        out.closeEntry();
      }
    }
    return bytes.toByteArray();
  }
}
