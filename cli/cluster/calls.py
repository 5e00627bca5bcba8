"""Call kafka-cluster's RPCs and turn client failures into Failures with their exit codes (one place for all verbs).

Rules:
- Unreachable / timeout / not Kafka / TLS or SASL failure -> 69; a server error code -> 1, worded
  `<ERROR_NAME>: <message>` as Kafka's tools print it (the code kept on the Failure).
- sc.UnsupportedVersion passes through: each command decides (Kafka prints some of them and exits 0).
"""
from __future__ import annotations

from kraftsman.controller.client import sync_client as sc
from kraftsman.storage.protocol.errors import default_message, error_name

from ..common.admin import Failure
from ..common.status import ExitStatus
from . import ops

CONNECTION_ERRORS = (sc.Unreachable, sc.RequestTimeout, sc.NotKafka, sc.AuthenticationFailed)


def call(fn, *args):
    """Call an ops function, turning client failures into Failures with their exit codes."""
    try:
        return fn(*args)
    except CONNECTION_ERRORS as e:
        raise Failure(str(e), ExitStatus.UNAVAILABLE) from None
    except ops.ServerError as e:
        message = str(e) or default_message(e.code) or "no message"
        raise Failure(f"{error_name(e.code)}: {message}", code=e.code) from None
