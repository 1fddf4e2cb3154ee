package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The leader's history rounds for an instance in another schema ({@code pgbus.schema=tenant_h}): it
 * creates its own day partitions with packed btrees (V60) and counts them (V47), finding them by
 * name among its own job_history's children, never under {@code pgbus.}.
 */
class HistoryInSchemaTest {

  @RegisterExtension
  static final TestDatabase tenant = TestDatabase.migrated().inSchema("tenant_h");

  private final ArchiveStore archive = new ArchiveStore();

  @Test
  void anInstanceInItsOwnSchemaCreatesPacksAndCountsItsDayPartitions() throws Exception {
    LocalDate today = LocalDate.now(ZoneOffset.UTC);
    ArchiveStore.Round round;
    try (Connection c = tenant.connect()) {
      round = archive.archive(c, Duration.ofDays(3), 10);
    }
    assertThat(round.created()).as("today and the days ahead").isGreaterThanOrEqualTo(3);
    String part = "tenant_h." + ArchiveStore.name(today);
    assertThat(
            tenant.queryText(
                "SELECT string_agg(DISTINCT coalesce(array_to_string(x.reloptions, ','), ''), ';')"
                    + " FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid"
                    + " JOIN pg_am a ON a.oid = x.relam"
                    + " WHERE i.indrelid = ?::regclass AND a.amname = 'btree'",
                part))
        .isEqualTo("fillfactor=100");

    try (Connection c = tenant.connect()) {
      assertThat(archive.recount(c, ArchiveStore.name(today))).isTrue();
    }
    assertThat(
            tenant.queryLong(
                "SELECT count(*) FROM tenant_h.job_history_counted WHERE part = ?::regclass", part))
        .isEqualTo(1);
  }
}
