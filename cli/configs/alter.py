"""kafka-configs --alter: Kafka 3.9's ConfigCommand.alterConfig, step by step, over the Admin calls.

Rules:
- Each entity type takes Kafka's path: topics and client-metrics describe the resource, refuse deleting a key
  it does not set ("Invalid config(s): ..."), then send one IncrementalAlterConfigs (SET each added key, DELETE
  each deleted one); brokers describe their dynamic configs, then send the whole new set as a legacy
  AlterConfigs (a sensitive key whose value the describe hid must be given again); broker-loggers check the
  loggers exist, then IncrementalAlterConfigs at that broker; users and clients alter quotas (after checking a
  deleted key is set) or, for a user alone, SCRAM credentials, never both; ips alter connection quotas.
- Nothing is sent after a refusal: every check on the command line's configs comes before the first write.
- alter() returns whether something changed (the new values differ from the described ones; SCRAM upserts
  always change: a new salt), for --output json/yaml; Kafka's own text ends with texts.completed_line.
"""
from __future__ import annotations

from . import texts
from .add_config import IP_QUOTA_KEYS, QUOTA_KEYS, SCRAM_MECHANISMS, quota_value, scram_credential
from .describe import QUOTA_TYPES, RESOURCE_TYPES, quota_filter, resource_configs
from .entities import BROKER_LOGGERS, BROKERS, CLIENT_METRICS, CLIENTS, IPS, TOPICS, USERS, Refusal
from .texts import shown_entries

SET, DELETE = 0, 1


class InvalidConfigs(Refusal):
    """Kafka's InvalidConfigurationException raised by the tool itself (printed as its message alone)."""


def alter(admin, types: list[str], names: list[str], adds: dict[str, str], deletes: list[str]) -> bool:
    """Apply one --alter command line; return whether anything changed."""
    head, name = types[0], names[0]
    if head in (TOPICS, CLIENT_METRICS):
        return _incremental(admin, head, name, adds, deletes)
    if head == BROKERS:
        return _legacy_broker(admin, name, adds, deletes)
    if head == BROKER_LOGGERS:
        return _loggers(admin, name, adds, deletes)
    if head in (USERS, CLIENTS):
        return _users_or_clients(admin, types, names, adds, deletes)
    if head == IPS:
        unknown = [k for k in (*adds, *deletes) if k not in IP_QUOTA_KEYS]
        if unknown:
            raise Refusal(f"Only connection quota configs can be added for '{IPS}' using --bootstrap-server. "
                          f"Unexpected config names: {','.join(unknown)}")
        return alter_quotas(admin, types, names, adds, deletes)
    raise Refusal(f"Unsupported entity type: {head}")


def _check_deletes(deletes: list[str], present, what: str = "config(s)") -> None:
    invalid = [k for k in deletes if k not in present]
    if invalid:
        raise InvalidConfigs(f"Invalid {what}: {','.join(invalid)}")


def _incremental(admin, entity_type: str, name: str, adds: dict[str, str], deletes: list[str]) -> bool:
    from kraftsman.controller.client.admin.configs import AlterConfigOp

    old = {e.name: e for e in shown_entries(resource_configs(admin, entity_type, name, False), entity_type, name,
                                            False)}
    _check_deletes(deletes, old)
    ops = [AlterConfigOp(k, SET, v) for k, v in adds.items()] + [AlterConfigOp(k, DELETE) for k in deletes]
    admin.incremental_alter_configs((RESOURCE_TYPES[entity_type], name), ops)
    return any(k not in old or old[k].value != v for k, v in adds.items()) or bool(deletes)


def _legacy_broker(admin, name: str, adds: dict[str, str], deletes: list[str]) -> bool:
    old = {e.name: e.value for e in shown_entries(resource_configs(admin, BROKERS, name, False), BROKERS, name, False)}
    _check_deletes(deletes, old)
    new = {**old, **adds}
    for key in deletes:
        new.pop(key, None)
    hidden = [k for k, v in new.items() if v is None]
    if hidden:
        raise InvalidConfigs("All sensitive broker config entries must be specified for --alter, missing entries: "
                             + texts.scala_set(hidden))
    admin.alter_configs((RESOURCE_TYPES[BROKERS], name), list(new.items()))
    return new != old


