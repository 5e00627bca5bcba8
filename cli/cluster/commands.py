"""kafka-cluster's Kafka verbs: cluster-id, unregister, list-endpoints (texts are Kafka's), and kraftsman's
describe-brokers (its table and JSON are brokers.py); wait and health are wait.py and health_run.py.

Rules:
- Client errors map to exit codes in common.admin.admin_call: unreachable / timeout / not Kafka / TLS or SASL
  failure -> 69, a server error code -> 1 (worded by texts.server_words); here --require-fenced on an active
  broker -> 4.
- Text output is Kafka's byte for byte (list-endpoints uses Java's `%-Ns` padding, trailing spaces kept);
  list-endpoints' JSON adds each broker's start_time_ms (-1 when unknown).
- `unregister --dry-run` reads the broker's state (reads.registered: registered and fenced, registered and active,
  not registered; "fenced or not registered" from a server whose DescribeCluster lists unfenced brokers only) and
  whether the API is served, says what the real run would do under --require-fenced and --missing-ok, and exits
  with the real run's code (1 when the server cannot tell a fenced broker from a missing one and only one of them
  would succeed).
"""
from __future__ import annotations

from ..common.admin import Failure, Unsupported, admin_call
from ..common.status import ExitStatus
from .texts import describe_cluster, server_words

REFUSED = ExitStatus.REFUSED
UNSUPPORTED_UNREGISTER = "The target cluster does not support the broker unregistration API."
DRY_RUN_TEXTS = {
    "would_unregister": "Broker {id} is registered and fenced: it would be removed.",
    "would_unregister_active": "Broker {id} is registered and active: it would be removed (--require-fenced would "
                               "refuse it).",
    "refused_with_require_fenced": "Broker {id} is registered and active: --require-fenced would refuse to remove it "
                                   "(exit 4).",
    "not_registered": "Broker {id} is not registered: the run would fail (exit 1; 0 with --missing-ok).",
    "not_registered_missing_ok": "Broker {id} is not registered: nothing to remove (--missing-ok: exit 0).",
    "not_active": "Broker {id} is not active: fenced (it would be removed) or not registered (nothing to do with "
                  "--missing-ok); exit 0 either way.",
    "not_active_unknown": "Broker {id} is not active: fenced (it would be removed, exit 0) or not registered (exit "
                          "1); this server's DescribeCluster cannot tell which (--bootstrap-controller can).",
    "unsupported": "The target cluster does not support the broker unregistration API: the run would say so and "
                   "exit 0.",
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
        return _dry_run(args, ctx)
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


def _dry_run(args, ctx) -> int:
    """Tell what unregister would do to broker --id and exit as the real run would, changing nothing."""
    from .reads import registered

    brokers = registered(ctx)
    broker = brokers.by_id.get(args.id)
    state = "missing" if broker is None and brokers.complete else "inactive" if broker is None \
        else "fenced" if broker.fenced else "active"
    if not (state == "active" and args.require_fenced) and not _unregister_supported(ctx):
        result, status = "unsupported", ExitStatus.OK
    else:
        result, status = predicted(state, args.require_fenced, args.missing_ok)
    known = {"registered": None if state == "inactive" else broker is not None,
             "fenced": None if state in ("missing", "inactive") else state == "fenced"}
    ctx.emit(DRY_RUN_TEXTS[result].format(id=args.id) + " Dry run: nothing changed.", status=status,
             broker_id=args.id, dry_run=True, result=result, active=state == "active", **known)
    return status


def predicted(state: str, require_fenced: bool, missing_ok: bool) -> tuple[str, int]:
    """Return (result, exit status) of a real unregister of a broker in `state` (active, fenced, missing, or
    inactive: fenced or missing, the server cannot tell) under the flags, as unregister() would end."""
    if state == "active":
        return ("refused_with_require_fenced", REFUSED) if require_fenced else ("would_unregister_active",
                                                                              ExitStatus.OK)
    if state == "fenced":
        return "would_unregister", ExitStatus.OK
    if missing_ok:
        return ("not_registered_missing_ok" if state == "missing" else "not_active"), ExitStatus.OK
    return ("not_registered" if state == "missing" else "not_active_unknown"), ExitStatus.ERROR


def _unregister_supported(ctx) -> bool:
    """Tell whether the server UnregisterBroker would go to speaks it (the real run's Unsupported)."""
    try:
        return admin_call(ctx.admin().serves, "UnregisterBroker", wording=server_words)
    except Unsupported:
        return False


def _is_active(broker_id: int, ctx) -> bool:
    """Tell whether `broker_id` is among the unfenced brokers DescribeCluster lists."""
    try:
        info = describe_cluster(ctx, controllers=False)
    except Failure as e:
        raise Failure(f"cannot tell whether broker {broker_id} is active: {e}", e.status) from None
    return any(node.node_id == broker_id for node in info.nodes)


def list_endpoints(args, ctx) -> int:
    """Print Kafka 4.0's endpoint table of brokers (-b) or controllers (-C)."""
    if args.include_fenced_brokers and ctx.controllers:
        raise Failure("Cannot use --include-fenced-brokers with command list-endpoints")
    try:
        info = describe_cluster(ctx, ctx.controllers, include_fenced=args.include_fenced_brokers)
    except Unsupported as e:          # Kafka prints UnsupportedVersionException's message on stdout
        ctx.emit(str(e), error=str(e))
        return ExitStatus.OK
    if args.include_fenced_brokers and not info.fenced_included:
        message = "The target cluster does not support DescribeCluster API version 2 (IncludeFencedBrokers)."
        ctx.emit(message, error=message)
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


def describe_brokers(args, ctx) -> int:
    """Print every registered broker (text table, or JSON/YAML objects)."""
    import time

    from .brokers import broker_data, format_table
    from .reads import registered

    found = registered(ctx)
    brokers = list(found.by_id.values())
    now_ms = int(time.time() * 1000)
    note = "" if found.complete else "(this server's DescribeCluster lists unfenced brokers only)\n"
    text = format_table(brokers, now_ms) + note if brokers else "No broker is registered.\n" + note
    ctx.emit(text, source=found.source, brokers=[broker_data(b, now_ms) for b in brokers])
    return ExitStatus.OK
