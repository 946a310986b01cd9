"""`compat db sync`: refresh the metadata snapshots from a package index.

The snapshots are closed under requirements, as an installer would walk
them: from the tracked packages (data/sync.toml), every requirement that
applies without an extra, and the lines of the extras that requirements
request, is followed into the packages it names, tracked or not, over all
markers (some platform or Python may meet any of them). A tracked package
keeps every release uploaded since the plan's date; an untracked one only
the releases of that window some requirement admits. Either way, a
requirement that no kept release meets also keeps the newest release on the
index that does. A release whose upload time the index does not give (PEP
691 makes it optional) is not "before since": pip and uv see it, so it is
kept, with no date; so is one whose upload time cannot be true.

All snapshots are computed first and written only when every package was
read: a failing, slow or malformed index leaves the old snapshots as they
were. A release the old snapshot holds and the index still lists is kept
(read again), whatever its date says and whether or not a requirement still
needs it; a package whose new listing drops a release its snapshot holds
keeps its old snapshot. Either way nothing the snapshot held is lost unless
removals are allowed, and the run says so. The
files that changed, and the names graph, are written to a staging folder
inside the metadata folder, fsynced, then renamed into place; a failure
before the last rename puts back every file already renamed, so the
database is the old one or the new one (docs/reliability.md, "db sync").
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import threading
import time
from collections.abc import Callable, Iterable, Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from .._record import Record
from .. import _files, _toml
from ..errors import CompatError, DatabaseError
from ._schema import Table
from .graph import GRAPH_FILE, write_graph
from .index import (DEFAULT_INDEX, IndexClient, IndexFile, Known, NotFound, ReleaseMetadata, host_name, project_name,
                    unmet_build_requirements)
from .snapshot import UNKNOWN, Snapshot, SnapshotRelease, read_snapshot, render_snapshot, snapshot_names, wheels_path

__all__ = ["LAST_SYNC", "SyncPlan", "SyncProgress", "SyncResult", "diff_metadata", "index_url_from_environment",
           "journal_path", "load_plan", "read_last_sync", "sync"]

LAST_SYNC = "last-sync.json"  # in the metadata folder: what the last sync read, requested and changed


def journal_path(metadata_dir: str, index_url: str) -> str:
    """Where a sync of `metadata_dir` from `index_url` journals the
    requirements of each file it reads, so that the next one resumes a sync
    cut short (_Journal): in the user cache folder, never in the database,
    which a failed sync leaves byte for byte as it was."""
    import hashlib

    from .layers import user_cache_dir

    key = hashlib.sha256(f"{os.path.realpath(metadata_dir)}\n{index_url}".encode()).hexdigest()[:24]
    return os.path.join(user_cache_dir(), "sync", f"{key}.journal")

Listing = dict[Version, list[IndexFile]]  # a project's releases: version -> its files
Key = tuple[str, Version]


@dataclass
class SyncPlan:
    """What to sync: `packages` are where the walk starts (sync.toml's, or
    the ones `--package` names), `tracked` are sync.toml's. A package in
    either keeps its whole window wherever the walk reaches it, so that a
    partial run never rewrites a tracked snapshot as an untracked one."""

    packages: list[str]
    since: _dt.date
    tracked: frozenset[str] = frozenset()
    allow_hosts: tuple[str, ...] = ()  # hosts besides the index's that may serve files (sync.toml's)

    def is_tracked(self, name: str) -> bool:
        return name in self.tracked or name in self.packages


@dataclass(frozen=True)
class SyncProgress:
    """Where a sync is: the phase ("pages": listing projects, "metadata":
    reading releases), how much of it is done, the requests made so far,
    the seconds since the sync began, and the package last done."""

    phase: str
    done: int
    total: int
    requests: int
    elapsed: float
    package: str


@dataclass
class SyncResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    releases: int = 0
    requests: int = 0
    how: dict[str, int] = field(default_factory=dict)
    untracked: list[str] = field(default_factory=list)  # packages snapshotted because something requires them
    missing: list[str] = field(default_factory=list)  # required, but not on the index
    unknown: int = 0  # releases whose requirements could not be read (sdists without static metadata)
    invalid: int = 0  # Requires-Dist lines that do not parse, and were not followed
    refused: list[str] = field(default_factory=list)  # packages whose old snapshot was kept, with why
    refused_releases: list[str] = field(default_factory=list)  # releases recorded with unknown metadata, with why
    ignored: list[str] = field(default_factory=list)  # files of a project's page left out, with why
    build_systems: int = 0  # sdists read for how they are built (releases without a wheel for Linux)
    build_bytes: int = 0  # the bytes of them downloaded
    reused: int = 0  # releases whose files' metadata an older snapshot or an interrupted sync had read
    unmet: list[str] = field(default_factory=list)  # requirements no release on the index meets, after a fresh read
    changes: dict[str, Any] = field(default_factory=dict)  # package -> what changed in its snapshot (_changes)


def load_plan(path: str) -> SyncPlan:
    data, _ = _toml.load(path, error=DatabaseError)
    table = Table(data, path, "")
    table.only(["schema", "since", "packages", "allow_hosts"])
    since = table.date("since")
    if since is None:
        raise table.error("missing (the first upload date to read, such as 2026-01-01)", "since")
    packages = _each(table, "packages", project_name, "a package name (PEP 508)")
    if not packages:
        raise table.error("lists no package", "packages")
    hosts = _each(table, "allow_hosts", host_name, "a host name")
    return SyncPlan(packages=packages, since=since, tracked=frozenset(packages), allow_hosts=tuple(hosts))


def _each(table: Table, key: str, parse: Callable[[str], str | None], what: str) -> list[str]:
    """The strings of `key`, each in the form `parse` gives it (None: not `what`)."""
    values = []
    for text in table.strings(key):
        value = parse(text)
        if value is None:
            raise table.error(f"{text!r} is not {what}", key)
        values.append(value)
    return values


def index_url_from_environment(explicit: str | None) -> str:
    """`--index-url`, else PIP_INDEX_URL (as pip reads it), else the public index."""
    return explicit or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX


def sync(
    plan: SyncPlan,
    metadata_dir: str,
    client: IndexClient,
    *,
    today: _dt.date | None = None,
    workers: int = 8,
    progress: Callable[[SyncProgress], None] | None = None,
    allow_removal: bool = False,
    previous: Callable[[str], str] | None = None,
    expected: Iterable[str] = (),
) -> SyncResult:
    """Read the plan's packages and their requirements' closure from the
    index, and rewrite their snapshots.

    Any failure to read the index raises, and nothing is written. A package
    whose listing no longer has a release its snapshot holds keeps its old
    snapshot and is named in `result.refused` (unless `allow_removal`); the
    others are written, all at once (`_commit`). `previous` names the
    snapshot a listing is compared with when it is not the one in
    `metadata_dir` (a sync into the user data folder: layers.py).

    Only what changed is requested: a release whose file the old snapshot
    read (same name, same digest: an index serves a file once) keeps the
    requirements read then, and each file read is journaled as it arrives
    (journal_path), so that the next sync resumes one cut short. The pages of
    the closure's projects are read every time (that is how a new or newly
    yanked release is seen); those of `expected` (the projects the old
    snapshots hold) are asked for at once. `progress` is told where the sync
    is, as it goes.
    """
    for name in plan.packages:
        if project_name(name) != name:
            raise CompatError(f"{name!r}: not a normalized package name (PEP 508)")
    day = today or _dt.date.today()
    old = _OldSnapshots(metadata_dir, previous)
    held = (lambda name: set()) if allow_removal else old.releases
    journal = _Journal(journal_path(metadata_dir, client.index_url), client.index_url)
    try:
        closure = _walk(plan, client, workers, progress, day, held, old.build_systems, _Reuse(journal, old), journal,
                        expected)
        _build_requirements(closure, client)
    except BaseException:
        client.stop()
        journal.close()
        raise
    journal.close()
    taken = day.isoformat()
    result = SyncResult(missing=sorted(closure.missing), ignored=sorted(closure.ignored),
                        unmet=[f"{by} requires {line!r}" for _, line, by in closure.unmet])
    rendered: dict[str, tuple[str, str]] = {}
    for name in sorted(closure.listings):
        if project_name(name) != name:  # never a path: every name here came through packaging
            raise CompatError(f"{name!r}: not a normalized package name (PEP 508)")
        metas = [closure.fetched[(name, v)] for v in sorted(closure.kept(name))]
        for meta in metas:
            result.how[meta.how] = result.how.get(meta.how, 0) + 1
            result.reused += meta.how in _REUSED
            result.build_systems += meta.build_bytes > 0
            result.build_bytes += meta.build_bytes
            result.unknown += not meta.known and meta.refused is None
            result.invalid += meta.invalid + sum(_requirement(line) is None for line in meta.requires_dist)
            if meta.refused is not None:
                result.refused_releases.append(
                    f"{name} {meta.version} ({meta.filename}): {meta.refused}; recorded with unknown metadata"
                )
        result.releases += len(metas)
        if not plan.is_tracked(name):
            result.untracked.append(name)
        dropped = None if allow_removal else _dropped(old.snapshot(name), closure.listings[name])
        if dropped:
            shown = ", ".join(dropped[:5]) + (f" and {len(dropped) - 5} more" if len(dropped) > 5 else "")
            result.refused.append(
                f"{name}: the index no longer lists {len(dropped)} release(s) its snapshot holds ({shown}); "
                f"the old snapshot is kept (--allow-removal accepts the removal)"
            )
            continue
        snapshot = _snapshot(name, closure.listings[name], metas, client.index_url, taken, plan.is_tracked(name))
        changed = _changes(old.snapshot(name), snapshot)
        if changed:
            result.changes[name] = changed
        rendered[name] = render_snapshot(snapshot)
    result.requests = client.requests
    record = {"schema": 1, "taken": taken, "index": client.index_url, "packages": len(closure.listings),
              "releases": result.releases, "reused": result.reused, "requests": result.requests,
              "refused": len(result.refused), "changes": result.changes}
    written = _commit(metadata_dir, rendered, {LAST_SYNC: json.dumps(record, indent=1, sort_keys=True) + "\n"})
    journal.remove()  # committed: nothing to resume
    for name in rendered:
        (result.written if name in written else result.unchanged).append(name)
    return result


_REUSED = ("snapshot", "journal")


def read_last_sync(metadata_dir: str) -> dict[str, Any] | None:
    """The record the last sync of `metadata_dir` wrote (LAST_SYNC), or None
    when there is none or it cannot be read (it is an account, not data):
    only its known keys, each of the type a sync writes (a value of another
    type is left out; `changes` keeps the lists of version strings)."""
    text = _files.read_text(os.path.join(metadata_dir, LAST_SYNC), 4 * 1024 * 1024)
    raw = _json_object(text) if text is not None else {}
    record: dict[str, Any] = {}
    for key in ("taken", "index"):
        if isinstance(raw.get(key), str):
            record[key] = raw[key][:300]
    for key in ("packages", "releases", "reused", "requests", "refused"):
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10**12:
            record[key] = value
    changes = raw.get("changes")
    if isinstance(changes, dict):
        kept = {}
        for name, changed in changes.items():
            if isinstance(name, str) and isinstance(changed, dict):
                lists = {kind: [v for v in versions if isinstance(v, str)] for kind, versions in changed.items()
                         if isinstance(kind, str) and isinstance(versions, list)}
                lists = {kind: versions for kind, versions in lists.items() if versions}
                if lists:
                    kept[name] = lists
        record["changes"] = kept
    return record or None


def diff_metadata(old_dir: str, new_dir: str) -> dict[str, dict[str, list[str]]]:
    """Package -> what its snapshot in `new_dir` changes against the one in
    `old_dir` (as a sync reports it: `listed`, `new`, `yanked`,
    `requirements`, and `removed`: releases the new one no longer holds);
    a package only one folder has is `added` or `dropped`, with the releases
    its snapshot holds (an empty list: none, only versions listed). A snapshot
    that cannot be read raises DatabaseError, naming it."""
    def held(folder: str) -> set[str]:
        try:
            files = os.listdir(folder)
        except OSError as exc:
            raise DatabaseError(f"cannot be read: {exc.strerror}", file=folder) from None
        return set(snapshot_names(files))

    before, after = held(old_dir), held(new_dir)
    out: dict[str, dict[str, list[str]]] = {}
    for name in sorted(before | after):
        old = read_snapshot(os.path.join(old_dir, f"{name}.jsonl")) if name in before else None
        new = read_snapshot(os.path.join(new_dir, f"{name}.jsonl")) if name in after else None
        if new is None or old is None:
            whole = old if new is None else new
            assert whole is not None
            out[name] = {"dropped" if new is None else "added": [r.version for r in whole.releases]}
            continue
        changed = _changes(old, new)
        removed = sorted({r.version for r in old.releases} - {r.version for r in new.releases})
        if removed:
            changed["removed"] = removed
        if changed:
            out[name] = changed
    return out


def _changes(old: Snapshot | None, new: Snapshot) -> dict[str, list[str]]:
    """What a package's new snapshot changes against its old one: versions
    new on the index (`listed`), releases newly kept (`new`), newly yanked
    (`yanked`), and kept releases whose requirements or Requires-Python
    differ (`requirements`); empty when nothing changed."""
    if old is None:
        return {"new": [r.version for r in new.releases]} if new.releases else {}
    before = {r.version: r for r in old.releases}
    listed = set(old.versions or ()) | set(before)
    was_yanked = set(old.yanked or ())
    out: dict[str, list[str]] = {
        "listed": [v for v in new.versions or () if v not in listed],
        "new": [r.version for r in new.releases if r.version not in before],
        "yanked": [v for v in new.yanked or () if v not in was_yanked],
        "requirements": [r.version for r in new.releases if r.version in before
                         and (before[r.version].requires_dist, before[r.version].requires_python)
                         != (r.requires_dist, r.requires_python)],
    }
    return {k: v for k, v in out.items() if v}


class _Journal:
    """The requirements of each file a sync read, appended as they arrive
    (one JSON line each, after a header naming the index), so that a sync
    cut short (killed, out of time, a failing index) is resumed by the next
    without reading them again; removed once a sync commits. A cache of
    what the index served, never the truth: a line that does not parse, or
    a journal of another index, is passed over, and what a line says is
    checked again as if just read (IndexClient.release)."""

    def __init__(self, path: str, index: str) -> None:
        self.path = path
        self.index = index
        self.entries: dict[tuple[str, str, str], Known] = {}
        self._lock = threading.Lock()
        self._handle: Any = None
        text = _files.read_text(path)
        lines = text.split("\n") if text else []
        if lines and _json_object(lines[0]).get("index") == index:
            for line in lines[1:]:
                entry = _json_object(line)
                key = (entry.get("project"), entry.get("file"), entry.get("sha256"))
                python, required = entry.get("requires_python"), entry.get("requires_dist")
                if (all(isinstance(k, str) for k in key) and (python is None or isinstance(python, str))
                        and isinstance(required, list) and all(isinstance(x, str) for x in required)):
                    self.entries[key] = Known(python, tuple(required), "journal")  # type: ignore[index]
        self._fresh = not self.entries

    def get(self, file: IndexFile) -> Known | None:
        """What the journal holds for `file`: only where the index gives its digest (the same name and digest)."""
        return self.entries.get((file.project, file.filename, file.sha256)) if file.sha256 else None

    def add(self, file: IndexFile, meta: ReleaseMetadata) -> None:
        """Journal what `file` says, when it was read now, known and not refused."""
        if meta.how in _REUSED or not meta.known or meta.refused is not None:
            return
        line = json.dumps({"project": file.project, "file": file.filename, "sha256": file.sha256 or "",
                           "requires_python": meta.requires_python, "requires_dist": meta.requires_dist},
                          sort_keys=True)
        with self._lock:
            try:
                if self._handle is None:
                    os.makedirs(os.path.dirname(self.path), exist_ok=True)
                    self._handle = open(self.path, "w" if self._fresh else "a", encoding="utf-8")
                    if self._fresh:
                        self._handle.write(json.dumps({"schema": 1, "index": self.index}) + "\n")
                        self._fresh = False
                self._handle.write(line + "\n")
                self._handle.flush()
            except OSError:  # a journal is an aid: a sync that cannot write one goes on without it
                self._handle = None

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                try:
                    self._handle.close()
                except OSError:
                    pass
                self._handle = None

    def remove(self) -> None:
        self.close()
        try:
            os.remove(self.path)
        except OSError:
            pass


def _json_object(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}


class _Reuse:
    """The requirements of a file read before: by an interrupted sync (its
    journal), else by the old snapshot, where it recorded the same file
    (and, where both give one, the same digest) with known metadata."""

    def __init__(self, journal: _Journal, old: _OldSnapshots) -> None:
        self.journal = journal
        self.old = old

    def __call__(self, file: IndexFile) -> Known | None:
        found = self.journal.get(file)
        if found is not None:
            return found
        release = self.old.by_file(file.project).get(file.filename)
        if release is None or release.metadata == UNKNOWN:
            return None
        recorded = next((w.get("sha256") for w in release.wheels if w.get("file") == file.filename), None)
        if recorded and file.sha256 and recorded != file.sha256:
            return None
        return Known(release.requires_python, tuple(release.requires_dist), "snapshot")


class _OldSnapshots:
    """The snapshots a sync compares its listings with, each read once: the
    one in `metadata_dir`, or the one `previous` names (layers.py)."""

    def __init__(self, metadata_dir: str, previous: Callable[[str], str] | None) -> None:
        self._path = previous or (lambda name: os.path.join(metadata_dir, f"{name}.jsonl"))
        self._read: dict[str, Snapshot | None] = {}
        self._built: dict[str, dict[Version, dict[str, Any]]] = {}
        self._files: dict[str, dict[str, SnapshotRelease]] = {}
        self._lock = threading.RLock()  # the walk's threads ask at once

    def snapshot(self, name: str) -> Snapshot | None:
        """None when there is none, or one that cannot be read: nothing to keep."""
        with self._lock:
            if name not in self._read:
                try:
                    self._read[name] = read_snapshot(self._path(name))
                except (OSError, CompatError):
                    self._read[name] = None
            return self._read[name]

    def by_file(self, name: str) -> dict[str, SnapshotRelease]:
        """The old snapshot's releases by the file their metadata was read from."""
        with self._lock:
            found = self._files.get(name)
            if found is None:
                old = self.snapshot(name)
                releases = old.releases if old is not None else ()
                found = self._files[name] = {r.file: r for r in releases if r.file}
            return found

    def releases(self, name: str) -> set[Version]:
        """The versions of the release lines the old snapshot holds."""
        old = self.snapshot(name)
        return set(_versions(r.version for r in old.releases)) if old is not None else set()

    def build_systems(self, name: str, version: Version) -> dict[str, Any]:
        """Sdist file name -> how it is built, as the old snapshot records it
        for that release (without `unmet`, which the index's listings of
        the day decide): a file on the index does not change, so it is not
        downloaded again."""
        if name not in self._built:
            old = self.snapshot(name)
            self._built[name] = {}
            for release in old.releases if old is not None else ():
                known = release.build_system
                if isinstance(release.sdist, str) and known is not None:
                    if isinstance(known, dict):
                        known = {k: v for k, v in known.items() if k != "unmet"}
                    for parsed in _versions([release.version]):
                        self._built[name][parsed] = {release.sdist: known}
        return self._built[name].get(version, {})


