"""An axes file bound to what the database knows: `load_axes`.

sources/axes.py reads the file (`RawAxes`); here each axis that is not one
of the machine's names a package the database tracks (as [packages] reads
names), and its values are releases the database knows: a list of them, or
one specifier string that takes every release it admits (pre-releases only
if it names one, never a yanked one). Then every value of every axis is
read into a stack (the base, that value, and the first value of each other
axis), so a GPU the catalog lacks or a version that is no version is
refused here, naming the axis.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .._names import did_you_mean
from ..errors import StackError
from ..sources.axes import MAX_AXIS_VALUES, MAX_CELLS, SYSTEM_AXES, Axes, Axis, RawAxes, read_axes
from ..sources.stack import MAX_VERSION
from ..stack import Stack
from .binding import load_stack, squashed_names, tracked_name

if TYPE_CHECKING:
    from .database import Database

__all__ = ["load_axes", "cell"]

_BARE_VERSION = re.compile(r"[0-9][0-9A-Za-z.+!_-]*", re.ASCII)


def load_axes(source: str | os.PathLike[str] | Mapping[str, Any], database: Database | None = None) -> Axes:
    """Read an axes file (a path, ``-`` for standard input, or a mapping of its
    tables) and bind it to the database (by default the bundled one, with the
    file's [base.compat] overlay over it)."""
    if database is None:
        from .database import Database

        database = Database.shared()
    raw = read_axes(source)
    db = database
    if raw.overlay is not None:  # its GPUs and packages may be axis values, as a stack may name them
        from .layers import with_overlay

        db = with_overlay(db, raw.overlay)
    binder = _Binder(raw, db)
    axes: list[Axis] = []
    seen: dict[tuple[str, str], str] = {}
    for written in raw.axes:
        axis = binder.axis(written.name, written.value, written.line)
        if (axis.table, axis.key) in seen:
            raise raw.error(f"names the same axis as {seen[(axis.table, axis.key)]!r}", written.name)
        seen[(axis.table, axis.key)] = written.name
        axes.append(axis)
    names = {written.name for written in raw.axes}
    if "gpu" in names and "compute_capability" in names:
        raise raw.error("gpu and compute_capability are both axes: a GPU has one compute capability, "
                        "give one of them", "compute_capability")
    cells = math.prod(len(a.values) for a in axes)
    if cells > MAX_CELLS:
        raise raw.error(f"the axes make {cells:,} combinations: a matrix is limited to {MAX_CELLS:,}", "axes", ())
    loaded = Axes(axes=tuple(axes), base=raw.base, path=raw.path, text=raw.text, overlay=raw.overlay,
                  _base_package_keys=raw.base_package_keys)
    loaded.accelerators = _probe(loaded, db)
    return loaded


def cell(axes: Axes, choice: Sequence[int], db: Database) -> Stack:
    """The `Stack` of cell `choice`; a value the stack reader refuses is a
    `StackError` naming the axes file and the axis (or the base key)."""
    try:
        return load_stack(axes.tables(choice), db)
    except StackError as error:
        raise axes.rekey(error) from None


def _probe(axes: Axes, db: Database) -> frozenset[str]:
    """Read each value of each axis into a stack (with the first value of the
    others): a value no stack accepts is an error now, not a thousand
    excluded cells later. Returns the accelerators the probed stacks run on."""
    accelerators = set()
    first = [0] * len(axes.axes)
    for position, axis in enumerate(axes.axes):
        made: dict[Any, str] = {}  # what a value makes of the stack -> the value that made it first
        for index, value in enumerate(axis.values):
            choice = list(first)
            choice[position] = index
            stack = cell(axes, choice, db)
            accelerators.add(stack.hardware.accelerator)
            same = made.setdefault(_made(axis, stack), value)
            if same != value:  # "3.12" and "3.12.0", "H100" and "NVIDIA H100": one column twice
                raise StackError(f"lists {same!r} and {value!r}, which are the same {axis.label}",
                                 file=axes.shown_file, key=f"[axes] {axis.name}", line=axis.line)
    return frozenset(accelerators)


def _made(axis: Axis, stack: Stack) -> Any:
    """What `axis`'s value makes of `stack`: two values that make the same
    are one value written twice."""
    if axis.is_package:
        spec = stack.packages[axis.key]
        return str(spec.specifier), spec.build
    if axis.table == "hardware":
        gpu = stack.hardware.gpu
        return gpu.name if axis.key == "gpu" and gpu is not None else getattr(stack.hardware, axis.key, None)
    return getattr(stack.system, axis.key, None)  # a Version compares as a version: 3.12 is 3.12.0


class _Binder:
    """Binds each axis of `raw` to the machine's field or to a package and its releases."""

    def __init__(self, raw: RawAxes, db: Database) -> None:
        self.raw = raw
        self.db = db  # with [base.compat] overlay over it

    def axis(self, name: str, value: tuple[str, ...] | str, line: int | None) -> Axis:
        if name in SYSTEM_AXES:
            table, key = SYSTEM_AXES[name]
            assert not isinstance(value, str)  # the reader refuses a specifier string for the machine
            return Axis(name, table, key, value, line)
        package = self.package(name)
        if isinstance(value, str):
            values = self.expand(name, package, value)
        else:
            values = value
            for written in values:
                self.release(name, package, written)
        return Axis(name, "packages", package, values, line)

    def package(self, name: str) -> str:
        """The tracked package an axis name means (as [packages] reads names)."""
        known = self.db.names()
        package = tracked_name(name, known, squashed_names(known))
        component = self.db.component(package) if package in known else None
        if component is None or not component.releases:
            guess = did_you_mean(package, [*SYSTEM_AXES, *known], cutoff=0.75)
            raise self.raw.error(f"unknown axis: not one of {', '.join(SYSTEM_AXES)}, nor a package whose releases "
                                 f"the database knows{guess}", name)
        return package

    def release(self, name: str, package: str, written: str) -> Version:
        """A package axis value: one release the database knows."""
        text = written.strip()
        try:
            if not text.isascii() or not _BARE_VERSION.fullmatch(text):
                raise InvalidVersion(text)
            version = Version(text)
        except InvalidVersion:
            raise self.raw.error(f"{written!r} is not a version such as \"0.32.0\" (an axis value is one release; "
                                 f"a specifier string, {name} = \">=0.32\", takes every release it admits)",
                                 name) from None
        component = self.db.component(package)
        assert component is not None
        if Version(version.public) not in component.releases:
            newest = component.newest_first()[0]
            raise self.raw.error(f"the database knows no release {written} of {package} (the newest it knows is "
                                 f"{newest})", name)
        return version

    def expand(self, name: str, package: str, written: str) -> tuple[str, ...]:
        """The releases a specifier string admits: pre-releases only if it names one, never a yanked one."""
        try:
            if len(written) > MAX_VERSION or not written.isascii():
                raise InvalidSpecifier(written)
            specifier = SpecifierSet(written.strip())
        except (InvalidSpecifier, ValueError):
            raise self.raw.error(f"{written!r} is not a PEP 440 specifier set such as \">=5.16,<5.21\"",
                                 name) from None
        component = self.db.component(package)
        assert component is not None
        pre = bool(specifier.prereleases)
        found = [
            v for v in sorted(component.releases)
            if specifier.contains(v, prereleases=True) and (pre or not v.is_prerelease)
            and not component.releases[v].is_yanked
        ]
        if not found:
            raise self.raw.error(f"{written!r} admits no release of {package} the database knows (the newest is "
                                 f"{component.newest_first()[0]})", name)
        if len(found) > MAX_AXIS_VALUES:
            raise self.raw.error(f"{written!r} admits {len(found):,} releases: an axis is limited to "
                                 f"{MAX_AXIS_VALUES:,}", name)
        return tuple(str(v) for v in found)
