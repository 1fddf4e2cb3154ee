package io.pgbus.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pgbus.admin.InvalidFilterException;
import io.pgbus.admin.JobAdmin;
import io.pgbus.admin.JobFilter;
import io.pgbus.engine.EngineConfig;
import io.pgbus.engine.JobCipher;
import io.pgbus.engine.Jobs;
import io.pgbus.engine.NewJob;
import io.pgbus.engine.Reencryption;
import io.pgbus.it.support.Await;
import io.pgbus.it.support.Sql;
import io.pgbus.it.support.TestServer;
import io.pgbus.jakarta.EncryptionSettings;
import jakarta.annotation.Resource;
import jakarta.ejb.EJB;
import jakarta.inject.Inject;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.sql.Connection;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import javax.crypto.KeyGenerator;
import javax.sql.DataSource;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Payload encryption in the server (issue #30): a queue with {@code encrypt=true} and its keys from
 * the server's own store (on Liberty a PKCS12 keystore with secret key entries, as {@code keytool
 * -genseckey} writes it; on WildFly an Elytron credential store made by {@code elytron-tool.sh
 * --generate-secret-key}) runs its handler on the plain payload while the database, dumped with
 * {@code pg_dump}, holds none of it; a job sealed under the older key still runs; {@link
 * Reencryption} moves the rows to the newest key; a plain SQL enqueue is refused saying why.
 */
@ExtendWith(ArquillianExtension.class)
class EncryptionIT {

  private static final String PASSWORD = "it-store-pw";

  /** Where the test in the server finds the path of the key store the deployment made. */
  private static final String STORE_RESOURCE = "encryption-it-store.txt";

  @Deployment
  static WebArchive deployment() throws Exception {
    Path store = keyStore();
    return PgbusWars.of(
            "encryption",
            "pgbus.capsules=secret",
            "pgbus.capsule.secret.queues=it_secret",
            "pgbus.retry.base=1h",
            "pgbus.retry.cap=2h",
            "pgbus.queue.it_secret.encrypt=true",
            "pgbus.encryption.key-ids=k1,k2",
            "pgbus.encryption.keystore=" + store,
            "pgbus.encryption.keystore-type=PKCS12",
            "pgbus.encryption.keystore-password=" + PASSWORD)
        .addClass(SecretHandler.class)
        .addAsResource(new StringAsset(store.toString()), STORE_RESOURCE);
  }

