"""Authorization on the controller: Kafka's StandardAuthorizer (super users + ACLs from the metadata image).

Rules:
- Enabled by `authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer` (also the
  older `kafka.security.authorizer.AclAuthorizer` name); without it every request is allowed (Kafka's default).
- `super.users` (`User:admin;User:ops`) may do anything. Otherwise ACLs (AccessControlEntryRecords in the
  committed image) decide: a DENY that matches wins over any ALLOW; resource LITERAL name or `*`, PREFIXED
  by prefix; principal exact or `User:*`; host exact or `*`; operation exact or ALL, and DESCRIBE is implied
  by READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS by ALTER_CONFIGS. No match: `allow.everyone.if.no.acl.found`
  (default false).
- Which operation each API needs follows Kafka 3.9's ControllerApis: Raft and broker-lifecycle RPCs need
  CLUSTER_ACTION on CLUSTER; UnregisterBroker, DescribeCluster, voter changes, reassignments, elections
  need ALTER on CLUSTER, as do UpdateFeatures, Create/DeleteAcls and AlterUserScramCredentials; DescribeQuorum,
  DescribeAcls and DescribeUserScramCredentials DESCRIBE on CLUSTER; AlterClientQuotas ALTER_CONFIGS on CLUSTER.
  Topic and config APIs are checked per resource but answered as a whole (one denied resource denies the
  request: coarser than Kafka).
- Metadata (served by kraftsman's controller for admin clients) is open to everyone, as on a Kafka broker;
  its answer keeps only the topics the principal may DESCRIBE (a topic asked by name and not allowed comes
  back with TOPIC_AUTHORIZATION_FAILED and no partitions).
- A denied request gets `error_response(api, body, code)`: CLUSTER_AUTHORIZATION_FAILED (31) or
  TOPIC_AUTHORIZATION_FAILED (29). The principal of a forwarded request is the Envelope's PrincipalData.
"""
from __future__ import annotations

import logging
import struct

from kraftsman.controller.image.acls import OPERATIONS, PERMISSION_TYPES, RESOURCE_TYPES
from kraftsman.controller.quorum import error_responses
from kraftsman.storage.protocol.errors import Errors

AUTHORIZERS = ("org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer")
log = logging.getLogger("kraftsman.server")
ANONYMOUS = "User:ANONYMOUS"
_OP = {name: code for code, name in enumerate(OPERATIONS)}
_RES = {name: code for code, name in enumerate(RESOURCE_TYPES)}
LITERAL, PREFIXED, DENY, ALLOW = 3, 4, PERMISSION_TYPES.index("DENY"), PERMISSION_TYPES.index("ALLOW")
_IMPLIES = {"DESCRIBE": ("READ", "WRITE", "DELETE", "ALTER"), "DESCRIBE_CONFIGS": ("ALTER_CONFIGS",)}
CLUSTER_APIS = {
    **dict.fromkeys(("Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "Fetch", "FetchSnapshot", "BrokerRegistration",
                     "BrokerHeartbeat", "ControllerRegistration", "AlterPartition", "AllocateProducerIds",
                     "UpdateRaftVoter", "AssignReplicasToDirs", "Envelope"), "CLUSTER_ACTION"),
    **dict.fromkeys(("UnregisterBroker", "DescribeCluster", "AddRaftVoter", "RemoveRaftVoter", "ElectLeaders",
                     "AlterPartitionReassignments", "UpdateFeatures", "CreateAcls", "DeleteAcls",
                     "AlterUserScramCredentials"), "ALTER"),
    **dict.fromkeys(("DescribeQuorum", "ListPartitionReassignments", "DescribeAcls", "DescribeUserScramCredentials"),
                    "DESCRIBE"),
    "AlterClientQuotas": "ALTER_CONFIGS",
}
TOPIC_APIS = {"CreateTopics": "CREATE", "DeleteTopics": "DELETE", "CreatePartitions": "ALTER"}
CONFIG_APIS = {"IncrementalAlterConfigs": "ALTER_CONFIGS", "AlterConfigs": "ALTER_CONFIGS",
               "DescribeConfigs": "DESCRIBE_CONFIGS"}


def enabled(class_name: str | None) -> bool:
    """Tell whether `authorizer.class.name` names the standard authorizer."""
    return (class_name or "").strip() in AUTHORIZERS


