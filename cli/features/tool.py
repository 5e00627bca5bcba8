"""kafka-features: describe, upgrade, downgrade and disable feature flags (Kafka 3.9's FeatureCommand), plus
Kafka 4.0's additions: --release-version on upgrade / downgrade, version-mapping and feature-dependencies, and
Kafka 4.2's `describe --node-id`.

Kafka's flags, texts and exit codes, spoken through kraftsman's Admin client (controller.client.admin):
ApiVersions for `describe`, one UpdateFeatures request (v1: UpgradeType, ValidateOnly) for
upgrade / downgrade / disable. Connection flags come before the sub-command, as in Kafka:
    kafka-features --bootstrap-controller host:9093 upgrade --release-version 3.9-IV0
As in Kafka, the bootstrap flag is required for every sub-command and the --command-config file is read
first, though version-mapping and feature-dependencies connect to nothing (their texts are kafka-storage's).

Exit codes (kraftsman additions marked *):
  0   done
  1   failed, as Kafka: bad arguments (usage and error on stderr, or Kafka's one line, e.g. "You must specify
      at least one feature to upgrade"), a missing or bad --command-config, a feature the controller refused
      (each feature's line on stdout, then "N out of M operation(s) failed." on stderr), a server error
  64* bad arguments when `--output json` or `yaml` is given (1 otherwise, as Kafka)
  69* cannot reach the cluster: unknown host, closed port, timeout, a server that does not speak Kafka,
      TLS/SASL failures, no active controller before the deadline (Kafka's Admin times out and exits 1)

`--output json` (or yaml) prints one object {"command", "status", ...} on stdout, errors included
(cli/schemas/features.schema.json).
The command line is a typer app (help, man page, completion and KRAFTSMAN_FEATURES_* variables come from it):
the connection options sit on the root, kraftsman's --output, --timeout, --profile and -X on the root and on
every sub-command; a connection profile fills what they leave out (admin_options).

Rules:
- Kafka's help texts, Kafka 4.0's additions marked "(Kafka 4.0)"; sub-commands listed with their whole help.
- Each sub-command is one typer function (flags and help) calling its implementation in commands.py (texts,
  checks) through admin_options.admin_command; the requests are the Admin client's.
"""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from ..common.admin_options import ClientProperty, Output, Profile, Timeout, admin_command
from ..common.boundary import usage_exit
from ..common.environment import Environment
from ..common.kafka_release import DEFAULT_RELEASE, kafka_release
from ..common.release_help import KAFKA_4_0
from ..common.typer_app import run_app
from ..completion import completers
from . import commands

PROG = "kafka-features"
SERVER_HELP = ("A comma-separated list of host:port pairs to use for establishing the connection to the Kafka "
               "cluster.")
CONTROLLER_HELP = ("A comma-separated list of host:port pairs to use for establishing the connection to the KRaft "
                   "quorum.")
RELEASE_HELP = (KAFKA_4_0 + "The release version to {} all features to. For example, 3.9-IV0 will set "
                "metadata.version=21 and kraft.version=1. Use the version-mapping command to learn which features "
                "will be set for any given version.")
FEATURE_HELP = "A feature {} we should perform, in feature=level format. For example: `metadata.version=5`."
MAPPING_HELP = (KAFKA_4_0 + "Look up the corresponding features for a given metadata version. Using the command "
                "with no --release-version  argument will return the mapping for the latest stable metadata version")
DEPENDENCIES_HELP = (KAFKA_4_0 + "Look up dependencies for a given feature version. If the feature is not known or "
                     "the version not yet defined, an error is thrown. Multiple features can be specified.")
DISABLE_HELP = "Disable one or more feature flags. This is the same as downgrading the version to zero."
LOOKUP_RELEASE_HELP = (KAFKA_4_0 + "The release version to use for the corresponding feature mapping. The minimum "
                       "is 3.0-IV0; the default is the latest production version")
GROUP = ("--bootstrap-server", "--bootstrap-controller")      # as Kafka's usage errors name them

BootstrapServer = Annotated[Optional[str], typer.Option("--bootstrap-server", "-b", help=SERVER_HELP)]
BootstrapController = Annotated[Optional[str], typer.Option("--bootstrap-controller", "-C", help=CONTROLLER_HELP)]
CommandConfig = Annotated[Optional[str], typer.Option(
    "--command-config", metavar="FILE", help="Property file containing configs to be passed to Admin Client.")]

def _release_version(text: str):
    return Annotated[Optional[str], typer.Option(
        "--release-version", metavar="RELEASE_VERSION", help=text, autocompletion=completers.release_versions)]


def _metadata(text: str):
    return Annotated[Optional[str], typer.Option(
        "--metadata", metavar="METADATA", help=text, autocompletion=completers.release_versions)]


def _features(text: str, completer=completers.feature_levels):
    return Annotated[Optional[list[str]], typer.Option("--feature", metavar="FEATURE", help=text,
                                                       autocompletion=completer)]


def _flag(name: str, text: str):
    return Annotated[bool, typer.Option(name, help=text)]


