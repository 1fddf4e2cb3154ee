package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A WARNING that a flood of untrusted input could repeat (issue #23, item 6). */
class ThrottledWarningTest {

  private final List<String> lines = new CopyOnWriteArrayList<>();
  private final AtomicLong clock = new AtomicLong();
  private final ThrottledWarning warning =
      new ThrottledWarning(new Recording(), Duration.ofMinutes(1), clock::get);

  @Test
  void theFirstIsLoggedThenOneLineAMinuteCountsTheOnesNotLogged() {
    for (int i = 1; i <= 1000; i++) {
      warning.warn("forged " + i);
    }
    assertThat(lines).singleElement().asString().startsWith("forged 1 (more like it");
    assertThat(warning.suppressed()).isEqualTo(999);

    clock.addAndGet(Duration.ofSeconds(59).toNanos());
    warning.warn("forged 1001");
    assertThat(lines).hasSize(1);

    clock.addAndGet(Duration.ofSeconds(1).toNanos());
    warning.warn("forged 1002");
    assertThat(lines).hasSize(2);
    assertThat(lines.get(1)).startsWith("forged 1002; and 1000 more like it since ");
    assertThat(warning.suppressed()).isZero();
  }

  /** Records formatted WARNING lines. */
  private final class Recording implements System.Logger {
    @Override
    public String getName() {
      return "test";
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      lines.add(msg);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      assertThat(level).isEqualTo(Level.WARNING);
      lines.add(java.text.MessageFormat.format(format, params));
    }
  }
}
