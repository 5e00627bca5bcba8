"""kafka-broker-api-versions' run: BrokerApiVersionsCommand's check, its calls through the Admin client, its texts,
and its failures in Kafka's forms.

Rules:
- check(r): --bootstrap-server is required (CommandLineUtils.checkRequiredArgs: Kafka's message and option table,
  exit 1); kraftsman's --bootstrap-controller stands for it (the controllers' own API lists), and the two together
  are a forbidden pair in jopt-simple's words.
- The bootstrap addresses are resolved first, as ClientUtils.parseAndValidateAddresses does: an unresolvable one
  is a WARN line (ClientUtils), none left is Kafka's ConfigException. One bootstrap node per address, ids -1, -2,
  ... in the order given (Kafka's Cluster shuffles them).
- Then Admin.api_versions_of_every_node, asked again every 50 ms while the answer lists no node (awaitBrokers;
  Kafka waits without end, kraftsman until the deadline: then a TimeoutException in Kafka's form, exit 69, also
  when an ask after an empty answer runs into the deadline); each
  node is `<node> -> (` its APIs `)` (node_versions) or
  `<node> -> ERROR: <the Java exception>`: DisconnectException when the node cannot be asked (after NetworkClient's
  WARN line when it refused the connection), its authentication exception's class and message when TLS or SASL
  failed. Nodes go in id order (Kafka's order is random: its Cluster shuffles them). A node's error leaves the
  exit code 0, as Kafka's.
- The command catches nothing, so a failure reaches the JVM: `Exception in thread "main"` and the trace
  (jopt.thread). No bootstrap address answers: NetworkClient's two WARN lines twice per address when every one
  refused the connection (the metadata updater's attempt and the request's, as recorded for one address), then
  RuntimeException "Request METADATA failed on brokers List(...)"; an authentication failure is its own Kafka
  class. These exit 69 where Kafka exits 1: the suite's rule for a cluster it cannot reach (README's exit codes).
- --output json|yaml: one object, the nodes with their APIs (cli/schemas/broker-api-versions.schema.json), and no
  Kafka log line; a failure is jopt's failure object plus "reason", the client's own words.
"""
from __future__ import annotations

from ..common import jopt
from ..common.status import ExitStatus
from . import node_versions

PROG = "kafka-broker-api-versions"
CLIENT_LOG = "[LegacyAdminClient clientId=admin-1] "     # the command's own client, the first of its JVM
NETWORK_CLIENT = "org.apache.kafka.clients.NetworkClient"
DISCONNECTED = "org.apache.kafka.common.errors.DisconnectException"
RUNTIME = "java.lang.RuntimeException"
AWAIT_S = 0.05                                           # awaitBrokers' pause between Metadata requests
AUTHENTICATION = {True: "org.apache.kafka.common.errors.SslAuthenticationException",
                  False: "org.apache.kafka.common.errors.SaslAuthenticationException"}


def run(r: jopt.Run) -> int:
    """Check the command line, then print the API versions of every node; return the exit status."""
    r.args.command = PROG
    check(r)
    bootstrap = bootstrap_nodes(r)
    found = sorted(_every_node(r, bootstrap), key=lambda n: n.node.node_id)
    if r.structured:
        r.emit("", endpoint_type="controller" if r.has("bootstrap_controller") else "broker",
               nodes=[_node_fields(n) for n in found])
        return ExitStatus.OK
    for answer in found:
        if answer.error is None:
            r.env.stdout.write(node_versions.text(answer.node, answer.versions))
        else:
            r.env.stdout.write(f"{answer.node} -> ERROR: {_node_error(r, answer)}\n")
    return ExitStatus.OK


def check(r: jopt.Run) -> None:
    """Raise UsageExit as BrokerVersionCommandOptions.checkArgs does (and for both bootstraps at once)."""
    if not (r.has("bootstrap_server") or r.has("bootstrap_controller")):
        raise jopt.missing_argument("bootstrap-server")
    if r.has("bootstrap_server") and r.has("bootstrap_controller"):
        raise jopt.cannot_combine("bootstrap-server", "bootstrap-controller")


# ---------------------------------------------------------------- the bootstrap nodes


def bootstrap_nodes(r: jopt.Run) -> list:
    """Return the bootstrap addresses as Kafka's bootstrap Nodes (ids -1, -2, ...), resolvable ones only; an
    unresolvable one is ClientUtils' WARN line, none resolvable its ConfigException (see Rules)."""
    from kraftsman.controller.client.admin import Node

    nodes = []
    for host, port in r.context().addresses:
        if socket_address(host, port) is None:
            _log(r, f"Couldn't resolve server {host}:{port} from bootstrap.servers as DNS resolution failed for "
                    f"{host}", "org.apache.kafka.clients.ClientUtils")
        else:
            nodes.append(Node(-1 - len(nodes), host, port))
    if not nodes:
        raise jopt.KafkaError("No resolvable bootstrap urls given in bootstrap.servers", jopt.CONFIG_EXCEPTION,
                              status=ExitStatus.UNAVAILABLE)
    return nodes


