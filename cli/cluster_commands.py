"""The three kafka-cluster subcommands: cluster-id, unregister, list-endpoints (texts are Kafka's).

Rules:
- Client errors map to exit codes here and nowhere else: unreachable / timeout / not Kafka / TLS or
  SASL failure -> 69, a server error code -> 1, --require-fenced on an active broker -> 4.
- Text output is Kafka's byte for byte (list-endpoints uses Java's `%-Ns` padding, trailing spaces kept).
"""
from __future__ import annotations

from kraftsman.controller.server import sync_client as sc

from . import cluster_ops as ops
from .admin_tool import Failure
from .common import ExitStatus

REFUSED = 4
UNSUPPORTED_UNREGISTER = "The target cluster does not support the broker unregistration API."
ERROR_NAMES = {35: "UNSUPPORTED_VERSION", 41: "NOT_CONTROLLER", 42: "INVALID_REQUEST",
               102: "BROKER_ID_NOT_REGISTERED", 31: "CLUSTER_AUTHORIZATION_FAILED"}
DEFAULT_MESSAGES = {102: "The given broker ID was not registered.",
                    35: "The version of API is not supported."}


def _client_call(fn, *args):
    """Call an ops function, turning client failures into Failures with their exit codes."""
    try:
        return fn(*args)
    except (sc.Unreachable, sc.RequestTimeout, sc.NotKafka, sc.AuthenticationFailed) as e:
        raise Failure(str(e), ExitStatus.UNAVAILABLE) from None
    except ops.ServerError as e:
        name = ERROR_NAMES.get(e.code, f"error code {e.code}")
        raise Failure(f"{name}: {str(e) or DEFAULT_MESSAGES.get(e.code, 'no message')}", code=e.code) from None


def cluster_id(args, ctx) -> int:
    """Print `Cluster ID: <id>` (DescribeCluster; Metadata for old servers)."""
    kind = ops.CONTROLLERS if ctx.controllers else ops.BROKERS
    try:
        info = _client_call(ops.describe, ctx.addresses, ctx.config, ctx.deadline, kind)
    except sc.UnsupportedVersion as e:
        raise Failure(str(e)) from None
    if info.cluster_id is None:
        ctx.emit("No cluster ID found. The Kafka version is probably too old.", cluster_id=None)
    else:
        ctx.emit(f"Cluster ID: {info.cluster_id}", cluster_id=info.cluster_id)
    return ExitStatus.OK


def unregister(args, ctx) -> int:
    """Unregister broker --id; print `Broker <id> is no longer registered.`."""
    if args.require_fenced or args.dry_run:
        active = _is_active(args.id, ctx)
        if args.dry_run:
            state = "active (unfenced)" if active else "not active (fenced or not registered)"
            ctx.emit(f"Broker {args.id} is {state}; dry run, nothing changed.", broker_id=args.id,
                     active=active, dry_run=True)
            return ExitStatus.OK
        if active:
            raise Failure(f"Broker {args.id} is still active (unfenced); refusing to unregister it "
                          f"(--require-fenced).", REFUSED)
    try:
        _client_call(ops.unregister, ctx.addresses, ctx.config, ctx.deadline, args.id)
    except sc.UnsupportedVersion:
        ctx.emit(UNSUPPORTED_UNREGISTER, broker_id=args.id, result="unsupported")
        return ExitStatus.OK
    except Failure as e:
        if not args.missing_ok or e.code != ops.BROKER_ID_NOT_REGISTERED:
            raise
        ctx.emit(f"Broker {args.id} is not registered; nothing to do.", broker_id=args.id, result="not_registered")
        return ExitStatus.OK
    ctx.emit(f"Broker {args.id} is no longer registered.", broker_id=args.id, result="unregistered")
    return ExitStatus.OK


def _is_active(broker_id: int, ctx) -> bool:
    """Tell whether `broker_id` is among the unfenced brokers DescribeCluster lists."""
    try:
        info = _client_call(ops.describe, ctx.addresses, ctx.config, ctx.deadline, ops.BROKERS)
    except Failure as e:
        raise Failure(f"cannot tell whether broker {broker_id} is active: {e}", e.status) from None
    except sc.UnsupportedVersion as e:
        raise Failure(f"cannot tell whether broker {broker_id} is active: {e}") from None
    return any(node.node_id == broker_id for node in info.nodes)


def list_endpoints(args, ctx) -> int:
    """Print Kafka 4.0's endpoint table of brokers (-b) or controllers (-C)."""
    if args.include_fenced_brokers and ctx.controllers:
        raise Failure("Cannot use --include-fenced-brokers with command list-endpoints")
    if args.include_fenced_brokers:
        message = "The target cluster does not support DescribeCluster API version 2 (IncludeFencedBrokers)."
        ctx.emit(message, error=message)
        return ExitStatus.OK
    kind = ops.CONTROLLERS if ctx.controllers else ops.BROKERS
    try:
        info = _client_call(ops.describe, ctx.addresses, ctx.config, ctx.deadline, kind)
    except sc.UnsupportedVersion as e:          # Kafka prints UnsupportedVersionException's message on stdout
        ctx.emit(str(e), error=str(e))
        return ExitStatus.OK
    nodes = sorted(info.nodes, key=lambda n: n.node_id)
    rows = [{"id": n.node_id, "host": n.host, "port": n.port, "rack": n.rack, "fenced": n.fenced,
             "endpoint_type": "controller" if ctx.controllers else "broker"} for n in nodes]
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


COMMANDS = {"cluster-id": cluster_id, "unregister": unregister, "list-endpoints": list_endpoints}