def parse_super_users(text: str | None) -> frozenset[str]:
    """Parse `super.users` (`User:a;User:b`)."""
    return frozenset(p.strip() for p in (text or "").split(";") if p.strip())


class StandardAuthorizer:
    """Decide whether a principal may perform an operation on a resource, from super users and image ACLs."""

    def __init__(self, super_users=frozenset(), allow_if_no_acl: bool = False, acls=lambda: (),
                 topic_names=dict):
        self.super_users, self.allow_if_no_acl, self.acls = frozenset(super_users), allow_if_no_acl, acls
        self.topic_names = topic_names  # () -> {topic id bytes: name}, to check DeleteTopics by id

    def authorize(self, principal: str, host: str, operation: str, resource_type: str, name: str) -> bool:
        """Return True when `principal` from `host` may do `operation` on (resource_type, name)."""
        if principal in self.super_users:
            return True
        ops = {operation, "ALL", *_IMPLIES.get(operation, ())}
        matched, allowed = False, False
        for acl in self.acls():
            if not _matches(acl, principal, host, resource_type, name):
                continue
            op = OPERATIONS[acl.operation] if 0 <= acl.operation < len(OPERATIONS) else "UNKNOWN"
            if acl.permission_type == DENY and op in (operation, "ALL"):
                return False
            if acl.permission_type == ALLOW and op in ops:
                allowed = True
            matched = True
        return allowed or (not matched and self.allow_if_no_acl)

    def check(self, principal: str, host: str, api_name: str, body):
        """Return None when the request is allowed, else the error response to send."""
        code = self._denied(principal, host, api_name, body)
        if not code:
            return None
        if api_name == "DescribeConfigs":
            return _describe_configs_denied(body, code)
        return error_responses.error_response(api_name, body, code, Errors(code).message)

    def _denied(self, principal: str, host: str, api: str, body) -> int:
        if api in CLUSTER_APIS:
            ok = self.authorize(principal, host, CLUSTER_APIS[api], "CLUSTER", "kafka-cluster")
            return 0 if ok else Errors.CLUSTER_AUTHORIZATION_FAILED
        if api in TOPIC_APIS:
            op = TOPIC_APIS[api]
            if op == "CREATE" and self.authorize(principal, host, op, "CLUSTER", "kafka-cluster"):
                return 0
            names = _topic_names(api, body, self.topic_names)
            ok = all(self.authorize(principal, host, op, "TOPIC", n) for n in names)
            return 0 if ok else Errors.TOPIC_AUTHORIZATION_FAILED
        if api in CONFIG_APIS:
            for resource in body.resources:
                kind = "TOPIC" if resource.resource_type == 2 else "CLUSTER"
                if not self.authorize(principal, host, CONFIG_APIS[api], kind,
                                      resource.resource_name if kind == "TOPIC" else "kafka-cluster"):
                    return Errors.TOPIC_AUTHORIZATION_FAILED if kind == "TOPIC" else Errors.CLUSTER_AUTHORIZATION_FAILED
            return 0
        return 0


def from_properties(props: dict, image_of, anonymous_listeners: bool = True) -> StandardAuthorizer | None:
    """Return the authorizer the properties enable (None: everything is allowed), reading ACLs from `image_of()`;
    warn when some listener (`anonymous_listeners`: PLAINTEXT or SSL) serves User:ANONYMOUS, not a super user."""
    if not enabled(props.get("authorizer.class.name")):
        return None
    allow = props.get("allow.everyone.if.no.acl.found", "false").strip().lower() == "true"
    super_users = parse_super_users(props.get("super.users"))
    if anonymous_listeners and ANONYMOUS not in super_users:
        log.warning("authorizer on: requests on PLAINTEXT (and SSL without a client certificate) listeners run as "
                    "%s, which is not in super.users: Raft traffic and brokers there need an ACL granting "
                    "CLUSTER_ACTION on the cluster", ANONYMOUS)
    return StandardAuthorizer(super_users, allow,
                              lambda: (message for message, _ in image_of().acls.entries.values()),
                              lambda: {topic_id: topic.name for topic_id, topic in image_of().topics.by_id.items()})


