"""Snapshots of the real package metadata of tracked releases.

One JSON Lines file per package under ``data/metadata/``, as `compat db
sync` writes it: a header (package, index, the date it was taken), then one
line per release with its Requires-Python and Requires-Dist as the index
serves them. A check reads only the files of the packages it needs, lists
their releases from the start of each line, and decodes a line only when
it needs that release's requirements.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, NamedTuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from .._files import write_atomic
from ..errors import DatabaseError
from .model import Release

__all__ = ["Snapshot", "SnapshotRelease", "read_snapshot", "write_snapshot"]

SCHEMA = 1


class SnapshotRelease(NamedTuple):
    version: str
    uploaded: str | None
    requires_python: str | None
    requires_dist: list[str]
    yanked: bool = False
    file: str | None = None
    wheels: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"version": self.version}
        if self.yanked:
            data["yanked"] = True
        if self.uploaded:
            data["uploaded"] = self.uploaded
        if self.requires_python:
            data["requires_python"] = self.requires_python
        if self.file:
            data["file"] = self.file
        data["requires_dist"] = list(self.requires_dist)
        if self.wheels:
            data["wheels"] = [dict(w) for w in self.wheels]
        return data


class Snapshot(NamedTuple):
    name: str
    index: str
    taken: str
    releases: list[SnapshotRelease]

    def to_dict(self) -> dict[str, Any]:
        ordered = sorted(self.releases, key=lambda r: Version(r.version))
        return {
            "schema": SCHEMA,
            "name": self.name,
            "index": self.index,
            "taken": self.taken,
            "releases": [r.to_dict() for r in ordered],
        }


_LINE = re.compile(r'^\{"version": "([^"]+)"(, "yanked": true)?')


def _header(line: str, file: str) -> dict[str, Any]:
    try:
        header = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatabaseError(f"invalid JSON: {exc.msg}", file=file, line=1, column=exc.colno) from None
    if not isinstance(header, dict):
        raise DatabaseError("the first line must be a JSON object", file=file, line=1)
    if header.get("schema") != SCHEMA:
        raise DatabaseError(f"unsupported schema {header.get('schema')!r} (expected {SCHEMA})", file=file, line=1, key="schema")
    for key in ("name", "index", "taken"):
        if not isinstance(header.get(key), str):
            raise DatabaseError("expected a string", file=file, line=1, key=key)
    return header


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise DatabaseError(f"cannot be read: {exc.strerror}", file=path) from None
    if not lines:
        raise DatabaseError("empty snapshot", file=path)
    return lines


def decode_entry(line: str, file: str, number: int) -> dict[str, Any]:
    """One release line, checked."""
    try:
        entry = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatabaseError(f"invalid JSON: {exc.msg}", file=file, line=number, column=exc.colno) from None
    if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
        raise DatabaseError("expected an object with a version string", file=file, line=number)
    dist = entry.get("requires_dist", [])
    if not isinstance(dist, list) or not all(isinstance(d, str) for d in dist):
        raise DatabaseError("expected a list of strings", file=file, line=number, key="requires_dist")
    for key in ("requires_python", "uploaded", "file"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise DatabaseError("expected a string", file=file, line=number, key=key)
    wheels = entry.get("wheels", [])
    if not isinstance(wheels, list) or not all(isinstance(w, dict) and isinstance(w.get("file"), str) for w in wheels):
        raise DatabaseError("expected a list of {file, url, sha256, size} objects", file=file, line=number, key="wheels")
    return entry


def read_snapshot(path: str) -> Snapshot:
    """Read and check a whole snapshot (lint, sync); a check uses `lazy_releases`."""
    lines = _lines(path)
    header = _header(lines[0], path)
    wheels = read_wheels(path)
    out = []
    for number, line in enumerate(lines[1:], start=2):
        entry = decode_entry(line, path, number)
        out.append(
            SnapshotRelease(
                version=entry["version"],
                uploaded=entry.get("uploaded"),
                requires_python=entry.get("requires_python"),
                requires_dist=entry.get("requires_dist", []),
                yanked=bool(entry.get("yanked", False)),
                file=entry.get("file"),
                wheels=tuple(wheels.get(entry["version"], entry.get("wheels", ()))),
            )
        )
    return Snapshot(name=header["name"], index=header["index"], taken=header["taken"], releases=out)


WHEELS = ".wheels.jsonl"


def wheels_path(path: str) -> str:
    """Where the wheel records of snapshot `path` live: kept apart, because
    only lock files need them and a check should not read them."""
    return path[: -len(".jsonl")] + WHEELS


def write_snapshot(snapshot: Snapshot, path: str) -> bool:
    """Write the snapshot and its wheel records, each atomically and only
    when it changed. Returns whether anything changed."""
    main, wheels = render_snapshot(snapshot)
    changed = False
    for target, text in ((path, main), (wheels_path(path), wheels)):
        try:
            with open(target, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except OSError:
            pass
        write_atomic(target, text)
        changed = True
    return changed


def render_snapshot(snapshot: Snapshot) -> tuple[str, str]:
    """JSON Lines: a header, then one release a line, oldest first; and the
    same for the releases' wheels.

    Each line starts with the version (and the yanked mark), so that a
    reader can list the releases without decoding them.
    """
    data = snapshot.to_dict()
    releases = data.pop("releases")
    lines = [json.dumps(data, ensure_ascii=False)]
    wheel_lines = [json.dumps(data, ensure_ascii=False)]
    for entry in releases:
        wheels = entry.pop("wheels", [])
        lines.append(json.dumps(entry, ensure_ascii=False))
        wheel_lines.append(json.dumps({"version": entry["version"], "wheels": wheels}, ensure_ascii=False))
    return "\n".join(lines) + "\n", "\n".join(wheel_lines) + "\n"


def read_wheels(path: str) -> dict[str, list[dict[str, Any]]]:
    """version -> wheel records, from the wheels file of snapshot `path` (empty if none)."""
    target = wheels_path(path)
    try:
        lines = _lines(target)
    except DatabaseError:
        return {}
    _header(lines[0], target)
    out = {}
    for number, line in enumerate(lines[1:], start=2):
        entry = decode_entry(line, target, number)
        out[entry["version"]] = entry.get("wheels", [])
    return out


def lazy_releases(path: str) -> tuple[dict[str, Any], list[Release]]:
    """The header and the releases of a snapshot, each decoded on first use."""
    lines = _lines(path)
    header = _header(lines[0], path)
    name = header["name"]
    wheels = functools.lru_cache(maxsize=1)(functools.partial(read_wheels, path))
    out = []
    for number, line in enumerate(lines[1:], start=2):
        match = _LINE.match(line)
        if match is None:
            raise DatabaseError("a release line must start with its version", file=path, line=number)
        try:
            version = Version(match.group(1))
        except InvalidVersion:
            raise DatabaseError(f"invalid version {match.group(1)!r}", file=path, line=number) from None
        status = "yanked" if match.group(2) else ("pre-release" if version.is_prerelease else "release")
        out.append(
            Release(
                package=name,
                version=version,
                status=status,
                layer="metadata",
                file=path,
                raw=functools.partial(decode_entry, line, path, number),
                wheels=functools.partial(lambda v, load: load().get(v, []), match.group(1), wheels),
            )
        )
    return header, out


def check_requirements(release: Release) -> list[tuple[str, str]]:
    """Requires-Dist lines that do not parse: (line, reason). For lint."""
    bad = []
    for text in release.requires_dist:
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            bad.append((text, str(exc)))
    return bad