UpgradeMetadata = _metadata("The level to which we should upgrade the metadata. For example, 3.3-IV3.")
UpgradeRelease = _release_version(RELEASE_HELP.format("update"))
UpgradeFeatures = _features(FEATURE_HELP.format("upgrade"))
UpgradeDryRun = _flag("--dry-run", "Validate this upgrade, but do not perform it.")
DowngradeMetadata = _metadata("The level to which we should downgrade the metadata. For example, 3.3-IV0.")
DowngradeRelease = _release_version(RELEASE_HELP.format("downgrade"))
DowngradeFeatures = _features(FEATURE_HELP.format("downgrade"))
DowngradeUnsafe = _flag("--unsafe", "Perform this downgrade even if it may irreversibly destroy metadata.")
DowngradeDryRun = _flag("--dry-run", "Validate this downgrade, but do not perform it.")
DisableFeatures = _features("A feature flag to disable.", completers.feature_names)
DisableUnsafe = _flag("--unsafe", "Disable this feature flag even if it may irreversibly destroy metadata.")
DisableDryRun = _flag("--dry-run", "Perform a dry-run of this disable operation.")
DescribeNodeId = Annotated[Optional[int], typer.Option(
    "--node-id", metavar="NODE_ID", help="(Kafka 4.2) The node to describe the features of: a controller with "
                                         "--bootstrap-controller, else a broker. The default is the node reached.")]
LookupRelease = _release_version(LOOKUP_RELEASE_HELP)
LookupFeatures = Annotated[list[str], typer.Option(
    "--feature", metavar="FEATURE", autocompletion=completers.feature_levels,
    help=KAFKA_4_0 + "The feature and version to look up dependencies for, in "
                                                     "feature=version format. For example: `metadata.version=5`.")]

app = typer.Typer(name=PROG, help="This tool manages feature flags in Kafka.", add_completion=False,
                  rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]})


def _command(name: str, text: str):
    """Register a sub-command whose help is listed whole (as argparse lists it), not cut to one sentence."""
    return app.command(name, help=text, short_help=text)


@app.callback()
def connection(bootstrap_server: BootstrapServer = None, bootstrap_controller: BootstrapController = None,
               config: CommandConfig = None, output: Output = "text", timeout: Timeout = None,
               profile: Profile = None, client_property: ClientProperty = None) -> None:
    """Take the options given before the sub-command (admin_options.settings reads them)."""


@_command("describe", "Describes the current active feature flags.")
def describe(ctx: typer.Context, node_id: DescribeNodeId = None, output: Output = "text", timeout: Timeout = None,
             profile: Profile = None, client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.describe, group=GROUP)


@_command("upgrade", "Upgrade one or more feature flags.")
def upgrade(ctx: typer.Context, metadata: UpgradeMetadata = None, release_version: UpgradeRelease = None,
            feature: UpgradeFeatures = None, dry_run: UpgradeDryRun = False, output: Output = "text",
            timeout: Timeout = None, profile: Profile = None, client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.upgrade, group=GROUP)


@_command("downgrade", "Upgrade one or more feature flags.")    # sic, Kafka's text
def downgrade(ctx: typer.Context, metadata: DowngradeMetadata = None, release_version: DowngradeRelease = None,
              feature: DowngradeFeatures = None, unsafe: DowngradeUnsafe = False, dry_run: DowngradeDryRun = False,
              output: Output = "text", timeout: Timeout = None, profile: Profile = None,
              client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.downgrade, group=GROUP)


@_command("disable", DISABLE_HELP)
def disable(ctx: typer.Context, feature: DisableFeatures = None, unsafe: DisableUnsafe = False,
            dry_run: DisableDryRun = False, output: Output = "text", timeout: Timeout = None,
            profile: Profile = None, client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.disable, group=GROUP)


@_command("version-mapping", MAPPING_HELP)
def version_mapping(ctx: typer.Context, release_version: LookupRelease = None, output: Output = "text",
                    timeout: Timeout = None, profile: Profile = None, client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.version_mapping, group=GROUP)


@_command("feature-dependencies", DEPENDENCIES_HELP)
def feature_dependencies(ctx: typer.Context, feature: LookupFeatures, output: Output = "text",
                         timeout: Timeout = None, profile: Profile = None,
                         client_property: ClientProperty = None) -> int:
    return admin_command(ctx, locals(), commands.feature_dependencies, group=GROUP)


def _usage_status(argv: list[str]) -> int:
    """Return the suite's status for a bad command line (common.boundary.usage_exit)."""
    return usage_exit(PROG, argv)


# help texts Kafka 4.x changed: --metadata is deprecated, downgrade's own line was fixed; 3.9's stay as declared
HELP_4X = {("upgrade", "metadata"): "DEPRECATED -- The level to which we should upgrade the metadata. For example, "
                                    "3.3-IV3.",
           ("downgrade", "metadata"): "DEPRECATED -- The level to which we should downgrade the metadata. For "
                                      "example, 3.3-IV0.",
           ("downgrade", None): "Downgrade one or more feature flags."}


def run(argv: list[str], env: Environment) -> int:
    """Run kafka-features with `argv`; print to env's streams; return the exit status."""
    return run_app(app, argv, env, prog=PROG, tool_env_name="features", usage_status=_usage_status,
                   help_texts=None if kafka_release(env) == DEFAULT_RELEASE else HELP_4X)


def main() -> None:
    """Console script entry point."""
    from ..common.boundary import exit_with

    exit_with(run, PROG)


if __name__ == "__main__":
    from kraftsman.cli.features.tool import main as _main  # the package's module: one Failure class

    _main()
