"""Shared by the tools that call a cluster (kafka-cluster, kafka-metadata-quorum, kafka-features): the connection
context of one run, the one boundary where an Admin call's failure becomes an exit code, and failures printed as
one line or one JSON/YAML object (their typer options and runner: admin_options).

Rules:
- No network here: the Context only parses addresses, client properties and the deadline; the blocking client
  (controller.client) is imported when a Context is made, and Context.admin() gives the Admin calls over it.
- admin_call is the one mapping from a client failure to an exit code: cannot reach the cluster (unknown host,
  closed port, timeout, no active controller, a server that does not speak Kafka, TLS or SASL failure) -> 69; an
  API or version the server lacks -> Unsupported (1, its text the client's; some commands print it and succeed,
  as Kafka's do); a server error code -> 1, worded by the tool (`wording`), the code kept on the Failure.
- A Failure carries its exit status; `fail` prints it as the tool's --output asks.
"""
from __future__ import annotations

import time

from .environment import Environment
from .output import render, structured
from .status import ExitStatus


class Failure(Exception):
    """A failure printed as one line on stderr with an exit status (and the server's error code, if any); `hint`,
    when given, says what to do under a Kafka text that does not (a second line, `<prog>: hint: ...`; "hint" in
    JSON/YAML)."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR, code: int | None = None,
                 hint: str | None = None):
        super().__init__(message)
        self.status, self.code, self.hint = int(status), code, hint


class Unsupported(Failure):
    """The server lacks the API or version a call needs (exit 1 unless the command prints it and succeeds)."""


def admin_call(fn, *args, wording):
    """Return fn(*args) (an Admin call), turning what the client raises into a Failure (see Rules); `wording`
    turns a controller.client.admin.ServerError into the tool's text."""
    from kraftsman.controller.client import sync_client as sc
    from kraftsman.controller.client.active_controller import CONNECTION_ERRORS
    from kraftsman.controller.client.admin import ServerError

    try:
        return fn(*args)
    except CONNECTION_ERRORS as e:
        raise Failure(str(e), ExitStatus.UNAVAILABLE) from None
    except sc.UnsupportedVersion as e:
        raise Unsupported(str(e)) from None
    except ServerError as e:
        raise Failure(wording(e), code=e.code) from None


def fail(args, env: Environment, message: str, status: int, hint: str | None = None, prog: str = "") -> int:
    """Print a failure as one line on stderr (or one JSON object on stdout), and its hint; return its status."""
    line = " ".join(message.split())
    if structured(args.output):
        obj = {"command": args.command, "status": status, "error": line} | ({"hint": hint} if hint else {})
        env.stdout.write(render(obj, args.output))
    else:
        env.stderr.write(line + "\n")
        if hint:
            env.stderr.write(f"{prog}: hint: {hint}\n")
    return status


class Context:
    """The parsed connection settings of one run: addresses, client config and deadline."""

    def __init__(self, args, env: Environment):
        from kraftsman.controller.client import sync_client as sc

        self.env, self.args = env, args
        props = load_config(args.config) if args.config else {}
        props |= getattr(args, "client", None) or {}     # a profile's client settings, then -X overrides
        try:
            self.config = sc.ClientConfig.from_properties(props)
            self.addresses = sc.parse_addresses(args.bootstrap_server or args.bootstrap_controller)
        except ValueError as e:
            raise Failure(str(e)) from None
        seconds = args.timeout if args.timeout is not None else self.config.request_timeout_ms / 1000
        if seconds <= 0:
            raise Failure(f"--timeout must be positive, got {args.timeout:g}")
        self.config.request_timeout_ms = int(seconds * 1000)
        self.deadline = time.monotonic() + seconds
        self.controllers = args.bootstrap_controller is not None
        self.config.bootstrap_controllers = self.controllers     # requests go to the active controller

    def admin(self, deadline: float | None = None):
        """Return the Admin calls (controller.client.admin) to this run's cluster, before `deadline` (default:
        the run's, as it is when called)."""
        from kraftsman.controller.client.admin import Admin

        return Admin(self.addresses, self.config, self.deadline if deadline is None else deadline)

    def emit(self, text: str, **fields) -> None:
        """Print Kafka's text, or the JSON (or YAML) object (with status 0 unless given)."""
        if structured(self.args.output):
            obj = {"command": self.args.command, "status": 0} | fields
            self.env.stdout.write(render(obj, self.args.output))
        elif text:
            self.env.stdout.write(text + ("" if text.endswith("\n") else "\n"))


def load_config(path: str) -> dict[str, str]:
    """Read a client properties file; a missing or unreadable file is a Failure with Java's text."""
    from kraftsman.storage import properties

    try:
        return properties.load(path)
    except FileNotFoundError:
        raise Failure(f"{path} (No such file or directory)") from None
    except (OSError, ValueError) as e:
        raise Failure(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
