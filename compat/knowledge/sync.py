"""`compat db sync`: refresh the metadata snapshots from a package index.

All snapshots are computed first and written only when every package was
read: a failing, slow or malformed index leaves the old snapshots as they
were. Each file is written atomically, and only when its content changed.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from .. import _toml
from ..errors import DatabaseError
from ._schema import Table
from .index import DEFAULT_INDEX, IndexClient, IndexFile, ReleaseMetadata
from .snapshot import Snapshot, SnapshotRelease, write_snapshot

T = TypeVar("T")

__all__ = ["SyncPlan", "SyncResult", "load_plan", "sync", "index_url_from_environment"]


@dataclass
class SyncPlan:
    packages: list[str]
    since: _dt.date


@dataclass
class SyncResult:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    releases: int = 0
    requests: int = 0
    how: dict[str, int] = field(default_factory=dict)


def load_plan(path: str) -> SyncPlan:
    data, _ = _toml.load(path, error=DatabaseError)
    table = Table(data, path, "")
    table.only(["schema", "since", "packages"])
    since = table.date("since")
    if since is None:
        raise table.error("missing (the first upload date to read, such as 2026-01-01)", "since")
    packages = [str(canonicalize_name(p)) for p in table.strings("packages")]
    if not packages:
        raise table.error("lists no package", "packages")
    return SyncPlan(packages=packages, since=since)


def index_url_from_environment(explicit: str | None) -> str:
    """`--index-url`, else PIP_INDEX_URL (as pip reads it), else the public index."""
    return explicit or os.environ.get("PIP_INDEX_URL") or DEFAULT_INDEX


def _releases(files: list[IndexFile]) -> dict[Version, list[IndexFile]]:
    by_version: dict[Version, list[IndexFile]] = {}
    for file in files:
        by_version.setdefault(file.version, []).append(file)
    return {v: fs for v, fs in by_version.items() if any(f.is_wheel for f in fs)}


def _uploaded(files: list[IndexFile]) -> str:
    return min((f.uploaded for f in files if f.uploaded), default="")


def sync(
    plan: SyncPlan,
    metadata_dir: str,
    client: IndexClient,
    *,
    today: _dt.date | None = None,
    workers: int = 4,
    progress: Callable[[Iterable[T], int], Iterable[T]] | None = None,
) -> SyncResult:
    """Read the plan's packages from the index and rewrite their snapshots."""
    taken = (today or _dt.date.today()).isoformat()
    tracked = set(plan.packages)
    listings = {name: _releases(client.files(name)) for name in plan.packages}
    since = plan.since.isoformat()
    chosen: dict[str, set[Version]] = {
        name: {v for v, files in releases.items() if _uploaded(files)[:10] >= since}
        for name, releases in listings.items()
    }
    fetched: dict[tuple[str, Version], ReleaseMetadata] = {}
    result = SyncResult()

    def fetch(key: tuple[str, Version]) -> tuple[tuple[str, Version], ReleaseMetadata]:
        name, version = key
        return key, client.release(listings[name][version])

    pending = [(n, v) for n, vs in chosen.items() for v in vs]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        while pending:
            work = sorted(pending, key=lambda k: (k[0], k[1]))
            iterator = pool.map(fetch, work)
            if progress is not None:
                iterator = progress(iterator, len(work))
            for key, meta in iterator:
                fetched[key] = meta
            pending = _closure(fetched, listings, chosen, tracked)

    for name in plan.packages:
        releases = []
        for version in sorted(chosen[name]):
            meta = fetched[(name, version)]
            result.how[meta.how] = result.how.get(meta.how, 0) + 1
            releases.append(
                SnapshotRelease(
                    version=meta.version,
                    uploaded=(meta.uploaded or "")[:10] or None,
                    requires_python=meta.requires_python,
                    requires_dist=meta.requires_dist,
                    yanked=meta.yanked,
                    file=meta.filename,
                    wheels=meta.wheels,
                )
            )
        result.releases += len(releases)
        snapshot = Snapshot(name=name, index=client.index_url, taken=taken, releases=releases)
        path = os.path.join(metadata_dir, f"{name}.jsonl")
        (result.written if write_snapshot(snapshot, path) else result.unchanged).append(name)
    result.requests = client.requests
    return result


def _closure(
    fetched: dict[tuple[str, Version], ReleaseMetadata],
    listings: dict[str, dict[Version, list[IndexFile]]],
    chosen: dict[str, set[Version]],
    tracked: set[str],
) -> list[tuple[str, Version]]:
    """Releases outside the window that a fetched release may require.

    For each requirement on a tracked package that no chosen release meets,
    add the newest release on the index that does (markers and extras are
    not evaluated: any stack might meet them).
    """
    wanted: set[tuple[str, Version]] = set()
    for meta in fetched.values():
        for line in meta.requires_dist:
            try:
                requirement = Requirement(line)
            except InvalidRequirement:
                continue
            target = str(canonicalize_name(requirement.name))
            if target not in tracked:
                continue
            if any(requirement.specifier.contains(v, prereleases=True) for v in chosen[target]):
                continue
            candidates = [v for v in listings[target] if requirement.specifier.contains(v, prereleases=True)]
            if candidates:
                newest = max(candidates)
                chosen[target].add(newest)
                wanted.add((target, newest))
    return sorted(wanted - set(fetched))