def _versions(texts: Iterable[str]) -> dict[Version, str]:
    """Version -> its text, for the texts that are versions."""
    out: dict[Version, str] = {}
    for text in texts:
        try:
            out.setdefault(Version(text), text)
        except ValueError:  # InvalidVersion, or a number too long to convert
            continue
    return out


def _dropped(old: Snapshot | None, listing: Listing) -> list[str]:
    """The versions the old snapshot holds (as releases, or as versions the
    index listed) that `listing` no longer has."""
    if old is None:
        return []
    held = _versions([r.version for r in old.releases] + list(old.versions or ()))
    return [held[v] for v in sorted(held) if v not in listing]


def _commit(metadata_dir: str, rendered: dict[str, tuple[str, str]], others: dict[str, str] | None = None) -> set[str]:
    """Write the snapshots that changed, the names graph and, when a
    snapshot changed, `others` (file name -> text: the sync's record), all
    or nothing: each file is
    staged in a folder inside `metadata_dir` and fsynced, and only then are
    they renamed into place (_files.Staging). Returns the packages whose
    files changed."""
    changed: dict[str, str] = {}
    packages = set()
    for name, (main, wheels) in rendered.items():
        for path, text in ((os.path.join(metadata_dir, f"{name}.jsonl"), main),
                           (wheels_path(os.path.join(metadata_dir, f"{name}.jsonl")), wheels)):
            if _files.read_text(path) != text:
                changed[os.path.basename(path)] = text
                packages.add(name)
    if packages:  # a sync that changes no snapshot leaves the folder byte for byte, its record too
        for file, text in (others or {}).items():
            if _files.read_text(os.path.join(metadata_dir, file)) != text:
                changed[file] = text
    os.makedirs(metadata_dir, exist_ok=True)
    with _files.Staging(metadata_dir) as staging:
        for file, text in sorted(changed.items()):
            staging.write(file, text)
        # the database as it will be, the staged files over the others: the
        # names graph a check prunes the closure with (graph.py) is built from
        # it, and each package written is read back by the snapshot reader
        view = staging.folder("view")
        snapshots = {f"{name}.jsonl" for name in snapshot_names([*os.listdir(metadata_dir), *changed])}
        for file in sorted(snapshots):
            source = staging.path(file) if file in changed else os.path.join(metadata_dir, file)
            _files.link_or_copy(source, os.path.join(view, file))
        for name in sorted(packages):
            _read_back(name, view, metadata_dir, staging, changed)
        write_graph(view)
        graph = _files.read_text(os.path.join(view, GRAPH_FILE))
        if graph is not None and graph != _files.read_text(os.path.join(metadata_dir, GRAPH_FILE)):
            staging.write(GRAPH_FILE, graph)
        staging.commit()
    return packages


