package io.pgbus.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.JobCipher;
import io.pgbus.engine.testing.TestDatabase;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code pgbus enqueue} seals for an encrypting queue; {@code pgbus reencrypt} moves to the newest
 * key.
 */
class ReencryptCommandTest {

  @RegisterExtension
  static final TestDatabase db = TestDatabase.migrated().emptiedBeforeEach("pgbus.job");

  private final CliRunner cli = new CliRunner(db);

  private static final String K1 = Base64.getEncoder().encodeToString(new byte[32]);
  private static final String K2 =
      Base64.getEncoder()
          .encodeToString(
              new byte[] {
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16
              });

  private String[] keys(String ids, String... args) {
    String[] base = {
      "--set", "pgbus.queue.vault.encrypt=true",
      "--set", "pgbus.encryption.key-ids=" + ids,
      "--set", "pgbus.encryption.key.k1=" + K1,
      "--set", "pgbus.encryption.key.k2=" + K2
    };
    String[] all = new String[args.length + base.length];
    System.arraycopy(args, 0, all, 0, args.length);
    System.arraycopy(base, 0, all, args.length, base.length);
    return all;
  }

  @Test
  void enqueueSealsAndReencryptMovesEveryJobToTheNewestKey() {
    CliRunner.Result e = cli.run(keys("k1", "enqueue", "vault", "{\"pin\": \"CLI-MARKER\"}"));
    assertThat(e.exit()).as(e.err()).isZero();
    db.queryLong("SELECT pgbus.enqueue('vault', '{\"plain\": 1}')");
    assertThat(
            db.queryLong("SELECT count(*) FROM pgbus.job WHERE payload::text LIKE '%CLI-MARKER%'"))
        .isZero();

    CliRunner.Result r = cli.run(keys("k1,k2", "reencrypt", "vault", "--batch", "1"));
    assertThat(r.exit()).as(r.err()).isZero();
    assertThat(r.out()).contains("re-encrypted 2 jobs of queue 'vault' under key 'k2'");
    for (long id : db.queryLongs("SELECT id FROM pgbus.job")) {
      String payload = db.job(id).payload();
      assertThat(JobCipher.keyIdOf(payload)).as(payload).isEqualTo("k2");
    }
    assertThat(cli.run(keys("k1,k2", "reencrypt", "vault")).out()).contains("re-encrypted 0 jobs");
  }

  @Test
  void reencryptRefusesABadBatchAndAQueueThatDoesNotEncrypt() {
    CliRunner.Result bad = cli.run(keys("k1", "reencrypt", "vault", "--batch", "5000"));
    assertThat(bad.exit()).isEqualTo(2);
    assertThat(bad.err())
        .contains("--batch 5000 is out of range: use a whole number from 1 to 1000");
    CliRunner.Result plain = cli.run(keys("k1", "reencrypt", "mail"));
    assertThat(plain.exit()).isNotZero();
    assertThat(plain.err()).contains("queue 'mail' does not encrypt");
  }
}
