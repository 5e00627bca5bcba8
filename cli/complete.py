"""kraftsman-complete: run-time candidates for the generated bash/zsh/fish completions (one per line).

Usage (written by the scripts in completions/, not by hand):
    kraftsman-complete KIND WORD --line TEXT          TEXT: the command line up to the cursor (bash)
    kraftsman-complete KIND WORD -- WORDS...          WORDS: the words before the current one (zsh, fish)

Kinds (cli/docs.py DYNAMIC maps flags to them):
    metadata-path   kafka-metadata-shell's command words (`ls /image/to<TAB>`) when --snapshot or
                    --directory is on the line: the shell's own suggest() over the loaded image
    broker-id       kafka-cluster unregister --id: every registered broker, fenced ones too, from the metadata
                    log (a read-only observer) with --bootstrap-controller or a profile's; DescribeCluster
                    (unfenced brokers only) with --bootstrap-server
    controller-id   kafka-metadata-quorum remove-controller --controller-id: DescribeCluster (controllers)

Rules:
- The source is found by parsing the typed words with the tool's own click definition (resilient parsing:
  nothing required), so every spelling the tool accepts works; ~ and $VARIABLES in file names are expanded
  as the shell would have.
- Failure is silent: exit 0, nothing on stdout or stderr. Time is bounded: requests get TIMEOUT
  seconds in all, image loading is cut at LOAD_SECONDS.
- Fast start: no asyncio; heavy modules are imported inside the kind that needs them.
"""
from __future__ import annotations

import argparse
import os
import sys

TIMEOUT = 2.0            # seconds for the whole DescribeCluster exchange
LOAD_SECONDS = 5.0       # seconds for loading a snapshot or log directory
TIMEOUT_ENV = "KRAFTSMAN_COMPLETE_TIMEOUT"
UMBRELLA = "kraftsman"
# kind -> (console script, umbrella subcommand, module with the tool's typer app)
TOOLS = {
    "metadata-path": ("kafka-metadata-shell", "shell", "kraftsman.cli.metadata_shell"),
    "broker-id": ("kafka-cluster", "cluster", "kraftsman.cli.cluster_tool"),
    "controller-id": ("kafka-metadata-quorum", "quorum", "kraftsman.cli.metadata_quorum"),
}


# ---------------------------------------------------------------- the command line


def split_line(line: str) -> tuple[list[str], str]:
    """Split a partly typed shell line into (words before the current one, the current word)."""
    import shlex

    words = None
    for closing in ("", '"', "'"):
        try:
            words = shlex.split(line + closing)
            break
        except ValueError:
            continue
    if words is None:
        words = line.split()
    if line and not line[-1].isspace() and words:
        return words[:-1], words[-1]
    return words, ""


def tool_arguments(kind: str, words: list[str]) -> list[str]:
    """Return the words after the tool's name (`kafka-cluster ...` or `kraftsman cluster ...`)."""
    script, subcommand, _ = TOOLS[kind]
    for i, word in enumerate(words):
        name = os.path.basename(word)
        if name == script:
            return words[i + 1:]
        if name == UMBRELLA and subcommand in words[i + 1:]:
            return words[words.index(subcommand, i + 1) + 1:]
    return words[1:]


def parse_words(kind: str, args: list[str]):
    """Parse `args` with the tool's own (click) definition, leniently; None when it cannot."""
    import importlib

    module = importlib.import_module(TOOLS[kind][2])
    try:
        return _click_namespace(kind, module.app, args)
    except Exception:  # noqa: BLE001 (a half-typed line that does not parse completes nothing)
        return None


def _click_namespace(kind: str, app, args: list[str]):
    """Parse `args` with a typer tool's click command, leniently (resilient parsing), into one namespace."""
    import click

    from .app import by_script
    from .common.typer_app import click_command

    script = TOOLS[kind][0]
    command = click_command(app, by_script(script).env_name)
    ctx = command.make_context(script, list(args), resilient_parsing=True)
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    while isinstance(ctx.command, click.Group) and rest:
        name, sub, rest = ctx.command.resolve_command(ctx, rest)
        if sub is None:
            break
        ctx = sub.make_context(name, list(rest), parent=ctx, resilient_parsing=True)
        rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    from .admin_options import merged       # an option before the sub-command is not lost to its default after

    return argparse.Namespace(**merged(ctx, ctx.params))


# ---------------------------------------------------------------- kinds


def metadata_paths(ns, word: str) -> list[str]:
    """Complete kafka-metadata-shell's command words against the image of --snapshot / --directory."""
    if not (ns.snapshot or ns.directory) or ns.controllers or ns.bootstrap_controller:
        return []
    from kraftsman.controller.image.loader import load
    from kraftsman.shell.completion import suggest
    from kraftsman.shell.state import ShellState

    snapshot, directory = _path(ns.snapshot), _path(ns.directory)
    with _time_limit(LOAD_SECONDS):
        image = load(snapshot, directory=directory, offset=ns.offset, on_fault=lambda message: None).image
    typed = [w for w in (ns.command or [])]
    line = " ".join(_quote(w) for w in typed) + (" " if typed else "") + word
    _, candidates = suggest(line, ShellState(image), shell=False)
    return [text for text, _ in candidates]


def _path(text: str | None) -> str | None:
    """Expand ~ and $VARIABLES as the shell would have (the line is passed as typed)."""
    return os.path.expanduser(os.path.expandvars(text)) if text else text


