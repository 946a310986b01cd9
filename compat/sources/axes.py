"""The axes file (axes.toml, version 1): the combinations a CI matrix is made of.

An axes file is a `[base]` stack and `[axes]`, each axis a list of values
or (for a package) one PEP 440 specifier string. Every cell of the axes'
product is the base with one value of each axis written over it.

`load_axes` reads a file or a mapping and returns `Axes`; every problem is a
`StackError` naming the file and the key (``[axes] gpu``, ``[base.system]
cuda``), with the line where the text tells it. Each value is validated by
reading it into a stack, so an axis accepts exactly what a stack file does.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .. import _toml
from .._names import did_you_mean, is_name, normalize
from ..errors import StackError
from ..stack import Stack
from .stack import MAX_KEY, MAX_VERSION, _kind, _overlay, _Reader, load_stack

if TYPE_CHECKING:
    from ..knowledge.database import Database

__all__ = ["Axis", "Axes", "load_axes", "SYSTEM_AXES", "MAX_AXES", "MAX_AXIS_VALUES", "MAX_CELLS"]

# The axes that are a field of the machine, and where a stack keeps each one.
SYSTEM_AXES: dict[str, tuple[str, str]] = {
    "python": ("system", "python"),
    "platform": ("system", "platform"),
    "cuda": ("system", "cuda"),
    "driver": ("system", "driver"),
    "gpu": ("hardware", "gpu"),
    "compute_capability": ("hardware", "compute_capability"),
}
# What a finding's `components` call each of them (compat.engine.facts.VIRTUAL_LABELS).
_LABELS = {"python": "python", "platform": "platform", "cuda": "cuda", "driver": "driver", "gpu": "gpu",
           "compute_capability": "gpu"}

# Bounds (docs/reliability.md): input past one is refused before any work starts.
MAX_AXES = 32
MAX_AXIS_VALUES = 1000
MAX_CELLS = 1_000_000

_TOP = ("base", "axes")
_SHOWN_KEY = re.compile(r"\[([^\]]*)\] (.+)\Z")
_BARE_VERSION = re.compile(r"[0-9][0-9A-Za-z.+!_-]*", re.ASCII)


@dataclass(frozen=True)
class Axis:
    """One axis: its name as the file writes it, the stack field it sets, and its values."""

    name: str
    table: str  # "system", "hardware" or "packages"
    key: str  # the field, or the package's normalized name
    values: tuple[str, ...]  # as written, or the releases a specifier admits, oldest first
    line: int | None = None

    @property
    def is_package(self) -> bool:
        return self.table == "packages"

    @property
    def label(self) -> str:
        """What a finding's components call this axis: ``python``, ``gpu``, a package name."""
        return self.key if self.is_package else _LABELS[self.name]


@dataclass
class Axes:
    """The axes of a matrix and the base every cell starts from."""

    axes: tuple[Axis, ...]
    base: dict[str, Any]
    path: str | None = None
    text: str | None = field(default=None, repr=False)
    # the accelerators the cells run on (cuda, rocm, ...): more than one means the GPU axis changes them
    accelerators: frozenset[str] = frozenset()
    # [base.compat] overlay, resolved: the folder of the user's own facts every cell reads (knowledge/layers.py)
    overlay: str | None = None
    _base_package_keys: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(axis.name for axis in self.axes)

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(len(axis.values) for axis in self.axes)

    @property
    def cells(self) -> int:
        """How many cells the product has."""
        return math.prod(self.sizes)

    @property
    def shown_file(self) -> str:
        return self.path or "<axes>"

    def values(self, choice: Sequence[int]) -> dict[str, str]:
        """The cell `choice` (one value index per axis) as axis name -> value as written."""
        return {axis.name: axis.values[i] for axis, i in zip(self.axes, choice)}

    def tables(self, choice: Sequence[int]) -> dict[str, Any]:
        """The stack of cell `choice`, as the tables of a stack file."""
        data = {name: dict(table) if isinstance(table, Mapping) else table for name, table in self.base.items()}
        for axis, index in zip(self.axes, choice):
            value = axis.values[index]
            target = data.setdefault(axis.table, {})
            if axis.is_package:
                written = self._base_package_keys.get(axis.key)
                entry = target.pop(written, None) if written is not None else None
                target[axis.key] = {**entry, "version": value} if isinstance(entry, Mapping) else value
            else:
                target[axis.key] = value
        return data

    def load(self, choice: Sequence[int], db: Database) -> Stack:
        """The `Stack` of cell `choice`; a value the stack reader refuses is a
        `StackError` naming the axes file and the axis (or the base key)."""
        try:
            return load_stack(self.tables(choice), db)
        except StackError as error:
            raise self._rekey(error) from None

    def _rekey(self, error: StackError) -> StackError:
        """A stack reader's error, as an error of the axes file: the axis whose
        value it is about, or else the key of [base]."""
        table, key = _split_shown(error.key)
        for axis in self.axes:
            if (axis.table,) == table and key in (axis.key, axis.name):
                return StackError(error.message, file=self.shown_file, key=f"[axes] {axis.name}", line=axis.line)
        shown = f"[base.{'.'.join(table)}] {key}" if table and key else (f"[base.{key}]" if key else "[base]")
        line = _toml.locate(self.text, ("base", *table), key) if self.text is not None else None
        return StackError(error.message, file=self.shown_file, key=shown, line=line)