def _read_back(name: str, view: str, metadata_dir: str, staging: _files.Staging, changed: dict[str, str]) -> None:
    """Read package `name`'s new snapshot as every later command will, before
    anything is renamed into place: the index's data passed the client's
    checks one value at a time, and this is the reader's word on the whole.
    A snapshot it refuses fails the run, with nothing written."""
    wheels = f"{name}.wheels.jsonl"
    source = staging.path(wheels) if wheels in changed else os.path.join(metadata_dir, wheels)
    if os.path.exists(source):
        _files.link_or_copy(source, os.path.join(view, wheels))
    try:
        read_snapshot(os.path.join(view, f"{name}.jsonl"))
    except DatabaseError as exc:
        where = ":".join(str(part) for part in (os.path.basename(exc.file or ""), exc.line) if part)
        key = f"{exc.key}: " if exc.key else ""
        raise DatabaseError(f"{name}: the index's data makes a snapshot its reader refuses ({where}: {key}{exc.message}); "
                            f"nothing was written") from None


@dataclass
class _Closure:
    listings: dict[str, Listing] = field(default_factory=dict)  # every project named, as the index lists it
    ignored: list[str] = field(default_factory=list)  # files of those pages left out, with why
    missing: set[str] = field(default_factory=set)  # named, but not on the index
    chosen: dict[str, set[Version]] = field(default_factory=dict)  # the releases the plan's rules choose
    held: dict[str, set[Version]] = field(default_factory=dict)  # those the old snapshot holds, still listed
    unmet: list[tuple[str, str, str]] = field(default_factory=list)  # (target, line, release) no listed version meets
    fetched: dict[Key, ReleaseMetadata] = field(default_factory=dict)  # their metadata

    def kept(self, name: str) -> set[Version]:
        """The releases package `name`'s snapshot keeps: the rules' choice, and
        what it held. Apart, so that a release held does not stand in for the
        newest one a requirement admits (`_choose`)."""
        return self.chosen.get(name, set()) | self.held.get(name, set())


