package io.pgbus.console;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ConsoleConfigTest {

  private static ConsoleConfig read(Map<String, String> values) {
    return ConsoleConfig.read(key -> Optional.ofNullable(values.get(key)));
  }

  @Test
  void livesAtPgbusOnTheDefaultAdminApiPathByDefault() {
    ConsoleConfig config = read(Map.of());
    assertThat(config.enabled()).isTrue();
    assertThat(config.path()).isEqualTo("/pgbus");
    assertThat(config.api()).isEqualTo("/api/pgbus/admin");
    assertThat(config.refreshSeconds()).isEqualTo(5);
    assertThat(config.schema()).isEqualTo("pgbus");
    assertThat(read(Map.of("pgbus.schema", " tenant_b ")).schema()).isEqualTo("tenant_b");
  }

  @Test
  void takesAPathOfItsOwnAndDropsATrailingSlash() {
    ConsoleConfig config =
        read(
            Map.of(
                "pgbus.console.path", "/ops/jobs/",
                "pgbus.console.api", "/rest/pgbus-admin",
                "pgbus.console.refresh", "30s"));
    assertThat(config.path()).isEqualTo("/ops/jobs");
    assertThat(config.api()).isEqualTo("/rest/pgbus-admin");
    assertThat(config.refreshSeconds()).isEqualTo(30);
  }

  @Test
  void refusesAPathThatIsNotBelowTheContextRootNamingTheKeyAndTheValue() {
    for (String bad : new String[] {"pgbus", "/", "/a/../b", "/a b", "/x?y", "//x", "/.."}) {
      assertThatThrownBy(() -> read(Map.of("pgbus.console.path", bad)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("pgbus.console.path=" + bad + " is invalid");
    }
  }

  @Test
  void refusesARefreshOutOfRangeOrNotInSeconds() {
    for (String bad : new String[] {"0s", "3601s", "5", "1m", "-1s"}) {
      assertThatThrownBy(() -> read(Map.of("pgbus.console.refresh", bad)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("pgbus.console.refresh=");
    }
  }

  @Test
  void refusesAnEnabledFlagThatIsNotABoolean() {
    assertThatThrownBy(() -> read(Map.of("pgbus.console.enabled", "yes")))
        .hasMessageContaining("pgbus.console.enabled=yes is invalid: use true or false");
  }

  @Test
  void escapesAUserNameForJsonAndForTheHtmlAroundIt() {
    assertThat(Json.string("a\"b\\c</script>\n"))
        .isEqualTo("\"a\\\"b\\\\c\\u003c/script\\u003e\\n\"");
  }
}
