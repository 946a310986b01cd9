"""Which package's requirements can reach which: the names graph of the snapshots.

`compat db sync` snapshots the whole closure of the tracked packages, some
hundreds of packages. A check judges all that an installer installs, but
resolvelib need not search them all: it resolves the scope, the packages
through which a package the stack names, or a tracked one, can be
constrained, and the rest is added in an order where whatever can require a
package comes before it (`requirers_first`), then verified (the engine's
resolver.py). A dependency of vLLM that leads to none of those (a logging
library, a tokenizer's helper) rarely turns the resolution, but it can
(two of them disagreeing on a third, a wheel needing a newer glibc), which
the verification catches.

Finding those packages must not read every snapshot, so `db sync` writes
``metadata/_graph.json``: for each package, whether it is tracked and the
names its releases require (any release, any marker but an extra's: a
superset is safe, it only keeps a package in), stored the way a check walks
it: which packages require each one. `db lint` checks it against the
snapshots.

A requirement that only an extra brings (``extra == "hf"``) is an edge of
the node ``package[hf]``, not of the package: sentry-sdk's ``[huggingface_hub]``
extra requires huggingface-hub, but a stack that installs sentry-sdk without
it cannot have huggingface-hub constrained by it. A requirement that asks
for extras (``fastapi[standard]``) is an edge to the package and to each of
those nodes. Requiring ``p[x]`` installs ``p`` as well, so whatever reaches
a target through ``p`` does through ``p[x]`` too; and when someone requires
``p[x]`` and its lines reach a target, whatever bounds ``p`` does too (the
release of ``p`` decides which lines of ``x`` apply). (A graph without extra
nodes, as older releases of compat wrote, is read as it is: a superset; one
merged with it is read without its extra nodes.)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from .._files import MAX_SNAPSHOT_BYTES, open_regular, read_bytes, read_text, write_atomic
from .._names import normalize
from .._strict import is_string_list
from ._schema import database_error, decode_text

__all__ = ["GRAPH_FILE", "build_graph", "write_graph", "read_graph", "relevant", "requirers", "requirers_first"]

GRAPH_FILE = "_graph.json"
SCHEMA = 2  # 2: extras as nodes of their own (package[extra]); 1: packages alone
_NAME = r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)"


def build_graph(metadata_dir: str) -> dict[str, Any]:
    """The graph of the snapshots in `metadata_dir`, as written to the file."""
    tracked: list[str] = []
    packages: list[str] = []
    requires: dict[str, set[str]] = {}  # node -> the nodes its lines require
    seen: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}  # a line -> (its nodes under `package`, its targets)
    from .snapshot import snapshot_names

    for stem in snapshot_names(sorted(os.listdir(metadata_dir))):
        path = os.path.join(metadata_dir, f"{stem}.jsonl")
        header, entries = _entries(path)
        name = normalize(header["name"])
        packages.append(name)
        if header.get("tracked", True) is not False:
            tracked.append(name)
        requires.setdefault(name, set())
        for entry in entries:
            for text in entry.get("requires_dist", ()):
                if text not in seen:
                    seen[text] = _edges(text)
                under, targets = seen[text]
                for node in under or (name,):
                    requires.setdefault(f"{name}{node}" if node.startswith("[") else node, set()).update(
                        t for t in targets if t.split("[", 1)[0] != name or "[" in t)
    # kept as "required by": the direction a check walks
    required_by: dict[str, set[str]] = {}
    for node, targets in requires.items():
        for target in targets:
            if target != node:
                required_by.setdefault(target, set()).add(node)
    graph: dict[str, Any] = {
        "schema": SCHEMA,
        "packages": sorted(packages),
        "tracked": sorted(tracked),
        # each node's requirers as one string: JSON decodes one string faster than a list of them
        "required_by": {k: " ".join(sorted(v)) for k, v in sorted(required_by.items())},
    }
    # what a check of tracked packages resolves, walked once here rather than by every check
    graph["reach"] = sorted(_reaching(graph, set(tracked)))
    return graph


def requirers(graph: dict[str, Any], node: str) -> list[str]:
    """The nodes whose lines require `node` (``sdk[hub]`` for a line of
    sdk's extra hub), from either form of the file (a string, or a list as
    graphs of schema 1 hold them)."""
    found = graph["required_by"].get(node, ())
    return found.split() if isinstance(found, str) else list(found)


def _edges(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the extras of the requiring package a line applies under, as ``[x]``
    nodes, or () when it may apply without one; the nodes it requires).
    A line that does not parse is read by its leading name alone."""
    match = re.match(_NAME, text)
    if match is None:
        return (), ()
    target = normalize(match.group(1))
    if "[" not in text and "extra" not in text:  # most lines: no extras either side, no parsing
        return (), (target,)
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return (), (target,)
    targets = (target, *(f"{target}[{normalize(e)}]" for e in sorted(requirement.extras)))
    under = _extras_under(getattr(requirement.marker, "_markers", None)) if requirement.marker else None
    return tuple(f"[{e}]" for e in sorted(under or ())), targets


