"""The recorded history of shared/fixtures/kafka-admin-3.9: on which cluster state each of its cases ran, as steps
that drive an AdminCluster there.

Rules:
- TIMELINE follows the fixture's # order: the cases of this half, and between them the state changes made outside
  the recorded cases (cluster.md) and the effects of the other half's cases (named after them where setup.txt names
  them), inferred from the following cases' setup.txt.
- Each case of this half has an effect (what its command changes). History.done(case, ran=True) says the caller's
  tool ran it; ran=False applies the effect with the state helpers, so a test can jump over cases it does not run.
- Topics get the placements the fixture recorded (RECORDED, read off its kafka-topics --describe outputs): a
  controller places replicas from a random start, so after a case that creates or grows a topic the recorded
  placement is enforced (a reassignment, then a preferred election) when the cluster chose another.
- prepare(case) never goes backwards: a case before the current position needs a fresh cluster.
- A case run by a tool whose effect completed in the recording before the next case (a quick reassignment, done
  within the next JVM's start-up) is awaited by done(ran=True) (SETTLED).
"""
from __future__ import annotations

from .admin_cluster import OFFSETS_TOPIC_CONFIGS, UNCLEAN, AdminCluster, FixtureClusterError
from .admin_cluster_ops import ClusterOps

RECORDED = {
    "__consumer_offsets": ([[4, 5], [5, 4], [5, 4]], OFFSETS_TOPIC_CONFIGS),
    "t-p3r2": ([[5, 4], [4, 5], [5, 4], [4, 5], [5, 4]], {}),
    "t-assign": ([[5, 4], [4, 5], [5, 4]], {}),
    "plain": ([[5]], {}),
    "t-cfg": ([[5, 4], [4, 5]], {"cleanup.policy": "compact", "min.insync.replicas": "2"}),
    "t.dotted": ([[4]], {}),
    "u": ([[4, 5]], {}),
    "t-on5": ([[5]], {}),
    "t-move": ([[4], [4]], {}),
    "doomed": ([[4, 5], [5, 4]], {}),
    "t-rf2-down": ([[4, 5]], {}),
}
PARTITIONS_BEFORE_ALTER = {"t-p3r2": 3}
THROTTLE = 1000


def _create(*names: str):
    def step(ops: ClusterOps) -> None:
        for name in names:
            assignment, configs = RECORDED[name]
            count = PARTITIONS_BEFORE_ALTER.get(name, len(assignment))
            ops.create_topic(name, assignment=assignment[:count], configs=configs)
    return step


def _acl(principal, operation, permission, resource, name, **kw):
    return lambda ops: ops.add_acl(principal, operation, permission, resource, name, **kw)


def _throttled_move(topic: str, index: int, current: list[int], target: list[int], complete: bool):
    def step(ops: ClusterOps) -> None:
        ops.throttle({(topic, index): (current, target)}, THROTTLE)
        ops.reassign({(topic, index): target}, complete=complete)
    return step


def _restart_round(ops: ClusterOps) -> None:
    """Broker 4 stops too (both down: u-0 keeps ISR [4] with no leader), then broker 5 starts again."""
    ops.cluster.stop_broker(4)
    ops.cluster.start_broker(5)


def _broker_4_back(ops: ClusterOps) -> None:
    ops.cluster.start_broker(4)
    ops.wait_full_isr()


def _elect_all(ops: ClusterOps) -> None:
    ops.elect(None)
    ops.cluster.wait(lambda image: all(t.partition(i).leader == t.partition(i).replicas[0]
                                       for t in image.topics.by_id.values() for i in t.partitions),
                     "every partition on its preferred leader")


