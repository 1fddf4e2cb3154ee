package io.pgbus.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the command line reads and writes, and whether a person sits at standard input: tests pass
 * their own streams and say whether stdin is a terminal.
 *
 * @param terminal true when standard input is a terminal, so a destructive command may ask
 */
record Io(PrintStream out, PrintStream err, BufferedReader in, boolean terminal) {

  static Io system() {
    return new Io(
        System.out,
        System.err,
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)),
        stdinIsTerminal());
  }

  /**
   * Java 17 has no isatty for one stream: System.console() is null when stdin or stdout is
   * redirected, so {@code pgbus queues --json | jq} would count as no terminal. On Linux the file
   * behind descriptor 0 says it for stdin alone.
   */
  private static boolean stdinIsTerminal() {
    Path fd0 = Path.of("/proc/self/fd/0");
    if (Files.exists(fd0, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      try {
        String target = Files.readSymbolicLink(fd0).toString();
        return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
      } catch (IOException | UnsupportedOperationException e) {
        return System.console() != null;
      }
    }
    return System.console() != null;
  }

  /** One line from standard input, null at its end. */
  String readLine() {
    try {
      return in.readLine();
    } catch (IOException e) {
      return null;
    }
  }
}
