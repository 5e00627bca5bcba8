"""What kafka-metadata-quorum's sub-commands share: Kafka's endpoint text and its words for failures.

Rules:
- Light to import (the tool's --help loads it): the client and the error tables are imported when used.
- `failures(fn)` is the one place where client errors become exit codes: unreachable / timeout / not Kafka /
  TLS or SASL failure -> 69 (kraftsman's), an unsupported API or a server error -> 1 (Kafka's), the error
  named as Kafka names it.
"""
from __future__ import annotations

from kraftsman.storage.protocol.errors import error_name

from ..common import ExitStatus
from ..common.admin import Failure


def endpoint_text(listener: str, host: str, port: int) -> str:
    """Return Kafka's RaftVoterEndpoint.toString(): LISTENER://host:port, IPv6 hosts in brackets."""
    return f"{listener}://{f'[{host}]' if ':' in host else host}:{port}"


STATIC_QUORUM_HINT = (
    "this quorum is static (controller.quorum.voters, kraft.version 0): its voters are fixed. Controllers are "
    "added and removed only in a dynamic quorum (kraft.version 1, KIP-853): one whose controllers were formatted "
    "with kafka-storage format --standalone or --initial-controllers and find each other through "
    "controller.quorum.bootstrap.servers")


def failures(fn):
    """Return fn(), raising a Failure with Kafka's words and an exit code for a client error."""
    from kraftsman.controller.client import sync_client as sc

    from ..cluster import ops as cluster_ops

    try:
        return fn()
    except (sc.Unreachable, sc.RequestTimeout, sc.NotKafka, sc.AuthenticationFailed) as e:
        raise Failure(str(e), ExitStatus.UNAVAILABLE) from None
    except sc.UnsupportedVersion as e:
        raise Failure(str(e)) from None
    except cluster_ops.ServerError as e:
        text = f"{error_name(e.code)}: {str(e) or 'no message'}" if e.code >= 0 else str(e)
        raise Failure(text, code=e.code) from None
