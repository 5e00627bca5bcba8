"""Call kafka-cluster's RPCs and turn client failures into Failures with their exit codes (one place for all verbs).

Rules:
- Unreachable / timeout / not Kafka / TLS or SASL failure -> 69; a server error code -> 1, worded
  `<ERROR_NAME>: <message>` as Kafka's tools print it (the code kept on the Failure).
- sc.UnsupportedVersion passes through: each command decides (Kafka prints some of them and exits 0).
"""
from __future__ import annotations

from kraftsman.controller.client import sync_client as sc

from . import ops
from ..common.admin import Failure
from ..common import ExitStatus

ERROR_NAMES = {35: "UNSUPPORTED_VERSION", 41: "NOT_CONTROLLER", 42: "INVALID_REQUEST",
               102: "BROKER_ID_NOT_REGISTERED", 31: "CLUSTER_AUTHORIZATION_FAILED"}
DEFAULT_MESSAGES = {102: "The given broker ID was not registered.",
                    35: "The version of API is not supported."}
CONNECTION_ERRORS = (sc.Unreachable, sc.RequestTimeout, sc.NotKafka, sc.AuthenticationFailed)


def call(fn, *args):
    """Call an ops function, turning client failures into Failures with their exit codes."""
    try:
        return fn(*args)
    except CONNECTION_ERRORS as e:
        raise Failure(str(e), ExitStatus.UNAVAILABLE) from None
    except ops.ServerError as e:
        name = ERROR_NAMES.get(e.code, f"error code {e.code}")
        raise Failure(f"{name}: {str(e) or DEFAULT_MESSAGES.get(e.code, 'no message')}", code=e.code) from None