CASE, STEP = "case", "step"
TIMELINE = [
    (STEP, "consumer group g1 makes __consumer_offsets", _create("__consumer_offsets")),
    (CASE, "topics-version"), (CASE, "topics-two-actions"), (CASE, "topics-create-partitions-rf"),
    (CASE, "topics-create-replica-assignment"),
    (STEP, "plain created (1 partition, RF 1)", _create("plain")),
    (CASE, "topics-create-existing"), (CASE, "topics-create-invalid-name"), (CASE, "topics-create-bad-config-value"),
    (CASE, "topics-create-no-topic"),
    (STEP, "t-cfg and t.dotted created; then u, t-on5, t-move, doomed (cluster.md)",
     _create("t-cfg", "t.dotted", "u", "t-on5", "t-move", "doomed")),
    (CASE, "topics-list-exclude-internal"), (CASE, "topics-describe-one"),
    (CASE, "topics-describe-under-replicated-none"), (CASE, "topics-describe-at-min-isr"),
    (CASE, "topics-describe-missing"), (CASE, "topics-alter-partitions-increase"), (CASE, "topics-delete-existing"),
    (CASE, "topics-delete-if-exists-missing"),
    (CASE, "configs-describe-topic"), (CASE, "configs-describe-broker"), (CASE, "configs-describe-broker-default"),
    (CASE, "configs-alter-topic-add"), (CASE, "configs-alter-topic-delete"), (CASE, "configs-alter-broker-add"),
    (CASE, "configs-alter-broker-delete"),
    (STEP, "configs-alter-broker-default-add: cluster default log.retention.ms=604800000",
     lambda ops: ops.broker_configs(None, {"log.retention.ms": "604800000"})),
    (CASE, "configs-describe-broker-default-after-add"), (CASE, "configs-alter-user-scram"),
    (CASE, "configs-alter-client-quota"), (CASE, "configs-alter-user-quota"),
    (STEP, "configs-alter-user-default-quota: default user producer_byte_rate=4096",
     lambda ops: ops.quotas({"user": None}, {"producer_byte_rate": 4096})),
    (CASE, "configs-describe-users-all"), (CASE, "configs-describe-clients-all"), (CASE, "configs-alter-bad-value"),
    (CASE, "configs-describe-missing-topic"), (CASE, "configs-bootstrap-controller-describe-broker"),
    (CASE, "configs-bootstrap-controller-describe-topic"),
    (CASE, "acls-list-empty"),
    (STEP, "acls-add-topic: User:alice Read ALLOW on Topic:LITERAL:plain",
     _acl("User:alice", "read", "allow", "topic", "plain")),
    (CASE, "acls-add-deny-topic"),
    (STEP, "an ACL on Group:LITERAL:g1", _acl("User:alice", "read", "allow", "group", "g1")),
    (CASE, "acls-add-cluster"),
    (STEP, "User:alice All ALLOW on Topic:PREFIXED:t-", _acl("User:alice", "all", "allow", "topic", "t-",
                                                             pattern="prefixed")),
    (CASE, "acls-add-producer"), (CASE, "acls-list-topic"), (CASE, "acls-list-topic-match"),
    (STEP, "acls-remove-force: plain keeps only bob's Write DENY",
     lambda ops: ops.remove_acl("User:alice", "read", "allow", "topic", "plain")),
    (CASE, "acls-list-topic-after-remove"), (CASE, "acls-add-no-principal"), (CASE, "acls-no-action"),
    (CASE, "configs-alter-user-default-quota-delete"),
    (STEP, "about 1 MB written into each of t-move-0 and t-move-1",
     lambda ops: (ops.produce("t-move", 0, 1_000_000), ops.produce("t-move", 1, 1_000_000))),
    (CASE, "reassign-generate"), (CASE, "reassign-list-none"),
    (STEP, "reassign-execute-throttled: t-move-0 [4] -> [5] with --throttle 1000 (done at once)",
     _throttled_move("t-move", 0, [4], [5], complete=True)),
    (CASE, "reassign-verify-done-throttled"), (CASE, "reassign-execute-expand"),
    (STEP, "about 8 MB more into t-move-1", lambda ops: ops.produce("t-move", 1, 8_000_000)),
    (CASE, "reassign-execute-throttled-big"), (CASE, "reassign-list-in-progress"), (CASE, "reassign-cancel"),
    (CASE, "reassign-execute-missing-broker"), (CASE, "reassign-no-action"),
    (STEP, "reassign-execute-quick: t-p3r2-0 [5,4] -> [4,5]", lambda ops: ops.reassign({("t-p3r2", 0): [4, 5]})),
    (CASE, "reassign-verify-done"), (CASE, "apiversions-broker4"), (CASE, "apiversions-bad-address"),
    (CASE, "cluster-list-endpoints-bootstrap-server"), (CASE, "cluster-cluster-id-bootstrap-server"),
    (CASE, "cluster-no-subcommand"), (CASE, "quorum-describe-status"), (CASE, "cluster-cluster-id-bootstrap-controller"),
    (STEP, "SIGTERM broker 5", lambda ops: ops.cluster.stop_broker(5)),
    (CASE, "topics-describe-broker-down-one"), (CASE, "topics-describe-broker-down-unavailable"),
    (CASE, "topics-describe-broker-down-all"), (CASE, "apiversions-broker-down"),
    (CASE, "election-preferred-partition-leader-down"),
    (STEP, "topics-create-broker-down-rf2: t-rf2-down with RF 2 while 5 is down", _create("t-rf2-down")),
    (CASE, "topics-describe-broker-down-created-rf2"),
    (STEP, "SIGTERM broker 4, then broker 5 started again", _restart_round),
    (CASE, "election-unclean"), (CASE, "topics-describe-after-unclean"),
    (STEP, "broker 4 started again, every ISR full", _broker_4_back),
    (STEP, "election-preferred-topic-partition: t-assign-0", lambda ops: ops.elect([("t-assign", 0)])),
    (CASE, "election-preferred-json-file"),
    (STEP, "preferred elections everywhere", _elect_all),
    (CASE, "election-preferred-all-nothing-to-do"), (CASE, "election-no-election-type"),
    (CASE, "election-malformed-json"), (CASE, "election-preferred-not-needed"), (CASE, "topics-describe-final-all"),
    (CASE, "configs-bootstrap-controller-describe-broker-default"),
    (CASE, "configs-bootstrap-controller-alter-broker-default"), (CASE, "configs-both-bootstraps"),
]
CASES = [entry[1] for entry in TIMELINE if entry[0] == CASE]


