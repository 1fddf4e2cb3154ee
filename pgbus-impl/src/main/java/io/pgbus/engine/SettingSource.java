package io.pgbus.engine;

/**
 * Where the role records read their settings: MicroProfile Config in a container (which also checks
 * each value against its {@link Setting#allows range}), the {@link EngineConfig.Builder} in Java
 * SE.
 */
@FunctionalInterface
public interface SettingSource {

  /** Nothing set: every record takes its defaults. */
  SettingSource DEFAULTS =
      new SettingSource() {
        @Override
        public <T extends Comparable<? super T>> T value(Setting<T> setting) {
          return null;
        }
      };

  /** The value set for {@code setting}, or null when it is not set. */
  <T extends Comparable<? super T>> T value(Setting<T> setting);

  /** The value set for {@code setting}, or its default. */
  default <T extends Comparable<? super T>> T valueOrDefault(Setting<T> setting) {
    T v = value(setting);
    return v != null ? v : setting.fallback();
  }
}
