"""A real KIP-853 (dynamic) kraftsman quorum on 127.0.0.1: voters formatted with --initial-controllers and
configured with controller.quorum.bootstrap.servers only, and a 4th controller formatted with
--no-initial-controllers that replicates as an observer until kafka-metadata-quorum add-controller makes it a
voter (and remove-controller an observer again).

One quorum serves the whole module; tests run in file order.
"""
from __future__ import annotations

import io

import pytest

from kraftsman.cli.common.boundary import run_command
from kraftsman.cli.common.environment import Environment
from kraftsman.cli.quorum import tool as metadata_quorum
from kraftsman.storage.protocol.uuids import Uuid

from .quorum_fixtures import FAST, find_leader, loop_fixture, running_brokers, wait_for

loop = loop_fixture()


@pytest.fixture(scope="module")
def quorum(tmp_path_factory, loop):
    from kraftsman.cli.demo.local_quorum import LocalQuorum

    q = LocalQuorum(tmp_path_factory.mktemp("dynamic"), 3, extra=FAST, dynamic=True, spares=1)
    q.format()
    q.start()
    try:
        q.wait_listening()
        yield q
    finally:
        q.stop()


@pytest.fixture(scope="module")
def brokers(quorum, loop):
    with running_brokers(quorum, loop, (101,)) as sims:
        yield sims


def everyone(quorum):
    """Return the addresses of every controller, the spare included (it may lead once it is a voter)."""
    return {i: ("127.0.0.1", port) for i, port in quorum.ports.items()}


def leader_part(quorum, loop):
    """Return the leader's DescribeQuorum partition data once a leader committed its first offsets."""
    return loop.run(find_leader(everyone(quorum)))[1]


def mq(quorum, *argv):
    out, err = io.StringIO(), io.StringIO()
    status = run_command(metadata_quorum.run, ["--bootstrap-controller", quorum.bootstrap(), *argv],
                         Environment(stdout=out, stderr=err), prog="kafka-metadata-quorum")
    return status, out.getvalue(), err.getvalue()


def test_bootstrap_servers_voters_elect_a_leader(quorum, loop):
    part = leader_part(quorum, loop)
    assert sorted(v.replica_id for v in part.current_voters) == quorum.ids
    assert part.high_watermark > 0


def test_admin_client_creates_a_topic(quorum, brokers):
    from confluent_kafka.admin import AdminClient, NewTopic

    client = AdminClient({"bootstrap.servers": quorum.bootstrap(), "socket.timeout.ms": 10000})
    cluster = client.describe_cluster(request_timeout=10).result(20)
    assert cluster.cluster_id == quorum.cluster_id
    client.create_topics([NewTopic("dynamic", 1, 1)], request_timeout=15)["dynamic"].result(20)


def _observer(quorum, loop, node_id):
    part = leader_part(quorum, loop)
    for o in part.observers:
        if o.replica_id == node_id and o.log_end_offset >= part.high_watermark:
            return part
    return None


def test_spare_controller_catches_up_as_an_observer(quorum, loop):
    spare = quorum.spare_ids[0]
    quorum.start(spare)
    quorum.wait_listening()
    part = wait_for(lambda: _observer(quorum, loop, spare), timeout=30)
    assert spare not in [v.replica_id for v in part.current_voters]


def test_add_controller_makes_the_observer_a_voter(quorum, loop):
    spare = quorum.spare_ids[0]
    status, out, err = mq(quorum, "--command-config", str(quorum.config_path(spare)), "add-controller")
    assert status == 0, err
    assert out.startswith(f"Added controller {spare} with directory id ")
    part = wait_for(lambda: (p := leader_part(quorum, loop)) and len(p.current_voters) == 4 and p, timeout=30)
    assert sorted(v.replica_id for v in part.current_voters) == quorum.ids + [spare]
    # the new voter replicates as a voter: its end offset follows the leader's
    wait_for(lambda: next(v.log_end_offset for v in leader_part(quorum, loop).current_voters
                          if v.replica_id == spare) >= leader_part(quorum, loop).high_watermark - 1, timeout=30)


def test_four_voters_fail_over_and_the_old_leader_rejoins(quorum, loop):
    voters = everyone(quorum)
    old, part = loop.run(find_leader(voters))
    quorum.kill(old)
    new, _ = loop.run(find_leader(voters, exclude=(old,), min_high_watermark=part.high_watermark + 1))
    assert new != old
    quorum.start(old)
    quorum.wait_listening()
    wait_for(lambda: next(v.log_end_offset for v in loop.run(find_leader(voters))[1].current_voters
                          if v.replica_id == old) > part.high_watermark, timeout=30)


def test_remove_controller_makes_it_an_observer_again(quorum, loop):
    spare = quorum.spare_ids[0]
    part = leader_part(quorum, loop)
    directory = Uuid(bytes(next(v.replica_directory_id for v in part.current_voters if v.replica_id == spare)))
    status, out, err = mq(quorum, "remove-controller", "--controller-id", str(spare),
                          "--controller-directory-id", str(directory))
    assert status == 0, err
    assert out.startswith(f"Removed  KRaft controller {spare} with directory id {directory}")
    part = wait_for(lambda: (p := leader_part(quorum, loop)) and len(p.current_voters) == 3 and p, timeout=30)
    assert sorted(v.replica_id for v in part.current_voters) == quorum.ids
    wait_for(lambda: _observer(quorum, loop, spare), timeout=30)  # it still replicates, as an observer
