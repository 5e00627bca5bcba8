"""kafka-metadata-shell's live mode: browse a running quorum's metadata as a read-only Raft observer.

Rules:
- `--controllers id@host:port,...` (controller.quorum.voters) or `--bootstrap-controller host:port,...`
  (KIP-919), `-c/--config` with the Admin client properties kafka-cluster reads (PLAINTEXT, SSL,
  SASL_PLAINTEXT, SASL_SSL), `--timeout` bounds the initial catch-up (default request.timeout.ms).
- Start-up catches up with everything committed when the leader first answers, so the first command
  already sees it. One-shot and batch modes run on that image and exit with the commands' status.
  Interactive: a follower
  thread keeps the image current; every command reads the newest committed image; the prompt shows
  `[leader L, epoch E, hw H]` (and `at O` once --offset is reached, when the image stops moving).
- `--offset O` stops the replay after offset O; an offset before the leader's newest snapshot is no
  longer in the log (exit 1). Cannot reach the cluster / catch up in time: one line, exit 69.
- Follower events (leader changes, lost connections, snapshot downloads) are one line each, shown
  before the next command's output when interactive; non-interactive runs print only the command's
  output, or one error line.
"""
from __future__ import annotations

import collections
import threading
import time
from pathlib import Path

from ..common.environment import Environment
from ..common.status import ExitStatus, ToolError

PROG = "kafka-metadata-shell"


def _client_config(ns):
    from kraftsman.controller.client import sync_client as sc
    from kraftsman.storage import properties

    props = {}
    if ns.config:
        try:
            props = properties.load(ns.config)
        except FileNotFoundError:
            raise ToolError(f"{PROG}: {ns.config} (No such file or directory)") from None
        except (OSError, ValueError) as e:
            raise ToolError(f"{PROG}: cannot read {ns.config}: {getattr(e, 'strerror', None) or e}") from None
    props |= getattr(ns, "client", None) or {}     # a profile's client settings, then -X
    try:
        config = sc.ClientConfig.from_properties(props)
    except ValueError as e:
        raise ToolError(f"{PROG}: {e}") from None
    if ns.timeout is not None:
        if ns.timeout <= 0:
            raise ToolError(f"{PROG}: --timeout must be positive, got {ns.timeout:g}")
        config.request_timeout_ms = int(ns.timeout * 1000)
    return config


def _observer(ns, events):
    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.observer import Observer, parse_controllers

    config = _client_config(ns)
    try:
        if ns.controllers:
            return Observer(config, voters=parse_controllers(ns.controllers), stop_offset=ns.offset,
                            on_event=events.append)
        return Observer(config, bootstrap=sc.parse_addresses(ns.bootstrap_controller), stop_offset=ns.offset,
                        on_event=events.append)
    except ValueError as e:
        raise ToolError(f"{PROG}: {e}") from None


def _catch_up(observer, ns, follow: bool):
    from kraftsman.controller.client.observer import ObserverError, ObserverUnavailable

    deadline = time.monotonic() + observer.config.request_timeout_ms / 1000
    try:
        return observer.catch_up(deadline)
    except ObserverUnavailable as e:
        raise ToolError(f"{PROG}: {e}", ExitStatus.UNAVAILABLE) from None
    except ObserverError as e:
        raise ToolError(f"{PROG}: {e}") from None
    finally:
        if not follow:
            observer.close()


def prompt_text(view) -> str:
    """Return the live prompt: where the view stands, then Kafka's '>> '."""
    leader = f"leader {view.leader_id}" if view.leader_id >= 0 else "no leader"
    at = f", at {view.image.provenance.offset}" if view.stopped else ""
    return f"[{leader}, epoch {view.leader_epoch}, hw {max(view.high_watermark, 0)}{at}] >> "


def run_live(ns, env: Environment, local: dict) -> int:
    """Run the shell on a live quorum (ns.controllers or ns.bootstrap_controller)."""
    from kraftsman.shell.state import ShellState

    events: collections.deque = collections.deque(maxlen=64)
    observer = _observer(ns, events)
    from .session import open_script, run_session

    script = open_script(ns, env)
    if script is None and not ns.command:
        env.stdout.write("Loading...\n")
        env.stdout.flush()
    view = _catch_up(observer, ns, follow=script is None and not ns.command)
    if ns.offset is not None and not view.stopped:
        env.stderr.write(f"{PROG}: warning: offset {ns.offset} is past the committed end of the log "
                         f"(high watermark {view.high_watermark}); showing the newest image\n")
    from ..common.kafka_release import kafka_release

    state = ShellState(view.image, local=local, open_image=_no_other_image, output=ns.output,
                       release=kafka_release(env))
    return run_session(state, ns, env, script, lambda: _interactive(observer, state, events, env))


def _no_other_image(spec: str):
    raise ValueError("a live shell loads no other images; diff takes @marks and offsets this session has shown")


def _interactive(observer, state, events, env: Environment) -> int:
    from kraftsman.shell.repl import run_repl

    from .session import HISTORY_ENV

    events.clear()
    stop = threading.Event()
    follower = threading.Thread(target=observer.follow, args=(stop,), name="metadata-observer", daemon=True)
    follower.start()

    def before_command(state, write) -> None:
        while events:
            write(events.popleft() + "\n")
        state.set_image(observer.view.image)

    env.stdout.write("Starting...\n")
    env.stdout.flush()
    history = env.env.get(HISTORY_ENV) or str(Path.home() / ".kafka-metadata-shell_history")
    try:
        return run_repl(state, env.stdout.write, history_path=history, pager=env.stdout_isatty,
                        prompt=lambda: prompt_text(observer.view), before_command=before_command,
                        refresh_interval=0.5)
    finally:
        stop.set()
        follower.join(2)
