"""FaultProxy: a fault-injecting TCP proxy on 127.0.0.1 placed on every directed link between voters.

Rules:
- One listening port per directed link (src, dst): voter `src` reaches voter `dst` through it (its
  controller.quorum.voters names the proxy port for dst). Requests from src and dst's responses travel
  on that link; dst's own requests to src travel on the link (dst, src).
- A link is in one of three modes:
  "ok"        bytes flow;
  "drop"      open connections are reset at once and new ones are reset on accept (connection refused);
  "blackhole" bytes stop flowing in both directions and new connections hang (no byte is lost: like a
              network that drops packets, TCP delivers them late once the link heals; a healed blackhole
              resumes its held streams).
- Everything runs on one asyncio loop in a daemon thread; set_mode() is thread-safe.
- Traffic only on 127.0.0.1.
"""
from __future__ import annotations

import asyncio
import threading

OK, DROP, BLACKHOLE = "ok", "drop", "blackhole"
HOST = "127.0.0.1"


class _Link:
    def __init__(self, src: int, dst: int, target_port: int):
        self.src, self.dst, self.target_port = src, dst, target_port
        self.mode = OK
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.transports: set = set()
        self.server = None
        self.port = 0
        self.accepted = self.reset = 0


class FaultProxy:
    """Proxies between `ports` {voter id: real listener port}."""

    def __init__(self, ports: dict[int, int]):
        self.ports = dict(ports)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="chaos-proxy", daemon=True)
        self.links: dict[tuple[int, int], _Link] = {}

    # ------------------------------------------------------------ lifecycle (caller's thread)
    def start(self) -> None:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)

    def close(self) -> None:
        if not self.thread.is_alive():
            return
        try:
            asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)

    def port(self, src: int, dst: int) -> int:
        """Return the port src must dial to reach dst."""
        return self.links[(src, dst)].port

    def voters_for(self, node_id: int) -> str:
        """Return controller.quorum.voters for `node_id`: itself directly, every peer through its proxy."""
        parts = [f"{i}@{HOST}:{p if i == node_id else self.port(node_id, i)}" for i, p in self.ports.items()]
        return ",".join(parts)

    def set_mode(self, src: int, dst: int, mode: str) -> None:
        """Set the mode of the directed link src -> dst (thread-safe)."""
        asyncio.run_coroutine_threadsafe(self._set_mode(self.links[(src, dst)], mode), self.loop).result(10)

    def heal_all(self) -> None:
        for key in self.links:
            self.set_mode(*key, OK)

    def modes(self) -> dict:
        return {key: link.mode for key, link in self.links.items()}

    # ------------------------------------------------------------ the loop's side
    async def _start(self) -> None:
        for src in self.ports:
            for dst, target in self.ports.items():
                if src == dst:
                    continue
                link = self.links[(src, dst)] = _Link(src, dst, target)
                link.server = await asyncio.start_server(lambda r, w, ln=link: self._accept(ln, r, w), HOST, 0)
                link.port = link.server.sockets[0].getsockname()[1]

    async def _close(self) -> None:
        for link in self.links.values():
            link.server.close()
            for transport in list(link.transports):
                transport.abort()
            link.flowing.set()

    async def _set_mode(self, link: _Link, mode: str) -> None:
        assert mode in (OK, DROP, BLACKHOLE), mode
        link.mode = mode
        if mode == DROP:
            for transport in list(link.transports):
                transport.abort()
            link.reset += len(link.transports)
            link.transports.clear()
        if mode == BLACKHOLE:
            link.flowing.clear()
        else:
            link.flowing.set()

    async def _accept(self, link: _Link, reader, writer) -> None:
        link.accepted += 1
        if link.mode == DROP:
            writer.transport.abort()
            return
        link.transports.add(writer.transport)
        try:
            await link.flowing.wait()
            if link.mode == DROP or writer.transport.is_closing():
                return
            try:
                up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(HOST, link.target_port), 5)
            except (OSError, asyncio.TimeoutError):
                return
            link.transports.add(up_writer.transport)
            try:
                await asyncio.gather(self._pump(link, reader, up_writer), self._pump(link, up_reader, writer))
            finally:
                link.transports.discard(up_writer.transport)
                up_writer.transport.abort()
        finally:
            link.transports.discard(writer.transport)
            writer.transport.abort()

    async def _pump(self, link: _Link, reader, writer) -> None:
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                await link.flowing.wait()
                if link.mode == DROP or writer.transport.is_closing():
                    break
                writer.write(data)
                await writer.drain()
        except (OSError, ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.transport.abort()  # one side ended: end the other, as a broken TCP connection