def _extras_under(items: Any) -> set[str] | None:
    """The extras under which a marker (packaging's parsed form) can hold,
    or None when it can hold with no extra requested: each branch of an
    "or" must test ``extra == "x"`` (itself or in a group it is "and"-ed
    with). Anything else is None, which keeps the edge on the package: a
    superset."""
    if not isinstance(items, list):
        return None
    branches: list[list[Any]] = [[]]
    for item in items:
        if item == "or":
            branches.append([])
        elif item != "and":
            branches[-1].append(item)
    out: set[str] = set()
    for branch in branches:
        extras: set[str] = set()
        for item in branch:
            if isinstance(item, list):
                extras |= _extras_under(item) or set()
            elif isinstance(item, tuple) and len(item) == 3:
                left, op, right = (getattr(part, "value", None) for part in item)
                pair = {type(item[0]).__name__: left, type(item[2]).__name__: right}
                if op == "==" and pair.get("Variable") == "extra" and isinstance(pair.get("Value"), str):
                    extras.add(normalize(pair["Value"]))
        if not extras:
            return None
        out |= extras
    return out


def _entries(path: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the release lines of a snapshot, decoded as far as the
    graph needs them; a line that cannot be is a DatabaseError naming it
    (lint checks each line in full, and compares the graph only with
    snapshots that pass)."""
    from .snapshot import decode_json, read_header

    header = read_header(path)
    try:  # a regular file of at most 64 MiB, as every snapshot a check reads
        lines = read_bytes(path, MAX_SNAPSHOT_BYTES).split(b"\n")[1:]
    except OSError as exc:
        raise database_error(f"cannot be read: {exc.strerror or exc}", file=path) from None
    entries = []
    for number, raw in enumerate(lines, start=2):
        if not raw.strip():
            continue
        entry = decode_json(decode_text(raw, path, number), path, number)
        if not isinstance(entry, dict) or not is_string_list(entry.get("requires_dist", [])):
            raise database_error("expected an object whose requires_dist is a list of strings", file=path, line=number)
        entries.append(entry)
    return header, entries


# The file's first line holds what a check reads (the packages, the tracked
# ones, `reach`), its second line the edges (``required_by``, nine tenths of
# the file), which only a walk from a package outside `reach`, lint and sync
# read. A file of one line holding everything (as older releases wrote it)
# is read as well.


def graph_text(graph: dict[str, Any]) -> str:
    """The file's text for `graph`: its head line, then its edges line."""
    head = {k: v for k, v in graph.items() if k != "required_by"}
    edges = {"required_by": graph["required_by"]}
    return "".join(json.dumps(part, separators=(",", ":"), sort_keys=True) + "\n" for part in (head, edges))


def write_graph(metadata_dir: str) -> bool:
    """Write ``_graph.json`` for the snapshots; returns whether it changed."""
    text = graph_text(build_graph(metadata_dir))
    path = os.path.join(metadata_dir, GRAPH_FILE)
    if read_text(path, MAX_SNAPSHOT_BYTES) == text:  # (a file that is not a bounded regular one is replaced)
        return False
    write_atomic(path, text)
    return True


def read_graph(metadata_dir: str) -> dict[str, Any] | None:
    """The graph file, or None when the database has none (then every
    package counts): its first line, and the edges (``required_by``) of the
    second where the file has two."""
    path = os.path.join(metadata_dir, GRAPH_FILE)
    try:
        # a regular file of at most 64 MiB (the bundled one is 150 KiB): a link to /dev/zero or a FIFO is refused
        with open_regular(path, MAX_SNAPSHOT_BYTES) as handle:
            first = handle.readline(MAX_SNAPSHOT_BYTES + 1)
            rest = handle.read(MAX_SNAPSHOT_BYTES + 1 - len(first))
        if len(first) + len(rest) > MAX_SNAPSHOT_BYTES:
            raise OSError(f"larger than {MAX_SNAPSHOT_BYTES // 2**20} MiB, the limit for this file")
        data = json.loads(first.decode("utf-8"))
        if rest.strip():
            edges = json.loads(rest.decode("utf-8"))
            if not isinstance(data, dict) or not isinstance(edges, dict) or set(edges) != {"required_by"} \
                    or "required_by" in data:
                raise database_error("expected a line of {packages, tracked, reach} and a line of {required_by}",
                                     file=path)
            data["required_by"] = edges["required_by"]
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:  # not a bounded regular file, not UTF-8, not JSON
        raise database_error(f"cannot be read: {getattr(exc, 'strerror', None) or exc}", file=path) from None
    except RecursionError:
        raise database_error("cannot be read: arrays or objects nested too deeply", file=path) from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("packages"), list)
        or not isinstance(data.get("tracked"), list)
        or not all(is_string_list(v) for v in (data["packages"], data["tracked"]))
        or not is_string_list(data.get("reach", []))
        or not _edges_readable(data.get("required_by"))
    ):
        raise database_error('expected {packages: [...], tracked: [...], required_by: {name: "names"}, reach: [...]}',
                             file=path)
    return data


