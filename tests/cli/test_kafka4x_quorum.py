"""Kafka 4.x on real 3-voter kraftsman quorums (controller processes on 127.0.0.1 speaking Kafka 4.2, tools with
KRAFTSMAN_KAFKA_VERSION=4.2) and strict 4.2 simulated brokers.

- A dynamic quorum formatted at 3.9-IV0: 4.2 brokers register and unfence; `kafka-features upgrade --release-version
  4.2-IV1` finalizes every 4.x feature at Kafka's levels while the brokers follow; a downgrade to 3.9 is refused
  with Kafka's reason; dump-log and the shell read the log and snapshots a controller wrote.
- A static quorum formatted at 4.2-IV1 (4.2's default): 4.2 brokers register and unfence, a 3.9 broker cannot.
Each module-scoped quorum serves its tests in file order.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.dump_log.tool import run as dump_log
from kraftsman.cli.features import tool as features_tool
from kraftsman.cli.quorum import tool as quorum_tool
from kraftsman.cli.shell.tool import run as shell

from ..controller.server.quorum_fixtures import (
    FAST,
    finalized_features,
    find_leader,
    loop_fixture,
    running_brokers,
    running_quorum,
    stopped_follower,
    wait_for,
)

K42 = {"KRAFTSMAN_KAFKA_VERSION": "4.2"}
BROKERS = (101, 102)
EXTRA = FAST | {"metadata.log.max.record.bytes.between.snapshots": "1500"}
LEVELS_4_2 = {"eligible.leader.replicas.version": "1", "group.version": "1", "kraft.version": "1",
              "metadata.version": "4.2-IV1", "share.version": "1", "streams.version": "1", "transaction.version": "2"}
REFUSED = ("The update failed for all features since the following feature had an error: Unsupported metadata.version "
           "downgrade from 29 to 21. Refusing to perform the requested downgrade because it might delete metadata "
           "information.")
loop = loop_fixture()


def run(tool, prog: str, *argv, cwd: str | None = None):
    out, err = io.StringIO(), io.StringIO()
    env = Environment(stdout=out, stderr=err, env=dict(K42), **({"cwd": cwd} if cwd else {}))
    return run_command(tool, list(argv), env, prog=prog), out.getvalue(), err.getvalue()


def kf(quorum, *argv):
    return run(features_tool.run, "kafka-features", "--bootstrap-controller", quorum.bootstrap(), *argv)


def describe(quorum) -> dict[str, dict[str, str]]:
    status, out, err = kf(quorum, "describe")
    assert (status, err) == (0, ""), err
    rows = {}
    for line in out.splitlines():
        fields = dict(part.split(": ", 1) for part in line.split("\t"))
        rows[fields.pop("Feature")] = fields
    return rows


# ---------------------------------------------------------------- dynamic quorum, 3.9-IV0 -> 4.2-IV1


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("kafka42-upgrade"), loop, extra=EXTRA, dynamic=True,
                        kafka_version="4.2", release_version="3.9-IV0") as q:
        yield q


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    with running_brokers(quorum, loop, BROKERS, kafka_version="4.2") as sims:
        yield sims


@pytest.fixture(scope="module")
def upgraded(quorum, brokers, loop):
    """The cluster at 3.9-IV0 with 4.2 brokers registered (describe's rows, the brokers' state), then `upgrade
    --release-version 4.2-IV1` and what it printed: run once, whatever order the tests run in."""
    wait_for(lambda: all(not b.fenced and b.watch.metadata_version == 21 for b in brokers))
    before = describe(quorum), [(b.fenced, b.fatal) for b in brokers]
    # every voter registers itself (KIP-919) before Kafka accepts a feature change
    wait_for(lambda: kf(quorum, "upgrade", "--release-version", "4.2-IV1", "--dry-run")[0] == 0, timeout=30)
    result = kf(quorum, "upgrade", "--release-version", "4.2-IV1")
    for address in quorum.addresses().values():
        wait_for(lambda: finalized_features(address, loop).get("metadata.version") == 29, timeout=15)
    return before, result


def test_4_2_brokers_register_and_unfence_at_3_9_iv0(upgraded, brokers):
    (rows, states), _ = upgraded
    assert states == [(False, None)] * len(brokers)
    assert brokers[0].versions == {"BrokerRegistration": 4, "BrokerHeartbeat": 1, "Fetch": 18, "FetchSnapshot": 1}
    assert rows["metadata.version"] | {"Epoch": "-"} == {"SupportedMinVersion": "3.3-IV3",
                                                        "SupportedMaxVersion": "4.2-IV1",
                                                        "FinalizedVersionLevel": "3.9-IV0", "Epoch": "-"}
    assert {name: row["FinalizedVersionLevel"] for name, row in rows.items()} == {
        name: "0" for name in LEVELS_4_2 if name not in ("kraft.version", "metadata.version")} | {
        "kraft.version": "1", "metadata.version": "3.9-IV0"}


def test_upgrade_to_4_2_iv1_finalizes_every_4x_feature(quorum, brokers, upgraded):
    _, (status, out, err) = upgraded
    assert (status, err) == (0, "")
    assert out.splitlines() == [f"{name} was upgraded to {level if name != 'metadata.version' else 29}."
                                for name, level in LEVELS_4_2.items()]
    assert {name: row["FinalizedVersionLevel"] for name, row in describe(quorum).items()} == LEVELS_4_2
    wait_for(lambda: all(b.watch.metadata_version == 29 for b in brokers))
    assert all(not b.fenced and b.fatal is None for b in brokers)


def test_a_downgrade_to_3_9_is_refused_with_kafkas_reason(quorum, upgraded):
    status, out, err = kf(quorum, "downgrade", "--release-version", "3.9")
    expected = {"eligible.leader.replicas.version": 0, "group.version": 0, "kraft.version": 1,
                "metadata.version": 21, "share.version": 0, "streams.version": 0, "transaction.version": 0}
    assert (status, err) == (1, "7 out of 7 operation(s) failed.\n")
    assert out.splitlines() == [f"Could not downgrade {name} to {level}. {REFUSED}" for name, level in expected.items()]
    assert describe(quorum)["metadata.version"]["FinalizedVersionLevel"] == "4.2-IV1"


def test_describe_node_id_asks_that_controller(quorum, upgraded):
    """Kafka 4.2's `describe --node-id`: the named controller's own answer; a negative id is refused first, an id
    the cluster does not list is waited for until the deadline (as Kafka's Admin waits for its node)."""
    whole = kf(quorum, "describe")
    for node_id in quorum.addresses():
        assert kf(quorum, "describe", "--node-id", str(node_id)) == whole
    assert kf(quorum, "describe", "--node-id", "-1") == (1, "", "Invalid node id -1: must be non-negative.\n")
    status, out, err = kf(quorum, "--timeout", "2", "describe", "--node-id", "42")
    assert (status, out) == (69, "") and err      # the Admin's timeout (controller.client.admin.core.on_node)


def test_dump_log_and_the_shell_read_the_log_and_snapshots(quorum, brokers, upgraded, loop):
    _, part = loop.run(find_leader(quorum.addresses()))
    upgraded = part.high_watermark                          # the upgrade is below it

    def snapshots(node: int) -> list[Path]:
        return [p for p in quorum.partition_dir(node).glob("*.checkpoint") if int(p.name[:20]) > upgraded]
    wait_for(lambda: all(snapshots(n) for n in quorum.ids), timeout=90)
    with stopped_follower(quorum, loop, timeout=15) as follower:
        partition = quorum.partition_dir(follower)
        files = ",".join(str(p) for p in sorted(partition.glob("*.log")))
        status, out, err = run(dump_log, "kafka-dump-log", "--cluster-metadata-decoder", "--files", files)
        assert (status, err) == (0, "")
        for text in ('"name":"metadata.version","featureLevel":21', '"name":"metadata.version","featureLevel":29',
                     '"name":"share.version","featureLevel":1', '"name":"min.insync.replicas","value":"1"',
                     "LeaderChange: {", " KRaftVoters {", '"type":"REGISTER_BROKER_RECORD","version":3'):
            assert text in out, text
        assert "ZK_MIGRATION_STATE_RECORD" not in out          # Kafka 4.x writes none
        newest = max(snapshots(follower))
        status, out, err = run(shell, "kafka-metadata-shell", "--snapshot", str(newest), "tree", "/image/features")
        assert (status, err) == (0, "")
        assert "metadataVersion:\n  Optional[4.2-IV1]" in out and "zkMigrationState" not in out
        assert "finalized_eligible.leader.replicas.version:\n  1" in out
        status, out, _ = run(shell, "kafka-metadata-shell", "--snapshot", str(newest), "cat",
                             f"/image/cluster/brokers/{BROKERS[0]}")
        assert status == 0 and "metadata.version: 7-29" in out and "streams.version: 0-1" in out
        status, out, _ = run(dump_log, "kafka-dump-log", "--cluster-metadata-decoder", "--files", str(newest))
        assert status == 0 and '"name":"transaction.version","featureLevel":2' in out
        assert "ZK_MIGRATION_STATE_RECORD" not in out


# ---------------------------------------------------------------- static quorum formatted at 4.2-IV1


@pytest.fixture(scope="module")
def fresh(tmp_path_factory, loop):
    with running_quorum(tmp_path_factory.mktemp("kafka42-fresh"), loop, kafka_version="4.2") as q:
        yield q


def test_a_quorum_formatted_at_4_2_iv1_registers_and_unfences_4_2_brokers(fresh, loop):
    rows = describe(fresh)
    assert {name: row["FinalizedVersionLevel"] for name, row in rows.items()} == LEVELS_4_2 | {"kraft.version": "0"}
    with running_brokers(fresh, loop, (201, 202), kafka_version="4.2") as sims:
        assert all(not s.fenced and s.fatal is None for s in sims)
        wait_for(lambda: all(s.watch.metadata_version == 29 for s in sims))


def test_a_3_9_broker_cannot_register_on_4_2_iv1(fresh, loop):
    from kraftsman.controller.client.broker_sim import SimulatedBroker

    old = SimulatedBroker(203, fresh.addresses(), fresh.cluster_id)
    try:
        assert loop.run(old.register()) == 35              # UNSUPPORTED_VERSION: it tops out at metadata.version 21
    finally:
        loop.run(old.stop())


def _partition(quorum, topic: str, partition_id: int) -> dict:
    """Read a partition's registration from the running quorum (kafka-metadata-shell as a read-only observer)."""
    status, out, err = run(shell, "kafka-metadata-shell", "--bootstrap-controller", quorum.bootstrap(),
                           "cat", f"/image/topics/byName/{topic}/{partition_id}")
    assert status == 0, err
    fields = dict(re.findall(r"(\w+)=(\[[^\]]*\]|[^,)]+)", out))
    return {k: fields[k] for k in ("isr", "elr", "lastKnownElr", "leader", "leaderRecoveryState")}


def test_eligible_leader_replicas_let_a_cleanly_restarted_broker_lead_after_the_isr_is_gone(fresh, loop):
    """Kafka 4.1+'s ELR (on at 4.2-IV1), live: min.insync.replicas=2 on 3 replicas; two brokers crash one after the
    other (session timeouts): the ISR keeps one and the ELR the other; the last one crashes: the ISR empties; the
    ELR member restarted cleanly leads again. Without ELR (3.9) that last step needs an unclean election."""
    from confluent_kafka.admin import AdminClient, NewTopic

    with running_brokers(fresh, loop, (211, 212, 213), kafka_version="4.2") as sims:
        client = AdminClient({"bootstrap.servers": fresh.bootstrap(), "socket.timeout.ms": 10000})
        topic = NewTopic("elr", 1, replica_assignment=[[211, 212, 213]],       # not on the earlier tests' brokers
                         config={"min.insync.replicas": "2"})
        created = client.create_topics([topic], request_timeout=20)
        created["elr"].result(30)
        by_id = {s.broker_id: s for s in sims}
        state = {}
        wait_for(lambda: state.update(_partition(fresh, "elr", 0)) or state["leader"] != "-1", timeout=20)
        leader = int(state["leader"])
        first, second = [b for b in sorted(by_id) if b != leader]
        for gone in (first, second):
            by_id[gone].crash()
            wait_for(lambda: str(gone) not in _partition(fresh, "elr", 0)["isr"], timeout=20)
        assert _partition(fresh, "elr", 0) | {"leaderRecoveryState": ""} == {
            "isr": f"[{leader}]", "elr": f"[{second}]", "lastKnownElr": "[]", "leader": str(leader),
            "leaderRecoveryState": ""}
        by_id[leader].crash()
        wait_for(lambda: _partition(fresh, "elr", 0)["leader"] == "-1", timeout=20)
        assert _partition(fresh, "elr", 0) == {"isr": "[]", "elr": f"[{', '.join(map(str, sorted((leader, second))))}]",
                                               "lastKnownElr": f"[{leader}]", "leader": "-1",
                                               "leaderRecoveryState": "RECOVERED"}
        assert loop.run(by_id[second].start_again(clean=True)) == 0
        wait_for(lambda: _partition(fresh, "elr", 0)["leader"] == str(second), timeout=20)
        assert _partition(fresh, "elr", 0) == {"isr": f"[{second}]", "elr": f"[{leader}]", "lastKnownElr": "[]",
                                               "leader": str(second), "leaderRecoveryState": "RECOVERED"}


def test_a_static_quorum_moves_to_kraft_version_1(fresh, loop):
    """Kafka 4.1+'s upgrade of a static quorum: kraft.version 1 and a VotersRecord of the configured voters."""
    assert kf(fresh, "upgrade", "--feature", "kraft.version=1", "--dry-run") == (
        0, "kraft.version can be upgraded to 1.\n", "")
    assert describe(fresh)["kraft.version"]["FinalizedVersionLevel"] == "0"
    assert kf(fresh, "upgrade", "--release-version", "4.2-IV1") == (0, "".join(
        f"{name} was upgraded to {level if name != 'metadata.version' else 29}.\n"
        for name, level in LEVELS_4_2.items()), "")
    for address in fresh.addresses().values():
        wait_for(lambda: finalized_features(address, loop).get("kraft.version") == 1, timeout=15)
    status, out, _ = run(quorum_tool.run, "kafka-metadata-quorum", "--bootstrap-controller", fresh.bootstrap(),
                         "describe", "--status")
    voters = out.split("CurrentVoters:", 1)[1].split("CurrentObservers:", 1)[0]
    assert status == 0 and voters.count('"directoryId": "') == 3      # the voters' directory ids, now recorded
    assert kf(fresh, "downgrade", "--feature", "kraft.version=0")[0] == 1     # only upgrades


# ---------------------------------------------------------------- activation records per release


def test_activation_records_are_the_releases(tmp_path, loop):
    """A 3.9 controller writes ZkMigrationStateRecord(NONE) in its bootstrap transaction and in its snapshots (as
    Kafka 3.9 does); the 4.2 quorum above wrote none and the ELR min.insync.replicas instead."""
    with running_quorum(tmp_path, loop, voters=1, extra=EXTRA) as q:
        partition = q.partition_dir(q.ids[0])
        wait_for(lambda: list(partition.glob("*.checkpoint")), timeout=60)
        out = io.StringIO()
        env = Environment(stdout=out, stderr=io.StringIO(), env={})
        files = ",".join(str(p) for p in sorted(partition.glob("*.log")) + sorted(partition.glob("*.checkpoint")))
        assert run_command(dump_log, ["--cluster-metadata-decoder", "--files", files], env, prog="kafka-dump-log") == 0
    text = out.getvalue()
    bootstrap = text[text.index('"name":"Bootstrap records"'):text.index("END_TRANSACTION_RECORD")]
    assert '"type":"ZK_MIGRATION_STATE_RECORD","version":0,"data":{"zkMigrationState":0}' in bootstrap
    snapshot = text[text.index("SnapshotHeader"):]
    assert "ZK_MIGRATION_STATE_RECORD" in snapshot and "min.insync.replicas" not in text