def _walk(
    plan: SyncPlan,
    client: IndexClient,
    workers: int,
    progress: Callable[[SyncProgress], None] | None,
    today: _dt.date,
    held: Callable[[str], set[Version]],
    known: Callable[[str, Version], dict[str, Any]] = lambda name, version: {},
    reuse: Callable[[IndexFile], Known | None] | None = None,
    journal: _Journal | None = None,
    expected: Iterable[str] = (),
) -> _Closure:
    """Walk the requirements from the plan's packages, in rounds: list the
    projects named so far, choose their releases, read the metadata of the
    new ones. Each round's requests run on `workers` threads (the client is
    thread-safe). Choices only grow, so the walk ends, cycles included; and
    since a round depends on what was read, not on the order it arrived in,
    the same index gives the same closure. Besides its choice, a project
    keeps the releases `held` says its old snapshot holds, those the index
    still lists: a sync never loses one. `known` gives, for a release, how
    its sdist is built where an older snapshot says (IndexClient.release),
    `reuse` the requirements of a file read before; `journal` records each
    file read now, and `progress` hears of each page and release done.
    The pages of `expected` (the old closure's projects) are asked for at
    once, and those a release read requires as soon as it is read: a round
    then seldom waits for its pages. One not needed in the end is dropped
    unread, its failure too, so the closure is the one the rounds alone make.
    """
    since = plan.since.isoformat()
    closure = _Closure()
    started = time.monotonic()
    refreshed: set[str] = set()  # the projects whose page was read again, past any cache

    def tell(phase: str, done: int, total: int, package: str) -> None:
        if progress is not None:
            progress(SyncProgress(phase, done, total, client.requests, time.monotonic() - started, package))

    def listing(name: str, fresh: bool = False) -> tuple[str, Listing | None, list[str]]:
        """A project's releases (None: not on the index) and the files left out, with why."""
        try:
            page = client.page(name, fresh=fresh)
        except NotFound:
            if plan.is_tracked(name):
                raise
            return name, None, []
        ignored = [f"{name}: {reason}" for reason in page.ignored]
        files, untrue = _dated(page.files, today)
        if untrue:
            ignored.append(f"{name}: the upload time of {len(untrue)} file(s) cannot be true "
                           f"({', '.join(sorted(set(untrue))[:3])}); read as unknown")
        return name, _releases(files), ignored

    pages: dict[str, Future[tuple[str, Listing | None, list[str]]]] = {}  # pages asked for ahead of their round

    def ahead(names: Iterable[str]) -> None:
        """Ask for pages a round will need before it starts (their content does
        not depend on when they are read): the old closure's projects, and the
        projects a release just read requires whatever the extras."""
        for name in names:
            if name not in pages and name not in closure.listings and name not in closure.missing:
                pages[name] = pool.submit(listing, name)

    def fetch(job: tuple[Key, dict[str, Any]]) -> tuple[Key, ReleaseMetadata]:
        (name, version), built = job
        files = closure.listings[name][version]
        meta = client.release(files, build_systems=built, reuse=reuse)
        if journal is not None:
            read = next((f for f in files if f.filename == meta.filename), None)
            if read is not None:
                journal.add(read, meta)
        return (name, version), meta

    with ThreadPoolExecutor(max_workers=workers) as pool:
        ahead(sorted(set(plan.packages) | set(expected)))
        while True:
            demands = _demands(closure.fetched)
            named = sorted((set(plan.packages) | demands.keys()) - closure.listings.keys() - closure.missing)
            ahead(named)
            for done, name in enumerate(named, 1):
                _, releases, ignored = pages.pop(name).result()
                closure.ignored.extend(ignored)
                if releases is None:
                    closure.missing.add(name)
                else:
                    closure.listings[name] = releases
                tell("pages", done, len(named), name)
            for name, releases in closure.listings.items():
                if name not in closure.held:
                    closure.held[name] = held(name) & releases.keys()
                chosen = closure.chosen.setdefault(name, set())
                _choose(chosen, releases, demands.get(name, ()), since, plan.is_tracked(name))
            work = sorted((n, v) for n in closure.listings for v in closure.kept(n) if (n, v) not in closure.fetched)
            if not work:
                # A requirement no listed release meets may be one a cache's stale copy of the page
                # hides: each such page is read once more, asking past any cache.
                unmet = _unmet(closure)
                stale = sorted({target for target, _, _ in unmet} - refreshed)
                if not stale:
                    closure.unmet = unmet
                    for unused in pages.values():  # asked ahead, not needed: not waited for
                        unused.cancel()
                    return closure
                refreshed.update(stale)
                for name, releases, _ in pool.map(lambda n: listing(n, fresh=True), stale):
                    if releases is not None and releases.keys() != closure.listings[name].keys():
                        closure.listings[name] = releases
                continue
            for done, (key, meta) in enumerate(pool.map(fetch, [(key, known(*key)) for key in work]), 1):
                closure.fetched[key] = meta
                ahead(sorted({edge.target for edge in map(_edge, meta.walked) if edge is not None and edge.always}))
                tell("metadata", done, len(work), key[0])


