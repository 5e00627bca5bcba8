"""The active controller's election tasks. Leader balancing (Kafka's electPreferred): every
leader.imbalance.check.interval.seconds while auto.leader.rebalance.enable, partitions not led by their first replica
elect it when it is in the ISR and active; at most 1,000 a run, the rest 10 ms later. Unclean elections (Kafka's
electUnclean): every unclean.leader.election.interval.ms, leaderless partitions of topics that allow it. Rules
restated in controller/quorum/controller.py and partition_elections.py.
"""
from __future__ import annotations

from kraftsman.controller.quorum.context import QuorumConfig
from kraftsman.controller.quorum.controller import QuorumController
from kraftsman.controller.quorum.partition_elections import balance_leaders
from kraftsman.controller.server.config import from_properties

from .cluster_fixtures import broker_record, ctx, image_of, names, partition, replay, topic

MINUTES_5 = 300_000


def _cluster(*parts, fenced=()):
    brokers = [broker_record(b, 10 * b, fenced=b in fenced) for b in (1, 2, 3)]
    return image_of(*brokers, *topic(*parts))


def _activated(image, **config):
    """Return an active QuorumController whose brokers never time out (only the balancing task acts)."""
    q = QuorumController(QuorumConfig(session_timeout_ms=10**9, **config), noop_interval_ms=None)
    q.on_activate(ctx(image, now=0))
    return q


def _leaders(image) -> dict[int, int]:
    t = image.topics.by_name["t"]
    return {pid: t.partition(pid).leader for pid in sorted(t.partitions)}


def test_a_rolling_restart_leaves_leaders_off_their_preferred_replicas_until_the_check_moves_them_back():
    image = _cluster(partition(0, [1, 2, 3], leader=2), partition(1, [2, 3, 1], leader=2),
                     partition(2, [3, 1, 2], leader=1))
    q = _activated(image)
    assert q.periodic(ctx(image, now=MINUTES_5 - 1)) == []
    (result,) = q.periodic(ctx(image, now=MINUTES_5))
    assert names(result.records) == ["PartitionChangeRecord", "PartitionChangeRecord"]
    image = replay(image, result.records)
    assert _leaders(image) == {0: 1, 1: 2, 2: 3}
    assert image.topics.by_name["t"].partition(0).leader_epoch == 1
    assert q.periodic(ctx(image, now=2 * MINUTES_5)) == []           # balanced: nothing more


def test_a_preferred_replica_out_of_the_isr_or_fenced_keeps_the_current_leader():
    image = _cluster(partition(0, [1, 2, 3], leader=2, isr=[2, 3]), partition(1, [3, 1, 2], leader=1), fenced=(3,))
    assert balance_leaders(ctx(image)) == ([], False)


def test_it_can_be_turned_off_and_its_interval_set():
    image = _cluster(partition(0, [1, 2, 3], leader=2))
    assert _activated(image, auto_leader_rebalance=False).periodic(ctx(image, now=10 * MINUTES_5)) == []
    q = _activated(image, leader_imbalance_check_interval_ms=5_000)
    assert [names(r.records) for r in q.periodic(ctx(image, now=5_000))] == [["PartitionChangeRecord"]]


def test_a_run_stops_at_its_limit_and_the_next_comes_10_ms_later():
    image = _cluster(*(partition(p, [1, 2, 3], leader=2) for p in range(5)))
    records, more = balance_leaders(ctx(image), limit=3)
    assert (len(records), more) == (3, True)
    assert balance_leaders(ctx(image), limit=5)[1] is True            # exactly the limit: Kafka looks again
    q = _activated(image)
    q.periodic(ctx(image, now=MINUTES_5))                             # 5 records, well under 1,000
    assert q._balance_soon is False


def test_the_properties_reach_the_quorum_config():
    config = from_properties({
        "process.roles": "controller", "node.id": "1", "controller.quorum.voters": "1@localhost:9093",
        "listeners": "CONTROLLER://:9093", "controller.listener.names": "CONTROLLER", "log.dirs": "/tmp/x",
        "auto.leader.rebalance.enable": "false", "leader.imbalance.check.interval.seconds": "30",
        "unclean.leader.election.interval.ms": "7000"})
    quorum = config.quorum_config()
    assert (quorum.auto_leader_rebalance, quorum.leader_imbalance_check_interval_ms,
            quorum.unclean_leader_election_interval_ms) == (False, 30_000, 7_000)


def _unclean_topic_image(unclean: str | None):
    """Return an image where t-0 has no leader: its ISR holds fenced broker 1 only, broker 2 is alive."""
    from kraftsman.storage.records.metadata import ApiMessageAndVersion

    from .cluster_fixtures import M
    image = _cluster(partition(0, [1, 2], leader=-1, isr=[1]), fenced=(1,))
    if unclean is not None:
        config = M("ConfigRecord", resource_type=2, resource_name="t", name="unclean.leader.election.enable",
                   value=unclean)
        image = replay(image, [ApiMessageAndVersion(config, 0)])
    return image


def test_leaderless_partitions_of_topics_allowing_it_get_an_unclean_leader_every_interval():
    image = _unclean_topic_image("true")
    q = _activated(image)
    assert q.periodic(ctx(image, now=MINUTES_5 - 1)) == []
    (result,) = q.periodic(ctx(image, now=MINUTES_5))
    p = replay(image, result.records).topics.by_name["t"].partition(0)
    assert (p.leader, p.isr, p.leader_recovery_state) == (2, [2], 1)              # RECOVERING
    q = _activated(image, unclean_leader_election_interval_ms=1_000)
    assert len(q.periodic(ctx(image, now=1_000))) == 1


def test_no_unclean_leader_where_the_topic_does_not_allow_it():
    for image in (_unclean_topic_image(None), _unclean_topic_image("false")):
        assert _activated(image).periodic(ctx(image, now=MINUTES_5)) == []
    image = _unclean_topic_image(None)
    q = _activated(image, unclean_leader_election=True)          # the cluster default (handlers read ctx.config)
    assert len(q.periodic(ctx(image, now=MINUTES_5, unclean_leader_election=True))) == 1
