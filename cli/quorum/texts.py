"""What kafka-metadata-quorum's sub-commands share: Kafka's endpoint text and its words for failures.

Rules:
- Light to import (the tool's --help loads it): the client and the error tables are imported when used.
- `failures(fn)` is the one place where client errors become exit codes: unreachable / timeout / not Kafka /
  TLS or SASL failure -> 69 (kraftsman's), an unsupported API or a server error -> 1 (Kafka's), the error
  named as Kafka names it.
"""
from __future__ import annotations

from ..common.admin import Failure
from ..common import ExitStatus

# the error codes DescribeQuorum, AddRaftVoter and RemoveRaftVoter answer with, beyond kafka-cluster's
QUORUM_ERRORS = {3: "UNKNOWN_TOPIC_OR_PARTITION", 6: "NOT_LEADER_OR_FOLLOWER", 7: "REQUEST_TIMED_OUT",
                 104: "INCONSISTENT_CLUSTER_ID", 125: "INVALID_VOTER_KEY", 126: "DUPLICATE_VOTER",
                 127: "VOTER_NOT_FOUND"}


def endpoint_text(listener: str, host: str, port: int) -> str:
    """Return Kafka's RaftVoterEndpoint.toString(): LISTENER://host:port, IPv6 hosts in brackets."""
    return f"{listener}://{f'[{host}]' if ':' in host else host}:{port}"


def error_name(code: int) -> str:
    """Return Kafka's name of an error code (or `error code N`)."""
    from ..cluster.commands import ERROR_NAMES

    return (ERROR_NAMES | QUORUM_ERRORS).get(code, f"error code {code}")


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
