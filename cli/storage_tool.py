"""kafka-storage: format and inspect KRaft log directories (Kafka 3.9's StorageTool).

Subcommands, in Kafka's order: info, format, version-mapping, feature-dependencies, random-uuid
(version-mapping and feature-dependencies are Kafka 4.0's, KIP-1022; their help says so).
Text output, messages and exit codes are Kafka's, except that where Kafka dies with a Java
stack trace (bad --release-version or --initial-controllers, meta.properties mismatches, bad
--feature, config errors) this tool prints the message as one line on stderr and exits 1.
The server properties are checked first, as KafkaConfig does (storage_config), for info and format.

Exit codes: 0 success; 1 any failure (as Kafka); with `--output json` only, 3 (ExitStatus.FOREIGN)
when a directory is formatted for another cluster or node (format: cluster.id / node.id mismatch;
info: mismatched IDs between directories). Without `--output json` the codes stay Kafka's.

`--output json` (info and format, kraftsman only) prints one object:
  {"directories": [{"path", "state", "cluster_id", "node_id", "directory_id", "problems"}],
   "problems": [...], "status": <exit code>}   (format adds "metadata_version" and "messages")
state is one of: missing, not_a_directory, empty, formatted, error (info) and
formatted_now, already_formatted, unreadable (format).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import Environment, ExitStatus
from .env_overrides import with_environment

PROG = "kafka-storage"
SCRAM_HELP = ("A SCRAM_CREDENTIAL to add to the __cluster_metadata log e.g.\n"
              "'SCRAM-SHA-256=[name=alice,password=alice-secret]'\n"
              "'SCRAM-SHA-512=[name=alice,iterations=8192,salt=\"N3E=\",saltedpassword=\"YCE=\"]'")
INITIAL_CONTROLLERS_HELP = (
    "Used to initialize a server with a specific dynamic quorum topology. The argument is a comma-separated "
    "list of id@hostname:port:directory. The same values must be used to format all nodes. For example:\n"
    "0@example.com:8082:JEXY6aqzQY-32P5TStzaFg,1@example.com:8083:MvDxzVmcRsaTz33bUuRU6A,"
    "2@example.com:8084:07R5amHmR32VDA6jHkGbTA\n")
KAFKA_4_0 = "(Kafka 4.0) "   # marks the help of the sub-commands Kafka 3.9's StorageTool does not have
MISSING_VOTERS = ("Because controller.quorum.voters is not set on this controller, you must specify one of the "
                  "following: --standalone, --initial-controllers, or --no-initial-controllers.")


class Failure(Exception):
    """A failure printed as one line on stderr (Kafka's TerseFailure and uncaught exceptions)."""

    def __init__(self, message: str, status: int = ExitStatus.ERROR):
        super().__init__(message)
        self.status = int(status)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(f"{self.format_usage()}{self.prog}: error: {message}")


class _UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of kafka-storage (its sub-commands and flags)."""
    from kraftsman.storage import features as ft

    parser = _Parser(prog=PROG, description="The Kafka storage tool.", fromfile_prefix_chars="@",
                     formatter_class=argparse.RawTextHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    info = sub.add_parser("info", help="Get information about the Kafka log directories on this node.")
    _config_and_output(info)
    fmt = sub.add_parser("format", help="Format the Kafka log directories on this node.")
    _config_and_output(fmt)
    fmt.add_argument("--cluster-id", "-t", required=True, help="The cluster ID to use.")
    fmt.add_argument("--add-scram", "-S", action="append", help=SCRAM_HELP)
    fmt.add_argument("--ignore-formatted", "-g", action="store_true",
                     help="When this option is passed, the format command will skip over already formatted "
                          "directories rather than failing.")
    fmt.add_argument("--release-version", "-r", help="The release version to use for the initial feature "
                     f"settings. The minimum is 3.0-IV0; the default is {ft.LATEST_PRODUCTION}")
    fmt.add_argument("--feature", "-f", action="append", help="The setting to use for a specific feature, in "
                     "feature=level format. For example: `kraft.version=1`.")
    group = fmt.add_mutually_exclusive_group()
    group.add_argument("--standalone", "-s", action="store_true",
                       help="Used to initialize a controller as a single-node dynamic quorum.")
    group.add_argument("--no-initial-controllers", "-N", action="store_true",
                       help="Used to initialize a server without a dynamic quorum topology.")
    group.add_argument("--initial-controllers", "-I", help=INITIAL_CONTROLLERS_HELP)
    mapping = sub.add_parser("version-mapping", help=KAFKA_4_0 + "Look up the corresponding features for a given "
                             "metadata version. Using the command with no --release-version  argument will return "
                             "the mapping for the latest stable metadata version")
    mapping.add_argument("--release-version", "-r", help=KAFKA_4_0 + "The release version to use for the "
                         "corresponding feature mapping. The minimum is 3.0-IV0; the default is "
                         + str(ft.LATEST_PRODUCTION))
    deps = sub.add_parser("feature-dependencies", help=KAFKA_4_0 + "Look up dependencies for a given feature "
                          "version. If the feature is not known or the version not yet defined, an error is thrown. "
                          "Multiple features can be specified.")
    deps.add_argument("--feature", "-f", required=True, action="append",
                      help=KAFKA_4_0 + "The feature and version to look up dependencies for, in feature=version "
                           "format.")
    uuid = sub.add_parser("random-uuid", help="Print a random UUID.")
    uuid.add_argument("--count", type=int, default=1, help="How many UUIDs to print (kraftsman).")
    return parser


def _config_and_output(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", "-c", required=True, help="The Kafka configuration file to use.")
    p.add_argument("--output", choices=("text", "json"), default="text",
                   help="Output format (kraftsman; json is a stable object, see the module docs).")


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-storage with `argv`; print to env's streams; return the exit status."""
    try:
        args = with_environment(build_parser(), "storage", argv, env.env).parse_args(argv)
    except _UsageError as e:
        env.stderr.write(f"{e}\n")
        return ExitStatus.ERROR
    except SystemExit as e:        # -h / --help
        return int(e.code or 0)
    try:
        return COMMANDS[args.command](args, env)
    except Failure as e:
        env.stderr.write(" ".join(str(e).split()) + "\n")
        return e.status


def main() -> None:
    """Console script entry point."""
    from .common import exit_with

    exit_with(run, PROG)


# ---------------------------------------------------------------- server configuration

class ServerConfig:
    """The few server.properties settings kafka-storage reads."""

    def __init__(self, props: dict[str, str]):
        self.props = props

    def _list(self, key: str) -> list[str]:
        return [s.strip() for s in self.props.get(key, "").split(",") if s.strip()]

    @property
    def process_roles(self) -> list[str]:
        """Return process.roles."""
        return self._list("process.roles")

    @property
    def node_id(self) -> int:
        """Return node.id (or broker.id; -1 if neither), already checked by storage_config.validate."""
        text = self.props.get("node.id", self.props.get("broker.id"))
        return -1 if text is None else int(text.strip())

    @property
    def log_dirs(self) -> list[str]:
        """Return log.dirs, else log.dir, else Kafka's default /tmp/kafka-logs."""
        return self._list("log.dirs") or self._list("log.dir") or ["/tmp/kafka-logs"]

    @property
    def metadata_log_dir(self) -> str:
        """Return metadata.log.dir, defaulting to the first log dir."""
        return self.props.get("metadata.log.dir", "").strip() or self.log_dirs[0]

    def directories(self) -> list[str]:
        """Return the sorted set of log dirs plus metadata.log.dir if set (configToLogDirectories)."""
        dirs = set(self.log_dirs)
        if self.props.get("metadata.log.dir", "").strip():
            dirs.add(self.props["metadata.log.dir"].strip())
        return sorted(dirs)

    @property
    def listener_name(self) -> str | None:
        """Return the first name in controller.listener.names."""
        names = self._list("controller.listener.names")
        return names[0] if names else None

    @property
    def unstable_enabled(self) -> bool:
        """Return unstable.feature.versions.enable (also accepts the older unstable.metadata.versions.enable)."""
        return any(self.props.get(k, "false").strip().lower() == "true"
                   for k in ("unstable.feature.versions.enable", "unstable.metadata.versions.enable"))

    def controller_endpoint(self) -> tuple[str, int]:
        """Return host and port of the first advertised controller listener (host 'localhost' if empty)."""
        names = self._list("controller.listener.names")
        listeners = _listeners(self.props.get("listeners", ""))
        controllers = [(n, h, p) for n, h, p in listeners if n in names]
        if not controllers:
            raise Failure("No controller listeners found.")
        advertised = {n: (h, p) for n, h, p in _listeners(self.props.get("advertised.listeners", ""))}
        name, host, port = controllers[0]
        host, port = advertised.get(name, (host, port))
        return host or "localhost", port


def _listeners(text: str) -> list[tuple[str, str, int]]:
    """Parse `NAME://host:port,...` (IPv6 hosts in brackets)."""
    result = []
    for item in (s.strip() for s in text.split(",") if s.strip()):
        name, sep, rest = item.partition("://")
        host, _, port = rest.rpartition(":")
        if not sep or not port.isdigit():
            raise Failure(f"Unable to parse {item} to a broker endpoint")
        result.append((name.strip(), host.strip("[]"), int(port)))
    return result


def _load_config(path: str, environ) -> ServerConfig:
    """Read the server .properties file, overridden by Kafka's KAFKA_* variables when KRAFTSMAN_KAFKA_ENV=1."""
    from kraftsman.storage import properties

    from . import storage_config
    from .env_overrides import with_kafka_environment

    try:
        props = with_kafka_environment(properties.load(path), environ)
        storage_config.validate(props)       # as StorageTool's `new KafkaConfig(...)`, before any command runs
    except FileNotFoundError:
        raise Failure(f"{path} (No such file or directory)") from None
    except (OSError, properties.PropertiesError) as e:
        raise Failure(f"Unable to read {path}: {e}") from None
    except storage_config.ConfigError as e:
        raise Failure(str(e)) from None
    return ServerConfig(props)


# ---------------------------------------------------------------- info

def _java_path(text: str) -> str:
    """Render a path as Java's Paths.get(text).toString() does (no repeated or trailing '/')."""
    import re

    return re.sub(r"/+", "/", text).rstrip("/") or "/"


def inspect_directories(directories: list[str], kraft_mode: bool) -> tuple[list[dict], list[str], object, list[str]]:
    """Examine each directory as Kafka's infoCommand does; return (entries, found, first meta, problems)."""
    from kraftsman.storage.log import meta_properties as mp

    entries, found, problems, first = [], [], [], None
    for directory in sorted(directories):
        path = Path(directory)
        entry = {"path": _java_path(directory), "state": "empty", "cluster_id": None, "node_id": None,
                 "directory_id": None, "problems": []}
        entries.append(entry)
        if not path.is_dir():
            entry["state"] = "not_a_directory" if path.exists() else "missing"
            _problem(entry, problems, f"{entry['path']} {'is not a directory' if path.exists() else 'does not exist'}")
            continue
        found.append(entry["path"])
        meta_path = path / mp.META_PROPERTIES_NAME
        if not meta_path.exists():
            _problem(entry, problems, f"{entry['path']} is not formatted.")
            continue
        try:
            meta = mp.parse(meta_path.read_bytes().decode("iso-8859-1"))
        except (mp.MetaPropertiesError, OSError) as e:
            entry["state"] = "error"
            _problem(entry, problems, f"Error loading {entry['path']}/meta.properties: {e}")
            continue
        entry.update(state="formatted", cluster_id=meta.cluster_id, node_id=meta.node_id,
                     directory_id=None if meta.directory_id is None else str(meta.directory_id))
        if first is None:
            first = meta
        elif first.cluster_id != meta.cluster_id:
            _problem(entry, problems, "Mismatched cluster IDs between storage directories.", foreign=True)
        elif first.node_id != meta.node_id:
            _problem(entry, problems, "Mismatched node IDs between storage directories.", foreign=True)
    if first is not None:
        if kraft_mode and first.version == 0:
            problems.append("The kafka configuration file appears to be for a cluster in KRaft mode, but the "
                            "directories are formatted for legacy mode.")
        elif not kraft_mode and first.version == 1:
            problems.append("The kafka configuration file appears to be for a legacy cluster, but the "
                            "directories are formatted for a cluster in KRaft mode.")
    return entries, found, first, problems


def _problem(entry: dict, problems: list[str], text: str, foreign: bool = False) -> None:
    entry["problems"].append(text)
    entry["foreign"] = entry.get("foreign", False) or foreign
    problems.append(text)


def info_text(directories: list[str], kraft_mode: bool) -> tuple[str, int]:
    """Render infoCommand's output and exit status."""
    if not directories:
        return "No directories specified.\n", ExitStatus.OK
    _, found, first, problems = inspect_directories(directories, kraft_mode)
    lines = []
    if found:
        lines.append("Found log directory:" if len(found) == 1 else "Found log directories:")
        lines.extend(f"  {d}" for d in found)
        lines.append("")
    if first is not None:
        props = first.to_properties()
        lines.append("Found metadata: {" + ", ".join(f"{k}={props[k]}" for k in sorted(props)) + "}")
        lines.append("")
    if problems:
        lines.append("Found problem:" if len(problems) == 1 else "Found problems:")
        lines.extend(f"  {p}" for p in problems)
        lines.append("")
    return "\n".join(lines) + "\n", ExitStatus.ERROR if problems else ExitStatus.OK


def _info(args, env: Environment) -> int:
    config = _load_config(args.config, env.env)
    kraft = bool(config.process_roles)
    if args.output == "json":
        entries, _, _, problems = inspect_directories(config.directories(), kraft)
        status = _json_status(entries, problems)
        for e in entries:
            e.pop("foreign", None)
        _emit_json(env, {"directories": entries, "problems": problems, "status": status})
        return status
    text, status = info_text(config.directories(), kraft)
    env.stdout.write(text)
    return status


def _json_status(entries: list[dict], problems: list[str]) -> int:
    if any(e.get("foreign") for e in entries):
        return ExitStatus.FOREIGN
    return ExitStatus.ERROR if problems else ExitStatus.OK


def _emit_json(env: Environment, obj: dict) -> None:
    env.stdout.write(json.dumps(obj, indent=2) + "\n")


# ---------------------------------------------------------------- format

def build_spec(args, config: ServerConfig):
    """Turn flags and config into a FormatSpec, with Kafka's checks 1-6 in Kafka's order."""
    from kraftsman.storage import dynamic_voters as dv
    from kraftsman.storage import features as ft
    from kraftsman.storage.log.formatter import FormatSpec
    from kraftsman.storage.protocol.uuids import random_directory_id

    roles = config.process_roles
    if not roles:
        raise Failure("The kafka configuration file appears to be for a legacy cluster. Formatting is only "
                      "supported for clusters in KRaft mode.")
    node_id = config.node_id
    release_text = args.release_version or config.props.get("inter.broker.protocol.version", "").strip() or None
    try:
        release = None if release_text is None else ft.from_version_string(release_text)
        levels = dict(ft.parse_feature_assignment(f) for f in args.feature or [])
        voters = None if args.initial_controllers is None else dv.parse_voters(args.initial_controllers)
    except (ft.FeatureError, dv.VoterError) as e:
        raise Failure(str(e)) from None
    if args.standalone:
        if "controller" not in roles:
            raise Failure("You can only use --standalone on a controller.")
        host, port = config.controller_endpoint()
        voters = {node_id: dv.DynamicVoter(random_directory_id(), node_id, host, port)}
    if not args.no_initial_controllers and "controller" in roles and voters is None \
            and not config.props.get("controller.quorum.voters", "").strip():
        raise Failure(MISSING_VOTERS)
    return FormatSpec(args.cluster_id, node_id, config.directories(), config.metadata_log_dir,
                      config.listener_name, release, levels, list(args.add_scram or []), voters,
                      args.ignore_formatted, config.unstable_enabled)


def _format(args, env: Environment) -> int:
    from kraftsman.storage.log import formatter

    config = _load_config(args.config, env.env)
    messages: list[str] = []
    emit = messages.append if args.output == "json" else (lambda line: env.stdout.write(line + "\n"))
    spec = None
    try:
        spec = build_spec(args, config)
        fplan = formatter.plan(spec)
        formatter.execute(fplan, spec, emit)
    except formatter.FormatterError as e:
        foreign = _is_foreign(str(e))
        if args.output != "json":
            raise Failure(str(e)) from None
        status = ExitStatus.FOREIGN if foreign else ExitStatus.ERROR
        _emit_json(env, _format_json(spec, config, None, messages, [str(e)], status))
        return status
    except Failure as e:
        if args.output != "json":
            raise
        _emit_json(env, _format_json(spec, config, None, messages, [str(e)], e.status))
        return e.status
    if args.output == "json":
        _emit_json(env, _format_json(spec, config, fplan, messages, [], ExitStatus.OK))
    return ExitStatus.OK


def _is_foreign(message: str) -> bool:
    return message.startswith(("Invalid cluster.id in:", "Stored node id "))


def _format_json(spec, config: ServerConfig, fplan, messages: list[str], problems: list[str], status: int) -> dict:
    """Describe each directory after a format attempt."""
    from kraftsman.storage.log import meta_properties as mp

    written = {d.path for d in fplan.directories} if fplan else set()
    entries = []
    for directory in config.directories():
        d = mp.inspect_directory(directory)
        state = {"formatted": "already_formatted", "error": "unreadable"}.get(d.state.value, d.state.value)
        if directory in written:
            state = "formatted_now"
        meta = d.meta
        entries.append({"path": directory, "state": state,
                        "cluster_id": meta.cluster_id if meta else None,
                        "node_id": meta.node_id if meta else None,
                        "directory_id": str(meta.directory_id) if meta and meta.directory_id else None,
                        "problems": [d.error] if d.error else []})
    return {"directories": entries, "problems": problems, "status": int(status),
            "metadata_version": str(fplan.release_version) if fplan else None, "messages": messages}


# ---------------------------------------------------------------- lookups

def _version_mapping(args, env: Environment) -> int:
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


def _feature_dependencies(args, env: Environment) -> int:
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


def _random_uuid(args, env: Environment) -> int:
    from kraftsman.storage.protocol.uuids import random_uuid

    if args.count < 1:
        raise Failure("--count must be at least 1")
    env.stdout.write("".join(f"{random_uuid()}\n" for _ in range(args.count)))
    return ExitStatus.OK


COMMANDS = {"info": _info, "format": _format, "version-mapping": _version_mapping,
            "feature-dependencies": _feature_dependencies, "random-uuid": _random_uuid}