def _loggers(admin, name: str, adds: dict[str, str], deletes: list[str]) -> bool:
    from kraftsman.controller.client.admin.configs import AlterConfigOp

    loggers = {e.name: e.value for e in resource_configs(admin, BROKER_LOGGERS, name, True)}
    invalid = [k for k in deletes if k not in loggers] + [k for k in adds if k not in loggers]
    if invalid:
        raise InvalidConfigs(f"Invalid broker logger(s): {','.join(invalid)}")
    ops = [AlterConfigOp(k, SET, v) for k, v in adds.items()] + [AlterConfigOp(k, DELETE) for k in deletes]
    admin.incremental_alter_configs((RESOURCE_TYPES[BROKER_LOGGERS], name), ops)
    return any(loggers[k] != v for k, v in adds.items()) or bool(deletes)


def _users_or_clients(admin, types, names, adds: dict[str, str], deletes: list[str]) -> bool:
    quota_adds = [k for k in adds if k in QUOTA_KEYS]
    scram_adds = [k for k in adds if k in SCRAM_MECHANISMS]
    unknown_adds = [k for k in adds if k not in QUOTA_KEYS and k not in SCRAM_MECHANISMS]
    quota_deletes = [k for k in deletes if k in QUOTA_KEYS]
    scram_deletes = [k for k in deletes if k in SCRAM_MECHANISMS]
    unknown_deletes = [k for k in deletes if k not in QUOTA_KEYS and k not in SCRAM_MECHANISMS]
    if types[0] == CLIENTS or len(types) == 2:
        if unknown_adds or scram_adds:
            raise Refusal(f"Only quota configs can be added for '{CLIENTS}' using --bootstrap-server. Unexpected "
                          f"config names: {texts.scala_set(unknown_adds + scram_adds)}")
        if unknown_deletes or scram_deletes:
            raise Refusal(f"Only quota configs can be deleted for '{CLIENTS}' using --bootstrap-server. Unexpected "
                          f"config names: {texts.scala_buffer(unknown_deletes + scram_deletes)}")
    else:
        if unknown_adds:
            raise Refusal(f"Only quota and SCRAM credential configs can be added for '{USERS}' using "
                          f"--bootstrap-server. Unexpected config names: {texts.scala_set(unknown_adds)}")
        if unknown_deletes:
            raise Refusal(f"Only quota and SCRAM credential configs can be deleted for '{USERS}' using "
                          f"--bootstrap-server. Unexpected config names: {texts.scala_buffer(unknown_deletes)}")
        if scram_adds or scram_deletes:
            if "" in names:
                raise Refusal("The use of --entity-default or --user-defaults is not allowed with User SCRAM "
                              "Credentials using --bootstrap-server.")
            if quota_adds or quota_deletes:
                raise Refusal(f"Cannot alter both quota and SCRAM credential configs simultaneously for '{USERS}' "
                              "using --bootstrap-server.")
    if quota_adds or quota_deletes:
        return alter_quotas(admin, types, names, adds, deletes)
    return alter_scram(admin, names[0], {k: adds[k] for k in scram_adds}, scram_deletes)


def alter_quotas(admin, types, names, adds: dict[str, str], deletes: list[str]) -> bool:
    """Check the deleted keys are set, then alter one quota entity (AlterClientQuotas)."""
    found = admin.describe_client_quotas(quota_filter(types, names), strict=True)
    old = dict(found[0].values) if found else {}
    _check_deletes(deletes, old)
    entity = [(QUOTA_TYPES[t], n or None) for t, n in zip(types, names)]
    ops = [(k, quota_value(k, v)) for k, v in adds.items()] + [(k, None) for k in deletes]
    admin.alter_client_quotas(entity, ops)
    return any(old.get(k) != v for k, v in ops if v is not None) or bool(deletes)


def alter_scram(admin, user: str, adds: dict[str, str], deletes: list[str]) -> bool:
    """Create, replace or delete one user's SCRAM credentials; fail with the user's error."""
    from kraftsman.controller.client.admin.quotas import ScramDeletion, ScramUpsertion

    upserts = [ScramUpsertion(user, m, *scram_credential(m, text)) for m, text in adds.items()]
    outcome = admin.alter_user_scram_credentials(upserts, [ScramDeletion(user, m) for m in deletes])
    error = outcome.get(user)
    if error is not None:
        raise error
    return bool(upserts or deletes)