def _edges_readable(required_by: Any) -> bool:
    return isinstance(required_by, dict) and all(isinstance(v, str) or is_string_list(v) for v in required_by.values())


def relevant(graph: dict[str, Any], named: Iterable[str]) -> set[str]:
    """The packages whose requirements can reach a tracked package or one of
    `named` (those included): the ones a check must resolve.

    The graph file holds the nodes that reach a tracked package (``reach``,
    written by `build_graph`): when it holds each of `named` too, they are
    the answer (a node that reaches a tracked package adds none that does
    not), and the graph is not walked."""
    named = set(named)
    reach = graph.get("reach")
    if isinstance(reach, list):
        known = set(reach)
        if named <= known:
            return _packages(known)
    return _packages(_reaching(graph, set(graph["tracked"]) | named))


def _packages(nodes: set[str]) -> set[str]:
    """The packages among `nodes`. An extra's node ``p[x]`` adds nothing:
    when something asks for ``p[x]``, the walk has reached ``p`` too (its
    release decides which lines of ``x`` apply); when nothing does, ``p`` is
    installed without them, and its own lines are what count."""
    return {node for node in nodes if "[" not in node}


def _reaching(graph: dict[str, Any], targets: set[str]) -> set[str]:
    """The nodes whose requirements can reach one of `targets` (those included)."""
    extras: dict[str, list[str]] = {}  # package -> its extra nodes someone requires: requiring p[x] installs p
    for node in graph["required_by"]:
        if "[" in node:
            extras.setdefault(node.split("[", 1)[0], []).append(node)
    found = set(targets)
    pending = list(targets)
    while pending:
        node = pending.pop()
        reached = requirers(graph, node)
        if "[" not in node:
            reached += extras.get(node, ())
        elif node in graph["required_by"]:
            # someone asks for p[x], whose lines reach a target: which of them apply
            # depends on p's release, so whatever bounds p counts too
            reached.append(node.split("[", 1)[0])
        for requirer in reached:
            if requirer not in found:
                found.add(requirer)
                pending.append(requirer)
    return found


def requirers_first(graph: dict[str, Any]) -> dict[str, int]:
    """Each package's place in an order where a package comes after every
    package whose requirements can reach it (packages of one cycle by
    name): the order in which to choose releases so that what requires a
    package is chosen, and has said what it requires, before the package
    is. The walk is over the graph's nodes, extras' included: a package
    leads to its extra's node when something asks for that extra, so that
    an extra nothing asks for ties it in no cycle."""
    # node -> the nodes its lines require, in the file's order (a set's order would change from run
    # to run); p leads to p[x] when something asks for p[x] (p's release says what x requires), and
    # an extra that nothing asks for (tests, dev) brings no edge
    below: dict[str, dict[str, None]] = {}
    for node, by in graph["required_by"].items():
        for requirer in (by.split() if isinstance(by, str) else by):
            if requirer != node:
                below.setdefault(requirer, {})[node] = None
        if "[" in node:
            below.setdefault(node.split("[", 1)[0], {})[node] = None
    nodes = list(dict.fromkeys([*(graph.get("packages") or ()), *below, *(t for ts in below.values() for t in ts)]))
    # Tarjan's strongly connected components, without recursion; they come out
    # requirements first, so their reverse puts requirers first
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(below.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(below.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))  # one cycle's packages, by name
    order: dict[str, int] = {}
    for component in reversed(components):
        for name in component:
            if "[" not in name:
                order[name] = len(order)
    return order
