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
import os
from collections.abc import Callable, Iterable, Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from .._record import Record
from .. import _files, _toml
from ..errors import CompatError, DatabaseError
from ._schema import Table
from .graph import GRAPH_FILE, write_graph
from .index import (DEFAULT_INDEX, IndexClient, IndexFile, NotFound, ReleaseMetadata, host_name, project_name,
                    unmet_build_requirements)
from .snapshot import UNKNOWN, Snapshot, SnapshotRelease, read_snapshot, render_snapshot, wheels_path

T = TypeVar("T")

__all__ = ["SyncPlan", "SyncResult", "load_plan", "sync", "index_url_from_environment"]

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
    progress: Callable[[Iterable[T], int], Iterable[T]] | None = None,
    allow_removal: bool = False,
    previous: Callable[[str], str] | None = None,
) -> SyncResult:
    """Read the plan's packages and their requirements' closure from the
    index, and rewrite their snapshots.

    Any failure to read the index raises, and nothing is written. A package
    whose listing no longer has a release its snapshot holds keeps its old
    snapshot and is named in `result.refused` (unless `allow_removal`); the
    others are written, all at once (`_commit`). `previous` names the
    snapshot a listing is compared with when it is not the one in
    `metadata_dir` (a sync into the user data folder: layers.py).
    """
    for name in plan.packages:
        if project_name(name) != name:
            raise CompatError(f"{name!r}: not a normalized package name (PEP 508)")
    day = today or _dt.date.today()
    old = _OldSnapshots(metadata_dir, previous)
    held = (lambda name: set()) if allow_removal else old.releases
    try:
        closure = _walk(plan, client, workers, progress, day, held, old.build_systems)
        _build_requirements(closure, client)
    except BaseException:
        client.stop()
        raise
    taken = day.isoformat()
    result = SyncResult(missing=sorted(closure.missing), ignored=sorted(closure.ignored))
    rendered: dict[str, tuple[str, str]] = {}
    for name in sorted(closure.listings):
        if project_name(name) != name:  # never a path: every name here came through packaging
            raise CompatError(f"{name!r}: not a normalized package name (PEP 508)")
        metas = [closure.fetched[(name, v)] for v in sorted(closure.kept(name))]
        for meta in metas:
            result.how[meta.how] = result.how.get(meta.how, 0) + 1
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
        rendered[name] = render_snapshot(snapshot)
    written = _commit(metadata_dir, rendered)
    for name in rendered:
        (result.written if name in written else result.unchanged).append(name)
    result.requests = client.requests
    return result


class _OldSnapshots:
    """The snapshots a sync compares its listings with, each read once: the
    one in `metadata_dir`, or the one `previous` names (layers.py)."""

    def __init__(self, metadata_dir: str, previous: Callable[[str], str] | None) -> None:
        self._path = previous or (lambda name: os.path.join(metadata_dir, f"{name}.jsonl"))
        self._read: dict[str, Snapshot | None] = {}
        self._built: dict[str, dict[Version, dict[str, Any]]] = {}

    def snapshot(self, name: str) -> Snapshot | None:
        """None when there is none, or one that cannot be read: nothing to keep."""
        if name not in self._read:
            try:
                self._read[name] = read_snapshot(self._path(name))
            except (OSError, CompatError):
                self._read[name] = None
        return self._read[name]

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


def _commit(metadata_dir: str, rendered: dict[str, tuple[str, str]]) -> set[str]:
    """Write the snapshots that changed and the names graph, all or nothing:
    each file is staged in a folder inside `metadata_dir` and fsynced, and
    only then are they renamed into place (_files.Staging). Returns the
    packages whose files changed."""
    changed: dict[str, str] = {}
    packages = set()
    for name, (main, wheels) in rendered.items():
        for path, text in ((os.path.join(metadata_dir, f"{name}.jsonl"), main),
                           (wheels_path(os.path.join(metadata_dir, f"{name}.jsonl")), wheels)):
            if _files.read_text(path) != text:
                changed[os.path.basename(path)] = text
                packages.add(name)
    os.makedirs(metadata_dir, exist_ok=True)
    with _files.Staging(metadata_dir) as staging:
        for file, text in sorted(changed.items()):
            staging.write(file, text)
        # the database as it will be, the staged files over the others: the
        # names graph a check prunes the closure with (graph.py) is built from
        # it, and each package written is read back by the snapshot reader
        view = staging.folder("view")
        snapshots = {f for f in os.listdir(metadata_dir) if f.endswith(".jsonl") and not f.endswith(".wheels.jsonl")}
        snapshots |= {f for f in changed if not f.endswith(".wheels.jsonl")}
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
    progress: Callable[[Iterable[T], int], Iterable[T]] | None,
    today: _dt.date,
    held: Callable[[str], set[Version]],
    known: Callable[[str, Version], dict[str, Any]] = lambda name, version: {},
) -> _Closure:
    """Walk the requirements from the plan's packages, in rounds: list the
    projects named so far, choose their releases, read the metadata of the
    new ones. Each round's requests run on `workers` threads (the client is
    thread-safe). Choices only grow, so the walk ends, cycles included; and
    since a round depends on what was read, not on the order it arrived in,
    the same index gives the same closure. Besides its choice, a project
    keeps the releases `held` says its old snapshot holds, those the index
    still lists: a sync never loses one. `known` gives, for a release, how
    its sdist is built where an older snapshot says (IndexClient.release).
    """
    since = plan.since.isoformat()
    closure = _Closure()

    def listing(name: str) -> tuple[str, Listing | None]:
        try:
            page = client.page(name)
        except NotFound:
            if plan.is_tracked(name):
                raise
            return name, None
        closure.ignored.extend(f"{name}: {reason}" for reason in page.ignored)
        files, untrue = _dated(page.files, today)
        if untrue:
            closure.ignored.append(f"{name}: the upload time of {len(untrue)} file(s) cannot be true "
                                   f"({', '.join(sorted(set(untrue))[:3])}); read as unknown")
        return name, _releases(files)

    def fetch(job: tuple[Key, dict[str, Any]]) -> tuple[Key, ReleaseMetadata]:
        (name, version), built = job
        return (name, version), client.release(closure.listings[name][version], build_systems=built)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        while True:
            demands = _demands(closure.fetched)
            named = sorted((set(plan.packages) | demands.keys()) - closure.listings.keys() - closure.missing)
            for name, releases in pool.map(listing, named):
                if releases is None:
                    closure.missing.add(name)
                else:
                    closure.listings[name] = releases
            for name, releases in closure.listings.items():
                if name not in closure.held:
                    closure.held[name] = held(name) & releases.keys()
                chosen = closure.chosen.setdefault(name, set())
                _choose(chosen, releases, demands.get(name, ()), since, plan.is_tracked(name))
            work = sorted((n, v) for n in closure.listings for v in closure.kept(n) if (n, v) not in closure.fetched)
            if not work:
                return closure
            iterator: Iterable[tuple[Key, ReleaseMetadata]] = pool.map(fetch, [(key, known(*key)) for key in work])
            if progress is not None:
                iterator = progress(iterator, len(work))
            closure.fetched.update(iterator)


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
