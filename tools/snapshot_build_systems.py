"""Record, in the snapshots of data/metadata/, how the sdist of each release
a check can reach as a build from source is built (`build_system`: the
backend and requires of its pyproject.toml, and which of those requires no
release on the index meets), as `compat db sync` now records it.

A check needs it to tell a build that needs compilers from an sdist that
only downloads a wheel from another index (wheel-stub), and both from one
pip cannot build at all. Only the releases that have an sdist and lack a
wheel for Linux on x86-64 or aarch64 (`snapshot.lacks_linux_wheel`) are
read, which keeps the download small: one listing request a project that
has such a release, then each sdist streamed until its pyproject.toml (a
.zip whole), at most 64 MiB of it ("unknown" past that), then one listing
request for each build requirement no snapshot holds. Only the
`build_system` key of those release lines changes (the snapshot is
rewritten through the same writer a sync uses, so its offsets stay true).

    python tools/snapshot_build_systems.py [--db data] [--workers 8] [--refresh] [NAME ...]

A release already recorded is left as it is unless --refresh. Prints one
line per project changed, then how many sdists and bytes were read and the
time; exit 1 when a listing or an sdist could not be read (the other
projects are still written).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import functools
import os
import sys
import time
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tools")]

from compat.errors import CompatError  # noqa: E402
from compat.knowledge.index import (IndexClient, NotFound, _installable, _preferred_sdist,  # noqa: E402
                                    unmet_build_requirements)
from compat.knowledge.snapshot import lacks_linux_wheel, read_header, read_snapshot, write_snapshot  # noqa: E402
from snapshot_sdists import index_client, snapshots  # noqa: E402


class Versions:
    """The versions the index lists of a project: its snapshot's header when
    the database holds one that lists them, else its listing (read once);
    None when the index has no such project."""

    def __init__(self, folder: Path, client: IndexClient) -> None:
        self.folder = folder
        self.client = client

    @functools.lru_cache(maxsize=None)  # noqa: B019 - one instance a run
    def __call__(self, name: str) -> list[Version] | None:
        path = self.folder / f"{name}.jsonl"
        listed = read_header(str(path)).get("versions") if path.exists() else None
        if listed is not None:
            return [Version(v) for v in listed]
        try:
            return [f.version for f in self.client.files(name)]
        except NotFound:
            return None


def backfill(path: Path, client: IndexClient, versions: Versions, refresh: bool) -> tuple[str, int, int, int]:
    """(project, release lines changed, sdists read, bytes read)."""
    snapshot = read_snapshot(str(path))
    wanted = [r for r in snapshot.releases if isinstance(r.sdist, str) and r.tags is not None
              and lacks_linux_wheel(r.tags) and (refresh or r.build_system is None)]
    if not wanted:
        return snapshot.name, 0, 0, 0
    by_version: dict[Version, list] = {}
    for file in client.files(snapshot.name):
        by_version.setdefault(file.version, []).append(file)
    found = {}
    read = size = 0
    for release in wanted:
        sdists = [f for f in _installable(by_version.get(Version(release.version), [])) if not f.is_wheel]
        if not sdists:
            continue  # the index no longer lists it: left as it was
        sdist = next((f for f in sdists if f.filename == release.sdist), _preferred_sdist(sdists))
        build_system, downloaded = client.build_system(sdist)
        read, size = read + 1, size + downloaded
        if isinstance(build_system, dict):
            unmet = unmet_build_requirements(build_system, versions)
            build_system = {**build_system, "unmet": unmet} if unmet else build_system
        found[release.version] = build_system
    releases = [r._replace(build_system=found.get(r.version, r.build_system)) for r in snapshot.releases]
    changed = sum(a.build_system != b.build_system for a, b in zip(snapshot.releases, releases))
    if changed:
        write_snapshot(snapshot._replace(releases=releases), str(path))
    return snapshot.name, changed, read, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=str(ROOT / "data"))
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--refresh", action="store_true", help="read again the releases already recorded")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    folder = Path(args.db)
    client = index_client(folder, package_deadline=600)
    versions = Versions(folder / "metadata", client)
    paths = snapshots(folder / "metadata", args.names)
    started = time.monotonic()
    failed = total = read = size = 0
    with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        futures = {pool.submit(backfill, path, client, versions, args.refresh): path for path in paths}
        for future in concurrent.futures.as_completed(futures):
            path = futures[future]
            try:
                name, changed, sdists, downloaded = future.result()
            except (CompatError, OSError, ValueError) as exc:
                failed += 1
                print(f"{path.stem}: {exc}", file=sys.stderr)
                continue
            total, read, size = total + changed, read + sdists, size + downloaded
            if changed:
                print(f"{name}: {changed} release(s)")
    print(f"{len(paths)} snapshot(s), {total} release line(s) changed, {read} sdist(s) read "
          f"({size:,} bytes, {size / 1024 / 1024:.1f} MiB) in {time.monotonic() - started:.0f} s, {failed} failed",
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
