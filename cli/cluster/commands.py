"""kafka-cluster's Kafka verbs: cluster-id, unregister, list-endpoints (texts are Kafka's); kraftsman's
describe-brokers, wait and health are brokers.py, wait.py and health.py.

Rules:
- Client errors map to exit codes in common.admin.admin_call: unreachable / timeout / not Kafka / TLS or SASL
  failure -> 69, a server error code -> 1 (worded by texts.server_words); here --require-fenced on an active
  broker -> 4.
- Text output is Kafka's byte for byte (list-endpoints uses Java's `%-Ns` padding, trailing spaces kept);
  list-endpoints' JSON adds each broker's start_time_ms (-1 when unknown).
- `unregister --dry-run` tells three cases apart (registered and fenced: would be removed; registered and active:
  refused with --require-fenced; not registered); with --bootstrap-server DescribeCluster cannot tell fenced from
  not registered, and says so.
"""
from __future__ import annotations

from ..common.admin import Failure, Unsupported, admin_call
from ..common.status import ExitStatus
from .texts import describe_cluster, server_words

REFUSED = ExitStatus.REFUSED
UNSUPPORTED_UNREGISTER = "The target cluster does not support the broker unregistration API."
DRY_RUN_TEXTS = {
    "would_unregister": "Broker {id} is registered and fenced: it would be removed.",
    "refused_with_require_fenced": "Broker {id} is registered and active: it would be refused with --require-fenced "
                                   "(and removed without it).",
    "not_registered": "Broker {id} is not registered: nothing to remove (exit 0 with --missing-ok, 1 without).",
    "not_active": "Broker {id} is not active: fenced or not registered (--bootstrap-server cannot tell which; "
                  "--bootstrap-controller can).",
}


def cluster_id(args, ctx) -> int:
    """Print `Cluster ID: <id>` (DescribeCluster; Metadata for old servers)."""
    info = describe_cluster(ctx, ctx.controllers)
    if info.cluster_id is None:
        ctx.emit("No cluster ID found. The Kafka version is probably too old.", cluster_id=None)
    else:
        ctx.emit(f"Cluster ID: {info.cluster_id}", cluster_id=info.cluster_id)
    return ExitStatus.OK


def unregister(args, ctx) -> int:
    """Unregister broker --id; print `Broker <id> is no longer registered.`."""
    from kraftsman.storage.protocol.errors import Errors

    if args.dry_run:
        return _dry_run(args.id, ctx)
    if args.require_fenced:
        if _is_active(args.id, ctx):
            raise Failure(f"Broker {args.id} is still active (unfenced); refusing to unregister it "
                          f"(--require-fenced).", REFUSED)
    try:
        admin_call(ctx.admin().unregister_broker, args.id, wording=server_words)
    except Unsupported:
        ctx.emit(UNSUPPORTED_UNREGISTER, broker_id=args.id, result="unsupported")
        return ExitStatus.OK
    except Failure as e:
        if not args.missing_ok or e.code != Errors.BROKER_ID_NOT_REGISTERED:
            raise
        ctx.emit(f"Broker {args.id} is not registered; nothing to do.", broker_id=args.id, result="not_registered")
        return ExitStatus.OK
    ctx.emit(f"Broker {args.id} is no longer registered.", broker_id=args.id, result="unregistered")
    return ExitStatus.OK


def _dry_run(broker_id: int, ctx) -> int:
    """Tell what unregister would do to `broker_id`, changing nothing."""
    from .brokers import registered

    if ctx.controllers:
        broker = registered(ctx).get(broker_id)
        active = broker is not None and not broker.fenced
        result = "not_registered" if broker is None else "refused_with_require_fenced" if active \
            else "would_unregister"
        known = {"registered": broker is not None, "fenced": None if broker is None else broker.fenced}
    else:
        active = _is_active(broker_id, ctx)
        result = "refused_with_require_fenced" if active else "not_active"
        known = {"registered": True if active else None, "fenced": False if active else None}
    ctx.emit(DRY_RUN_TEXTS[result].format(id=broker_id) + " Dry run: nothing changed.", broker_id=broker_id,
             dry_run=True, result=result, active=active, **known)
    return ExitStatus.OK


def _is_active(broker_id: int, ctx) -> bool:
    """Tell whether `broker_id` is among the unfenced brokers DescribeCluster lists."""
    try:
        info = describe_cluster(ctx, controllers=False)
    except Failure as e:
        raise Failure(f"cannot tell whether broker {broker_id} is active: {e}", e.status) from None
    return any(node.node_id == broker_id for node in info.nodes)


# --include-fenced-brokers with --bootstrap-controller: kraftsman's words for 3.9 (no list-endpoints there), Kafka 4.x's
FENCED_WITH_CONTROLLERS = {"3.9": "Cannot use --include-fenced-brokers with command list-endpoints",
                           **dict.fromkeys(("4.0", "4.1", "4.2"), "The option --include-fenced-brokers is only "
                                                                  "supported with --bootstrap-server option")}


def list_endpoints(args, ctx) -> int:
    """Print Kafka 4.0's endpoint table of brokers (-b) or controllers (-C)."""
    if args.include_fenced_brokers and ctx.controllers:
        raise Failure(FENCED_WITH_CONTROLLERS[ctx.release])
    if args.include_fenced_brokers:
        message = "The target cluster does not support DescribeCluster API version 2 (IncludeFencedBrokers)."
        ctx.emit(message, error=message)
        return ExitStatus.OK
    try:
        info = describe_cluster(ctx, ctx.controllers)
    except Unsupported as e:          # Kafka prints UnsupportedVersionException's message on stdout
        ctx.emit(str(e), error=str(e))
        return ExitStatus.OK
    nodes = sorted(info.nodes, key=lambda n: n.node_id)
    rows = [{"id": n.node_id, "host": n.host, "port": n.port, "rack": n.rack, "fenced": n.fenced,
             "endpoint_type": "controller" if ctx.controllers else "broker"}
            | ({} if ctx.controllers else {"start_time_ms": n.start_time_ms}) for n in nodes]
    ctx.emit(format_endpoints(nodes, ctx.controllers), cluster_id=info.cluster_id, endpoints=rows)
    return ExitStatus.OK


def format_endpoints(nodes, controllers: bool) -> str:
    """Return Kafka 4.0's list-endpoints table (Java printf `%-Ns` columns)."""
    host_width = max((len(n.host) for n in nodes), default=100)
    rack_width = max((len(n.rack) for n in nodes if n.rack is not None), default=10)

    def row(*cells) -> str:
        widths = [10, host_width, 10, rack_width] + ([15] if controllers else [10, 15])
        return " ".join(f"{cell:<{w}}" if w else str(cell) for cell, w in zip(cells, widths)) + "\n"

    if controllers:
        lines = [row("ID", "HOST", "PORT", "RACK", "ENDPOINT_TYPE")]
        lines += [row(n.node_id, n.host, n.port, _rack(n), "controller") for n in nodes]
    else:
        lines = [row("ID", "HOST", "PORT", "RACK", "STATE", "ENDPOINT_TYPE")]
        lines += [row(n.node_id, n.host, n.port, _rack(n), "fenced" if n.fenced else "unfenced", "broker")
                  for n in nodes]
    return "".join(lines)


def _rack(node) -> str:
    return "null" if node.rack is None else node.rack
