"""A tiny threaded Kafka-protocol server for client tests: it decodes requests with framing and answers
through a handler; plus servers that do not speak Kafka (HTTP, silent)."""
from __future__ import annotations

import socket
import threading

from kraftsman.storage.protocol import codec, framing


def api_versions_body(ranges: dict[int, tuple[int, int]], error_code: int = 0):
    cls = codec.message_class("ApiVersionsResponse")
    keys = [cls.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, (lo, hi) in sorted(ranges.items())]
    return cls(error_code=error_code, api_keys=keys)


def body(name: str, **fields):
    return codec.message_class(name)(**fields)


class FakeServer:
    """Answer each request with handler(header, request_body) -> response body (None closes the socket).

    ApiVersions is answered from `ranges` unless the handler is given `api_versions=True`."""

    def __init__(self, handler=None, ranges=None, tls_context=None, raw=None):
        self.handler, self.ranges, self.tls, self.raw = handler, ranges or {18: (0, 4)}, tls_context, raw
        self.requests: list = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            if self.raw is not None:
                self.raw(conn)
                return
            buf = b""
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buf += data
                while True:
                    frame, pos = framing.read_frame(buf)
                    if frame is None:
                        break
                    buf = buf[pos:]
                    reply = self._answer(frame)
                    if reply is None:
                        return
                    conn.sendall(reply)
        except OSError:
            return
        finally:
            conn.close()

    def _answer(self, frame: bytes):
        api_key, version = int.from_bytes(frame[0:2], "big"), int.from_bytes(frame[2:4], "big", signed=True)
        header, request = framing.decode_request(frame)
        self.requests.append((header, request))
        if api_key == 18 and self.ranges is not None:
            lo, hi = self.ranges.get(18, (0, 4))
            if not lo <= version <= hi:
                return framing.encode_response(18, 0, header.correlation_id, api_versions_body({18: (lo, hi)}, 35))
            response = api_versions_body(self.ranges)
        else:
            response = self.handler(header, request)
        if response is None:
            return None
        if isinstance(response, bytes):
            return response
        return framing.encode_response(api_key, version, header.correlation_id, response)

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)   # wakes the accept() thread; the port stops listening
        except OSError:
            pass
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def http_server() -> FakeServer:
    """Return a server that answers anything with an HTTP 400 response."""
    def raw(conn):
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    return FakeServer(raw=raw)


def silent_server() -> FakeServer:
    """Return a server that accepts and never answers."""
    def raw(conn):
        conn.recv(65536)
        threading.Event().wait(30)
    return FakeServer(raw=raw)
