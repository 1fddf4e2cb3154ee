package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.Durations;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.Setting;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The keys pgbus accepts are the keys docs/configuration.md lists: a key added to one and not the
 * other would either fail deployments that follow the docs, or slip past the misspelling check.
 */
class SettingKeysTest {

  private static final Pattern KEY = Pattern.compile("pgbus\\.[a-z0-9.<>-]+");

  @Test
  void theKnownKeysAreTheDocumentedKeys() throws Exception {
    Set<String> documented = new TreeSet<>();
    for (String line : Files.readAllLines(Path.of("../docs/configuration.md"))) {
      if (line.startsWith("| `pgbus.")) {
        Matcher m = KEY.matcher(line.split("\\|")[1]);
        while (m.find()) {
          documented.add(m.group());
        }
      }
    }
    Set<String> known = new TreeSet<>(SettingKeys.FIXED);
    SettingKeys.CAPSULE_KEYS.forEach(k -> known.add(SettingKeys.CAPSULE_PREFIX + "<name>." + k));
    SettingKeys.CRON_KEYS.forEach(k -> known.add(SettingKeys.CRON_PREFIX + "<name>." + k));
    io.pgbus.engine.QueuePolicy.SUFFIXES.forEach(
        k -> known.add(io.pgbus.engine.QueuePolicy.KEY_PREFIX + "<name>." + k));
    known.add(io.pgbus.engine.EncryptionKeys.KEY_PREFIX + "<id>");
    assertThat(known).isEqualTo(documented);
  }

  @Test
  void aMisspelledConsoleKeyIsRefusedWithTheRightOneSuggested() {
    assertThat(SettingKeys.unknown(java.util.List.of("pgbus.console.pth")))
        .contains("pgbus.console.pth is not a pgbus key; did you mean pgbus.console.path?");
    assertThat(SettingKeys.unknown(java.util.List.of("pgbus.console.path"))).isNull();
  }

  @Test
  void theNearestKeyIsSuggestedByEditDistance() {
    assertThat(SettingKeys.distance("concurency", "concurrency")).isEqualTo(1);
    assertThat(SettingKeys.unknown(Set.of("pgbus.poll-intervall")))
        .startsWith("pgbus.poll-intervall is not a pgbus key; did you mean pgbus.poll-interval?");
    assertThat(SettingKeys.unknown(Set.of("pgbus.lease", "other.key", "pgbus.it.http.port")))
        .isNull();
  }

  @Test
  void theDocumentedDurationRangesAreTheSettingsRanges() throws Exception {
    var documented = new TreeMap<String, String>();
    for (String line : Files.readAllLines(Path.of("../docs/configuration.md"))) {
      String[] cells = line.split("\\|");
      if (line.startsWith("| `pgbus.") && cells.length == 5 && cells[3].contains("..")) {
        String[] range = cells[3].split("\\.\\.");
        documented.put(
            cells[1].strip().replace("`", ""),
            normal(cells[2].strip().replace("`", ""))
                + " | "
                + normal(range[0].strip())
                + " .. "
                + normal(range[1].strip()));
      }
    }
    var declared = new TreeMap<String, String>();
    var settings = new ArrayList<Setting<?>>(EngineConfig.SETTINGS);
    settings.add(PgbusSettings.STALL_THRESHOLD);
    for (Setting<?> s : settings) {
      if (s.type() == Duration.class) {
        declared.put(
            s.key(),
            (s.fallback() == null ? "90% of the lease" : Durations.format((Duration) s.fallback()))
                + " | "
                + Durations.format((Duration) s.min())
                + " .. "
                + Durations.format((Duration) s.max()));
      }
    }
    assertThat(documented).isEqualTo(declared);
  }

  /** A documented duration in the form Durations.format writes it ({@code 60s} is {@code 1m}). */
  private static String normal(String text) {
    Duration d = text.equals("0") ? Duration.ZERO : Durations.parse(text);
    return d == null ? text : Durations.format(d);
  }
}
