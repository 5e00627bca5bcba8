"""A simulated broker's client listener: what a Kafka broker answers kafka-cluster's --bootstrap-server reads with,
from the metadata it follows (a test tool, beside broker_sim's registration and heartbeats).

Rules:
- It follows the quorum's committed metadata as a non-replica observer (observer.Observer with a SummaryBuilder
  that skips partitions), in a thread, as a broker's metadata cache follows the log.
- It serves ApiVersions and DescribeCluster (EndpointType 1) up to `describe_cluster_version`: 1 is Kafka 3.9's
  broker (the unfenced brokers only), 2 is Kafka 4.x's (IncludeFencedBrokers lists the fenced ones, with
  IsFenced). The brokers are those with an endpoint named like `listener_name`, at that endpoint; ControllerId is
  a random unfenced broker. A Kafka broker knows no start time, epoch or incarnation to tell: no kraftsman tag.
- EndpointType 2 (controllers) is MISMATCHED_ENDPOINT_TYPE (INVALID_REQUEST at v0), with Kafka's message; any
  other API closes the connection.
- start() opens the port, stop() closes it: a broker's port is closed while its process is down.
"""
from __future__ import annotations

import random
import socket
import socketserver
import threading

from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors

from . import sync_client as sc

API_VERSIONS, DESCRIBE_CLUSTER = 18, 60
BROKER_ENDPOINTS = 1


class BrokerListener:
    """DescribeCluster and ApiVersions on 127.0.0.1:`port`, answered as a Kafka broker does."""

    def __init__(self, controllers: dict, cluster_id: str, port: int, *, listener_name: str = "PLAINTEXT",
                 describe_cluster_version: int = 1, host: str = "127.0.0.1"):
        self.controllers, self.cluster_id, self.host, self.port = dict(controllers), cluster_id, host, port
        self.listener_name, self.version = listener_name, describe_cluster_version
        self.observer = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._server: socketserver.ThreadingTCPServer | None = None

    def start(self) -> None:
        """Follow the metadata and open the port."""
        from kraftsman.controller.image.summary import SummaryBuilder

        from .observer import Observer

        self._stop.clear()
        self.observer = Observer(sc.ClientConfig(request_timeout_ms=5000), voters=self.controllers,
                                 builder=SummaryBuilder(partitions=False))
        listener = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                listener.serve(self.request)

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        self._server = socketserver.ThreadingTCPServer((self.host, self.port), Handler)
        self._server.daemon_threads = True
        self._threads = [threading.Thread(target=self.observer.follow, args=(self._stop,), daemon=True),
                         threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                          daemon=True)]
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        """Close the port and stop following."""
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for thread in self._threads:
            thread.join(5)
        self._threads = []

    # ------------------------------------------------------------ requests
    def serve(self, sock: socket.socket) -> None:
        """Answer one connection's requests until it closes (or asks for an API a broker would refuse here)."""
        while not self._stop.is_set():
            frame = _read_frame(sock)
            if frame is None:
                return
            try:
                header, body = framing.decode_request(frame)
            except framing.FramingError:
                return
            answer = self.answer(header.request_api_key, header.request_api_version, body)
            if answer is None:
                return
            sock.sendall(framing.encode_response(header.request_api_key, header.request_api_version,
                                                 header.correlation_id, answer))

    def answer(self, api_key: int, version: int, body):
        """Return the response body to one request, or None to close the connection."""
        if api_key == API_VERSIONS:
            return self._api_versions()
        if api_key == DESCRIBE_CLUSTER and version <= self.version:
            return self._describe_cluster(version, body)
        return None

    def _api_versions(self):
        cls = codec.message_class("ApiVersionsResponse")
        keys = [cls.ApiVersion(api_key=API_VERSIONS, min_version=0, max_version=3),
                cls.ApiVersion(api_key=DESCRIBE_CLUSTER, min_version=0, max_version=self.version)]
        return cls(error_code=0, api_keys=keys)

    def _describe_cluster(self, version: int, body):
        cls = codec.message_class("DescribeClusterResponse")
        if version >= 1 and body.endpoint_type != BROKER_ENDPOINTS:
            return cls(error_code=Errors.MISMATCHED_ENDPOINT_TYPE, endpoint_type=body.endpoint_type, cluster_id="",
                       error_message=f"The request was sent to an endpoint of type BROKER, but we wanted an "
                                     f"endpoint of type {'CONTROLLER' if body.endpoint_type == 2 else 'UNKNOWN'}")
        include_fenced = version >= 2 and body.include_fenced_brokers
        nodes = []
        for broker_id, registration in sorted(self.observer.view.image.cluster.brokers.items()):
            record = registration.record
            endpoint = next((e for e in record.end_points if e.name == self.listener_name), None)
            if endpoint is None or (record.fenced and not include_fenced):
                continue
            node = cls.DescribeClusterBroker(broker_id=broker_id, host=endpoint.host, port=endpoint.port,
                                             rack=record.rack)
            if version >= 2:
                node.is_fenced = bool(record.fenced)
            nodes.append(node)
        alive = [n.broker_id for n in nodes if not n.is_fenced]
        return cls(error_code=0, endpoint_type=BROKER_ENDPOINTS, cluster_id=self.cluster_id,
                   controller_id=random.choice(alive) if alive else -1, brokers=nodes)


def _read_frame(sock: socket.socket) -> bytes | None:
    size = _read_exactly(sock, 4)
    if size is None:
        return None
    return _read_exactly(sock, int.from_bytes(size, "big", signed=True))


def _read_exactly(sock: socket.socket, n: int) -> bytes | None:
    chunks, left = [], n
    while left > 0:
        try:
            chunk = sock.recv(left)
        except OSError:
            return None
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