def _clear(topics: list[str]):
    return lambda ops: ops.clear_throttles(topics, [4, 5])


EFFECTS = {
    "topics-create-partitions-rf": _create("t-p3r2"),
    "topics-create-replica-assignment": _create("t-assign"),
    "topics-alter-partitions-increase": lambda ops: ops.add_partitions("t-p3r2", 5, RECORDED["t-p3r2"][0][3:]),
    "topics-delete-existing": lambda ops: ops.delete_topic("doomed"),
    "configs-alter-topic-add": lambda ops: ops.topic_configs("plain", {"retention.ms": "86400000",
                                                                       "cleanup.policy": "compact,delete"}),
    "configs-alter-topic-delete": lambda ops: ops.topic_configs("plain", delete=["retention.ms"]),
    "configs-alter-broker-add": lambda ops: ops.broker_configs(4, {"log.cleaner.threads": "2"}),
    "configs-alter-broker-delete": lambda ops: ops.broker_configs(4, delete=["log.cleaner.threads"]),
    "configs-alter-user-scram": lambda ops: ops.scram("alice", "pw", 8192),
    "configs-alter-client-quota": lambda ops: ops.quotas({"client-id": "c1"}, {"producer_byte_rate": 1024,
                                                                               "consumer_byte_rate": 2048}),
    "configs-alter-user-quota": lambda ops: ops.quotas({"user": "alice"}, {"request_percentage": 50}),
    "acls-add-deny-topic": _acl("User:bob", "write", "deny", "topic", "plain", host="10.0.0.1"),
    "acls-add-cluster": lambda ops: (_acl("User:alice", "describe", "allow", "cluster", "kafka-cluster")(ops),
                                     _acl("User:alice", "alter", "allow", "cluster", "kafka-cluster")(ops)),
    "acls-add-producer": lambda ops: [_acl("User:carol", op, "allow", "topic", "t-p3r2")(ops)
                                      for op in ("write", "create", "describe")],
    "configs-alter-user-default-quota-delete": lambda ops: ops.quotas({"user": None}, remove=["producer_byte_rate"]),
    "reassign-verify-done-throttled": _clear(["t-move"]),
    "reassign-execute-expand": lambda ops: ops.reassign({("t-move", 0): [4, 5]}),
    "reassign-execute-throttled-big": _throttled_move("t-move", 1, [4], [5], complete=False),
    "reassign-cancel": lambda ops: (ops.reassign({("t-move", 1): None}, complete=False), _clear(["t-move"])(ops)),
    "reassign-verify-done": _clear(["t-p3r2"]),
    "election-unclean": lambda ops: ops.elect([("u", 0)], UNCLEAN),
    "election-preferred-json-file": lambda ops: ops.elect([("t-assign", 2), ("t-assign", 1)]),
    "configs-bootstrap-controller-alter-broker-default":
        lambda ops: ops.broker_configs(None, {"log.cleaner.threads": "2"}),
}
# topics a case creates or grows: their recorded placement is enforced afterwards
PLACED = {"topics-create-partitions-rf": "t-p3r2", "topics-alter-partitions-increase": "t-p3r2"}


