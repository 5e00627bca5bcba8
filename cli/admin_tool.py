"""Shared by the admin tools (kafka-cluster, kafka-metadata-quorum): Kafka's argparse4j-style argument
parsing, the connection context of one run, and failures printed as one line or one JSON object.

Rules:
- No network here: the Context only parses addresses, client properties and the deadline; the
  blocking client (controller.server.sync_client) is imported when a Context is made.
- A Failure carries its exit status; `fail` prints it as the tool's --output asks.
"""
from __future__ import annotations

import argparse
import json
import time

from .common import Environment, ExitStatus
from .common.output import render, structured
from .env_overrides import with_environment


class Failure(Exception):
    """A failure printed as one line on stderr with an exit status."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR, code: int | None = None):
        super().__init__(message)
        self.status, self.code = int(status), code


class UsageError(Exception):
    """A bad command line: the usage and the error, as argparse4j prints them."""


class ToolParser(argparse.ArgumentParser):
    """An argument parser whose errors raise UsageError (printed by parse_arguments) instead of exiting."""

    def error(self, message):
        raise UsageError(f"{self.format_usage()}{self.prog}: error: {message}")


def kraftsman_flags(parser: argparse.ArgumentParser, output="text", timeout=None) -> None:
    """Add kraftsman's --output (text | json) and --timeout flags (argparse.SUPPRESS defaults on a sub-command
    that also accepts them after its name)."""
    parser.add_argument("--output", choices=("text", "json"), default=output,
                        help="kraftsman: print text (Kafka's) or one JSON object.")
    parser.add_argument("--timeout", type=float, metavar="SECONDS", default=timeout,
                        help="kraftsman: give up after this many seconds in total (default: request.timeout.ms).")


def parse_arguments(parser: argparse.ArgumentParser, tool: str, argv: list[str], env: Environment):
    """Parse `argv` as Kafka's argparse4j tools do; return (namespace, None), or (None, exit status) after
    printing a usage error (1, or 64 with --output json) or the help (-h)."""
    import contextlib

    try:
        with contextlib.redirect_stdout(env.stdout):
            return with_environment(parser, tool, argv, env.env).parse_args(argv), None
    except UsageError as e:
        env.stderr.write(f"{e}\n")
        return None, ExitStatus.USAGE if wants_json(argv) else ExitStatus.ERROR
    except SystemExit as e:        # -h / --help
        return None, int(e.code or 0)


def wants_json(argv: list[str]) -> bool:
    """Tell whether the command line asks for structured output (--output json or yaml) before it is parsed."""
    pairs = zip(argv, argv[1:] + [""])
    return any(f"--output={f}" in argv for f in ("json", "yaml")) or any(
        a == "--output" and b in ("json", "yaml") for a, b in pairs)


def fail(args, env: Environment, message: str, status: int) -> int:
    """Print a failure as one line on stderr (or one JSON object on stdout) and return its status."""
    line = " ".join(message.split())
    if structured(args.output):
        env.stdout.write(render({"command": args.command, "status": status, "error": line}, args.output))
    else:
        env.stderr.write(line + "\n")
    return status


class Context:
    """The parsed connection settings of one run: addresses, client config and deadline."""

    def __init__(self, args, env: Environment):
        from kraftsman.controller.server import sync_client as sc

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