def _quote(word: str) -> str:
    return word if word and not any(c.isspace() or c in "'\"\\" for c in word) else repr(word)


def node_ids(ns, word: str, controllers: bool) -> list[str]:
    """Return the ids DescribeCluster lists (brokers, or controllers) that start with `word`."""
    address = getattr(ns, "bootstrap_controller", None) or getattr(ns, "bootstrap_server", None)
    props = _properties(_path(getattr(ns, "config", None)))
    if not address:
        address, props = _from_profile(ns, props)
    if not address:
        return []
    import time

    from kraftsman.controller.server import sync_client as sc

    from . import cluster_ops
    from .common import key_values

    seconds = _timeout()
    props |= key_values(getattr(ns, "client_property", None) or [], lenient=True)
    config = sc.ClientConfig.from_properties(props)
    config.request_timeout_ms = int(seconds * 1000)
    if not controllers and (getattr(ns, "bootstrap_controller", None) or not getattr(ns, "bootstrap_server", None)):
        return [str(i) for i in _registered_brokers(address, config, seconds) if str(i).startswith(word)]
    endpoint = cluster_ops.CONTROLLERS if controllers else cluster_ops.BROKERS
    info = cluster_ops.describe(sc.parse_addresses(address), config, time.monotonic() + seconds, endpoint)
    if controllers and info.source != "DescribeCluster":
        return []          # Metadata lists brokers only
    ids = sorted({node.node_id for node in info.nodes})
    return [str(i) for i in ids if str(i).startswith(word)]


def _registered_brokers(address: str, config, seconds: float) -> list[int]:
    """Return every registered broker, fenced ones included, from the metadata log of the controllers at
    `address` (a read-only observer catching up; DescribeCluster lists only unfenced brokers)."""
    import time

    from kraftsman.controller.server import sync_client as sc
    from kraftsman.controller.server.observer import Observer

    observer = Observer(config, bootstrap=sc.parse_addresses(address), fetch_max_wait_ms=0)
    try:
        view = observer.catch_up(time.monotonic() + seconds)
    finally:
        observer.close()
    return sorted(view.image.cluster.brokers)


def _from_profile(ns, props: dict) -> tuple[str | None, dict]:
    """Return the bootstrap address and client settings of the profile the line (or environment) names."""
    from .common import profiles

    chosen = profiles.select(profiles.load(os.environ), getattr(ns, "profile", None), os.environ)
    if chosen is None:
        return None, props
    props = {**_properties(_path(chosen.client_config)), **props, **chosen.client}
    return chosen.bootstrap_controller or chosen.bootstrap_server, props


def _properties(path: str | None) -> dict:
    if not path:
        return {}
    from kraftsman.storage import properties

    return properties.load(path)


def _timeout() -> float:
    try:
        seconds = float(os.environ.get(TIMEOUT_ENV, TIMEOUT))
    except ValueError:
        return TIMEOUT
    return seconds if 0 < seconds <= 30 else TIMEOUT


class _time_limit:
    """Raise TimeoutError in the main thread after `seconds` (a no-op elsewhere)."""

    def __init__(self, seconds: float):
        self.seconds, self.armed = seconds, False

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
            self.previous = signal.signal(signal.SIGALRM, self._expire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    @staticmethod
    def _expire(signum, frame):
        raise TimeoutError("completion took too long")

    def __exit__(self, *exc):
        if self.armed:
            import signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
        return False


KINDS = {
    "metadata-path": metadata_paths,
    "broker-id": lambda ns, word: node_ids(ns, word, controllers=False),
    "controller-id": lambda ns, word: node_ids(ns, word, controllers=True),
}


# ---------------------------------------------------------------- entry points


def candidates(argv: list[str]) -> list[str]:
    """Return the candidates for `KIND WORD (--line TEXT | -- WORDS...)`; [] on any failure."""
    try:
        return _candidates(argv)
    except Exception:        # noqa: BLE001 (completion never complains)
        return []


def _candidates(argv: list[str]) -> list[str]:
    if len(argv) < 2 or argv[0] not in KINDS:
        return []
    kind, word, rest = argv[0], argv[1], argv[2:]
    if rest[:1] == ["--line"] and len(rest) >= 2:
        words, typed = split_line(rest[1])
    else:
        words, typed = (rest[1:] if rest[:1] == ["--"] else rest), word
    cut = len(typed) - len(word)         # bash splits words at ':' and '='; it replaces only `word`
    if cut < 0 or not typed.endswith(word):
        typed, cut = word, 0
    ns = parse_words(kind, tool_arguments(kind, words))
    if ns is None:
        return []
    found = KINDS[kind](ns, typed)
    return [c[cut:] for c in found if c.startswith(typed[:cut])]


def main(argv: list[str] | None = None) -> None:
    """Console script entry point: print the candidates, one per line; always exit 0."""
    argv = sys.argv[1:] if argv is None else argv
    stderr = sys.stderr
    try:
        with open(os.devnull, "w") as sys.stderr:
            found = candidates(argv)
            if found:
                sys.stdout.write("\n".join(found) + "\n")
                sys.stdout.flush()
    except BaseException:    # noqa: BLE001 (Ctrl-C, broken pipe: still silent)
        pass
    finally:
        sys.stderr = stderr


if __name__ == "__main__":
    main()
