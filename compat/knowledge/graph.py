"""Which package's requirements can reach which: the names graph of the snapshots.

`compat db sync` snapshots the whole closure of the tracked packages, some
hundreds of packages. A check does not need all of them: only those through
which a package the stack names, or a tracked one, can be constrained. A
dependency of vLLM that leads to none of those (a logging library, a
tokenizer's helper) cannot turn the stack's verdict, and `compat resolve`
still resolves the whole closure for lock files.

Finding those packages must not read every snapshot, so `db sync` writes
``metadata/_graph.json``: for each package, whether it is tracked and the
names its releases require (any line, any marker, any extra: a superset is
safe, it only keeps a package in), stored the way a check walks it: which
packages require each one. `db lint` checks it against the snapshots.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

from .._files import write_atomic
from .._names import normalize
from ._schema import database_error, decode_text

__all__ = ["GRAPH_FILE", "build_graph", "write_graph", "read_graph", "relevant"]

GRAPH_FILE = "_graph.json"
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def build_graph(metadata_dir: str) -> dict[str, Any]:
    """The graph of the snapshots in `metadata_dir`, as written to the file."""
    tracked: list[str] = []
    requires: dict[str, list[str]] = {}
    for file in sorted(os.listdir(metadata_dir)):
        if not file.endswith(".jsonl") or file.endswith(".wheels.jsonl"):
            continue
        path = os.path.join(metadata_dir, file)
        names: set[str] = set()
        header, entries = _entries(path)
        for entry in entries:
            for text in entry.get("requires_dist", ()):
                match = _NAME.match(text)
                if match is not None:
                    names.add(normalize(match.group(1)))
        name = normalize(header["name"])
        if header.get("tracked", True) is not False:
            tracked.append(name)
        names.discard(name)
        requires[name] = sorted(names)
    # kept as "required by": the direction a check walks
    required_by: dict[str, list[str]] = {}
    for name, targets in requires.items():
        for target in targets:
            required_by.setdefault(target, []).append(name)
    return {
        "schema": 1,
        "packages": sorted(requires),
        "tracked": sorted(tracked),
        "required_by": {k: sorted(v) for k, v in sorted(required_by.items())},
    }


def _entries(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the release lines of a snapshot, decoded as far as the
    graph needs them; a line that cannot be is a DatabaseError naming it
    (lint checks each line in full, and compares the graph only with
    snapshots that pass)."""
    from .snapshot import decode_json, read_header

    header = read_header(path)
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")[1:]
    entries = []
    for number, raw in enumerate(lines, start=2):
        if not raw.strip():
            continue
        entry = decode_json(decode_text(raw, path, number), path, number)
        if not isinstance(entry, dict) or not _names(entry.get("requires_dist", [])):
            raise database_error("expected an object whose requires_dist is a list of strings", file=path, line=number)
        entries.append(entry)
    return header, entries


def write_graph(metadata_dir: str) -> bool:
    """Write ``_graph.json`` for the snapshots; returns whether it changed."""
    text = json.dumps(build_graph(metadata_dir), separators=(",", ":"), sort_keys=True) + "\n"
    path = os.path.join(metadata_dir, GRAPH_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    write_atomic(path, text)
    return True


def read_graph(metadata_dir: str) -> dict[str, Any] | None:
    """The graph file, or None when the database has none (then every package counts)."""
    path = os.path.join(metadata_dir, GRAPH_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # not UTF-8, not JSON
        raise database_error(f"cannot be read: {exc}", file=path) from None
    except RecursionError:
        raise database_error("cannot be read: arrays or objects nested too deeply", file=path) from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("packages"), list)
        or not isinstance(data.get("tracked"), list)
        or not isinstance(data.get("required_by"), dict)
        or not all(_names(v) for v in (data["packages"], data["tracked"], *data["required_by"].values()))
    ):
        raise database_error("expected {packages: [...], tracked: [...], required_by: {name: [...]}}", file=path)
    return data


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def relevant(graph: dict[str, Any], named: Iterable[str]) -> set[str]:
    """The packages whose requirements can reach a tracked package or one of
    `named` (those included): the ones a check must resolve."""
    targets = set(graph["tracked"]) | set(named)
    requirers = graph["required_by"]
    found = set(targets)
    pending = list(targets)
    while pending:
        for requirer in requirers.get(pending.pop(), ()):
            if requirer not in found:
                found.add(requirer)
                pending.append(requirer)
    return found