def _split_shown(shown: str | None) -> tuple[tuple[str, ...], str | None]:
    """``"[system] python"`` -> (("system",), "python"); ``"[system]"`` -> ((), "system")."""
    if not shown:
        return (), None
    match = _SHOWN_KEY.match(shown)
    if match:
        return tuple(match.group(1).split(".")), match.group(2)
    if shown.startswith("[") and shown.endswith("]"):
        return (), shown[1:-1]
    return (), shown


def load_axes(source: str | os.PathLike[str] | Mapping[str, Any], database: Database | None = None) -> Axes:
    """Read an axes file (a path, ``-`` for standard input, or a mapping of its tables).

    Every value of every axis is read into a stack (the base, that value, and
    the first value of each other axis), so a GPU the catalog lacks or a
    version that is no version is refused here, naming the axis.
    """
    if database is None:
        from ..knowledge.database import Database

        database = Database.shared()
    if isinstance(source, Mapping):
        data: Mapping[str, Any] = source
        text, given, path = None, None, None
    elif isinstance(source, (str, os.PathLike)):
        given = os.fspath(source)
        if not isinstance(given, str):
            raise TypeError(f"an axes path must be a str, not {type(given).__name__}")
        data, text = _toml.load(given, error=StackError)
        path = "<stdin>" if given in ("-", "/dev/stdin") else given
    else:
        raise TypeError(f"axes are a path (str or os.PathLike) or a mapping, not {type(source).__name__}")
    reader = _AxesReader(path or "<axes>", text, database, given)
    axes = reader.read(data)
    loaded = Axes(axes=axes, base=reader.base, path=path, text=text, overlay=reader.overlay,
                  _base_package_keys=reader.base_package_keys)
    loaded.accelerators = _probe(loaded, reader.db)
    return loaded


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
            stack = axes.load(choice, db)
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


