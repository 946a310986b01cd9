"""Snapshots of the real package metadata of tracked releases.

One JSON file per package under ``data/metadata/``, as `compat db sync`
writes it: the Requires-Python and Requires-Dist of every release in the
window, read from the package index, with the date the snapshot was taken.
JSON because it is what the index speaks and because it parses several
times faster than TOML; a check reads only the files of the packages it needs.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from ..errors import DatabaseError
from .model import Release

__all__ = ["Snapshot", "SnapshotRelease", "read_snapshot", "write_snapshot"]

SCHEMA = 1


@dataclass
class SnapshotRelease:
    version: str
    uploaded: str | None
    requires_python: str | None
    requires_dist: list[str]
    yanked: bool = False
    file: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"version": self.version}
        if self.uploaded:
            data["uploaded"] = self.uploaded
        if self.requires_python:
            data["requires_python"] = self.requires_python
        data["requires_dist"] = list(self.requires_dist)
        if self.yanked:
            data["yanked"] = True
        if self.file:
            data["file"] = self.file
        return data


@dataclass
class Snapshot:
    name: str
    index: str
    taken: str
    releases: list[SnapshotRelease] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        ordered = sorted(self.releases, key=lambda r: Version(r.version))
        return {
            "schema": SCHEMA,
            "name": self.name,
            "index": self.index,
            "taken": self.taken,
            "releases": [r.to_dict() for r in ordered],
        }


def read_snapshot(path: str) -> Snapshot:
    file = path
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.loads(handle.read())
    except json.JSONDecodeError as exc:
        raise DatabaseError(f"invalid JSON: {exc.msg}", file=file, line=exc.lineno, column=exc.colno) from None
    except OSError as exc:
        raise DatabaseError(f"cannot be read: {exc.strerror}", file=file) from None
    if not isinstance(data, dict):
        raise DatabaseError("expected a JSON object", file=file)
    if data.get("schema") != SCHEMA:
        raise DatabaseError(f"unsupported schema {data.get('schema')!r} (expected {SCHEMA})", file=file, key="schema")
    for key in ("name", "index", "taken"):
        if not isinstance(data.get(key), str):
            raise DatabaseError("expected a string", file=file, key=key)
    releases = data.get("releases")
    if not isinstance(releases, list):
        raise DatabaseError("expected a list", file=file, key="releases")
    out = []
    for index, entry in enumerate(releases):
        where = f"releases[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            raise DatabaseError("expected an object with a version string", file=file, key=where)
        dist = entry.get("requires_dist", [])
        if not isinstance(dist, list) or not all(isinstance(d, str) for d in dist):
            raise DatabaseError("expected a list of strings", file=file, key=f"{where}.requires_dist")
        out.append(
            SnapshotRelease(
                version=entry["version"],
                uploaded=entry.get("uploaded"),
                requires_python=entry.get("requires_python"),
                requires_dist=dist,
                yanked=bool(entry.get("yanked", False)),
                file=entry.get("file"),
            )
        )
    return Snapshot(name=data["name"], index=data["index"], taken=data["taken"], releases=out)


def write_snapshot(snapshot: Snapshot, path: str) -> bool:
    """Write atomically (temporary file, then rename). Returns whether it changed."""
    import tempfile

    text = json.dumps(snapshot.to_dict(), indent=1, sort_keys=False, ensure_ascii=False) + "\n"
    try:
        with open(path, encoding="utf-8") as handle:
            if handle.read() == text:
                return False
    except OSError:
        pass
    folder = os.path.dirname(path) or "."
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def releases_from_snapshot(snapshot: Snapshot, file: str) -> list[Release]:
    """Turn snapshot entries into releases, checking versions and specifiers."""
    out = []
    for index, entry in enumerate(snapshot.releases):
        where = f"releases[{index}]"
        try:
            version = Version(entry.version)
        except InvalidVersion:
            raise DatabaseError(f"invalid version {entry.version!r}", file=file, key=f"{where}.version") from None
        requires_python = None
        if entry.requires_python:
            try:
                requires_python = SpecifierSet(entry.requires_python)
            except InvalidSpecifier:
                raise DatabaseError(
                    f"invalid specifier {entry.requires_python!r}", file=file, key=f"{where}.requires_python"
                ) from None
        uploaded = None
        if entry.uploaded:
            try:
                uploaded = _dt.date.fromisoformat(entry.uploaded[:10])
            except ValueError:
                raise DatabaseError(f"invalid date {entry.uploaded!r}", file=file, key=f"{where}.uploaded") from None
        status = "yanked" if entry.yanked else ("pre-release" if version.is_prerelease else "release")
        out.append(
            Release(
                package=snapshot.name,
                version=version,
                date=uploaded,
                status=status,
                requires_python=requires_python,
                requires_dist=tuple(entry.requires_dist),
                layer="metadata",
                file=file,
            )
        )
    return out


def check_requirements(release: Release) -> list[tuple[str, str]]:
    """Requires-Dist lines that do not parse: (line, reason). For lint."""
    bad = []
    for text in release.requires_dist:
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            bad.append((text, str(exc)))
    return bad
