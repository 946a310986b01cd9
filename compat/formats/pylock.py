"""A resolved stack as a PEP 751 lock file (pylock.toml), through
`packaging.pylock`.

A lock names, for each package, the wheels an installer may take, with
their hashes. The snapshots record every wheel of a tracked release on the
index; the lock keeps those whose tags fit the stack's Python and platform.
A package with no such wheel (or no record of its wheels: an untracked one)
cannot be locked, and the command says which.
"""

from __future__ import annotations

from typing import Any

from packaging.markers import Marker
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from ..errors import CompatError
from ..knowledge._schema import one_line
from ..knowledge.database import Database
from ..knowledge.platforms import PlatformEntry
from ..stack import Stack

__all__ = ["pylock", "supported_tags"]


def _platforms(platform: PlatformEntry) -> list[str]:
    """The platform tags of the wheels a lock may name for `platform`: those the
    platform table says fit it (data/platforms.toml), for glibc 2.17 to 2.40
    and macOS up to 15."""
    tags: list[str] = []
    machine = platform.manylinux
    if machine is not None:
        tags += [f"manylinux_2_{minor}_{machine}" for minor in range(40, 16, -1)]
        tags += [f"{legacy}_{machine}" for legacy, _ in sorted(platform.legacy, key=lambda tag: tag[1], reverse=True)]
        tags.append(f"linux_{machine}")
    if platform.macos:  # packaging's tags for the machine's own architecture, those the table lists
        tags += [tag for tag in mac_platforms((15, 0), platform.macos[0]) if platform.glibc_of(tag) is not False]
    return tags + list(platform.tags)


def supported_tags(stack: Stack, db: Database) -> set[Tag]:
    """The wheel tags an installer would accept for the stack's CPython and platform."""
    version = (stack.system.python.major, stack.system.python.minor)
    platforms = _platforms(_entry(stack, db))
    tags = set(cpython_tags(python_version=version, platforms=platforms))
    tags.update(compatible_tags(python_version=version, interpreter=f"cp{version[0]}{version[1]}", platforms=platforms))
    return tags


def _entry(stack: Stack, db: Database) -> PlatformEntry:
    entry = db.platforms.get(stack.system.platform)
    if entry is None:  # a bound stack's platform is one of the table's
        raise CompatError(f"cannot write a lock: unknown platform {stack.system.platform!r}")
    return entry


def pylock(stack: Stack, pins: dict[str, str], db: Database) -> str:
    import tomli_w
    from packaging.pylock import Package, PackageWheel, Pylock, PylockValidationError

    from ..engine.builds import build_indexes

    tags = supported_tags(stack, db)
    packages = []
    applications: dict[str, str] = {}
    missing: list[str] = []
    elsewhere = build_indexes(stack, pins, db)
    for name in sorted(pins):
        version = Version(pins[name])
        if name in elsewhere:
            label, url = elsewhere[name]
            where = url or "an index the database does not name"
            missing.append(f"{name} {version} (its {label or 'other'} build comes from {where}, whose wheels and "
                           "hashes the snapshot does not record)")
            continue
        component = db.component(name)
        if component is not None and component.kind == "application":
            applications[name] = str(version)
            continue
        release = component.release(version) if component is not None else None
        if release is None or not release.wheels:
            missing.append(f"{name} {version} (no record of its wheels)")
            continue
        wheels = [w for w in release.wheels if w.get("sha256") and tags & set(parse_wheel_filename(w["file"])[3])]
        if not wheels:
            missing.append(f"{name} {version} (no wheel for Python {stack.system.python} on {stack.system.platform})")
            continue
        packages.append(
            Package(
                name=canonicalize_name(name),
                version=version,
                requires_python=release.requires_python,
                wheels=[
                    PackageWheel(name=w["file"], url=w.get("url"), size=w.get("size"), hashes={"sha256": w["sha256"]})
                    for w in wheels
                ],
            )
        )
    if missing:
        raise CompatError("cannot write a lock: " + "; ".join(missing))
    entry = _entry(stack, db)
    python = f"{stack.system.python.major}.{stack.system.python.minor}"
    marker = Marker(
        f'python_version == "{python}" and sys_platform == "{entry.marker("sys_platform")}" '
        f'and platform_machine == "{entry.marker("platform_machine")}"'
    )
    tool: dict[str, Any] = {"compat": {"stack": stack.name or stack.path or "stack"}}
    if applications:
        tool["compat"]["applications"] = applications
    lock = Pylock(
        lock_version=Version("1.0"),
        environments=[marker],
        requires_python=SpecifierSet(f"=={python}.*"),
        created_by="compat",
        packages=packages,
        tool=tool,
    )
    try:
        lock.validate()
    except PylockValidationError as exc:  # the snapshots' records are checked when read; this is packaging's word
        raise CompatError(f"cannot write a lock: {one_line(str(exc))}") from None
    return tomli_w.dumps(lock.to_dict())