  /** The server's key store with AES keys k1 and k2, made as an operator of that server would. */
  private static Path keyStore() throws Exception {
    Path dir = Files.createTempDirectory("pgbus-it-keys");
    Path store = dir.resolve("pgbus-keys.p12");
    // The server reads the keys once, at deploy; the files go when this test JVM ends.
    dir.toFile().deleteOnExit();
    store.toFile().deleteOnExit();
    String wildflyLog = System.getProperty("pgbus.it.wildfly.log");
    if (TestServer.current() == TestServer.WILDFLY && wildflyLog != null) {
      Path home = Path.of(wildflyLog).getParent().getParent().getParent();
      for (String alias : List.of("k1", "k2")) {
        Process p =
            new ProcessBuilder(
                    home.resolve("bin/elytron-tool.sh").toString(),
                    "credential-store",
                    "--create",
                    "--location",
                    store.toString(),
                    "--password",
                    PASSWORD,
                    "--properties",
                    "keyStoreType=PKCS12",
                    "--generate-secret-key",
                    alias)
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
          throw new IllegalStateException("elytron-tool failed: " + out);
        }
      }
    } else {
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      KeyGenerator gen = KeyGenerator.getInstance("AES");
      gen.init(256);
      for (String alias : List.of("k1", "k2")) {
        ks.setEntry(
            alias,
            new KeyStore.SecretKeyEntry(gen.generateKey()),
            new KeyStore.PasswordProtection(PASSWORD.toCharArray()));
      }
      try (OutputStream out = Files.newOutputStream(store)) {
        ks.store(out, PASSWORD.toCharArray());
      }
    }
    return store;
  }

  @EJB Enqueuer enqueuer;

  @Inject JobAdmin admin;

  @Resource(lookup = "jdbc/pgbus")
  DataSource ds;

  @Test
  void anEncryptingQueueRunsPlainStoresSealedAndRotates() throws Exception {
    String marker = "secret-" + UUID.randomUUID();
    long ok = enqueuer.enqueue("it_secret", marker + "-ok", false);
    long failing = enqueuer.enqueue("it_secret", marker + "-fail", true);
    awaitState(ok, "completed");
    awaitState(failing, "retryable");
    assertTrue(SecretHandler.SEEN.containsKey(marker + "-ok"), "the handler read the payload");
    assertTrue(SecretHandler.SEEN.containsKey(marker + "-fail"));

    JobCipher server = cipher("k1,k2");
    String error = text("SELECT errors->0->>'error' FROM pgbus.job WHERE id = ?", failing);
    assertFalse(error.contains(marker), error);
    assertTrue(server.openError(failing, error).contains("the handler failed on " + marker));
    assertTrue(
        server
            .openResult(ok, text("SELECT result::text FROM pgbus.job WHERE id = ?", ok))
            .contains(marker + "-ok"));
    assertEquals(
        0,
        Sql.count(
            ds,
            "SELECT count(*) FROM pgbus.job WHERE queue = 'it_secret'"
                + " AND (payload::text || coalesce(result::text, '') || errors::text) LIKE ?",
            "%" + marker + "%"));
    assertFalse(dump().contains(marker), "pg_dump holds the marker in plain");

    // A job sealed under the older key (as a JVM that had only k1 enqueues it) still runs here.
    JobCipher old = cipher("k1");
    long legacy;
    try (Connection c = ds.getConnection()) {
      legacy =
          new Jobs(EngineConfig.builder().build(), old)
              .enqueue(c, NewJob.of("it_secret", "{\"text\": \"" + marker + "-old\"}"));
    }
    awaitState(legacy, "completed");
    assertTrue(SecretHandler.SEEN.containsKey(marker + "-old"));
    assertEquals(
        "k1", JobCipher.keyIdOf(text("SELECT payload::text FROM pgbus.job WHERE id = ?", legacy)));

    // Re-encryption moves every row of the queue to k2 in bounded batches.
    var reencryption = new Reencryption(server);
    int n;
    int total = 0;
    do {
      try (Connection c = ds.getConnection()) {
        n = reencryption.run(c, "it_secret", 2, "EncryptionIT");
      }
      total += n;
    } while (n > 0);
    assertTrue(total >= 1, "re-encrypted " + total);
    assertEquals(
        0,
        Sql.count(
            ds,
            "SELECT count(*) FROM pgbus.job WHERE queue = 'it_secret'"
                + " AND payload->>'pgbus.enc' NOT LIKE 'pgbus.enc.v1:k2:%'"));
    assertTrue(
        cipher("k2")
            .openPayload(
                "it_secret",
                legacy,
                text("SELECT payload::text FROM pgbus.job WHERE id = ?", legacy))
            .contains(marker + "-old"));
    assertFalse(dump().contains(marker), "pg_dump holds the marker in plain");

    // A search by content cannot match ciphertext: refused, saying why, the text not echoed.
    InvalidFilterException refused =
        assertThrows(
            InvalidFilterException.class,
            () ->
                admin.search(
                    JobFilter.all()
                        .withQueue("it_secret")
                        .withPayloadContaining("{\"text\": \"" + marker + "-ok\"}"),
                    null,
                    10));
    assertTrue(refused.getMessage().contains("encrypts its payloads"), refused.getMessage());
    assertFalse(refused.getMessage().contains(marker), refused.getMessage());

    // A plain SQL enqueue cannot encrypt: the database refuses it (V53), saying what to do.
    java.sql.SQLException plain =
        assertThrows(
            java.sql.SQLException.class,
            () ->
                Sql.count(ds, "SELECT pgbus.enqueue('it_secret', '{\"text\": \"plain\"}'::jsonb)"));
    assertTrue(
        plain
            .getMessage()
            .contains("queue it_secret encrypts its payloads, and the payload is plaintext"),
        plain.getMessage());
  }

  /** The cipher of this deployment's key store, with only the key ids given. */
  private static JobCipher cipher(String keyIds) throws Exception {
    String store;
    try (var in = EncryptionIT.class.getClassLoader().getResourceAsStream(STORE_RESOURCE)) {
      store = new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
    }
    Map<String, String> config =
        Map.of(
            "pgbus.queue.it_secret.encrypt", "true",
            "pgbus.encryption.key-ids", keyIds,
            "pgbus.encryption.keystore", store,
            "pgbus.encryption.keystore-type", "PKCS12",
            "pgbus.encryption.keystore-password", PASSWORD);
    return EncryptionSettings.read(k -> Optional.ofNullable(config.get(k)), config.keySet());
  }

  private void awaitState(long id, String state) throws Exception {
    Await.until(
        "job " + id + " to be " + state,
        Duration.ofSeconds(60),
        () ->
            Sql.count(
                    ds,
                    "SELECT count(*) FROM pgbus.job WHERE id = ? AND state::text = ?",
                    id,
                    state)
                == 1);
  }

  private String text(String sql, long id) throws Exception {
    return String.valueOf(Sql.value(ds, sql, id));
  }

  /**
   * pgbus's schema of the test database as pg_dump writes it, found through the datasource (the
   * Enqueuer's business table, outside it, holds the marker by design).
   */
  private String dump() throws Exception {
    String db;
    int port;
    try (Connection c = ds.getConnection();
        ResultSet rs =
            c.createStatement()
                .executeQuery("SELECT current_database(), coalesce(inet_server_port(), 5432)")) {
      rs.next();
      db = rs.getString(1);
      port = rs.getInt(2);
    }
    Process p =
        new ProcessBuilder(
                "pg_dump",
                "-h",
                "127.0.0.1",
                "-p",
                String.valueOf(port),
                "-U",
                "postgres",
                "--schema=pgbus",
                db)
            .redirectErrorStream(true)
            .start();
    var out = new ByteArrayOutputStream();
    p.getInputStream().transferTo(out);
    String dump = out.toString(StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, dump);
    assertTrue(dump.contains("COPY pgbus.job"), "a dump of the jobs");
    return dump;
  }
}