def _moved(topic: str, index: int, replicas: list[int]):
    def settle(ops: ClusterOps) -> None:
        ops.cluster.wait_partition(topic, index, f"replicas {replicas}, no reassignment, full ISR", lambda p: (
            list(p.replicas) == replicas and not p.adding_replicas and not p.removing_replicas
            and sorted(p.isr) == sorted(replicas)), 60)
    return settle


# What a case a tool ran had finished before the recording's next case (JVM start-ups took seconds): awaited
# after done(ran=True), so the next case starts from the recorded state.
SETTLED = {"reassign-execute-expand": _moved("t-move", 0, [4, 5])}


class History:
    """Walk an AdminCluster through the fixture's history, case by case."""

    def __init__(self, cluster: AdminCluster):
        self.cluster, self.ops = cluster, ClusterOps(cluster)
        self.position = 0
        self.log: list[str] = []

    def _index(self, case: str) -> int:
        for i, entry in enumerate(TIMELINE):
            if entry[0] == CASE and entry[1] == case:
                return i
        raise KeyError(f"{case} is not a case of the fixture's history")

    def prepare(self, case: str) -> None:
        """Bring the cluster to the state `case` ran on (emulating every earlier case not reported done)."""
        index = self._index(case)
        if index < self.position:
            raise FixtureClusterError(f"{case} ran before the cluster's current point: it needs a fresh cluster")
        for entry in TIMELINE[self.position:index]:
            if entry[0] == STEP:
                self.log.append(entry[1])
                entry[2](self.ops)
            else:
                self._emulate(entry[1])
        self.position = index

    def done(self, case: str, *, ran: bool = True) -> None:
        """Record that `case` happened: run by the caller's tool (ran), or emulated here."""
        index = self._index(case)
        if index != self.position:
            raise FixtureClusterError(f"{case} is not the case the cluster was prepared for")
        if ran:
            self._place(case)
            if case in SETTLED:
                SETTLED[case](self.ops)
        else:
            self._emulate(case)
        self.position = index + 1

    def _emulate(self, case: str) -> None:
        effect = EFFECTS.get(case)
        if effect is not None:
            self.log.append(f"{case} (emulated)")
            effect(self.ops)

    def _place(self, case: str) -> None:
        """Move the partitions of the topic `case` made to their recorded replicas, if the cluster chose others."""
        topic = PLACED.get(case)
        if topic is None:
            return
        targets = {}
        for index, replicas in enumerate(RECORDED[topic][0]):
            p = self.cluster.partition(topic, index)
            if p is not None and list(p.replicas) != replicas:
                targets[(topic, index)] = replicas
        if targets:
            self.log.append(f"{case}: placement moved to the recorded one")
            self.ops.reassign(targets)
            self.ops.elect(list(targets))
