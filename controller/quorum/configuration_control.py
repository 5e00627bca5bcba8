"""Topic and broker configs (Kafka's ConfigurationControlManager): the config APIs' handlers by API name.

Rules:
- HANDLERS maps the API name to `handler(ctx, request) -> ControllerResult`; READ_ONLY names DescribeConfigs.
- The handlers are written in alter_configs (IncrementalAlterConfigs, AlterConfigs: ConfigRecords) and
  describe_configs (DescribeConfigs: the committed image's configs with Kafka's synonyms and sources).
"""
from __future__ import annotations

from .alter_configs import alter_configs, incremental_alter_configs
from .describe_configs import describe_configs

HANDLERS = {
    "IncrementalAlterConfigs": incremental_alter_configs,
    "AlterConfigs": alter_configs,
    "DescribeConfigs": describe_configs,
}

READ_ONLY = frozenset({"DescribeConfigs"})

__all__ = ["HANDLERS", "READ_ONLY"]
