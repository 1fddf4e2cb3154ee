package io.pgbus.cli;

import io.pgbus.QueueNames;
import io.pgbus.engine.Reencryption;
import jakarta.json.Json;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;

/**
 * {@code pgbus reencrypt <queue>}: moves an encrypting queue's jobs to the newest key of {@code
 * pgbus.encryption.key-ids} (and seals plain payloads a SQL enqueue left), one bounded batch per
 * transaction ({@link Reencryption}), each batch logged as an audit line with the OS user and role.
 */
final class ReencryptCommand implements Command {

  @Override
  public String name() {
    return "reencrypt";
  }

  @Override
  public String summary() {
    return "re-seal an encrypting queue's jobs under the newest key";
  }

  @Override
  public String usageLine() {
    return "pgbus reencrypt <queue> [--batch <n>]";
  }

  @Override
  public String help() {
    return """
        Re-seals the payloads, results and errors of the queue's jobs that are plain or sealed
        under an older key, with the newest key of pgbus.encryption.key-ids, in transactions of
        at most --batch jobs (default 100, at most %d); jobs locked by a worker are skipped and
        taken by a later run. Needs the servers' keys: pgbus.queue.<queue>.encrypt=true,
        pgbus.encryption.key-ids and the keystore or pgbus.encryption.key.<id>, as flags or
        system properties. Run it after each rotation until it reports 0, then drop the old key.
        """
        .formatted(Reencryption.MAX_BATCH);
  }

  @Override
  public Set<String> valueFlags() {
    return Set.of("batch");
  }

  @Override
  public int run(Invocation in) throws SQLException {
    List<String> p = in.args().exactly(this, "queue");
    String queue = QueueNames.require(p.get(0));
    int batch = batch(in.args().value("batch"));
    var reencryption = new Reencryption(in.settings().cipher());
    Database db = in.database();
    String actor = db.actor();
    long total = 0;
    int n;
    do {
      n = db.inTransaction(c -> reencryption.run(c, queue, batch, actor));
      total += n;
    } while (n == batch);
    if (in.out().json()) {
      in.out()
          .json(
              Json.createObjectBuilder()
                  .add("queue", queue)
                  .add("reencrypted", total)
                  .add("key", in.settings().cipher().keys().newest())
                  .build());
    } else {
      in.out()
          .line(
              "re-encrypted "
                  + total
                  + " jobs of queue '"
                  + queue
                  + "' under key '"
                  + in.settings().cipher().keys().newest()
                  + "'");
    }
    return 0;
  }

  private static int batch(String v) {
    if (v == null) {
      return 100;
    }
    try {
      int n = Integer.parseInt(v.strip());
      if (n >= 1 && n <= Reencryption.MAX_BATCH) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw CliException.usage(
        "--batch "
            + v
            + " is out of range: use a whole number from 1 to "
            + Reencryption.MAX_BATCH);
  }
}
