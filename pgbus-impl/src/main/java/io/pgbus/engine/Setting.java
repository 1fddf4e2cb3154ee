package io.pgbus.engine;

import java.time.Duration;
import java.util.Objects;

/**
 * One configuration key of a role's config record: the key as the user writes it (see
 * docs/configuration.md), its default, and the range a deployment may set. The record that owns a
 * setting declares it, reads it from a {@link SettingSource}, and names it in every error, so that
 * a setting is added in one place. The range is enforced where text is read (MicroProfile Config);
 * the records themselves only refuse what cannot work (zero, negative, contradictory pairs).
 *
 * @param fallback the default; null when the owning record derives it from another setting
 * @param fallbackText how the default is written in an error message
 */
public record Setting<T extends Comparable<? super T>>(
    String key, Class<T> type, T fallback, String fallbackText, T min, T max) {

  public Setting {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(fallbackText, "fallbackText");
    Objects.requireNonNull(min, "min");
    Objects.requireNonNull(max, "max");
  }

  public static Setting<Duration> duration(
      String key, Duration fallback, Duration min, Duration max) {
    return new Setting<>(key, Duration.class, fallback, Durations.format(fallback), min, max);
  }

  /** A duration whose default the owning record derives, described by {@code fallbackText}. */
  public static Setting<Duration> derivedDuration(
      String key, String fallbackText, Duration min, Duration max) {
    return new Setting<>(key, Duration.class, null, fallbackText, min, max);
  }

  public static Setting<Integer> integer(String key, int fallback, int min, int max) {
    return new Setting<>(key, Integer.class, fallback, Integer.toString(fallback), min, max);
  }

  /** A switch, written {@code true} or {@code false}. */
  public static Setting<Boolean> flag(String key, boolean fallback) {
    return new Setting<>(key, Boolean.class, fallback, Boolean.toString(fallback), false, true);
  }

  public static Setting<Double> decimal(String key, double fallback, double min, double max) {
    return new Setting<>(key, Double.class, fallback, Double.toString(fallback), min, max);
  }

  /** One of an enum's constants, written in lower case with dashes ({@code in-transaction}). */
  public static <E extends Enum<E>> Setting<E> choice(String key, Class<E> type, E fallback) {
    E[] all = type.getEnumConstants();
    return new Setting<>(key, type, fallback, text(fallback), all[0], all[all.length - 1]);
  }

  /** How an enum constant is written in configuration: lower case, dashes for underscores. */
  public static String text(Enum<?> value) {
    return value.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  /** Whether {@code value} lies in the range a deployment may set. */
  public boolean allows(T value) {
    return value.compareTo(min) >= 0 && value.compareTo(max) <= 0;
  }

  /** The duration, refused naming this key when it is missing, zero or negative. */
  Duration positive(Duration d) {
    if (Objects.requireNonNull(d, key).isNegative() || d.isZero()) {
      throw new InvalidConfigException(key, key + " must be positive, was " + Durations.format(d));
    }
    return d;
  }

  /** The whole number, refused naming this key when it is below {@code least}. */
  int atLeast(int n, int least) {
    if (n < least) {
      throw new InvalidConfigException(key, key + " must be at least " + least + ", was " + n);
    }
    return n;
  }

  /** Refuses {@code shorter} when it is longer than {@code longer}, naming both keys. */
  static void notLonger(
      Setting<Duration> shorter, Duration s, Setting<Duration> longer, Duration l) {
    if (s.compareTo(l) > 0) {
      throw new InvalidConfigException(
          shorter.key(),
          shorter.key()
              + "="
              + Durations.format(s)
              + " is longer than "
              + longer.key()
              + "="
              + Durations.format(l)
              + "; "
              + shorter.key()
              + " must not exceed "
              + longer.key()
              + ": shorten the one or lengthen the other");
    }
  }
}
