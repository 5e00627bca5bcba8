"""stack_dump: what a running controller is doing, on demand (SIGQUIT, as a JVM prints its thread dump).

Rules:
- One log record at WARN: every thread's stack, then every asyncio task with the chain of coroutines it
  waits in (innermost last), so a shutdown or request that hangs shows where it waits.
- Read-only and cheap: nothing is cancelled, paused or changed.
"""
from __future__ import annotations

import asyncio
import io
import logging
import sys
import threading
import traceback

log = logging.getLogger("kraftsman.controller")


def format_stacks() -> str:
    """Return the stacks of every thread and of every task of the running loop."""
    out = io.StringIO()
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        out.write(f'Thread "{names.get(ident, ident)}":\n')
        traceback.print_stack(frame, file=out)
    tasks = sorted(asyncio.all_tasks(), key=lambda t: t.get_name())
    out.write(f"{len(tasks)} asyncio tasks:\n")
    for task in tasks:
        out.write(f"Task {task.get_name()}:\n")
        for where in _awaiting(task.get_coro()):
            out.write(f"  {where}\n")
    return out.getvalue()


def _awaiting(coro) -> list[str]:
    """Return 'file:line in function' for coro and each coroutine it awaits, outermost first."""
    chain = []
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            chain.append(f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return chain


def log_stacks() -> None:
    """Log format_stacks() at WARN (the SIGQUIT handler)."""
    log.warning("stack dump (SIGQUIT):\n%s", format_stacks())
