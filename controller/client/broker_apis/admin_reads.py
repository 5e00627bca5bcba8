"""DescribeConfigs, DescribeAcls, DescribeUserScramCredentials and DescribeClientQuotas as a Kafka 3.9 broker
answers them from its own image and server properties (ConfigHelper, the authorizer's ACL cache,
KRaftMetadataCache's SCRAM and quota images).

Rules:
- DescribeConfigs is the quorum's ConfigHelper (describe_configs) run over the broker's layers: its dynamic
  per-broker configs, the cluster defaults, its server.properties, the ConfigDef defaults; topic configs with
  the broker's min.insync.replicas and unclean.leader.election.enable. BROKER resources name this broker or "".
- DescribeAcls answers from the image when authorizer.class.name names StandardAuthorizer, else
  SECURITY_DISABLED "No Authorizer is configured on the broker", as AclApis does.
- DescribeUserScramCredentials is the quorum's (ScramImage.describe).
- DescribeClientQuotas follows ClientQuotasImage.describe: each entity type at most once, known types only
  (user, client-id, ip), EXACT needs a match, DEFAULT and SPECIFIED none, ip never with user or client-id;
  `strict` wants exactly the filtered types. A bad filter is the whole request's error.
"""
from __future__ import annotations

from kraftsman.controller.quorum import acls_control, scram_control
from kraftsman.controller.quorum.context import ControllerContext, QuorumConfig
from kraftsman.controller.quorum.describe_configs import describe_configs
from kraftsman.controller.quorum.error_responses import error_response, security_disabled
from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors

STANDARD_AUTHORIZERS = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                        "kafka.security.authorizer.AclAuthorizer")
EXACT, DEFAULT, SPECIFIED = 0, 1, 2
ENTITY_TYPES = ("user", "client-id", "ip")


def broker_config(properties: dict[str, str]) -> QuorumConfig:
    """Return the settings a broker's ConfigHelper reads, from its server.properties."""
    return QuorumConfig(min_insync_replicas=int(properties.get("min.insync.replicas", "1")),
                        unclean_leader_election=properties.get("unclean.leader.election.enable", "false").strip()
                        .lower() == "true",
                        default_replication_factor=int(properties.get("default.replication.factor", "1")),
                        num_partitions=int(properties.get("num.partitions", "1")),
                        server_properties=tuple(sorted(properties.items())))


def _context(image, version: int, node_id: int, config: QuorumConfig) -> ControllerContext:
    return ControllerContext(image=image, api_version=version, node_id=node_id, config=config, listener="PLAINTEXT")


def describe_configs_answer(image, request, *, version: int, node_id: int, config: QuorumConfig):
    """Answer DescribeConfigs v0-v4."""
    return describe_configs(_context(image, version, node_id, config), request).response


def describe_acls_answer(image, request, *, version: int, properties: dict[str, str]):
    """Answer DescribeAcls v0-v3 (SECURITY_DISABLED without the standard authorizer)."""
    if properties.get("authorizer.class.name", "").strip() not in STANDARD_AUTHORIZERS:
        return security_disabled("DescribeAcls", request)
    return acls_control.describe_acls(_context(image, version, -1, QuorumConfig()), request).response


def describe_scram_answer(image, request, *, version: int):
    """Answer DescribeUserScramCredentials v0."""
    return scram_control.describe_user_scram_credentials(_context(image, version, -1, QuorumConfig()),
                                                         request).response


class _BadFilter(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


def _filter(components) -> tuple[dict, set]:
    exact: dict = {}
    typed: set = set()
    for c in components:
        if not c.entity_type:
            raise _BadFilter(Errors.INVALID_REQUEST, "Invalid empty entity type.")
        if c.entity_type in exact or c.entity_type in typed:
            raise _BadFilter(Errors.INVALID_REQUEST, f"Entity type {c.entity_type} cannot appear more than once "
                                                     "in the filter.")
        if c.entity_type not in ENTITY_TYPES:
            raise _BadFilter(Errors.UNSUPPORTED_VERSION, f"Unsupported entity type {c.entity_type}")
        _add(c, exact, typed)
    if "ip" in exact or "ip" in typed:
        if {"user", "client-id"} & (set(exact) | typed):
            raise _BadFilter(Errors.INVALID_REQUEST, "Invalid entity filter component combination. IP filter "
                                                     "component should not be used with user or clientId filter "
                                                     "component.")
    return exact, typed


def _add(c, exact: dict, typed: set) -> None:
    if c.match_type == EXACT:
        if c.match is None:
            raise _BadFilter(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string "
                                                     "to null.")
        exact[c.entity_type] = c.match
    elif c.match_type == DEFAULT:
        if c.match is not None:
            raise _BadFilter(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_DEFAULT, but also specified a "
                                                     "match string.")
        exact[c.entity_type] = None
    elif c.match_type == SPECIFIED:
        if c.match is not None:
            raise _BadFilter(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_SPECIFIED, but also specified "
                                                     "a match string.")
        typed.add(c.entity_type)
    else:
        raise _BadFilter(Errors.INVALID_REQUEST, f"Unknown match type {c.match_type}")


def _matches(entity: dict, exact: dict, typed: set, strict: bool) -> bool:
    if strict and len(entity) != len(exact) + len(typed):
        return False
    return all(k in entity and entity[k] == v for k, v in exact.items()) and all(t in entity for t in typed)


def describe_client_quotas_answer(image, request):
    """Answer DescribeClientQuotas v0-v1 (ClientQuotasImage.describe)."""
    cls = codec.message_class("DescribeClientQuotasResponse")
    try:
        exact, typed = _filter(request.components)
    except _BadFilter as e:
        return error_response("DescribeClientQuotas", request, e.code, str(e))
    entries = []
    for entity, values in image.client_quotas.entities.items():
        if _matches(dict(entity), exact, typed, request.strict):
            entries.append(cls.EntryData(
                entity=[cls.EntityData(entity_type=k, entity_name=n) for k, n in entity],
                values=[cls.ValueData(key=k, value=v) for k, v in sorted(values.items())]))
    return cls(throttle_time_ms=0, error_code=0, entries=entries)  # ErrorMessage keeps its default, ""
