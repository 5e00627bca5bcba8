"""kafka-storage's sub-commands, each taking the parsed namespace and the Environment (tool.py's typer functions
call them).

Rules:
- Kafka's texts and exit codes (Kafka 3.9's StorageTool); where Kafka dies with a Java stack trace the message is
  raised as Failure and printed as one line on stderr (exit 1).
- The server properties are read and checked first (config.load), for info and format.
- --output json|yaml prints one object (common.output): the same object in both formats, status included.
- kraftsman's warnings are one line on stderr starting `kafka-storage: warning:`; they never change the exit code.
  Under a Kafka error that does not say what to do, one line starting `kafka-storage: hint:` does (HINTS).
- Heavy modules (formatter, features, SCRAM) are imported inside the commands.
"""
from __future__ import annotations

from ..common.environment import Environment
from ..common.output import render, structured
from ..common.status import ExitStatus

PROG = "kafka-storage"
MISSING_VOTERS = ("Because controller.quorum.voters is not set on this controller, you must specify one of the "
                  "following: --standalone, --initial-controllers, or --no-initial-controllers.")


class Failure(Exception):
    """A failure printed as one line on stderr (Kafka's TerseFailure and uncaught exceptions), then, for Kafka's
    terser texts, one kraftsman line saying what it means (`hint`)."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR, hint: str | None = None):
        super().__init__(message)
        self.status = int(status)
        self.hint = hint or next((text for words, text in HINTS if all(w in message for w in words)), None)


# Kafka's texts that do not say what to do (recognised by the words they hold), and the line kraftsman adds
HINTS = (
    (("No available log directories to format.",),
     "every log directory named by log.dirs (or log.dir) and metadata.log.dir gave an I/O error (the lines above): "
     "each must be a folder this user can read and write, or not exist yet"),
    (("kraft.version", "metadata.version"),    # 3.9: "kraft.version 1 must be used with metadata.version 21"
     "kraft.version 1 is a dynamic quorum (--standalone, --initial-controllers), which needs metadata.version "
     "3.9-IV0 or later: leave out --release-version (or give 3.9-IV0), or format a static quorum: "
     "controller.quorum.voters in the config, and neither flag"),
)


def warn(env: Environment, text: str) -> None:
    """Print one kraftsman warning line on stderr."""
    env.stderr.write(f"{PROG}: warning: {' '.join(text.split())}\n")


def emit(env: Environment, obj: dict, fmt: str) -> None:
    """Print `obj` as --output asks (json or yaml)."""
    env.stdout.write(render(obj, fmt))


def load_config(path: str, env: Environment):
    """Read and check the server properties; warn when Kafka's default log directory is silently used."""
    from . import config as storage_config

    try:
        config = storage_config.load(path, env.env)
    except storage_config.ConfigError as e:
        raise Failure(str(e)) from None
    if config.uses_default_log_dir:
        warn(env, f"neither log.dirs nor log.dir is set in {path}: using Kafka's default "
                  f"{storage_config.KAFKA_DEFAULT_LOG_DIR}")
    return config


# ---------------------------------------------------------------- info

def info(args, env: Environment) -> int:
    """Describe the log directories (Kafka's text, or one object); compare them with the config."""
    from . import info as storage_info

    config = load_config(args.config, env)
    kraft = bool(config.process_roles)
    expected = storage_info.Expected(config.cluster_id, config.node_id)
    if structured(args.output):
        obj = storage_info.info_object(config.directories(), kraft, expected)
        emit(env, obj, args.output)
        return obj["status"]
    text, status = storage_info.info_text(config.directories(), kraft, expected)
    env.stdout.write(text)
    return status


# ---------------------------------------------------------------- format

def build_spec(args, config):
    """Turn flags and config into a FormatSpec, with Kafka's checks 1-6 in Kafka's order."""
    from kraftsman.storage import dynamic_voters as dv
    from kraftsman.storage import features as ft
    from kraftsman.storage.log.formatter import FormatSpec

    roles = config.process_roles
    if not roles:
        raise Failure("The kafka configuration file appears to be for a legacy cluster. Formatting is only "
                      "supported for clusters in KRaft mode.")
    release_text = args.release_version or config.props.get("inter.broker.protocol.version", "").strip() or None
    try:
        release = None if release_text is None else ft.from_version_string(release_text)
        levels = dict(ft.parse_feature_assignment(f) for f in args.feature or [])
        voters = None if args.initial_controllers is None else dv.parse_voters(args.initial_controllers)
    except (ft.FeatureError, dv.VoterError) as e:
        raise Failure(str(e)) from None
    if args.standalone:
        voters = _standalone_voters(config)
    if not args.no_initial_controllers and "controller" in roles and voters is None \
            and not config.props.get("controller.quorum.voters", "").strip():
        raise Failure(MISSING_VOTERS)
    return FormatSpec(args.cluster_id, config.node_id, config.directories(), config.metadata_log_dir,
                      config.listener_name, release, levels, list(args.add_scram or []), voters,
                      args.ignore_formatted, config.unstable_enabled)


def _standalone_voters(config) -> dict:
    """Return the single voter --standalone makes: this node at its first advertised controller listener."""
    from kraftsman.storage import dynamic_voters as dv
    from kraftsman.storage.protocol.uuids import random_directory_id

    from .config import ConfigError

    if "controller" not in config.process_roles:
        raise Failure("You can only use --standalone on a controller.")
    try:
        host, port = config.controller_endpoint()
    except ConfigError as e:
        raise Failure(str(e)) from None
    return {config.node_id: dv.DynamicVoter(random_directory_id(), config.node_id, host, port)}