def _unmet(closure: _Closure) -> list[tuple[str, str, str]]:
    """(target, line, "name version") for each Requires-Dist line of a release
    read, under any marker or extra, that names a listed project of which
    no listed version meets it (pre-releases included)."""
    unmet = []
    for (name, version), meta in sorted(closure.fetched.items()):
        for line in meta.walked:
            edge = _edge(line)
            if edge is None or edge.target == name or edge.target not in closure.listings:
                continue
            if not any(edge.specifier.contains(v, prereleases=True) for v in closure.listings[edge.target]):
                unmet.append((edge.target, line, f"{name} {version}"))
    return unmet


def _build_requirements(closure: _Closure, client: IndexClient) -> None:
    """Record in each build system read which of its requirements no
    release on the index meets (``unmet``): a project of the closure is
    judged by its listing, any other by its page, read once (a project the
    index does not have meets none)."""
    pages: dict[str, list[Version] | None] = {}

    def versions(name: str) -> Any:
        if name in closure.listings:
            return closure.listings[name].keys()
        if name not in pages:
            try:
                pages[name] = [f.version for f in client.files(name)]
            except NotFound:
                pages[name] = None
        return pages[name]

    for key, meta in sorted(closure.fetched.items()):
        if isinstance(meta.build_system, dict):
            found = {k: v for k, v in meta.build_system.items() if k != "unmet"}
            unmet = unmet_build_requirements(found, versions)
            closure.fetched[key] = replace(meta, build_system={**found, "unmet": unmet} if unmet else found)