class _AxesReader:
    """Reads the parsed TOML of an axes file, raising StackError with file, key and line."""

    def __init__(self, file: str, text: str | None, db: Database, path: str | None = None) -> None:
        self.file = file
        self.text = text
        self.db = db  # with [base.compat] overlay over it once read
        self.path = path  # the file as given: [base.compat] overlay is relative to its folder
        self.overlay: str | None = None
        self.base: dict[str, Any] = {}
        self.base_package_keys: dict[str, str] = {}

    def error(self, message: str, key: str, table: tuple[str, ...] = ("axes",)) -> StackError:
        line = None
        if self.text is not None:  # a top-level name: its table's header, else the key
            line = (not table and _toml.locate(self.text, (key,))) or _toml.locate(self.text, table, key)
        shown = f"[{'.'.join(table)}] {key}" if table else key
        return StackError(message, file=self.file, key=shown, line=line)

    def read(self, data: Mapping[str, Any]) -> tuple[Axis, ...]:
        for name in data:
            if name not in _TOP:
                raise self.error(f"unknown table{did_you_mean(str(name), _TOP)} (an axes file has [base] and [axes])",
                                 str(name), ())
        base = data.get("base", {})
        if not isinstance(base, Mapping):
            raise self.error("expected a table: the stack every cell starts from", "base", ())
        for name in ("system", "hardware", "packages"):
            if name in base and not isinstance(base[name], Mapping):
                raise self.error("expected a table", name, ("base",))
        self.base = dict(base)
        self.overlay = self.read_overlay()
        if self.overlay is not None:  # its GPUs and packages may be axis values, as a stack may name them
            from ..knowledge.layers import with_overlay

            self.db = with_overlay(self.db, self.overlay)
            self.base["compat"] = {**self.base["compat"], "overlay": self.overlay}  # each cell: the same folder
        self.base_package_keys = {normalize(k): k for k in base.get("packages", {}) if isinstance(k, str)}
        table = data.get("axes")
        if table is None:
            raise self.error("missing the [axes] table: each axis a list of values, such as python = [\"3.11\", "
                             "\"3.12\"]", "axes", ())
        if not isinstance(table, Mapping) or not table:
            raise self.error("expected a table of at least one axis, such as python = [\"3.11\", \"3.12\"]", "axes", ())
        if len(table) > MAX_AXES:
            raise self.error(f"{len(table)} axes: a matrix is limited to {MAX_AXES}", "axes", ())
        axes: list[Axis] = []
        seen: dict[tuple[str, str], str] = {}
        for name, value in table.items():
            axis = self.axis(name, value)
            if (axis.table, axis.key) in seen:
                raise self.error(f"names the same axis as {seen[(axis.table, axis.key)]!r}", name)
            seen[(axis.table, axis.key)] = name
            axes.append(axis)
        if "gpu" in table and "compute_capability" in table:
            raise self.error("gpu and compute_capability are both axes: a GPU has one compute capability, "
                             "give one of them", "compute_capability")
        cells = math.prod(len(a.values) for a in axes)
        if cells > MAX_CELLS:
            raise self.error(f"the axes make {cells:,} combinations: a matrix is limited to {MAX_CELLS:,}", "axes", ())
        return tuple(axes)

    def read_overlay(self) -> str | None:
        """[base.compat] overlay, as a stack file's [compat] overlay is read:
        relative to the axes file (to the working directory for axes without one)."""
        table = self.base.get("compat")
        if not isinstance(table, Mapping):
            return None  # not a table: the stack reader says so, naming [base.compat]
        try:
            return _overlay(table, _Reader(self.file, None), self.path)
        except StackError as error:
            raise self.error(error.message, "overlay", ("base", "compat")) from None

    def axis(self, name: Any, value: Any) -> Axis:
        if not isinstance(name, str) or len(name) > MAX_KEY or not is_name(name):
            raise self.error("not an axis name: python, platform, cuda, driver, gpu, compute_capability or a "
                             "package name", str(name)[:80])
        line = _toml.locate(self.text, ("axes",), name) if self.text is not None else None
        if name in SYSTEM_AXES:
            table, key = SYSTEM_AXES[name]
            if isinstance(value, str):
                raise self.error("a specifier string expands only a package axis: give a list of values, "
                                 f"such as {name} = [\"{value}\"]", name)
            return Axis(name, table, key, self.strings(name, value), line)
        package = self.package(name)
        if isinstance(value, str):
            values = self.expand(name, package, value)
        else:
            values = self.strings(name, value)
            for written in values:
                self.release(name, package, written)
        return Axis(name, "packages", package, values, line)

    def strings(self, name: str, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list) or not value:
            raise self.error("expected a non-empty list of values (strings), or for a package one specifier "
                             "string such as \">=5.16\"", name)
        if len(value) > MAX_AXIS_VALUES:
            raise self.error(f"{len(value):,} values: an axis is limited to {MAX_AXIS_VALUES:,}", name)
        for item in value:
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                raise self.error(f"a value must be a string: TOML reads {item!r} as a number; quote it: "
                                 f"\"{item}\"", name)
            if not isinstance(item, str) or not item.strip() or len(item) > MAX_VERSION or not item.isprintable():
                raise self.error(f"expected a string of at most {MAX_VERSION} characters, got {_kind(item)}", name)
        duplicates = sorted({v for v in value if value.count(v) > 1})
        if duplicates:
            raise self.error(f"lists {duplicates[0]!r} twice", name)
        return tuple(value)

    def package(self, name: str) -> str:
        """The tracked package an axis name means (as [packages] reads names)."""
        known = self.db.names()
        package = normalize(name)
        if package not in known:
            squashed = {n.replace("-", ""): n for n in known}
            package = squashed.get(package.replace("-", ""), package)
        component = self.db.component(package) if package in known else None
        if component is None or not component.releases:
            guess = did_you_mean(package, [*SYSTEM_AXES, *known], cutoff=0.75)
            raise self.error(f"unknown axis: not one of {', '.join(SYSTEM_AXES)}, nor a package whose releases the "
                             f"database knows{guess}", name)
        return package

    def release(self, name: str, package: str, written: str) -> Version:
        """A package axis value: one release the database knows."""
        text = written.strip()
        try:
            if not text.isascii() or not _BARE_VERSION.fullmatch(text):
                raise InvalidVersion(text)
            version = Version(text)
        except InvalidVersion:
            raise self.error(f"{written!r} is not a version such as \"0.32.0\" (an axis value is one release; "
                             f"a specifier string, {name} = \">=0.32\", takes every release it admits)", name) from None
        component = self.db.component(package)
        assert component is not None
        if Version(version.public) not in component.releases:
            newest = component.newest_first()[0]
            raise self.error(f"the database knows no release {written} of {package} (the newest it knows is "
                             f"{newest})", name)
        return version

    def expand(self, name: str, package: str, written: str) -> tuple[str, ...]:
        """The releases a specifier string admits: pre-releases only if it names one, never a yanked one."""
        try:
            if len(written) > MAX_VERSION or not written.isascii():
                raise InvalidSpecifier(written)
            specifier = SpecifierSet(written.strip())
        except (InvalidSpecifier, ValueError):
            raise self.error(f"{written!r} is not a PEP 440 specifier set such as \">=5.16,<5.21\"", name) from None
        component = self.db.component(package)
        assert component is not None
        pre = bool(specifier.prereleases)
        found = [
            v for v in sorted(component.releases)
            if specifier.contains(v, prereleases=True) and (pre or not v.is_prerelease)
            and not component.releases[v].is_yanked
        ]
        if not found:
            raise self.error(f"{written!r} admits no release of {package} the database knows (the newest is "
                             f"{component.newest_first()[0]})", name)
        if len(found) > MAX_AXIS_VALUES:
            raise self.error(f"{written!r} admits {len(found):,} releases: an axis is limited to "
                             f"{MAX_AXIS_VALUES:,}", name)
        return tuple(str(v) for v in found)

