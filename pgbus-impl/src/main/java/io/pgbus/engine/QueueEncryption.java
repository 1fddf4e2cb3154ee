package io.pgbus.engine;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import javax.sql.DataSource;

/**
 * Which queues encrypt, where the SQL enqueue functions read it ({@code
 * pgbus.setting.encrypted_queues}, V53): an SQL enqueue of a plaintext payload into such a queue is
 * refused at the enqueue ({@code pgbus.check_sealed}), since SQL has no key. Written by every
 * engine at its start for the queues it serves or encrypts, from {@code pgbus.queue.<name>.encrypt}
 * ({@link JobCipher}): the last to start decides, and one that no longer encrypts a queue removes
 * its row.
 */
final class QueueEncryption {

  // The engine's logger: the line belongs to its start.
  private static final System.Logger LOG = System.getLogger(Engine.class.getName());

  private static final String SET = "SELECT pgbus.queue_encrypt_set(?, ?, ?)";

  private QueueEncryption() {}

  /**
   * Marks each queue the engine serves or encrypts as encrypting or not, as {@code cipher} says, in
   * one transaction. A failure (a role without UPDATE on pgbus.setting) is logged: the Java API
   * seals all the same, and only the SQL enqueue's refusal is missing.
   */
  static void publish(EngineConfig config, JobCipher cipher, DataSource dataSource) {
    var queues = new TreeSet<>(config.queues());
    queues.addAll(cipher.queues());
    if (queues.isEmpty()) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      List<String> changed =
          LocalTransaction.run(
              c,
              () -> {
                var out = new ArrayList<String>();
                try (PreparedStatement ps = c.prepareStatement(SET)) {
                  for (String q : queues) {
                    ps.setString(1, q);
                    ps.setBoolean(2, cipher.encrypts(q));
                    ps.setString(3, config.workerId());
                    try (ResultSet rs = ps.executeQuery()) {
                      if (rs.next() && rs.getBoolean(1)) {
                        out.add(q + (cipher.encrypts(q) ? " encrypts" : " no longer encrypts"));
                      }
                    }
                  }
                }
                return out;
              });
      if (!changed.isEmpty()) {
        LOG.log(
            Level.INFO,
            "pgbus engine {0}: {1} (pgbus.setting.encrypted_queues): SQL enqueues of a plaintext payload into"
                + " an encrypting queue are refused; keep pgbus.queue.<name>.encrypt equal on all"
                + " JVMs",
            config.workerId(),
            String.join(", ", changed));
      }
    } catch (SQLException e) {
      LOG.log(
          Level.WARNING,
          "pgbus engine {0} could not record which of its queues encrypt ({1}) in"
              + " pgbus.setting.encrypted_queues: {2}; the Java API still seals their payloads, but an SQL"
              + " enqueue of a plaintext payload is not refused. Grant the application's role"
              + " UPDATE on pgbus.setting",
          config.workerId(),
          cipher.queues(),
          e.getMessage());
    }
  }
}
