package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.engine.testing.TestDatabase;
import java.sql.Connection;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The shapes of the history's indexes (V60): a day partition the leader creates finds finish times
 * by a BRIN and keeps its btrees packed full, and the rollup's minute of history stays an index
 * range without the finish-time btree.
 */
class HistoryIndexTest {

  @RegisterExtension
  static final TestDatabase db =
      TestDatabase.migrated().emptiedBeforeEach("pgbus.job", "pgbus.job_history");

  private final ArchiveStore archive = new ArchiveStore();

  @Test
  void aDayPartitionTheLeaderCreatesFindsFinishTimesByBrinAndPacksItsBtreesFull() throws Exception {
    LocalDate day = LocalDate.now(ZoneOffset.UTC).plusDays(ArchiveStore.DAYS_AHEAD);
    try (Connection c = db.connect()) {
      archive.archive(c, Duration.ofDays(3), 10);
    }
    String part = "pgbus." + ArchiveStore.name(day);

    assertThat(
            db.queryText(
                "SELECT string_agg(a.amname || ' ' || pg_get_indexdef(i.indexrelid, 1, true)"
                    + " || ' ' || coalesce(array_to_string(x.reloptions, ','), ''), '; '"
                    + " ORDER BY a.amname, pg_get_indexdef(i.indexrelid, 1, true))"
                    + " FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid"
                    + " JOIN pg_am a ON a.oid = x.relam WHERE i.indrelid = ?::regclass",
                part))
        .as("the partition's indexes: access method, first column, storage options")
        .isEqualTo(
            "brin finalized_at pages_per_range=32; btree batch_id fillfactor=100;"
                + " btree created_at fillfactor=100; btree id fillfactor=100;"
                + " btree queue fillfactor=100; btree unique_key fillfactor=100");
  }

  @Test
  void theRollupsMinuteOfHistoryIsAnIndexRangeAndCountsEveryJobOfIt() throws Exception {
    Instant start = LocalDate.now(ZoneOffset.UTC).atStartOfDay(ZoneOffset.UTC).toInstant();
    try (Connection c = db.connect()) {
      archive.archive(c, Duration.ofDays(3), 10);
      // A day of 5,000 jobs, one every 17.28 s, finished in order as the leader moves them.
      db.update(
          "INSERT INTO pgbus.job (queue, payload, state, attempt, run_at, attempted_at,"
              + " created_at, finalized_at)"
              + " SELECT 'hist_idx', jsonb_build_object('n', i), 'completed', 1, t, t, t, t"
              + " FROM generate_series(0, 4999) i,"
              + " LATERAL (SELECT ?::timestamptz + i * interval '17280 milliseconds' AS t) tt",
          Timestamp.from(start));
      assertThat(archive.move(c, start, start.plus(ArchiveStore.DAY), 50_000)).isEqualTo(5_000);
    }
    db.update("ANALYZE pgbus.job_history");
    String minute =
        " FROM pgbus.job_history h WHERE h.state = 'completed'"
            + " AND h.finalized_at >= ?::timestamptz + interval '10 hours'"
            + " AND h.finalized_at < ?::timestamptz + interval '10 hours 1 minute'";
    var from = Timestamp.from(start);

    String plan =
        db.queryText("EXPLAIN (COSTS OFF, FORMAT JSON) SELECT count(*)" + minute, from, from);

    // An index of the day's partition, not a read of all of it: at 5,000 rows the planner may
    // take the primary key's finalized_at (its second column); at a million, the BRIN
    // (docs/performance.md, "A week of history").
    assertThat(plan)
        .doesNotContain("Seq Scan")
        .contains(
            "\"Relation Name\": \""
                + ArchiveStore.name(LocalDate.ofInstant(start, ZoneOffset.UTC))
                + "\"")
        .contains("\"Index Cond\": \"((finalized_at >=");
    // 10:00:00 to 10:01:00: jobs 2084 (10:00:11.52) to 2086 (10:00:46.08).
    assertThat(db.queryLong("SELECT count(*)" + minute, from, from)).isEqualTo(3);
  }
}
