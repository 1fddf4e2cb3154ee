package io.pgbus.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The report of one bench run, in markdown: the environment, one section per workload, the evidence
 * behind the figures, and where pgbus stands against each target.
 */
final class Results {

  private record Target(String name, String goal, String measured, Boolean met, String note) {}

  private final List<String> environment = new ArrayList<>();
  private final List<String> sections = new ArrayList<>();
  private final List<Target> targets = new ArrayList<>();

  void environment(String line) {
    environment.add(line);
  }

  /** A section: a heading, then markdown as given. */
  void section(String title, String markdown) {
    sections.add("## " + title + "\n\n" + markdown.strip() + "\n");
  }

  /** A target and where pgbus stands; {@code met} null when it could not be judged. */
  void target(String name, String goal, String measured, Boolean met, String note) {
    targets.add(new Target(name, goal, measured, met, note));
  }

  String markdown() {
    var out = new StringBuilder("# pgbus bench results\n\n");
    environment.forEach(l -> out.append("- ").append(l).append('\n'));
    out.append('\n');
    if (!targets.isEmpty()) {
      out.append("## Targets\n\n| target | goal | pgbus | met | note |\n|---|---|---|---|---|\n");
      for (Target t : targets) {
        out.append("| ")
            .append(t.name)
            .append(" | ")
            .append(t.goal)
            .append(" | ")
            .append(t.measured)
            .append(" | ")
            .append(t.met == null ? "n/a" : t.met ? "**yes**" : "**no**")
            .append(" | ")
            .append(t.note)
            .append(" |\n");
      }
      out.append('\n');
    }
    sections.forEach(s -> out.append(s).append('\n'));
    return out.toString();
  }

  void write(Path file) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    if (dir != null) {
      Files.createDirectories(dir);
    }
    Files.writeString(file, markdown());
  }

  /** A markdown table from a header row and data rows. */
  static String table(List<String> header, List<List<String>> rows) {
    var out = new StringBuilder("| ").append(String.join(" | ", header)).append(" |\n|");
    header.forEach(h -> out.append("---|"));
    out.append('\n');
    for (List<String> r : rows) {
      out.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    return out.toString();
  }
}
