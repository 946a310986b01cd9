"""Record, in each snapshot of data/metadata/, whether each release has an
sdist (its file name) or none (false), read from the package index's own
listing of the project (PEP 691), as `compat db sync` now records it.

A check needs it to tell a release that pip builds from source, when no
wheel fits the machine, from one that nothing installs. This backfills the
snapshots a sync wrote before the key existed, without refetching any
metadata: one listing request per project, and only the `sdist` key of each
release line changes (the snapshot is rewritten through the same writer a
sync uses, so its offsets stay true).

    python tools/snapshot_sdists.py [--db data] [--workers 8] [NAME ...]

A release the index no longer lists is left as it was (no key). Prints one
line per project changed, then a count; exit 1 when a listing could not be
read (the others are still written).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
from pathlib import Path

from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compat._toml import tomllib  # noqa: E402
from compat.errors import CompatError  # noqa: E402
from compat.knowledge.index import IndexClient, _installable, sdist_of  # noqa: E402
from compat.knowledge.snapshot import read_snapshot, write_snapshot  # noqa: E402


def snapshots(folder: Path, names: list[str]) -> list[Path]:
    found = sorted(p for p in folder.glob("*.jsonl") if not p.name.endswith(".wheels.jsonl"))
    return [p for p in found if not names or p.stem in names]


def index_client(folder: Path, package_deadline: float = 300) -> IndexClient:
    """A client of the index the database's sync.toml names (PyPI's by default), with its allowed hosts."""
    with open(folder / "sync.toml", "rb") as handle:
        settings = tomllib.load(handle)
    index = settings.get("index", "https://pypi.org/simple/")
    return IndexClient(index, allow_hosts=settings.get("allow_hosts", []), deadline=3600,
                       package_deadline=package_deadline)


def backfill(path: Path, client: IndexClient) -> tuple[str, int]:
    snapshot = read_snapshot(str(path))
    files = client.files(snapshot.name)
    by_version: dict[Version, list] = {}
    for file in files:
        by_version.setdefault(file.version, []).append(file)
    changed = 0
    releases = []
    for release in snapshot.releases:
        listed = by_version.get(Version(release.version))
        if listed is None:
            releases.append(release)
            continue
        sdist = sdist_of(_installable(listed))
        if sdist != release.sdist:
            changed += 1
        releases.append(release._replace(sdist=sdist))
    if changed:
        write_snapshot(snapshot._replace(releases=releases), str(path))
    return snapshot.name, changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default=str(ROOT / "data"))
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args(argv)
    folder = Path(args.db)
    client = index_client(folder)
    paths = snapshots(folder / "metadata", args.names)
    failed = 0
    total = 0
    with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
        futures = {pool.submit(backfill, path, client): path for path in paths}
        for future in concurrent.futures.as_completed(futures):
            path = futures[future]
            try:
                name, changed = future.result()
            except (CompatError, OSError, ValueError) as exc:
                failed += 1
                print(f"{path.stem}: {exc}", file=sys.stderr)
                continue
            total += changed
            if changed:
                print(f"{name}: {changed} release(s)")
    print(f"{len(paths)} snapshot(s), {total} release line(s) changed, {failed} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
