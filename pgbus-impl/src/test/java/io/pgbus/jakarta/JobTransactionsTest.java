package io.pgbus.jakarta;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.transaction.HeuristicMixedException;
import jakarta.transaction.HeuristicRollbackException;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * A container's heuristic commit outcome reaches the engine as a connection loss (SQLSTATE 08007),
 * which it retries recording after (issue #33: a job whose failure record met a PgBouncer restart
 * waited for its lease, five minutes); any other failure comes out as it was.
 */
class JobTransactionsTest {

  @Test
  void aHeuristicOutcomeBecomesTransactionResolutionUnknown() {
    var mixed = new RuntimeException("EJB commit", new HeuristicMixedException("XAER_RMFAIL"));
    var rolledBack = new IllegalStateException(new HeuristicRollbackException());

    Exception m = JobTransactions.outcomeUnknown(mixed);
    Exception r = JobTransactions.outcomeUnknown(rolledBack);

    assertThat(m).isInstanceOf(SQLException.class).hasCause(mixed);
    assertThat(((SQLException) m).getSQLState()).isEqualTo("08007");
    assertThat(((SQLException) r).getSQLState()).isEqualTo("08007");
  }

  @Test
  void anyOtherFailureComesOutAsItWas() {
    var other = new IllegalStateException("the handler's bug");

    assertThat(JobTransactions.outcomeUnknown(other)).isSameAs(other);
  }
}