# -- the index's view of a project ---------------------------------------------


def _releases(files: list[IndexFile]) -> Listing:
    """Every version with a file an installer can use (a wheel or an sdist)."""
    by_version: Listing = {}
    for file in files:
        by_version.setdefault(file.version, []).append(file)
    return by_version


# No file reached a Python package index before Python's first release
# (0.9.0, 1991-02-20), nor after the day of the sync (a day later, for an
# index whose clock is ahead of the local date): such an upload time
# (0001-01-01, 9999-12-31) is read as unknown.
_FIRST_PYTHON = _dt.date(1991, 2, 20)


def _dated(files: list[IndexFile], today: _dt.date) -> tuple[list[IndexFile], list[str]]:
    """The files, those whose upload time cannot be true without one; and those times."""
    latest = today + _dt.timedelta(days=1)
    untrue = {f.uploaded for f in files if f.uploaded is not None and _untrue(f.uploaded, latest)}
    if not untrue:
        return files, []
    dated = [replace(f, uploaded=None) if f.uploaded in untrue else f for f in files]
    return dated, [f.uploaded for f in files if f.uploaded is not None and f.uploaded in untrue]


def _untrue(uploaded: str, latest: _dt.date) -> bool:
    """Whether an upload time names a real date outside what can be true. One
    that names no date is the client's to refuse, and the snapshot reader's."""
    try:
        day = _dt.date.fromisoformat(uploaded[:10])
    except ValueError:
        return False
    return not _FIRST_PYTHON <= day <= latest


