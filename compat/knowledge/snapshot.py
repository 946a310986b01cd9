"""Snapshots of the real package metadata of releases on the index.

One JSON Lines file per package under ``data/metadata/``, as `compat db
sync` writes it: a header (package, index, the date it was taken, whether
sync.toml tracks the package, and every version the index lists, so that a
check can tell a release that does not exist from one that was not
recorded), then one line per release with its Requires-Python and
Requires-Dist as the index serves them and the tags of its wheels; a
release whose requirements could not be read says ``"metadata": "unknown"``
(its empty Requires-Dist does not mean "none"). A check
reads only the files of the packages it needs, lists their releases from
the start of each line, and decodes a line only when it needs that
release's requirements.
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

__all__ = ["Snapshot", "SnapshotRelease", "read_header", "read_snapshot", "write_snapshot"]

SCHEMA = 1


UNKNOWN = "unknown"  # the "metadata" of a release whose requirements could not be read


class SnapshotRelease(NamedTuple):
    version: str
    uploaded: str | None
    requires_python: str | None
    requires_dist: list[str]
    yanked: bool = False
    file: str | None = None
    wheels: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] | None = None  # None: not recorded (an older snapshot)
    metadata: str | None = None  # UNKNOWN: requires_dist is empty because it could not be read

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
        if self.metadata:
            data["metadata"] = self.metadata
        if self.tags is not None:
            data["tags"] = sorted(self.tags)
        data["requires_dist"] = list(self.requires_dist)
        if self.wheels:
            data["wheels"] = [dict(w) for w in self.wheels]
        return data


class Snapshot(NamedTuple):
    name: str
    index: str
    taken: str
    releases: list[SnapshotRelease]
    tracked: bool | None = None  # whether data/sync.toml names the package (None: not recorded)
    versions: tuple[str, ...] | None = None  # every version on the index, yanked ones too
    yanked: tuple[str, ...] | None = None  # those all of whose files are yanked

    def header(self) -> dict[str, Any]:
        """The first line: the keys an older snapshot lacks are left out, not guessed."""
        data: dict[str, Any] = {"schema": SCHEMA, "name": self.name, "index": self.index, "taken": self.taken}
        if self.tracked is not None:
            data["tracked"] = self.tracked
        for key, versions in (("versions", self.versions), ("yanked", self.yanked)):
            if versions is not None:
                data[key] = sorted(versions, key=Version)
        return data

    def to_dict(self) -> dict[str, Any]:
        ordered = sorted(self.releases, key=lambda r: Version(r.version))
        return {**self.header(), "releases": [r.to_dict() for r in ordered]}


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
    if not isinstance(header.get("tracked", False), bool):
        raise DatabaseError("expected true or false", file=file, line=1, key="tracked")
    for key in ("versions", "yanked"):
        if not _strings(header.get(key, [])):
            raise DatabaseError("expected a list of version strings", file=file, line=1, key=key)
    return header


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def read_header(path: str) -> dict[str, Any]:
    """The header of a snapshot, reading only its first line: what a caller
    needs to know which versions exist without listing the releases."""
    try:
        with open(path, encoding="utf-8") as handle:
            first = handle.readline()
    except OSError as exc:
        raise DatabaseError(f"cannot be read: {exc.strerror}", file=path) from None
    if not first.strip():
        raise DatabaseError("empty snapshot", file=path)
    return _header(first, path)


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
    for key in ("requires_dist", "tags"):
        if not _strings(entry.get(key, [])):
            raise DatabaseError("expected a list of strings", file=file, line=number, key=key)
    if entry.get("metadata", UNKNOWN) != UNKNOWN:
        raise DatabaseError(f"expected {UNKNOWN!r} or no key", file=file, line=number, key="metadata")
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
                tags=tuple(entry["tags"]) if "tags" in entry else None,
                metadata=entry.get("metadata"),
            )
        )
    return Snapshot(
        name=header["name"],
        index=header["index"],
        taken=header["taken"],
        releases=out,
        tracked=header.get("tracked"),
        versions=tuple(header["versions"]) if "versions" in header else None,
        yanked=tuple(header["yanked"]) if "yanked" in header else None,
    )


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
    reader can list the releases without decoding them. The wheels file's
    header names the package only: the versions are the snapshot's to list.
    """
    data = snapshot.to_dict()
    releases = data.pop("releases")
    lines = [json.dumps(data, ensure_ascii=False)]
    wheel_lines = [json.dumps({k: data[k] for k in ("schema", "name", "index", "taken")}, ensure_ascii=False)]
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