def format_(args, env: Environment) -> int:
    """Format the log directories (Kafka's text, or one object)."""
    from kraftsman.storage.log import formatter

    config = load_config(args.config, env)
    messages: list[str] = []
    as_object = structured(args.output)
    say = messages.append if as_object else (lambda line: env.stdout.write(line + "\n"))
    spec = fplan = None
    try:
        spec = build_spec(args, config)
        fplan = formatter.plan(spec)
        formatter.execute(fplan, spec, say)
    except (formatter.FormatterError, Failure) as e:
        status = ExitStatus.FOREIGN if _is_foreign(str(e)) else getattr(e, "status", ExitStatus.ERROR)
        if not as_object:
            raise Failure(str(e)) from None
        emit(env, format_object(config, None, messages, [str(e)], status), args.output)
        return status
    _warn_cluster_id(env, args.cluster_id)
    if as_object:
        emit(env, format_object(config, fplan, messages, [], ExitStatus.OK), args.output)
    return ExitStatus.OK


def _is_foreign(message: str) -> bool:
    return message.startswith(("Invalid cluster.id in:", "Stored node id "))


def _warn_cluster_id(env: Environment, cluster_id: str) -> None:
    """Warn when the cluster id is not a Kafka Uuid (Kafka 3.9 takes any string; 3.8 and older refused it)."""
    if not is_kafka_uuid(cluster_id):
        warn(env, f"the cluster id {cluster_id!r} is not a Kafka Uuid (22 url-safe base64 characters, 16 bytes; "
                  "see random-uuid). Kafka 3.9 accepts it; Kafka 3.8 and older refuse it.")


def is_kafka_uuid(text: str) -> bool:
    """Tell whether `text` is what Kafka's Uuid.fromString reads strictly: 22 url-safe base64 characters (with
    optional `==` padding) decoding to 16 bytes."""
    import re

    return re.fullmatch(r"[A-Za-z0-9_-]{22}(==)?", text) is not None


def format_object(config, fplan, messages: list[str], problems: list[str], status: int) -> dict:
    """Describe each directory after a format attempt."""
    from kraftsman.storage.log import meta_properties as mp

    written = {d.path for d in fplan.directories} if fplan else set()
    entries = []
    for directory in config.directories():
        d = mp.inspect_directory(directory)
        state = {"formatted": "already_formatted", "error": "unreadable"}.get(d.state.value, d.state.value)
        meta = d.meta
        entries.append({"path": directory, "state": "formatted_now" if directory in written else state,
                        "cluster_id": meta.cluster_id if meta else None,
                        "node_id": meta.node_id if meta else None,
                        "directory_id": str(meta.directory_id) if meta and meta.directory_id else None,
                        "problems": [d.error] if d.error else []})
    return {"directories": entries, "problems": problems, "status": int(status),
            "metadata_version": str(fplan.release_version) if fplan else None, "messages": messages}


# ---------------------------------------------------------------- lookups

def version_mapping(args, env: Environment) -> int:
    """Print the feature levels of a release (Kafka 4.0's version-mapping)."""
    env.stdout.write(version_mapping_text(args.release_version))
    return ExitStatus.OK


def version_mapping_text(release_version: str | None) -> str:
    """Return the `version-mapping` lines for a release (default: the latest production one); raise Failure
    with Kafka's text for an unknown release (kafka-features prints the same)."""
    from kraftsman.storage import features as ft

    text = release_version or str(ft.LATEST_PRODUCTION)
    try:
        mv = ft.from_version_string(text)
    except ft.FeatureError:
        raise Failure(f"Unknown release version '{text}'. Supported versions are: "
                      f"{ft.MINIMUM_BOOTSTRAP_VERSION} to {ft.LATEST_PRODUCTION}") from None
    lines = [f"metadata.version={mv.level} ({text})"]
    lines += [f"{name}={level}" for name, level in ft.default_levels(mv).items()]
    return "\n".join(lines) + "\n"


def feature_dependencies(args, env: Environment) -> int:
    """Print what each `feature=version` requires (Kafka 4.0's feature-dependencies)."""
    from kraftsman.storage import features as ft

    for item in args.feature:
        name, _, level_text = item.partition("=")
        name = name.strip()
        try:
            level = int(level_text.strip())
            if not -2**15 <= level < 2**15:
                raise ValueError
        except ValueError:
            raise Failure(f"Invalid version format: {level_text} for feature {name}") from None
        try:
            deps = ft.dependencies_of(name, level)
        except ft.FeatureError as e:
            raise Failure(str(e)) from None
        env.stdout.write(dependency_text(name, level, deps))
    return ExitStatus.OK


def dependency_text(name: str, level: int, deps) -> str:
    """Return the `feature-dependencies` text of `name=level` and its (feature, level) dependencies."""
    from kraftsman.storage import features as ft

    if name == ft.METADATA_VERSION:
        return f"{name}={level} ({ft.by_level(level)}) has no dependencies.\n"
    if not deps:
        return f"{name}={level} has no dependencies.\n"
    lines = [f"{name}={level} requires:"]
    for dep, dep_level in deps:
        suffix = f" ({ft.by_level(dep_level)})" if dep == ft.METADATA_VERSION else ""
        lines.append(f"    {dep}={dep_level}{suffix}")
    return "\n".join(lines) + "\n"


def random_uuid(args, env: Environment) -> int:
    """Print random Kafka Uuids (one by default)."""
    from kraftsman.storage.protocol.uuids import random_uuid as new_uuid

    if args.count < 1:
        raise Failure("--count must be at least 1")
    env.stdout.write("".join(f"{new_uuid()}\n" for _ in range(args.count)))
    return ExitStatus.OK