def _uploaded(files: list[IndexFile]) -> str:
    """The release's upload time: its earliest file's; "" when no file gives one."""
    return min((f.uploaded for f in files if f.uploaded), default="")


def _since(files: list[IndexFile], since: str) -> bool:
    """Whether a release is in the window: uploaded on `since` or later, or at a time the index does not say."""
    uploaded = _uploaded(files)[:10]
    return not uploaded or uploaded >= since


def _is_yanked(files: list[IndexFile]) -> bool:
    return all(f.yanked for f in files)


def _snapshot(name: str, releases: Listing, metas: list[ReleaseMetadata], index: str, taken: str, tracked: bool) -> Snapshot:
    return Snapshot(
        name=name,
        index=index,
        taken=taken,
        tracked=tracked,
        versions=tuple(str(v) for v in sorted(releases)),
        yanked=tuple(str(v) for v in sorted(releases) if _is_yanked(releases[v])),
        releases=[
            SnapshotRelease(
                version=meta.version,
                uploaded=(meta.uploaded or "")[:10] or None,
                requires_python=meta.requires_python,
                requires_dist=meta.requires_dist,
                yanked=meta.yanked,
                file=meta.filename,
                wheels=meta.wheels,
                tags=meta.tags,
                sdist=meta.sdist,
                build_system=meta.build_system,
                metadata=None if meta.known else UNKNOWN,
            )
            for meta in metas
        ],
    )


# -- which releases to keep ------------------------------------------------------


def _choose(chosen: set[Version], releases: Listing, demands: Iterable[SpecifierSet], since: str, tracked: bool) -> None:
    """Add to `chosen` the releases of one project that the snapshot keeps.

    A tracked project keeps its whole window; an untracked one the part of
    it that some demand admits. Then each demand that no kept release meets
    keeps the newest release that does, however old. A release of unknown
    upload time is in the window: nothing says it is older than `since`,
    and an installer sees it.
    """
    window = {v for v, files in releases.items() if _since(files, since)}
    ordered = sorted(demands, key=str)
    admitted = [_candidates(specifier, releases) for specifier in ordered]
    if tracked:
        chosen |= window
    else:
        for candidates in admitted:
            chosen |= candidates & window
    for candidates in admitted:
        if candidates and not candidates & chosen:
            chosen.add(_newest(candidates, releases))


def _candidates(specifier: SpecifierSet, releases: Listing) -> set[Version]:
    """The releases an installer may take for `specifier`.

    As pip does, a pre-release only when the specifier names one, or when
    nothing else meets it.
    """
    matching = {v for v in releases if specifier.contains(v, prereleases=True)}
    if specifier.prereleases:
        return matching
    return {v for v in matching if not v.is_prerelease} or matching


