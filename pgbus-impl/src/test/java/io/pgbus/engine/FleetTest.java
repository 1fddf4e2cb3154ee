package io.pgbus.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.pgbus.Outcome;
import io.pgbus.engine.testing.Await;
import io.pgbus.engine.testing.TestDatabase;
import io.pgbus.engine.testing.TestEngines;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link Fleet} is what the admin API reads of the whole fleet: the maintenance leader, the live
 * listener backends and the node rows, as one snapshot.
 */
class FleetTest {

  @RegisterExtension static final TestDatabase db = TestDatabase.migrated();

  @RegisterExtension final TestEngines engines = new TestEngines(db);

  @Test
  void aSnapshotShowsTheLeaderItsListenerAndItsNodeUntilItStops() {
    Engine engine =
        engines.start(
            engines
                .builder(engines.config().capsule("main", 2, "fleet_q").build())
                .jobs((job, tx) -> Outcome.complete()));
    TestEngines.awaitDelivering(engine);
    Await.until("the leader", Duration.ofSeconds(10), engine::leader);
    String worker = engine.config().workerId();
    var fleet = new Fleet(db.dataSource());

    // The node row names its listener backend once the listener has written it: not at once.
    Await.until(
        "its node connected",
        Duration.ofSeconds(10),
        () -> fleet.nodes().stream().anyMatch(n -> n.workerId().equals(worker) && n.connected()));

    Fleet.Snapshot now = fleet.snapshot();
    assertThat(now.leader()).isEqualTo(worker);
    assertThat(now.listeners())
        .extracting(FleetStore.ListenerBackend::pid)
        .contains(engine.status().listener().backendPid());
    NodeStore.Node node =
        now.nodes().stream().filter(n -> n.workerId().equals(worker)).findFirst().orElseThrow();
    assertThat(node.connected()).isTrue();
    assertThat(node.capsules()).extracting(NodeStore.NodeCapsule::name).containsExactly("main");
    assertThat(fleet.nodes()).extracting(NodeStore.Node::workerId).contains(worker);

    engine.stop();
    Fleet.Snapshot after = fleet.snapshot();
    assertThat(after.leader()).as("the lease resigned at the stop").isNull();
    assertThat(after.nodes()).extracting(NodeStore.Node::workerId).doesNotContain(worker);
  }
}
