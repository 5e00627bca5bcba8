"""One node's ApiVersions answer read against the API keys Kafka 3.9's client knows, as NodeApiVersions does: a row
per API, its text (NodeApiVersions.toString(true)) and its JSON form.

Rules:
- The client's table is storage.protocol.api_keys (Kafka 3.9's ApiKeys). A key the node lists and the client
  knows is `Name(key): min to max` (`: v` when min == max) with `[usable: v]`, v the highest version both speak
  (min of the client's latest and the node's max), or `[unusable: node too new]` when the client's latest is
  below the node's min, `[unusable: node too old]` when the node's max is below the client's oldest. A key the
  client does not know is `UNKNOWN(key): min to max`, with nothing after. A client API (ApiKeys.clientApis) the
  node does not list is `Name(key): UNSUPPORTED`; controller-only keys the node does not list are left out.
- Rows go in ascending key order (Kafka's TreeMap of shorts); a key listed twice keeps its last range (the
  client's EnumMap), as the answer's dict does.
- The text is `<node> -> (`, a tab before each row, rows joined by ",\\n", then `)` on its own line; Kafka 3.9
  prints no deprecation marker.
"""
from __future__ import annotations

from dataclasses import dataclass

USABLE, UNSUPPORTED, UNKNOWN = "usable", "unsupported", "unknown"
NODE_TOO_NEW, NODE_TOO_OLD = "node_too_new", "node_too_old"
_SUFFIX = {NODE_TOO_NEW: " [unusable: node too new]", NODE_TOO_OLD: " [unusable: node too old]", UNKNOWN: ""}


@dataclass(frozen=True)
class ApiRow:
    """One API of a node: its key, the client's name for it (None: unknown to the client), the node's version
    range (None: not listed), its state and the usable version (None unless usable)."""

    api_key: int
    name: str | None
    versions: tuple[int, int] | None
    state: str
    usable: int | None = None

    def text(self) -> str:
        """Return the row as NodeApiVersions prints it."""
        head = f"{self.name}({self.api_key})" if self.name is not None else f"UNKNOWN({self.api_key})"
        if self.versions is None:
            return f"{head}: UNSUPPORTED"
        low, high = self.versions
        ranged = f"{head}: {low}" if low == high else f"{head}: {low} to {high}"
        return ranged + (f" [usable: {self.usable}]" if self.state == USABLE else _SUFFIX[self.state])

    def fields(self) -> dict:
        """Return the row's JSON object."""
        low, high = self.versions if self.versions is not None else (None, None)
        return {"api_key": self.api_key, "name": self.name, "min_version": low, "max_version": high,
                "usable_version": self.usable, "state": self.state}


def rows(versions: dict[int, tuple[int, int]]) -> list[ApiRow]:
    """Return the rows of a node that listed `versions` (api key -> (min, max)), in key order."""
    from kraftsman.storage.protocol.api_keys import api_keys

    known = api_keys()
    found = {key: _row(key, low, high, known.get(key)) for key, (low, high) in versions.items()}
    for key, api in known.items():
        if api.client_api and key not in found:
            found[key] = ApiRow(key, api.name, None, UNSUPPORTED)
    return [found[key] for key in sorted(found)]


def _row(key: int, low: int, high: int, api) -> ApiRow:
    if api is None:
        return ApiRow(key, None, (low, high), UNKNOWN)
    if api.latest < low:
        return ApiRow(key, api.name, (low, high), NODE_TOO_NEW)
    if high < api.oldest:
        return ApiRow(key, api.name, (low, high), NODE_TOO_OLD)
    return ApiRow(key, api.name, (low, high), USABLE, min(api.latest, high))


def text(node, versions: dict[int, tuple[int, int]]) -> str:
    """Return `<node> -> (` ... `)` with its newline: BrokerApiVersionsCommand's block for one node."""
    return f"{node} -> (\n\t" + ",\n\t".join(row.text() for row in rows(versions)) + "\n)\n"
