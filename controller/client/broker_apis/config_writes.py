"""IncrementalAlterConfigs and AlterConfigs on a Kafka 3.9 broker: checked here (ConfigAdminManager.preprocess),
the rest forwarded to the controller, the answers put back in request order.

Rules:
- A resource named twice: both answer INVALID_REQUEST "Each resource must appear at most once."; a config key
  twice in one resource "Error due to duplicate config keys"; a null value (legacy: any; incremental: any but
  DELETE) "Null value not supported for : <keys>".
- BROKER resources name this broker ("Unexpected broker id, expected N, but received X"; a name that is no
  integer "Node id must be an integer, but it is: X") or "" (the cluster default). TOPIC passes. BROKER_LOGGER
  (incremental only) is a broker's own log4j loggers, which the simulation does not have: INVALID_REQUEST saying
  so; any other type "Unknown resource type N".
- What passes goes to the controller as one request of the same version and header (forward); if nothing passes,
  nothing is sent. The broker's dynamic-config validation (DynamicBrokerConfig.validate) is left to the
  controller's checks.
"""
from __future__ import annotations

import dataclasses

from kraftsman.storage.protocol import codec, framing
from kraftsman.storage.protocol.errors import Errors as E

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
DELETE = 1


def _preprocess(request, node_id: int, incremental: bool) -> dict[int, tuple[int, str]]:
    """Return {index in request.resources: (code, message)} for the resources answered here."""
    errors: dict[int, tuple[int, str]] = {}
    seen: dict[tuple[int, str], int] = {}
    for i, r in enumerate(request.resources):
        first = seen.setdefault((r.resource_type, r.resource_name), i)
        if first != i:
            errors[first] = errors[i] = (E.INVALID_REQUEST, "Each resource must appear at most once.")
    for i, r in enumerate(request.resources):
        if i not in errors:
            error = _check(r, node_id, incremental)
            if error is not None:
                errors[i] = error
    return errors


def _check(resource, node_id: int, incremental: bool) -> tuple[int, str] | None:
    names = [c.name for c in resource.configs]
    if len(set(names)) != len(names):
        return E.INVALID_REQUEST, "Error due to duplicate config keys"
    nulls = [c.name for c in resource.configs if c.value is None and not (incremental and c.config_operation == DELETE)]
    if nulls:
        return E.INVALID_REQUEST, "Null value not supported for : " + ", ".join(nulls)
    kind, name = resource.resource_type, resource.resource_name
    if kind == BROKER and name:
        try:
            given = int(name)
        except ValueError:
            return E.INVALID_REQUEST, f"Node id must be an integer, but it is: {name}"
        if given != node_id:
            return E.INVALID_REQUEST, f"Unexpected broker id, expected {node_id}, but received {name}"
        return None
    if kind in (BROKER, TOPIC):
        return None
    if kind == BROKER_LOGGER and incremental:
        return E.INVALID_REQUEST, "The simulated broker has no log4j loggers to alter"
    return E.INVALID_REQUEST, f"Unknown resource type {kind}"


async def alter_configs(request, body, *, node_id: int, forward):
    """Answer (Incremental)AlterConfigs: check here, forward what passes with `forward(request, body)`."""
    incremental = request.api_name == "IncrementalAlterConfigs"
    errors = _preprocess(body, node_id, incremental)
    remaining = [r for i, r in enumerate(body.resources) if i not in errors]
    answered: dict[tuple[int, str], object] = {}
    if remaining:
        rest = body.replace(resources=remaining)
        frame = framing.encode_request(request.api_key, request.api_version, request.correlation_id,
                                       request.client_id, rest)[4:]
        answer = await forward(dataclasses.replace(request, frame=frame), rest)
        if answer is None:
            return None
        answered = {(r.resource_type, r.resource_name): r for r in answer.responses}
    cls = codec.message_class(f"{request.api_name}Response")
    out = []
    for i, r in enumerate(body.resources):
        if i in errors:
            code, message = errors[i]
            out.append(cls.AlterConfigsResourceResponse(error_code=code, error_message=message,
                                                        resource_type=r.resource_type,
                                                        resource_name=r.resource_name))
        else:
            out.append(answered.get((r.resource_type, r.resource_name)) or cls.AlterConfigsResourceResponse(
                error_code=E.UNKNOWN_SERVER_ERROR, error_message=None, resource_type=r.resource_type,
                resource_name=r.resource_name))
    return cls(throttle_time_ms=0, responses=out)
