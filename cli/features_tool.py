"""kafka-features: describe, upgrade, downgrade and disable feature flags (Kafka 3.9's FeatureCommand), plus
Kafka 4.0's additions: --release-version on upgrade / downgrade, version-mapping and feature-dependencies.

Kafka's flags, texts and exit codes, spoken through kraftsman's blocking client (controller.server.
sync_client): ApiVersions for `describe`, one UpdateFeatures request (v1: UpgradeType, ValidateOnly) for
upgrade / downgrade / disable (features_ops). Connection flags come before the sub-command, as in Kafka:
    kafka-features --bootstrap-controller host:9093 upgrade --release-version 3.9-IV0
As in Kafka, the bootstrap flag is required for every sub-command and the --command-config file is read
first, though version-mapping and feature-dependencies connect to nothing (their texts are kafka-storage's).

Exit codes (kraftsman additions marked *):
  0   done
  1   failed, as Kafka: bad arguments (usage and error on stderr, or Kafka's one line, e.g. "You must specify
      at least one feature to upgrade"), a missing or bad --command-config, a feature the controller refused
      (each feature's line on stdout, then "N out of M operation(s) failed." on stderr), a server error
  64* bad arguments when `--output json` is given (1 otherwise, as Kafka)
  69* cannot reach the cluster: unknown host, closed port, timeout, a server that does not speak Kafka,
      TLS/SASL failures, no active controller before the deadline (Kafka's Admin times out and exits 1)

`--output json` prints one object {"command", "status", ...} on stdout, errors included
(cli/schemas/features.schema.json).
"""
from __future__ import annotations

import argparse

from .admin_tool import Context, Failure, ToolParser, fail, kraftsman_flags, parse_arguments
from .common import Environment

PROG = "kafka-features"
SERVER_HELP = ("A comma-separated list of host:port pairs to use for establishing the connection to the Kafka "
               "cluster.")
CONTROLLER_HELP = ("A comma-separated list of host:port pairs to use for establishing the connection to the KRaft "
                   "quorum.")
KAFKA_4_0 = "(Kafka 4.0) "   # marks the help of what Kafka 3.9's FeatureCommand does not have
RELEASE_HELP = (KAFKA_4_0 + "The release version to {} all features to. For example, 3.9-IV0 will set "
                "metadata.version=21 and kraft.version=1. Use the version-mapping command to learn which features "
                "will be set for any given version.")
FEATURE_HELP = "A feature {} we should perform, in feature=level format. For example: `metadata.version=5`."
MAPPING_HELP = (KAFKA_4_0 + "Look up the corresponding features for a given metadata version. Using the command "
                "with no --release-version  argument will return the mapping for the latest stable metadata version")
DEPENDENCIES_HELP = (KAFKA_4_0 + "Look up dependencies for a given feature version. If the feature is not known or "
                     "the version not yet defined, an error is thrown. Multiple features can be specified.")
COMMAND_NAMES = ("describe", "upgrade", "downgrade", "disable", "version-mapping", "feature-dependencies")


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of kafka-features."""
    parser = ToolParser(prog=PROG, description="This tool manages feature flags in Kafka.")
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--bootstrap-server", help=SERVER_HELP)
    group.add_argument("--bootstrap-controller", help=CONTROLLER_HELP)
    parser.add_argument("--command-config", dest="config", metavar="FILE",
                        help="Property file containing configs to be passed to Admin Client.")
    kraftsman_flags(parser, "text", None)
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(COMMAND_NAMES) + "}", parser_class=ToolParser)
    sub.required = True
    sub.add_parser("describe", help="Describes the current active feature flags.")
    _add_upgrade(sub)
    _add_downgrade(sub)
    _add_disable(sub)
    _add_lookups(sub)
    for child in sub.choices.values():          # also accepted after the sub-command
        kraftsman_flags(child, argparse.SUPPRESS, argparse.SUPPRESS)
    return parser


def _add_upgrade(sub) -> None:
    upgrade = sub.add_parser("upgrade", help="Upgrade one or more feature flags.")
    upgrade.add_argument("--metadata", help="The level to which we should upgrade the metadata. For example, 3.3-IV3.")
    upgrade.add_argument("--release-version", help=RELEASE_HELP.format("update"))
    upgrade.add_argument("--feature", action="append", help=FEATURE_HELP.format("upgrade"))
    upgrade.add_argument("--dry-run", action="store_true", help="Validate this upgrade, but do not perform it.")


def _add_downgrade(sub) -> None:
    downgrade = sub.add_parser("downgrade", help="Upgrade one or more feature flags.")   # sic, Kafka's text
    downgrade.add_argument("--metadata",
                           help="The level to which we should downgrade the metadata. For example, 3.3-IV0.")
    downgrade.add_argument("--release-version", help=RELEASE_HELP.format("downgrade"))
    downgrade.add_argument("--feature", action="append", help=FEATURE_HELP.format("downgrade"))
    downgrade.add_argument("--unsafe", action="store_true",
                           help="Perform this downgrade even if it may irreversibly destroy metadata.")
    downgrade.add_argument("--dry-run", action="store_true", help="Validate this downgrade, but do not perform it.")


def _add_disable(sub) -> None:
    disable = sub.add_parser("disable", help="Disable one or more feature flags. This is the same as downgrading "
                                             "the version to zero.")
    disable.add_argument("--feature", action="append", help="A feature flag to disable.")
    disable.add_argument("--unsafe", action="store_true",
                         help="Disable this feature flag even if it may irreversibly destroy metadata.")
    disable.add_argument("--dry-run", action="store_true", help="Perform a dry-run of this disable operation.")


def _add_lookups(sub) -> None:
    from kraftsman.storage import features as ft

    mapping = sub.add_parser("version-mapping", help=MAPPING_HELP)
    mapping.add_argument("--release-version", help=KAFKA_4_0 + "The release version to use for the corresponding "
                         f"feature mapping. The minimum is 3.0-IV0; the default is {ft.LATEST_PRODUCTION}")
    deps = sub.add_parser("feature-dependencies", help=DEPENDENCIES_HELP)
    deps.add_argument("--feature", action="append", required=True,
                      help=KAFKA_4_0 + "The feature and version to look up dependencies for, in feature=version "
                           "format. For example: `metadata.version=5`.")


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-features with `argv`; print to env's streams; return the exit status."""
    args, status = parse_arguments(build_parser(), "features", argv, env)
    if args is None:
        return status
    from . import features_commands

    try:
        ctx = Context(args, env)    # as Kafka: the client properties and addresses are read for every command
        return features_commands.COMMANDS[args.command](args, ctx)
    except Failure as e:
        return fail(args, env, str(e), e.status)


def main() -> None:
    """Console script entry point."""
    from .common import exit_with

    exit_with(run, PROG)


if __name__ == "__main__":
    from kraftsman.cli.features_tool import main as _main  # the package's module: one Failure class

    _main()
