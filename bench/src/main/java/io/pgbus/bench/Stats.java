package io.pgbus.bench;

import java.util.Arrays;
import java.util.Locale;

/** Medians, spreads and percentiles, and the number formats the results use. */
final class Stats {
  private Stats() {}

  static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    int n = s.length;
    return n == 0 ? Double.NaN : n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  }

  static double min(double[] v) {
    return Arrays.stream(v).min().orElse(Double.NaN);
  }

  static double max(double[] v) {
    return Arrays.stream(v).max().orElse(Double.NaN);
  }

  /** Nearest-rank percentile of sorted values, in the values' unit. */
  static double percentile(long[] sorted, double p) {
    if (sorted.length == 0) {
      return Double.NaN;
    }
    int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
    return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
  }

  /** Least-squares slope of y over x. */
  static double slope(double[] x, double[] y) {
    int n = x.length;
    if (n < 2) {
      return 0;
    }
    double mx = Arrays.stream(x).average().orElse(0);
    double my = Arrays.stream(y).average().orElse(0);
    double num = 0;
    double den = 0;
    for (int i = 0; i < n; i++) {
      num += (x[i] - mx) * (y[i] - my);
      den += (x[i] - mx) * (x[i] - mx);
    }
    return den == 0 ? 0 : num / den;
  }

  /** "median [min–max]" with the given format; just the value when there is one run. */
  static String spread(double[] v, String fmt) {
    if (v.length == 1) {
      return f(fmt, v[0]);
    }
    return f(fmt, median(v)) + " [" + f(fmt, min(v)) + "–" + f(fmt, max(v)) + "]";
  }

  static String f(String fmt, double v) {
    if (Double.isNaN(v) || v < 0 && fmt.contains("cores")) {
      return "n/a";
    }
    return String.format(Locale.ROOT, fmt, v);
  }

  /** A rate in jobs/s: thousands separated, no decimals. */
  static String rate(double v) {
    return String.format(Locale.ROOT, "%,.0f", v);
  }

  /** "median [min–max]" of rates in jobs/s. */
  static String spreadRate(double[] v) {
    if (v.length == 1) {
      return rate(v[0]);
    }
    return rate(median(v)) + " [" + rate(min(v)) + "–" + rate(max(v)) + "]";
  }
}
