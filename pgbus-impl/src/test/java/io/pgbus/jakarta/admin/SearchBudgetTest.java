package io.pgbus.jakarta.admin;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The per-user budget of payload searches of the admin API (issue #23), on a clock of its own. */
class SearchBudgetTest {

  private final AtomicLong nanos = new AtomicLong(42);
  private final SearchBudget budget = new SearchBudget(nanos::get);

  @Test
  void aUserGetsTenSearchesAtOnceThenOneASecondWhileOthersKeepTheirOwn() {
    for (int i = 0; i < SearchBudget.BURST; i++) {
      assertThat(budget.take("mallory")).as("search %d", i + 1).isZero();
    }
    assertThat(budget.take("mallory")).as("retry after, s").isEqualTo(1);
    assertThat(budget.take("alice")).isZero();
    nanos.addAndGet(500_000_000L);
    assertThat(budget.take("mallory")).as("half a token").isEqualTo(1);
    nanos.addAndGet(500_000_000L);
    assertThat(budget.take("mallory")).isZero();
    assertThat(budget.take("mallory")).isEqualTo(1);
    // Idle for a minute: a full burst again, never more.
    nanos.addAndGet(60_000_000_000L);
    int taken = 0;
    while (budget.take("mallory") == 0) {
      taken++;
    }
    assertThat(taken).isEqualTo(SearchBudget.BURST);
  }

  @Test
  void manyUsersAreForgottenOnlyOnceTheirBudgetIsFull() {
    for (int i = 0; i < SearchBudget.BURST; i++) {
      budget.take("mallory");
    }
    for (int i = 0; i < SearchBudget.MAX_USERS; i++) {
      budget.take("user" + i);
    }
    assertThat(budget.take("mallory")).as("still spent after 10,000 other users").isEqualTo(1);
  }
}
