"""Kafka's client quota and SCRAM credential calls: describeClientQuotas, alterClientQuotas,
describeUserScramCredentials and alterUserScramCredentials (a part of Admin).

Rules:
- Routing is KafkaAdminClient's: the describes and AlterClientQuotas go to any node (core.any_node; with
  bootstrap controllers a controller, whose lack of DescribeClientQuotas is the client's UnsupportedVersion,
  where Kafka 3.9's client refuses the call), AlterUserScramCredentials to the controller (core.on_controller).
- describe_client_quotas returns the entities, and each entity's values, in the order Kafka's Admin client
  iterates them: java.util.HashMaps sized to the response (ClientQuotaEntity hashes as Objects.hash of its
  Map<String, String>),
  filled in the response's order (java_hash_order). A top-level error is a ServerError.
- SCRAM upsertions are salted here, as KafkaAdminClient does: a fresh salt (the UTF-8 base-36 text of 130 random
  bits) and Hi(password, salt, iterations) with the mechanism's hash; the password never goes on the wire. An empty
  user or password fails before sending, with Kafka's UnacceptableCredentialException texts.
- describe_user_scram_credentials(None or []) asks every user; the answer keeps the server's order and every
  user's own error (RESOURCE_NOT_FOUND included: the caller decides what it means).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kraftsman.storage.protocol.errors import Errors

from .. import sync_client as sc
from .core import ServerError, error_message, raise_for

USER, CLIENT_ID, IP = "user", "client-id", "ip"                  # ClientQuotaEntity types
EXACT, DEFAULT, SPECIFIED = 0, 1, 2                              # DescribeClientQuotas MatchType


class QuotaFilterComponent(NamedTuple):
    """One component of a quota filter: an entity type with an EXACT name, the DEFAULT entity, or any
    SPECIFIED entity of that type (Kafka's ClientQuotaFilterComponent)."""

    entity_type: str
    match_type: int
    match: str | None = None


@dataclass
class QuotaEntry:
    """One entity's quotas: its (type, name) pairs (name None = the default entity) and (key, value) pairs."""

    entity: list[tuple[str, str | None]]
    values: list[tuple[str, float]] = field(default_factory=list)


@dataclass
class UserScramResult:
    """One user's SCRAM credentials (mechanism name, iterations), or its error code and message."""

    user: str
    credentials: list[tuple[str, int]] = field(default_factory=list)
    error_code: int = 0
    error_message: str | None = None


class ScramUpsertion(NamedTuple):
    """A credential to create or replace: user, mechanism name (SCRAM-SHA-256/512), iterations, password."""

    user: str
    mechanism: str
    iterations: int
    password: str


class ScramDeletion(NamedTuple):
    """A credential to delete: user and mechanism name."""

    user: str
    mechanism: str


def _server_error(code: int, message: str | None) -> ServerError:
    return ServerError(code, error_message(code, message))


class QuotaCalls:
    """Client quota and SCRAM credential calls (a part of Admin)."""

    def describe_client_quotas(self, components: list[QuotaFilterComponent], strict: bool) -> list[QuotaEntry]:
        """Return the quotas matching the filter, in Kafka's Admin client order (DescribeClientQuotas)."""
        def attempt(conn: sc.SyncConnection) -> list[QuotaEntry]:
            from kraftsman.storage.protocol import codec

            cls = codec.message_class("DescribeClientQuotasRequest")
            body = cls(components=[cls.ComponentData(entity_type=c.entity_type, match_type=c.match_type,
                                                     match=c.match) for c in components], strict=strict)
            response = conn.request("DescribeClientQuotas", conn.pick_version("DescribeClientQuotas"), body,
                                    self.deadline)
            raise_for(response.error_code, response.error_message)
            return java_ordered(response.entries)

        return self.any_node(attempt, "DescribeClientQuotas")

    def alter_client_quotas(self, entity: list[tuple[str, str | None]], ops: list[tuple[str, float | None]],
                            validate_only: bool = False) -> None:
        """Set (a value) or remove (None) quota keys of one entity (AlterClientQuotas)."""
        def attempt(conn: sc.SyncConnection) -> None:
            from kraftsman.storage.protocol import codec

            cls = codec.message_class("AlterClientQuotasRequest")
            entry = cls.EntryData(entity=[cls.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                                  ops=[cls.OpData(key=k, value=0.0 if v is None else float(v), remove=v is None)
                                       for k, v in ops])
            body = cls(entries=[entry], validate_only=validate_only)
            response = conn.request("AlterClientQuotas", conn.pick_version("AlterClientQuotas"), body, self.deadline)
            for answer in response.entries:
                raise_for(answer.error_code, answer.error_message)

        self.on_controller(attempt, "AlterClientQuotas")

    def describe_user_scram_credentials(self, users: list[str] | None = None) -> list[UserScramResult]:
        """Return the SCRAM credentials of `users` (every user when None or empty)."""
        def attempt(conn: sc.SyncConnection) -> list[UserScramResult]:
            from kraftsman.storage.protocol import codec

            cls = codec.message_class("DescribeUserScramCredentialsRequest")
            body = cls(users=[cls.UserName(name=u) for u in users] if users else None)
            api = "DescribeUserScramCredentials"
            response = conn.request(api, conn.pick_version(api), body, self.deadline)
            raise_for(response.error_code, response.error_message)
            return [_scram_result(r) for r in response.results]

        return self.any_node(attempt, "DescribeUserScramCredentials")

    def alter_user_scram_credentials(self, upsertions: list[ScramUpsertion],
                                     deletions: list[ScramDeletion]) -> dict[str, Exception | None]:
        """Create, replace or delete SCRAM credentials; return each user's outcome (None: done)."""
        refused = _client_side_refusals(upsertions, deletions)
        body = _scram_alteration_body([u for u in upsertions if u.user not in refused],
                                      [d for d in deletions if d.user not in refused])

        def attempt(conn: sc.SyncConnection) -> dict[str, Exception | None]:
            api = "AlterUserScramCredentials"
            response = conn.request(api, conn.pick_version(api), body, self.deadline)
            for r in response.results:
                if r.error_code == Errors.NOT_CONTROLLER:
                    raise_for(r.error_code, r.error_message)
            return {r.user: _server_error(r.error_code, r.error_message) if r.error_code else None
                    for r in response.results}

        outcomes = dict(refused)
        if body.upsertions or body.deletions:
            answered = self.on_controller(attempt, "AlterUserScramCredentials")
            outcomes.update({u: e for u, e in answered.items() if u not in refused})
        for user in {a.user for a in (*upsertions, *deletions)} - outcomes.keys():
            outcomes[user] = _server_error(Errors.UNKNOWN_SERVER_ERROR,
                                           f"The broker response did not contain a result for user {user}")
        return outcomes


def java_ordered(entries) -> list[QuotaEntry]:
    """Order DescribeClientQuotas entries, and each one's values, as Kafka's Admin client's HashMaps iterate."""
    from kraftsman.controller.quorum.java_hash_order import JavaHashMap, entity_hash

    # ClientQuotaEntity.hashCode() is Objects.hash(entries): 31 * 1 + the map's hash
    by_entity = JavaHashMap(len(entries), hash_of=lambda key: (31 + entity_hash(key)) & 0xFFFFFFFF)
    for entry in entries:
        key = tuple(sorted((e.entity_type, e.entity_name) for e in entry.entity))
        values = JavaHashMap(len(entry.values))
        for v in entry.values:
            values.put(v.key, v.value)
        by_entity.put(key, (list((e.entity_type, e.entity_name) for e in entry.entity), values.items()))
    return [QuotaEntry(entity, values) for entity, values in (value for _, value in by_entity.items())]


def _scram_result(r) -> UserScramResult:
    from kraftsman.storage.scram import MECHANISMS

    names = {m.type: m.name for m in MECHANISMS.values()}
    credentials = [(names.get(c.mechanism, "UNKNOWN"), c.iterations) for c in r.credential_infos]
    return UserScramResult(r.user, credentials, r.error_code, r.error_message)


def _client_side_refusals(upsertions, deletions) -> dict[str, Exception]:
    """Return the users KafkaAdminClient fails before sending: empty names, empty passwords, unknown mechanisms."""
    from kraftsman.storage.scram import MECHANISMS

    refused: dict[str, Exception] = {}
    for a in (*deletions, *upsertions):
        if not a.user:
            refused[a.user] = _server_error(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
        elif a.mechanism not in MECHANISMS:
            refused[a.user] = _server_error(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
        elif isinstance(a, ScramUpsertion) and not a.password:
            refused[a.user] = _server_error(Errors.UNACCEPTABLE_CREDENTIAL, "Password must not be empty")
    return refused


def _scram_alteration_body(upsertions: list[ScramUpsertion], deletions: list[ScramDeletion]):
    from kraftsman.storage import scram
    from kraftsman.storage.protocol import codec

    cls = codec.message_class("AlterUserScramCredentialsRequest")
    ups = []
    for u in upsertions:
        mechanism, salt = scram.MECHANISMS[u.mechanism], scram.random_salt()
        ups.append(cls.ScramCredentialUpsertion(
            name=u.user, mechanism=mechanism.type, iterations=u.iterations, salt=salt,
            salted_password=scram.salted_password(mechanism, u.password, salt, u.iterations)))
    dels = [cls.ScramCredentialDeletion(name=d.user, mechanism=scram.MECHANISMS[d.mechanism].type)
            for d in deletions]
    return cls(upsertions=ups, deletions=dels)
