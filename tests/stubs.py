"""Stub wheels: valid wheels whose METADATA carries a database's
Requires-Python and Requires-Dist, for running pip and uv on the same
problems as compat, offline."""

from __future__ import annotations

import io
import re
import sys
import zipfile
from pathlib import Path

from packaging.utils import canonicalize_name

from compat import Database, load_stack
from compat.engine.builds import Platform, wheel_fit

PYTHON = ".".join(str(p) for p in sys.version_info[:3])

_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


def universe(db: Database) -> dict[str, dict]:
    """name -> {version: release} of every package release that has a wheel
    for this Python on Linux x86-64, as the real index offers it (yanked ones
    left out: --find-links knows nothing of yanking). A release whose wheels
    are all for other platforms is left out too: compat judges binary
    installs, and a stub wheel would let pip and uv install what the real
    index offers this machine only as an sdist to build."""
    platform = Platform(load_stack({"system": {"python": PYTHON, "platform": "linux-x86_64"}}, db).system)
    out: dict[str, dict] = {}
    for component in db.components():
        if component.kind != "package":
            continue
        releases = {
            v: r for v, r in component.releases.items()
            if not r.is_yanked and r.layer == "metadata" and wheel_fit(r, platform).installable is not False
        }
        if releases:
            out[component.name] = releases
    return out


_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_WRITTEN: dict[str, str] = {}  # a Requires-Dist line -> its parse, written back (many releases share lines)


def kept_lines(release, names: set[str]) -> list[str]:
    """The release's requirements as compat sees them (metadata, less what a
    curated entry relaxes, plus what it adds) on packages of the universe;
    requirements on other packages are pip's business, not compat's.

    `release.dependencies`, less the parse of every line it drops: a line is
    named before it is parsed (a line that names no package is parsed, and
    refused, as `dependencies` would refuse it)."""
    kept = []
    for index, text in enumerate(release.requires_dist):
        head = _NAME.match(text)
        if head is not None:
            name = str(canonicalize_name(head.group(1)))
            if name not in names or name in release.relaxed:
                continue
        written = _WRITTEN.get(text)
        if written is None:
            requirement = release.requirement(index)
            name = str(canonicalize_name(requirement.name))
            if name not in names or name in release.relaxed:
                continue
            written = _WRITTEN[text] = str(requirement)
        kept.append(written)
    kept += [str(d.requirement) for d in release.curated if str(canonicalize_name(d.requirement.name)) in names]
    return kept


def write_wheel(folder: Path, name: str, version: str, requires_python: str | None, lines: list[str]) -> Path:
    dist = f"{name.replace('-', '_')}-{version}"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        metadata.append(f"Requires-Python: {requires_python}")
    extras = sorted({e for line in lines for e in _EXTRA.findall(line)})
    metadata += [f"Provides-Extra: {e}" for e in extras]
    metadata += [f"Requires-Dist: {line}" for line in lines]
    path = folder / f"{dist}-py3-none-any.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(f"{dist}.dist-info/METADATA", "\n".join(metadata) + "\n\n")
        wheel.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: compat-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{dist}.dist-info/RECORD", "")
    path.write_bytes(buffer.getvalue())
    return path


def build_index(db: Database, folder: Path) -> dict[str, dict]:
    folder.mkdir(parents=True, exist_ok=True)
    packages = universe(db)
    names = set(packages)
    for name, releases in packages.items():
        for version, release in releases.items():
            rp = str(release.requires_python) if release.requires_python else None
            write_wheel(folder, name, str(version), rp, kept_lines(release, names))
    return packages
