"""Topic handlers: CreateTopics (v0-v7), DeleteTopics (v0-v6) and CreatePartitions (v0-v3).

Rules:
- Checks run in Kafka's order: duplicate names in the request (INVALID_REQUEST), name rules and '.'/'_'
  collisions with existing topics or, beyond Kafka, with an earlier topic of the same request
  (INVALID_TOPIC_EXCEPTION), existing names (TOPIC_ALREADY_EXISTS), null config values and
  config validation (INVALID_CONFIG), then the assignment (manual or placed) of each topic.
- A created topic is a TopicRecord, its ConfigRecords, then one PartitionRecord per partition (leader =
  first active replica, ISR = active replicas, epochs 0), as ReplicationControlManager.createTopic.
- A request asking for more than config.max_partitions_per_request partitions in total (defaults counted,
  invalid counts not) fails as a whole with POLICY_VIOLATION (Kafka's validateTotalNumberOfPartitions).
- Topic ids come from ctx.rng (version-4 bits; never zero, the metadata topic id, a '-' start or a taken id).
- validate_only answers as if applied but returns no records.
- What a request reads about brokers (placement layout, active set, default directories) is computed once
  per request (_Brokers): the image does not change while a handler runs.
"""
from __future__ import annotations

from kraftsman.storage.protocol import codec
from kraftsman.storage.protocol.errors import Errors as E
from kraftsman.storage.protocol.uuids import RESERVED, ZERO_UUID, Uuid
from kraftsman.storage.records.metadata import ApiMessageAndVersion

from .alter_configs import DEFAULT_CONFIG, TOPIC, TOPIC_CONFIG_SOURCE, incremental_changes
from .api_error import OK, ApiError
from .context import ControllerContext, ControllerResult
from .partitions import active_brokers, default_dirs, is_active, new_partition_records, record_version
from .placement import BrokerLayout, PlacementError, place
from .topic_configs_schema import topic_defaults
from .topics_names import TopicNameError, has_collision_chars, unify_collision_chars, validate_topic_name

TOO_LARGE = "Excessively large number of partitions per request."
_TOPIC = codec.message_class("TopicRecord")
_CT = codec.message_class("CreateTopicsResponse")


class _Brokers:
    """The broker facts of one request's image, each computed on first use."""

    __slots__ = ("image", "_layout", "_active", "_dirs", "_version")

    def __init__(self, image):
        self.image = image
        self._layout = self._active = self._dirs = self._version = None

    def layout(self) -> BrokerLayout:
        if self._layout is None:
            self._layout = BrokerLayout.of(self.image)
        return self._layout

    def active(self) -> set[int]:
        if self._active is None:
            self._active = active_brokers(self.image)
        return self._active

    def dirs(self) -> dict[int, bytes]:
        if self._dirs is None:
            self._dirs = default_dirs(self.image)
        return self._dirs

    def version(self) -> int:
        if self._version is None:
            self._version = record_version(self.image)
        return self._version

    def partition_records(self, topic_id, first_id: int, parts) -> list:
        """Return the PartitionRecords of new partitions from (replicas, isr) pairs."""
        version = self.version()
        return new_partition_records(self.image, topic_id, first_id, parts, self.dirs() if version >= 1 else None,
                                     version)


def random_uuid(rng) -> Uuid:
    """Return a random Uuid from `rng` as Kafka's Uuid.randomUuid makes one (version-4 bits; never zero,
    the metadata topic id, nor one whose text starts with '-')."""
    while True:
        raw = bytearray(rng.getrandbits(128).to_bytes(16, "big"))
        raw[6] = (raw[6] & 0x0F) | 0x40
        raw[8] = (raw[8] & 0x3F) | 0x80
        value = Uuid(bytes(raw))
        if value not in RESERVED and not str(value).startswith("-"):
            return value


def new_topic_id(ctx: ControllerContext, taken: set) -> Uuid:
    """Return a fresh random topic id from ctx.rng (random_uuid), not taken yet."""
    while True:
        topic_id = random_uuid(ctx.rng)
        if topic_id not in taken and topic_id not in ctx.image.topics.by_id:
            return topic_id


def validate_manual_assignment(ctx: ControllerContext, replicas: list, replication_factor: int | None) -> None:
    """Raise INVALID_REPLICA_ASSIGNMENT as Kafka's validateManualPartitionAssignment."""
    if not replicas:
        raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker_id in sorted(replicas):
        if broker_id not in ctx.image.cluster.brokers:
            raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes broker "
                                                         f"{broker_id}, but no such broker is registered.")
        if broker_id == previous:
            raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes the broker "
                                                         f"{previous} more than once.")
        previous = broker_id
    if replication_factor is not None and len(replicas) != replication_factor:
        raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes a partition with "
                                                     f"{len(replicas)} replica(s), but this is not consistent with "
                                                     f"previous partitions, which have {replication_factor} "
                                                     "replica(s).")


