package io.pgbus.engine;

import static org.assertj.core.api.Assertions.fail;

import io.pgbus.engine.testing.SchemaDump;
import io.pgbus.engine.testing.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/schema.sql is the schema a fresh install has, so that a newcomer reads every current table,
 * index and function in one file instead of replaying the migrations, and it cannot drift: this
 * test dumps a freshly migrated database and compares. With {@code -Dpgbus.schema.write=true} (what
 * {@code tools/dump-schema} passes) it writes the file instead. The file must also load into an
 * empty database as it is, in one pass, and give back the same schema.
 */
class SchemaDumpTest {

  /** The system property that makes this test rewrite docs/schema.sql. */
  static final String WRITE = "pgbus.schema.write";

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  @RegisterExtension static final TestDatabase empty = TestDatabase.empty();

  @Test
  void docsSchemaSqlIsWhatAFreshInstallHas() throws Exception {
    String dumped = SchemaDump.of(db);
    Path file = SchemaDump.docsFile();
    if (Boolean.getBoolean(WRITE)) {
      Files.writeString(file, dumped, StandardCharsets.UTF_8);
      return;
    }
    String documented = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    if (!documented.equals(dumped)) {
      fail(
          "docs/schema.sql is not the schema the migrations install. If the migrations are right,"
              + " regenerate it from the repository's root with: "
              + SchemaDump.REGENERATE
              + "\nFirst differences (- docs/schema.sql, + migrated database):\n"
              + diff(documented, dumped));
    }
  }

  @Test
  void docsSchemaSqlLoadsIntoAnEmptyDatabaseInOnePass() throws Exception {
    Path file = SchemaDump.docsFile();
    // Written by the other test in the same run under tools/dump-schema: nothing to load before.
    Assumptions.assumeFalse(Boolean.getBoolean(WRITE), "docs/schema.sql is being written");
    SchemaDump.load(empty, file);
    String loaded = SchemaDump.of(empty);
    String documented = Files.readString(file, StandardCharsets.UTF_8);
    if (!documented.equals(loaded)) {
      fail(
          "docs/schema.sql loads, but into a schema other than itself (- docs/schema.sql, + loaded"
              + " database):\n"
              + diff(documented, loaded));
    }
  }

  /**
   * The lines only in one of the texts (an LCS diff: an inserted line shows as one line, not as a
   * shift of all that follows), with their line numbers; at most 60 of them.
   */
  static String diff(String expected, String actual) {
    List<String> a = expected.lines().toList();
    List<String> b = actual.lines().toList();
    int[][] lcs = new int[a.size() + 1][b.size() + 1];
    for (int i = a.size() - 1; i >= 0; i--) {
      for (int j = b.size() - 1; j >= 0; j--) {
        lcs[i][j] =
            a.get(i).equals(b.get(j))
                ? lcs[i + 1][j + 1] + 1
                : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    var out = new StringBuilder();
    int i = 0;
    int j = 0;
    int shown = 0;
    while ((i < a.size() || j < b.size()) && shown < 60) {
      if (i < a.size() && j < b.size() && a.get(i).equals(b.get(j))) {
        i++;
        j++;
      } else if (j < b.size() && (i == a.size() || lcs[i][j + 1] >= lcs[i + 1][j])) {
        out.append(String.format("%5d + %s%n", j + 1, b.get(j++)));
        shown++;
      } else {
        out.append(String.format("%5d - %s%n", i + 1, a.get(i++)));
        shown++;
      }
    }
    return out.toString();
  }
}