def _newest(candidates: set[Version], releases: Listing) -> Version:
    """The newest candidate, passing over yanked ones while others remain (PEP 592)."""
    unyanked = {v for v in candidates if not _is_yanked(releases[v])}
    return max(unyanked or candidates)


# -- which requirements apply ------------------------------------------------------


class _Edge(Record):
    """What one Requires-Dist line asks of the package it names."""

    target: str
    specifier: SpecifierSet
    extras: frozenset[str]  # the extras it requests of the target
    always: bool  # its marker may hold without an extra
    under: frozenset[str]  # the extras with which it may hold too

    def applies(self, requested: AbstractSet[str]) -> bool:
        return self.always or not self.under.isdisjoint(requested)


def _demands(fetched: dict[Key, ReleaseMetadata]) -> dict[str, set[SpecifierSet]]:
    """Project -> the specifiers that the fetched releases put on it.

    A line counts when its marker can hold without an extra, or with an
    extra that a counted line requests of its package; those extras grow
    until they are stable. A line that names its own package only requests
    extras of the same release: it admits no other.
    """
    lines: dict[str, set[str]] = {}
    for (name, _), meta in fetched.items():
        lines.setdefault(name, set()).update(meta.walked)
    extras: dict[str, set[str]] = {}
    while True:
        demands: dict[str, set[SpecifierSet]] = {}
        requested: dict[str, set[str]] = {}
        for name, texts in lines.items():
            for text in texts:
                edge = _edge(text)
                if edge is None or not edge.applies(extras.get(name, set())):
                    continue
                requested.setdefault(edge.target, set()).update(edge.extras)
                if edge.target != name:
                    demands.setdefault(edge.target, set()).add(edge.specifier)
        if requested == extras:
            return demands
        extras = requested


@functools.lru_cache(maxsize=None)
def _requirement(line: str) -> Requirement | None:
    """A Requires-Dist line, or None when it does not parse (it is skipped, and counted)."""
    try:
        return Requirement(line)
    except InvalidRequirement:
        return None


@functools.lru_cache(maxsize=None)
def _edge(line: str) -> _Edge | None:
    """The edge of a Requires-Dist line; None for a line that does not parse,
    or that names a URL (an installer takes that from the URL, not the index)."""
    requirement = _requirement(line)
    if requirement is None or requirement.url:
        return None
    marker = getattr(requirement.marker, "_markers", [])
    named = {str(canonicalize_name(v)) for v in _extra_values(marker)}
    return _Edge(
        target=str(canonicalize_name(requirement.name)),
        specifier=requirement.specifier,
        extras=frozenset(str(canonicalize_name(e)) for e in requirement.extras),
        always=_evaluate(marker, "") != _FALSE,
        under=frozenset(e for e in named if _evaluate(marker, e) != _FALSE),
    )


# A marker in three values: comparisons of `extra` are decided, every other
# comparison may go either way (some platform or Python meets it). packaging
# has no public view of a marker's parts, so this walks `Marker._markers` as
# packaging's own evaluation does: a flat list of comparisons (tuples) and
# groups (lists) joined by "and" and "or", "and" binding tighter. A part it
# does not recognise counts as "maybe", which only makes the walk follow more.
_FALSE, _MAYBE, _TRUE = 0, 1, 2


def _evaluate(items: Any, extra: str) -> int:
    if not isinstance(items, list):
        return _MAYBE
    alternatives: list[list[int]] = [[]]
    for item in items:
        if item == "or":
            alternatives.append([])
        elif isinstance(item, list):
            alternatives[-1].append(_evaluate(item, extra))
        elif isinstance(item, tuple):
            alternatives[-1].append(_compare(item, extra))
    return max((min(terms) for terms in alternatives if terms), default=_TRUE)


def _compare(item: tuple[Any, ...], extra: str) -> int:
    value, operator = _extra_comparison(item)
    if value is None or operator not in ("==", "!="):
        return _MAYBE
    equal = str(canonicalize_name(value)) == extra
    return _TRUE if equal == (operator == "==") else _FALSE


def _extra_comparison(item: tuple[Any, ...]) -> tuple[str | None, str | None]:
    """(value, operator) of ``extra <op> "value"`` either way round, else (None, None)."""
    if len(item) != 3:
        return None, None
    left, op, right = item
    value = right if _is_extra(left) else left if _is_extra(right) else None
    text = getattr(value, "value", None)
    return (text, getattr(op, "value", None)) if isinstance(text, str) else (None, None)


def _extra_values(items: Any) -> list[str]:
    """Every value a marker compares `extra` with."""
    if isinstance(items, tuple):
        value, _ = _extra_comparison(items)
        return [value] if value is not None else []
    if isinstance(items, list):
        return [value for item in items for value in _extra_values(item)]
    return []


def _is_extra(node: Any) -> bool:
    return type(node).__name__ == "Variable" and getattr(node, "value", None) == "extra"
