"""The platform table: what a name in ``[system] platform`` means.

Data lives in ``data/platforms.toml``, one ``[[platform]]`` table per
platform, each part with its source: its PEP 508 marker values, the wheel
platform tags that install there, and what ``platform.machine()`` says on
such a machine. This module reads it and looks it up::

    [[platform]]
    name = "linux-aarch64"

    [platform.markers]
    sys_platform = "linux"
    platform_system = "Linux"
    platform_machine = "aarch64"
    os_name = "posix"
    source = "pypa-environment-markers"

    [platform.wheels]
    manylinux = "aarch64"                    # manylinux_X_Y_aarch64, linux_aarch64
    legacy = { manylinux2014 = "2.17" }      # manylinux2014_aarch64 is glibc 2.17
    source = "pypa-platform-compatibility-tags"

    [platform.hosts]
    machines = ["aarch64", "arm64"]
    source = "python-platform-machine"

A database folder without the file is read with the bundled one. The table
is read once per database, when a stack is bound (knowledge/binding.py
checks its platform name against it) or a build names its platforms.

`System.marker_environment` of the bottom floor, which reads no file, asks
this module for a platform's marker values (`set_platform_markers`): those
of the table a stack was last bound with (`use_platforms`), else of the
bundled one; the engine's wheel tests (engine/builds.py) ask the same.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator

from .. import _toml
from ..errors import DatabaseError
from ..stack import set_platform_markers
from ._schema import Table
from .paths import default_data_dir

__all__ = ["PLATFORMS_FILE", "MARKERS", "PlatformEntry", "PlatformTable", "load_platforms", "bundled_platforms",
           "use_platforms", "platform_named"]

PLATFORMS_FILE = "platforms.toml"
SCHEMA = 1
# The PEP 508 markers a platform fixes (the others are the interpreter's: python_version, ...)
MARKERS = ("sys_platform", "platform_system", "platform_machine", "os_name")
# A marker value, a machine, an architecture, a tag: what a platform's facts are made of (no quote, no space)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
_LEGACY = re.compile(r"manylinux[0-9]{1,4}\Z")
_GLIBC = re.compile(r"([0-9]{1,3})\.([0-9]{1,3})\Z")


class PlatformEntry:
    """One platform of the table. Compared and hashed by identity: an entry
    is a key of the engine's caches of which wheels fit, and two tables'
    entries of one name may differ."""

    __slots__ = ("name", "markers", "manylinux", "legacy", "macos", "tags", "machines", "sources")

    def __init__(self, name: str, markers: tuple[tuple[str, str], ...], *, manylinux: str | None = None,
                 legacy: tuple[tuple[str, tuple[int, int]], ...] = (), macos: tuple[str, ...] = (),
                 tags: tuple[str, ...] = (), machines: tuple[str, ...] = (),
                 sources: tuple[tuple[str, str], ...] = ()) -> None:
        self.name = name
        self.markers = markers  # (marker, value) in the order of MARKERS
        self.manylinux = manylinux  # the machine of manylinux_X_Y_<machine> and linux_<machine> tags
        self.legacy = legacy  # (manylinux1, (2, 5)): an older manylinux tag of that machine and its glibc
        self.macos = macos  # the architectures of macosx_X_Y_<arch> tags, the machine's own first
        self.tags = tags  # platform tags that fit as written (win_amd64)
        self.machines = machines  # what platform.machine() says on such a machine
        self.sources = sources  # (key, source ID) of each part: lint checks them

    def __repr__(self) -> str:
        return f"PlatformEntry({self.name!r})"

    def marker(self, key: str) -> str:
        """The value of marker `key` (one of MARKERS) there."""
        return dict(self.markers)[key]

    @property
    def glibc(self) -> bool:
        """Whether its wheels name the glibc they need (manylinux): a stack gives [system] glibc for it."""
        return self.manylinux is not None

    @property
    def hosts(self) -> tuple[tuple[str, str], ...]:
        """(sys.platform, platform.machine()) of each kind of machine that is this platform."""
        sys_platform = self.marker("sys_platform")
        return tuple((sys_platform, machine) for machine in self.machines)

    def glibc_of(self, platform_tag: str) -> tuple[int, int] | None | bool:
        """The glibc a wheel with `platform_tag` needs here: False if the tag
        does not fit the platform, None if it fits with no floor
        (``linux_x86_64``, ``any``, ``win_amd64``).

        >>> linux = PlatformEntry("l", (), manylinux="x86_64", legacy=(("manylinux2014", (2, 17)),))
        >>> linux.glibc_of("manylinux_2_28_x86_64"), linux.glibc_of("manylinux2014_x86_64"), linux.glibc_of("linux_x86_64")
        ((2, 28), (2, 17), None)
        >>> linux.glibc_of("manylinux_2_28_aarch64"), linux.glibc_of("manylinux1_x86_64"), linux.glibc_of("any")
        (False, False, None)
        >>> mac = PlatformEntry("m", (), macos=("x86_64", "universal2"))
        >>> mac.glibc_of("macosx_10_9_x86_64"), mac.glibc_of("macosx_11_0_universal2"), mac.glibc_of("macosx_11_0_arm64")
        (None, None, False)
        """
        if platform_tag == "any":
            return None
        machine = self.manylinux
        if machine is not None:
            parts = platform_tag.split("_", 3)  # manylinux_2_28_x86_64
            if (len(parts) == 4 and parts[0] == "manylinux" and parts[3] == machine
                    and all(p.isascii() and p.isdigit() and len(p) <= 6 for p in parts[1:3])):
                return int(parts[1]), int(parts[2])
            if platform_tag == f"linux_{machine}":
                return None
            for legacy, floor in self.legacy:
                if platform_tag == f"{legacy}_{machine}":
                    return floor
        # macosx_10_9_x86_64, macosx_11_0_arm64, macosx_10_9_universal2 (the architecture may hold a _)
        if self.macos and platform_tag.startswith("macosx_") and any(
                platform_tag.endswith(f"_{arch}") for arch in self.macos):
            return None
        return None if platform_tag in self.tags else False


class PlatformTable:
    """The platforms of one ``platforms.toml``, by name and by host."""

    def __init__(self, platforms: list[PlatformEntry], file: str) -> None:
        self.file = file
        self._by_name = {entry.name: entry for entry in platforms}
        self._by_host = {host: entry for entry in platforms for host in entry.hosts}

    def __repr__(self) -> str:
        return f"PlatformTable({self.file!r}, {list(self._by_name)!r})"

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[PlatformEntry]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def names(self) -> tuple[str, ...]:
        """Every platform's name, in the file's order."""
        return tuple(self._by_name)

    def get(self, name: str) -> PlatformEntry | None:
        return self._by_name.get(name)

    def for_host(self, sys_platform: str, machine: str) -> PlatformEntry | None:
        """The platform of a machine whose interpreter says `sys_platform` and `machine`, if the table has it."""
        return self._by_host.get((sys_platform, machine))


def load_platforms(path: str) -> PlatformTable:
    """Read ``platforms.toml`` at `path`; a value that is not what the file
    describes is a DatabaseError naming the file and its key."""
    data, text = _toml.load(path, error=DatabaseError)
    root = Table(data, path, "", text=text)
    root.only(["schema", "platform"])
    if data.get("schema", SCHEMA) != SCHEMA:
        raise root.error(f"unsupported schema {data.get('schema')!r} (expected {SCHEMA})", "schema")
    entries: list[PlatformEntry] = []
    hosts: dict[tuple[str, str], str] = {}
    for table in root.tables("platform"):
        entry = _platform(table, {e.name for e in entries})
        for host in entry.hosts:
            if host in hosts:
                raise table.error(f"the machine {host[1]!r} of {host[0]} is {hosts[host]!r} already", "hosts.machines")
            hosts[host] = entry.name
        entries.append(entry)
    if not entries:
        raise root.error("lists no platform (a [[platform]] table each)", "platform")
    return PlatformTable(entries, path)


def _word(table: Table, key: str, value: object) -> str:
    if not isinstance(value, str) or not _WORD.match(value):
        raise table.error(f"expected a word of letters, digits, '.', '-' and '_', got {value!r:.80}", key)
    return value


def _words(table: Table, key: str) -> tuple[str, ...]:
    return tuple(_word(table, f"{key}[{index}]", value) for index, value in enumerate(table.strings(key)))


def _part(table: Table, name: str, keys: list[str], required: bool = True) -> Table | None:
    part = table.table(name)
    if part is None:
        if required:
            raise table.error(f"missing (a [platform.{name}] table)", name)
        return None
    part.only([*keys, "source", "also"])
    return part


def _sources(part: Table) -> list[tuple[str, str]]:
    """(key, source ID) of a part: its source, and its further ones."""
    source = part.text("source", required=True)
    assert source is not None
    name = part.key.rsplit(".", 1)[-1]
    return [(f"{name}.source", source),
            *((f"{name}.also[{index}]", also) for index, also in enumerate(part.strings("also")))]


def _platform(table: Table, seen: set[str]) -> PlatformEntry:
    table.only(["name", "markers", "wheels", "hosts"])
    name = table.identifier(seen, "platform", key="name")
    markers = _part(table, "markers", list(MARKERS))
    assert markers is not None
    values = tuple((key, _word(markers, key, markers.text(key, required=True))) for key in MARKERS)
    wheels = _part(table, "wheels", ["manylinux", "legacy", "macos", "tags"])
    assert wheels is not None
    manylinux = wheels.data.get("manylinux")
    if manylinux is not None:
        _word(wheels, "manylinux", manylinux)
    legacy: list[tuple[str, tuple[int, int]]] = []
    written = wheels.table("legacy")
    if written is not None:
        if manylinux is None:
            raise wheels.error("legacy manylinux tags are of a manylinux machine: give manylinux too", "legacy")
        for tag, glibc in written.data.items():
            if not _LEGACY.match(tag):
                raise written.error(f"expected a legacy manylinux tag such as manylinux2014, got {tag!r:.80}", tag)
            match = _GLIBC.match(glibc) if isinstance(glibc, str) else None
            if match is None:
                raise written.error(f"expected the glibc it stands for, such as \"2.17\", got {glibc!r:.80}", tag)
            legacy.append((tag, (int(match.group(1)), int(match.group(2)))))
    macos, tags = _words(wheels, "macos"), _words(wheels, "tags")
    if manylinux is None and not macos and not tags:
        raise wheels.error("names no wheel that fits: give manylinux, macos or tags")
    hosts = _part(table, "hosts", ["machines"], required=False)
    machines = _words(hosts, "machines") if hosts is not None else ()
    if hosts is not None and not machines:
        raise hosts.error("expected the machines platform.machine() names, such as [\"x86_64\"]", "machines")
    sources = [*_sources(markers), *_sources(wheels), *(_sources(hosts) if hosts is not None else ())]
    return PlatformEntry(name, values, manylinux=manylinux, legacy=tuple(legacy), macos=macos, tags=tags,
                         machines=machines, sources=tuple(sources))


@functools.lru_cache(maxsize=1)
def bundled_platforms() -> PlatformTable:
    """The bundled ``platforms.toml``, read once."""
    return load_platforms(os.path.join(default_data_dir(), PLATFORMS_FILE))


_in_use: PlatformTable | None = None


def use_platforms(table: PlatformTable | None) -> None:
    """Make `table` (None: the bundled one) the one a platform name means
    outside a database's own reading: in `System.marker_environment` and the
    engine's wheel tests (knowledge/binding.py calls it with the table of the
    database a stack is bound with; a process that binds stacks to databases
    whose tables differ reads the last one)."""
    global _in_use
    _in_use = table


def platform_named(name: str) -> PlatformEntry | None:
    """`name`'s entry in the table in use (`use_platforms`), else in the bundled one."""
    return (_in_use if _in_use is not None else bundled_platforms()).get(name)


def _markers(name: str) -> tuple[tuple[str, str], ...] | None:
    entry = platform_named(name)
    return None if entry is None else entry.markers


set_platform_markers(_markers)