def request_denial(authorizer: StandardAuthorizer, rctx, body):
    """Return the error response for a request the principal may not make (None: allowed). A forwarded
    request needs CLUSTER_ACTION for the forwarding connection and the right for the client's principal."""
    host = str(rctx.peer[0]) if rctx.peer else "*"
    principal = rctx.session_principal
    if rctx.forwarded_by is not None:
        if not authorizer.authorize(principal, host, "CLUSTER_ACTION", "CLUSTER", "kafka-cluster"):
            return error_responses.error_response(rctx.api_name, body, Errors.CLUSTER_AUTHORIZATION_FAILED,
                                                  Errors.CLUSTER_AUTHORIZATION_FAILED.message)
        principal = envelope_principal(rctx.principal) or principal
    return authorizer.check(principal, host, rctx.api_name, body)


def _describe_configs_denied(body, code: int):
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("DescribeConfigsResponse")
    return cls(results=[cls.DescribeConfigsResult(error_code=code, error_message=Errors(code).message,
                                                  resource_type=r.resource_type, resource_name=r.resource_name)
                        for r in body.resources])


def _matches(acl, principal: str, host: str, resource_type: str, name: str) -> bool:
    if acl.resource_type != _RES[resource_type] or acl.principal not in (principal, "User:*"):
        return False
    if acl.host not in (host, "*"):
        return False
    if acl.pattern_type == LITERAL:
        return acl.resource_name in (name, "*")
    return acl.pattern_type == PREFIXED and name.startswith(acl.resource_name)


def _topic_names(api: str, body, topic_names) -> list[str]:
    """Return the topic names a request names; DeleteTopics ids are resolved (unknown ids are left to the
    controller, which answers UNKNOWN_TOPIC_ID)."""
    if api != "DeleteTopics":
        return [t.name for t in body.topics]
    names = list(body.topic_names or [])
    by_id = topic_names() if any(t.name is None for t in body.topics or []) else {}
    for topic in body.topics or []:
        name = topic.name if topic.name is not None else by_id.get(bytes(topic.topic_id))
        if name is not None:
            names.append(name)
    return names


def filter_metadata(authorizer: StandardAuthorizer, rctx, request, response):
    """Return the Metadata response without the topics the request's principal may not DESCRIBE."""
    principal, host = _principal_and_host(rctx)
    named = {t.name for t in request.topics or [] if t.name is not None}
    kept = []
    for topic in response.topics:
        if authorizer.authorize(principal, host, "DESCRIBE", "TOPIC", topic.name or ""):
            kept.append(topic)
        elif topic.name in named:
            kept.append(type(topic)(error_code=Errors.TOPIC_AUTHORIZATION_FAILED, name=topic.name))
    return response.replace(topics=kept)


def _principal_and_host(rctx) -> tuple[str, str]:
    return request_principal(rctx), str(rctx.peer[0]) if rctx.peer else "*"


def request_principal(rctx) -> str:
    """Return who made the request: the Envelope's principal when forwarded, else the connection's."""
    if rctx.forwarded_by is not None:
        return envelope_principal(rctx.principal) or rctx.session_principal
    return rctx.session_principal


def envelope_principal(data: bytes | None) -> str | None:
    """Decode Kafka's serialized DefaultPrincipalData (int16 version, then type and name as strings)."""
    fields = _principal_data(data)
    return None if fields is None else f"{fields[0]}:{fields[1]}"


def envelope_token_authenticated(data: bytes | None) -> bool:
    """Tell whether a serialized DefaultPrincipalData says its principal logged in with a delegation token."""
    fields = _principal_data(data)
    return fields is not None and fields[2]


def _principal_data(data: bytes | None) -> tuple[str, str, bool] | None:
    """Return (type, name, token authenticated) of DefaultPrincipalData v0 (flexible), or None."""
    if not data or len(data) < 3:
        return None
    try:
        version = struct.unpack_from(">h", data)[0]
        if version != 0:
            return None
        pos, parts = 2, []
        for _ in range(2):                              # flexible v0: compact strings (unsigned varint len + 1)
            length, shift = 0, 0
            while True:
                byte = data[pos]
                pos += 1
                length |= (byte & 0x7F) << shift
                shift += 7
                if not byte & 0x80:
                    break
            parts.append(data[pos:pos + length - 1].decode("utf-8"))
            pos += length - 1
        return parts[0], parts[1], pos < len(data) and data[pos] != 0
    except (IndexError, UnicodeDecodeError, struct.error):
        return None