def socket_address(host: str, port: int) -> str | None:
    """Return Java's InetSocketAddress text of host:port (`/ip:port` for an address, `name/ip:port` for a name,
    IPv4 first as Java's resolver prefers), or None when the host does not resolve."""
    import ipaddress
    import socket

    try:
        ipaddress.ip_address(host)
        return f"/{host}:{port}"
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    found.sort(key=lambda info: info[0] != socket.AF_INET)
    return f"{host}/{found[0][4][0]}:{port}" if found else None


def _log(r: jopt.Run, text: str, logger: str = NETWORK_CLIENT) -> None:
    """Print one of Kafka's WARN log lines on stderr (text mode only: json/yaml print one object)."""
    if not r.structured:
        r.env.stderr.write(jopt.log4j("WARN", text, logger))


# ---------------------------------------------------------------- asking every node


def _every_node(r: jopt.Run, bootstrap: list) -> list:
    """Return Admin.api_versions_of_every_node(); a failure becomes the KafkaError Kafka's JVM prints."""
    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.active_controller import CONNECTION_ERRORS
    from kraftsman.controller.client.admin import ServerError

    r.context().addresses = [(n.host, n.port) for n in bootstrap]     # the resolvable ones, as Kafka's client
    admin = r.admin()
    try:
        return _await_nodes(admin)
    except sc.AuthenticationFailed as e:
        raise _failure(str(e), AUTHENTICATION[admin.config.uses_ssl], e) from None
    except CONNECTION_ERRORS as e:
        if isinstance(e, sc.Unreachable):
            _refused(r, bootstrap)
        api = "DESCRIBE_CLUSTER" if r.has("bootstrap_controller") else "METADATA"
        raise _failure(f"Request {api} failed on brokers List({', '.join(map(str, bootstrap))})", RUNTIME,
                       e) from None
    except ServerError as e:
        raise jopt.server_error(e) from None
    except sc.UnsupportedVersion as e:
        raise jopt.KafkaError(str(e), jopt.UNSUPPORTED_EXCEPTION) from None


def _await_nodes(admin) -> list:
    """Return the nodes' answers once the cluster lists a node, asking every 50 ms until the deadline (a cluster
    that answered and then let an ask run out the deadline was still listing no node: the same timeout)."""
    import time

    from kraftsman.controller.client import sync_client as sc

    answered = False
    while True:
        try:
            found = admin.api_versions_of_every_node()
        except sc.RequestTimeout:
            if not answered or time.monotonic() < admin.deadline:
                raise
            found = None
        if found:
            return found
        answered = True
        if time.monotonic() + AWAIT_S >= admin.deadline:
            raise jopt.KafkaError("Timed out waiting for the cluster's metadata to list a node (Kafka's tool waits "
                                  "for one without end)", jopt.TIMEOUT_EXCEPTION, status=ExitStatus.UNAVAILABLE)
        time.sleep(AWAIT_S)


def _refused(r: jopt.Run, bootstrap: list) -> None:
    """Print NetworkClient's lines for bootstrap nodes that refused the connection: twice each (see Rules)."""
    for node in bootstrap:
        for _ in range(2):
            _log(r, f"{CLIENT_LOG}Connection to node {node.node_id} ({socket_address(node.host, node.port)}) could "
                    "not be established. Node may not be available.")
            _log(r, f"{CLIENT_LOG}Bootstrap broker {node} disconnected")


def _failure(message: str, java_class: str, error: Exception) -> jopt.KafkaError:
    """Return a failure to reach the cluster: Kafka's message, exit 69, the client's words as the "reason"."""
    failure = jopt.KafkaError(message, java_class, status=ExitStatus.UNAVAILABLE)
    failure.fields = {"reason": str(error)}
    return failure


def _node_error(r: jopt.Run, answer) -> str:
    """Return the Java exception text of a node that could not be asked (and log a refused connection)."""
    from kraftsman.controller.client import sync_client as sc

    error = answer.error
    if isinstance(error, sc.AuthenticationFailed):
        return f"{AUTHENTICATION[r.context().config.uses_ssl]}: {error}"
    if isinstance(error, sc.Unreachable):
        node = answer.node
        _log(r, f"{CLIENT_LOG}Connection to node {node.node_id} ({socket_address(node.host, node.port)}) could not "
                "be established. Node may not be available.")
    return DISCONNECTED


def _node_fields(answer) -> dict:
    """Return one node's JSON object."""
    node = answer.node
    fields = {"id": node.node_id, "host": node.host, "port": node.port, "rack": node.rack}
    if answer.error is not None:
        return fields | {"error": str(answer.error), "apis": []}
    return fields | {"error": None, "apis": [row.fields() for row in node_versions.rows(answer.versions)]}
