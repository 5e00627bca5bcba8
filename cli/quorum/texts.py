"""What kafka-metadata-quorum's sub-commands share: Kafka's endpoint text, the check of --command-config and the
tool's words for a server error.

Rules:
- Light to import (the tool's --help loads it): the client and the error tables are imported when used.
- Client errors become exit codes in common.admin.admin_call (unreachable / timeout / not Kafka / TLS or SASL
  failure -> 69, an unsupported API or a server error -> 1); here only the words: the error named as Kafka names
  it, "no message" when the server sent none, and a failure of the answer's shape (code -1) as its message alone.
"""
from __future__ import annotations

import os

from ..common.admin import Failure


def endpoint_text(listener: str, host: str, port: int) -> str:
    """Return Kafka's RaftVoterEndpoint.toString(): LISTENER://host:port, IPv6 hosts in brackets."""
    return f"{listener}://{f'[{host}]' if ':' in host else host}:{port}"


STATIC_QUORUM_HINT = (
    "this quorum is static (controller.quorum.voters, kraft.version 0): its voters are fixed. Controllers are "
    "added and removed only in a dynamic quorum (kraft.version 1, KIP-853): one whose controllers were formatted "
    "with kafka-storage format --standalone or --initial-controllers and find each other through "
    "controller.quorum.bootstrap.servers")


def server_words(error) -> str:
    """Return kafka-metadata-quorum's line for a controller.client.admin.ServerError."""
    return f"{error.name}: {error.message or 'no message'}" if error.code >= 0 else error.message


def check_command_config(args) -> None:
    """Refuse a --command-config file that does not exist, with Kafka's words, before anything connects."""
    if args.config and not os.path.exists(args.config):
        raise Failure(f"Properties file {args.config} does not exists!")
