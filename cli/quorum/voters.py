"""kafka-metadata-quorum add-controller / remove-controller (KIP-853): Kafka 3.9's checks and texts.

Rules:
- add-controller reads the new controller's own server .properties (given as --command-config, as Kafka
  does; a profile's client file is not taken for it): node.id, process.roles, the metadata directory's
  meta.properties directory.id, and the endpoints of controller.listener.names (advertised.listeners over
  listeners; an empty host is `localhost`).
- The request goes to the quorum leader (Admin.add_raft_voter / remove_raft_voter, controller.client.admin);
  --dry-run only prints. Both first refuse a --command-config file that does not exist (texts).
- Texts are Kafka's, including remove-controller's doubled space ("Removed  KRaft controller ...").
"""
from __future__ import annotations

from ..common.admin import Context, Failure, admin_call, load_config
from ..common.boundary import usage_exit
from ..common.status import ExitStatus
from .texts import STATIC_QUORUM_HINT, check_command_config, endpoint_text, server_words


def controller_id(props: dict) -> int:
    """Kafka's getControllerId: node.id present, not negative, and process.roles has `controller`."""
    if "node.id" not in props:
        raise Failure("node.id not found in configuration file. Is this a valid controller configuration file?")
    try:
        node_id = int(props["node.id"].strip())
    except ValueError:
        raise Failure(f'For input string: "{props["node.id"]}"') from None
    if node_id < 0:
        raise Failure("node.id was negative in configuration file. Is this a valid controller configuration file?")
    if "controller" not in props.get("process.roles", ""):
        raise Failure("process.roles did not contain 'controller' in configuration file. Is this a valid "
                      "controller configuration file?")
    return node_id


def metadata_directory(props: dict) -> str:
    """metadata.log.dir, else the first of log.dirs."""
    if "metadata.log.dir" in props:
        return props["metadata.log.dir"]
    if "log.dirs" in props:
        return props["log.dirs"].strip().split(",")[0]
    raise Failure("Neither metadata.log.dir nor log.dirs were found. Is this a valid controller configuration file?")


def directory_id(directory: str):
    """Return the directory.id of `directory`'s meta.properties (a storage.protocol.uuids.Uuid)."""
    from kraftsman.storage.log import meta_properties
    from kraftsman.storage.protocol.uuids import Uuid

    try:
        meta = meta_properties.read(directory)
    except (OSError, ValueError):
        raise Failure(f"Unable to read meta.properties from {directory}") from None
    found = getattr(meta, "directory_id", None)
    if not found:
        raise Failure(f"No directory id found in {directory}")
    return found if isinstance(found, Uuid) else Uuid.from_string(str(found))


def controller_endpoints(props: dict) -> list[tuple[str, str, int]]:
    """The (listener, host, port) of each controller.listener.names entry, advertised.listeners first."""
    from kraftsman.storage.server_properties import ConfigError, parse_listeners

    try:
        listeners = {e.name: e for e in parse_listeners(props.get("listeners", ""))}
        listeners |= {e.name: e for e in parse_listeners(props.get("advertised.listeners", ""))}
    except ConfigError as e:
        raise Failure(str(e)) from None
    if "controller.listener.names" not in props:
        raise Failure("controller.listener.names was not found. Is this a valid controller configuration file?")
    out = []
    for name in (n.strip().upper() for n in props["controller.listener.names"].split(",")):
        endpoint = listeners.get(name)
        if endpoint is None:
            raise Failure(f"Cannot find information about controller listener name: {name}")
        entry = (endpoint.name, endpoint.host or "localhost", endpoint.port)
        if entry not in out:
            out.append(entry)
    return out


def added_text(dry_run: bool, node_id: int, directory, endpoints) -> str:
    """Return Kafka's line for add-controller (done, or its dry run)."""
    verb = "DRY RUN of adding" if dry_run else "Added"
    return (f"{verb} controller {node_id} with directory id {directory} and endpoints: "
            + ", ".join(endpoint_text(*e) for e in endpoints))


def removed_text(dry_run: bool, node_id: int, directory) -> str:
    """Return Kafka's line for remove-controller (with its doubled space)."""
    verb = "DRY RUN of removing " if dry_run else "Removed "
    return f"{verb} KRaft controller {node_id} with directory id {directory}"


def parse_directory_id(text: str):
    """Return the Uuid of --controller-directory-id, or fail with Kafka's words."""
    from kraftsman.storage.protocol.uuids import Uuid, UuidError

    try:
        return Uuid.from_string(text)
    except (UuidError, ValueError) as e:
        raise Failure(f"Failed to parse --controller-directory-id: {e}") from None


def _usage(args) -> int:
    """Return the status of bad arguments: Kafka's 1, whatever --output asks (common.usage_exit)."""
    return usage_exit("kafka-metadata-quorum")


def add_controller(args, env) -> int:
    """Add the controller that --command-config describes to the quorum (or only print it with --dry-run)."""
    check_command_config(args)
    path = args.config if args.config_given else None      # a profile's client file is no controller's properties
    if not path:
        raise Failure("You must supply the configuration file of the controller you are adding when using "
                      "add-controller.", _usage(args))
    ctx = Context(args, env)
    props = load_config(path)
    node_id, directory = controller_id(props), directory_id(metadata_directory(props))
    endpoints = controller_endpoints(props)
    if not args.dry_run:
        _static_quorum_hint(admin_call, ctx.admin().add_raft_voter, node_id, directory, endpoints,
                            wording=server_words)
    ctx.emit(added_text(args.dry_run, node_id, directory, endpoints), controller_id=node_id,
             directory_id=str(directory), endpoints=[endpoint_text(*e) for e in endpoints], dry_run=args.dry_run)
    return ExitStatus.OK


def remove_controller(args, env) -> int:
    """Remove the controller --controller-id / --controller-directory-id from the quorum (or only print it)."""
    check_command_config(args)
    ctx = Context(args, env)
    if args.controller_id < 0:
        raise Failure(f"Invalid negative --controller-id: {args.controller_id}", _usage(args))
    directory = parse_directory_id(args.controller_directory_id)
    if not args.dry_run:
        _static_quorum_hint(admin_call, ctx.admin().remove_raft_voter, args.controller_id, directory,
                            wording=server_words)
    ctx.emit(removed_text(args.dry_run, args.controller_id, directory), controller_id=args.controller_id,
             directory_id=str(directory), dry_run=args.dry_run)
    return ExitStatus.OK


def _static_quorum_hint(call, *args, **kwargs) -> None:
    """Run a voter change through `call` (admin_call); UNSUPPORTED_VERSION (a static quorum) gets a hint saying
    what to do."""
    from kraftsman.storage.protocol.errors import Errors

    try:
        call(*args, **kwargs)
    except Failure as e:
        if e.code == Errors.UNSUPPORTED_VERSION:
            raise Failure(str(e), e.status, e.code, hint=STATIC_QUORUM_HINT) from None
        raise