def _manual_partitions(ctx: ControllerContext, topic) -> list[tuple[list, list]]:
    if topic.replication_factor != -1:
        raise ApiError(E.INVALID_REQUEST, "A manual partition assignment was specified, but replication factor "
                                          "was not set to -1.")
    if topic.num_partitions != -1:
        raise ApiError(E.INVALID_REQUEST, "A manual partition assignment was specified, but numPartitions was not "
                                          "set to -1.")
    parts, factor = {}, None
    for assignment in topic.assignments:
        index = assignment.partition_index
        if index in parts:
            raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"Found multiple manual partition assignments for "
                                                         f"partition {index}")
        validate_manual_assignment(ctx, list(assignment.broker_ids), factor)
        factor = len(assignment.broker_ids)
        isr = [b for b in assignment.broker_ids if is_active(ctx.image, b)]
        if not isr:
            raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"All brokers specified in the manual partition assignment "
                                                         f"for partition {index} are fenced or in controlled shutdown.")
        parts[index] = (list(assignment.broker_ids), isr)
    if sorted(parts) != list(range(len(parts))):
        raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, "partitions should be a consecutive 0-based integer sequence")
    return [parts[i] for i in range(len(parts))]


def _placed_partitions(ctx: ControllerContext, topic, brokers: _Brokers) -> list[tuple[list, list]]:
    if topic.replication_factor < -1 or topic.replication_factor == 0:
        raise ApiError(E.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the "
                                                     "default value.")
    if topic.num_partitions < -1 or topic.num_partitions == 0:
        raise ApiError(E.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
    count = ctx.config.num_partitions if topic.num_partitions == -1 else topic.num_partitions
    factor = ctx.config.default_replication_factor if topic.replication_factor == -1 else topic.replication_factor
    try:
        placements = place(ctx.image, ctx.rng, count, factor, brokers.layout())
    except PlacementError as e:
        raise ApiError(E.INVALID_REPLICATION_FACTOR, f"Unable to replicate the partition {factor} time(s): {e}") \
            from None
    return _with_isrs(placements, brokers, factor)


def _with_isrs(placements: list, brokers: _Brokers, factor: int) -> list[tuple[list, list]]:
    """Return each placement's (replicas, ISR): the replicas on active brokers, in order; a placement with none
    fails the request, as Kafka's does."""
    parts, active = [], brokers.active()
    for replicas in placements:
        isr = [b for b in replicas if b in active]
        if not isr:
            raise ApiError(E.INVALID_REPLICATION_FACTOR, f"Unable to replicate the partition {factor} time(s): All "
                                                         "brokers are currently fenced or in controlled shutdown.")
        parts.append((replicas, isr))
    return parts


def _name_errors(ctx: ControllerContext, topics) -> dict[str, ApiError]:
    errors, seen, duplicates = {}, set(), set()
    for topic in topics:
        (duplicates if topic.name in seen else seen).add(topic.name)
    collisions: dict[str, str] = {}
    for existing in ctx.image.topics.by_name:
        if has_collision_chars(existing):
            key = unify_collision_chars(existing)
            collisions[key] = min(collisions.get(key, existing), existing)  # Kafka's TreeSet: the least name
    for topic in topics:
        name = topic.name
        if name in duplicates:
            errors[name] = ApiError(E.INVALID_REQUEST, "Duplicate topic name.")
            continue
        try:
            validate_topic_name(name)
        except TopicNameError as e:
            errors[name] = ApiError(E.INVALID_TOPIC_EXCEPTION, str(e))
            continue
        if name in ctx.image.topics.by_name:
            errors[name] = ApiError(E.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        elif has_collision_chars(name):
            other = collisions.setdefault(unify_collision_chars(name), name)
            if other != name:
                errors[name] = ApiError(E.INVALID_TOPIC_EXCEPTION, f"Topic '{name}' collides with existing topic: "
                                                                   f"{other}")
    return errors


def _config_records(ctx: ControllerContext, topic) -> list:
    nulls = [c.name for c in topic.configs if c.value is None]
    if nulls:
        raise ApiError(E.INVALID_CONFIG, "Null value not supported for topic configs: " + ",".join(nulls))
    ops = {c.name: (0, c.value) for c in topic.configs}
    return incremental_changes(ctx, TOPIC, topic.name, ops, creating=True) if ops else []


def _create_one(ctx: ControllerContext, topic, taken: set, brokers: _Brokers) -> tuple[list, object]:
    config_records = _config_records(ctx, topic)
    parts = _manual_partitions(ctx, topic) if topic.assignments else _placed_partitions(ctx, topic, brokers)
    topic_id = new_topic_id(ctx, taken)
    taken.add(topic_id)
    records = [ApiMessageAndVersion(_TOPIC(name=topic.name, topic_id=topic_id), 0)] + config_records
    records += brokers.partition_records(topic_id, 0, parts)
    overrides = {c.name: c.value for c in topic.configs}
    effective = topic_defaults(ctx.config)
    effective.update(overrides)
    configs = [_CT.CreatableTopicConfigs(name=k, value=v, read_only=False, is_sensitive=False,
                                         config_source=TOPIC_CONFIG_SOURCE if k in overrides else DEFAULT_CONFIG)
               for k, v in sorted(effective.items())]
    result = _CT.CreatableTopicResult(name=topic.name, topic_id=topic_id, error_code=0, error_message=None,
                                      num_partitions=len(parts), replication_factor=len(parts[0][0]),
                                      configs=configs)
    return records, result


def _error_result(name: str, error: ApiError):
    return _CT.CreatableTopicResult(name=name, error_code=error.code, error_message=error.message, configs=[])


def _total_partitions(ctx: ControllerContext, topics) -> int:
    total = 0
    for topic in topics:
        if topic.assignments:
            total += len(topic.assignments)
        elif topic.num_partitions == -1:
            total += ctx.config.num_partitions
        elif topic.num_partitions > 0:
            total += topic.num_partitions
    return total


def create_topics(ctx: ControllerContext, request) -> ControllerResult:
    """Handle CreateTopics (v0-v7)."""
    if _total_partitions(ctx, request.topics) > ctx.config.max_partitions_per_request:
        error = ApiError(E.POLICY_VIOLATION, TOO_LARGE)
        return ControllerResult([], _CT(throttle_time_ms=0, topics=[_error_result(t.name, error)
                                                                    for t in request.topics]))
    errors = _name_errors(ctx, request.topics)
    records, results, taken, done, brokers = [], [], set(), set(), _Brokers(ctx.image)
    for topic in request.topics:
        if topic.name in done and topic.name in errors:
            continue
        done.add(topic.name)
        error = errors.get(topic.name)
        if error is None:
            try:
                topic_records, result = _create_one(ctx, topic, taken, brokers)
                records += topic_records
                results.append(result)
                continue
            except ApiError as e:
                error = e
        results.append(_error_result(topic.name, error))
    validate_only = getattr(request, "validate_only", False) and ctx.api_version >= 1
    return ControllerResult([] if validate_only else records, _CT(throttle_time_ms=0, topics=results))


# ---------------------------------------------------------------- DeleteTopics


def _note(value, seen: list, duplicates: set) -> None:
    """Append `value` to `seen` the first time, mark it duplicated the next times."""
    if value in seen:
        duplicates.add(value)
    else:
        seen.append(value)


def _delete_targets(ctx: ControllerContext, request) -> tuple[list, dict]:
    """Resolve names and ids as ControllerApis.deleteTopics: (error results, {topic id: name})."""
    errors, names, ids, dup_names, dup_ids = [], [], [], set(), set()
    for name in ([] if ctx.api_version >= 6 else request.topic_names):
        _note(name, names, dup_names)
    for state in (request.topics if ctx.api_version >= 6 else []):
        if state.name is None and state.topic_id == ZERO_UUID:
            errors.append((None, ZERO_UUID, ApiError(E.INVALID_REQUEST, "Neither topic name nor id were specified.")))
        elif state.name is None:
            _note(state.topic_id, ids, dup_ids)
        elif state.topic_id == ZERO_UUID:
            _note(state.name, names, dup_names)
        else:
            errors.append((state.name, state.topic_id,
                           ApiError(E.INVALID_REQUEST, "You may not specify both topic name and topic id.")))
    errors += [(n, ZERO_UUID, ApiError(E.INVALID_REQUEST, "Duplicate topic name.")) for n in names if n in dup_names]
    errors += [(None, i, ApiError(E.INVALID_REQUEST, "Duplicate topic id.")) for i in ids if i in dup_ids]
    targets = {}
    for name in (n for n in names if n not in dup_names):
        topic = ctx.image.topics.by_name.get(name)
        if topic is None:
            errors.append((name, ZERO_UUID, ApiError(E.UNKNOWN_TOPIC_OR_PARTITION)))
        else:
            targets[topic.topic_id] = name
    for topic_id in (i for i in ids if i not in dup_ids):
        topic = ctx.image.topics.by_id.get(bytes(topic_id))
        if topic is None:
            errors.append((None, topic_id, ApiError(E.UNKNOWN_TOPIC_ID)))
        else:
            targets[topic.topic_id] = topic.name
    return errors, targets


def delete_topics(ctx: ControllerContext, request) -> ControllerResult:
    """Handle DeleteTopics (v0-v6): one RemoveTopicRecord per existing topic, by name or by id."""
    cls = codec.message_class("DeleteTopicsResponse")
    if not ctx.config.delete_topic_enable:
        code = E.INVALID_REQUEST if ctx.api_version < 3 else E.TOPIC_DELETION_DISABLED
        error = ApiError(code, "Topic deletion is disabled." if code == E.INVALID_REQUEST else None)
        names = request.topic_names if ctx.api_version < 6 else [t.name for t in request.topics]
        return ControllerResult([], cls(responses=[cls.DeletableTopicResult(
            name=n, error_code=error.code, error_message=error.message) for n in names]))
    errors, targets = _delete_targets(ctx, request)
    remove = codec.message_class("RemoveTopicRecord")
    records = [ApiMessageAndVersion(remove(topic_id=topic_id), 0) for topic_id in targets]
    results = [cls.DeletableTopicResult(name=name, topic_id=topic_id, error_code=error.code,
                                        error_message=error.message) for name, topic_id, error in errors]
    results += [cls.DeletableTopicResult(name=name, topic_id=Uuid(topic_id), error_code=0, error_message=None)
                for topic_id, name in targets.items()]
    return ControllerResult(records, cls(throttle_time_ms=0, responses=results))


# ---------------------------------------------------------------- CreatePartitions


def _new_partitions(ctx: ControllerContext, topic, info, brokers: _Brokers) -> list:
    current = len(info.partitions)
    if topic.count == current:
        raise ApiError(E.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    if topic.count < current:
        raise ApiError(E.INVALID_PARTITIONS, f"The topic {topic.name} currently has {current} partition(s); "
                                             f"{topic.count} would not be an increase.")
    additional = topic.count - current
    if topic.assignments is not None and len(topic.assignments) != additional:
        raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"Attempted to add {additional} additional partition(s), but "
                                                     f"only {len(topic.assignments)} assignment(s) were specified.")
    factor = len(info.partition(min(info.partitions)).replicas)
    if topic.assignments is not None:
        placements = [list(a.broker_ids) for a in topic.assignments]
        for i, replicas in enumerate(placements):
            validate_manual_assignment(ctx, replicas, factor)
            if not any(is_active(ctx.image, b) for b in replicas):
                raise ApiError(E.INVALID_REPLICA_ASSIGNMENT, f"All brokers specified in the manual partition "
                                                             f"assignment for partition {current + i} are fenced or "
                                                             "in controlled shutdown.")
    else:
        try:
            placements = place(ctx.image, ctx.rng, additional, factor, brokers.layout())
        except PlacementError as e:
            raise ApiError(E.INVALID_REPLICATION_FACTOR, str(e)) from None
    return brokers.partition_records(info.topic_id, current, _with_isrs(placements, brokers, factor))


def create_partitions(ctx: ControllerContext, request) -> ControllerResult:
    """Handle CreatePartitions (v0-v3): grow topics, placed or by manual assignments."""
    cls = codec.message_class("CreatePartitionsResponse")
    names = [t.name for t in request.topics]
    records, results, answered, brokers = [], [], set(), _Brokers(ctx.image)
    for topic in request.topics:
        if topic.name in answered:
            continue
        answered.add(topic.name)
        try:
            if names.count(topic.name) > 1:
                raise ApiError(E.INVALID_REQUEST, "Duplicate topic name.")
            info = ctx.image.topics.by_name.get(topic.name)
            if info is None or not info.partitions:
                raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION)
            records += _new_partitions(ctx, topic, info, brokers)
            error = OK
        except ApiError as e:
            error = e
        results.append(cls.CreatePartitionsTopicResult(name=topic.name, error_code=error.code,
                                                       error_message=error.message))
    return ControllerResult([] if request.validate_only else records, cls(throttle_time_ms=0, results=results))
