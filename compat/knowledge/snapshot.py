"""Snapshots of the real package metadata of releases on the index.

One JSON Lines file per package under ``data/metadata/``, as `compat db
sync` writes it: a header (package, index, the date it was taken, whether
sync.toml tracks the package, and every version the index lists, so that a
check can tell a release that does not exist from one that was not
recorded), then one line per release with its Requires-Python and
Requires-Dist as the index serves them and the tags of its wheels; a
release whose requirements could not be read says ``"metadata": "unknown"``
(its empty Requires-Dist does not mean "none").

The header also lists, under ``lines``, each release line's version, byte
offset (counted from the end of the header line), length and yanked mark.
A check reads only the headers of the packages it needs and seeks to the
one line of a release whose requirements it needs: the cost of a check
does not grow with the history a snapshot holds. `compat db lint` checks
the offsets against the lines; a snapshot without them (written by hand)
is read whole.
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
        """The first line, without its ``lines`` (which `render_snapshot`
        adds): the keys an older snapshot lacks are left out, not guessed."""
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


def _header(line: str, file: str, *, full: bool = True) -> dict[str, Any]:
    """The header, checked; `full=False` (the check's path) leaves the long
    lists to their readers, which check what they use."""
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
        if not (_strings(header.get(key, [])) if full else isinstance(header.get(key, []), list)):
            raise DatabaseError("expected a list of version strings", file=file, line=1, key=key)
    lines = header.get("lines")
    if lines is not None and full and not (isinstance(lines, list) and all(_is_line_entry(e) for e in lines)):
        raise DatabaseError("expected a list of [version, offset, length, yanked] entries", file=file, line=1, key="lines")
    return header


def _is_line_entry(entry: Any) -> bool:
    return (
        isinstance(entry, list)
        and len(entry) == 4
        and isinstance(entry[0], str)
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in entry[1:3])
        and isinstance(entry[3], bool)
    )


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def read_header(path: str) -> dict[str, Any]:
    """The header of a snapshot, reading only its first line: what a caller
    needs to know which versions exist without listing the releases."""
    header, _ = _read_first_line(path)
    header.pop("lines", None)
    return header


def _read_first_line(path: str, *, full: bool = True) -> tuple[dict[str, Any], int]:
    """The header and the byte offset where the release lines start."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline()
    except OSError as exc:
        raise DatabaseError(f"cannot be read: {exc.strerror}", file=path) from None
    if not first.strip():
        raise DatabaseError("empty snapshot", file=path)
    try:
        text = first.decode("utf-8")
    except UnicodeDecodeError:
        raise DatabaseError("the header is not UTF-8", file=path, line=1) from None
    return _header(text, path, full=full), len(first)


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
    if "lines" in header:
        _check_offsets(header["lines"], lines[1:], path)
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


def line_offsets(lines: list[str]) -> list[list[Any]]:
    """The header's ``lines``: [version, offset, length, yanked] of each release line."""
    out: list[list[Any]] = []
    offset = 0
    for line in lines:
        match = _LINE.match(line)
        assert match is not None, line
        size = len(line.encode("utf-8"))
        out.append([match.group(1), offset, size, bool(match.group(2))])
        offset += size + 1
    return out


def _check_offsets(stated: list[list[Any]], lines: list[str], path: str) -> None:
    if any(_LINE.match(line) is None for line in lines):
        return  # decode_entry reports the bad line itself
    if stated != line_offsets(lines):
        raise DatabaseError(
            "the header's line offsets do not match the release lines (was the file edited by hand? "
            "remove the header's \"lines\" key or run compat db sync)",
            file=path,
            line=1,
            key="lines",
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
    lines = []
    wheel_lines = [json.dumps({k: data[k] for k in ("schema", "name", "index", "taken")}, ensure_ascii=False)]
    for entry in releases:
        wheels = entry.pop("wheels", [])
        lines.append(json.dumps(entry, ensure_ascii=False))
        wheel_lines.append(json.dumps({"version": entry["version"], "wheels": wheels}, ensure_ascii=False))
    data["lines"] = line_offsets(lines)
    return "\n".join([json.dumps(data, ensure_ascii=False), *lines]) + "\n", "\n".join(wheel_lines) + "\n"


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
    """The header and the releases of a snapshot, each decoded on first use.

    With the header's ``lines``, only the header is read now; a release's
    line is read (one seek) when its requirements are first needed.
    """
    header, start = _read_first_line(path, full=False)
    stated = header.pop("lines", None)
    if stated is None:
        lines = _lines(path)
        entries = []
        for number, line in enumerate(lines[1:], start=2):
            match = _LINE.match(line)
            if match is None:
                raise DatabaseError("a release line must start with its version", file=path, line=number)
            entries.append((match.group(1), bool(match.group(2)), functools.partial(decode_entry, line, path, number)))
    else:
        try:
            entries = [
                (version, yanked is True, _Line(path, start + offset, length, version, number))
                for number, (version, offset, length, yanked) in enumerate(stated, start=2)
            ]
        except (TypeError, ValueError):
            raise DatabaseError(
                "expected a list of [version, offset, length, yanked] entries", file=path, line=1, key="lines"
            ) from None
    name = header["name"]
    wheels = functools.lru_cache(maxsize=1)(functools.partial(read_wheels, path))
    out = []
    for number, (text, yanked, raw) in enumerate(entries, start=2):
        try:
            version = Version(text)
        except InvalidVersion:
            raise DatabaseError(f"invalid version {text!r}", file=path, line=number) from None
        status = "yanked" if yanked else ("pre-release" if version.is_prerelease else "release")
        out.append(
            Release(
                package=name,
                version=version,
                status=status,
                layer="metadata",
                file=path,
                raw=raw,
                wheels=functools.partial(lambda v, load: load().get(v, []), text, wheels),
            )
        )
    return header, out


class _Line:
    """A release line of a snapshot, read and decoded when called: one seek."""

    __slots__ = ("path", "offset", "length", "version", "number")

    def __init__(self, path: str, offset: Any, length: Any, version: Any, number: int) -> None:
        if not (isinstance(offset, int) and isinstance(length, int) and isinstance(version, str)):
            raise TypeError
        self.path, self.offset, self.length, self.version, self.number = path, offset, length, version, number

    def __call__(self) -> dict[str, Any]:
        path, version = self.path, self.version
        try:
            with open(path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read(self.length)
        except (OSError, ValueError, OverflowError) as exc:
            raise DatabaseError(f"cannot be read: {getattr(exc, 'strerror', None) or exc}", file=path) from None
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError:
            line = ""
        match = _LINE.match(line)
        if match is None or match.group(1) != version:
            raise DatabaseError(
                f"the header's offset of {version} does not point at its line (run compat db lint)",
                file=path,
                line=1,
                key="lines",
            )
        return decode_entry(line, path, self.number)


def check_requirements(release: Release) -> list[tuple[str, str]]:
    """Requires-Dist lines that do not parse: (line, reason). For lint."""
    bad = []
    for text in release.requires_dist:
        try:
            Requirement(text)
        except InvalidRequirement as exc:
            bad.append((text, str(exc)))
    return bad
