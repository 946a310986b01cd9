"""The axes file (axes.toml, version 1): the combinations a CI matrix is made of.

An axes file is a `[base]` stack and `[axes]`, each axis a list of values
or (for a package) one PEP 440 specifier string. Every cell of the axes'
product is the base with one value of each axis written over it.

`read_axes` reads a file or a mapping into `RawAxes`: the base, the
[base.compat] overlay resolved, and each axis as written, its values
checked to be strings (or, for what may be a package axis, one specifier
string); every problem is a `StackError` naming the file and the key
(``[axes] gpu``, ``[base.system] cuda``), with the line where the text
tells it. knowledge/axes.py binds the package axes to the releases the
database knows and reads each value into a stack, so an axis accepts
exactly what a stack file does (`compat.matrix` does both); `Axes` is
what it makes.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import _toml
from .._names import did_you_mean, is_name, normalize
from .._record import Record
from ..errors import StackError
from .stack import MAX_KEY, MAX_VERSION, _overlay, _Reader, kind

__all__ = ["Axis", "Axes", "RawAxis", "RawAxes", "read_axes", "SYSTEM_AXES", "MAX_AXES", "MAX_AXIS_VALUES",
           "MAX_CELLS"]

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

    def rekey(self, error: StackError) -> StackError:
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


class RawAxis(Record):
    """One axis as written: a system axis's values, or what may be a package
    axis's (a list of versions, or one specifier string), before the
    database tells the package and its releases."""

    name: str
    value: tuple[str, ...] | str  # the values, or (not a system axis) one specifier string
    line: int | None = None


class RawAxes(Record):
    """An axes file as read, before its package axes are bound to the database."""

    axes: tuple[RawAxis, ...]
    base: dict[str, Any]  # with [base.compat] overlay resolved, so that each cell reads the same folder
    overlay: str | None  # the folder of the user's own facts every cell reads, resolved
    base_package_keys: dict[str, str]  # normalized name -> the key [base.packages] writes it as
    path: str | None
    text: str | None
    reader: _AxesReader

    def error(self, message: str, key: str, table: tuple[str, ...] = ("axes",)) -> StackError:
        """The error for `key` of `table` ([axes] by default), with its file and line."""
        return self.reader.error(message, key, table)


def read_axes(source: str | os.PathLike[str] | Mapping[str, Any]) -> RawAxes:
    """Read an axes file (a path, ``-`` for standard input, or a mapping of its tables)."""
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
    reader = _AxesReader(path or "<axes>", text, given)
    axes = reader.read(data)
    return RawAxes(axes=axes, base=reader.base, overlay=reader.overlay, base_package_keys=reader.base_package_keys,
                   path=path, text=text, reader=reader)


class _AxesReader:
    """Reads the parsed TOML of an axes file, raising StackError with file, key and line."""

    def __init__(self, file: str, text: str | None, path: str | None = None) -> None:
        self.file = file
        self.text = text
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

    def read(self, data: Mapping[str, Any]) -> tuple[RawAxis, ...]:
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
        if self.overlay is not None:  # each cell: the same folder
            self.base["compat"] = {**self.base["compat"], "overlay": self.overlay}
        self.base_package_keys = {normalize(k): k for k in base.get("packages", {}) if isinstance(k, str)}
        table = data.get("axes")
        if table is None:
            raise self.error("missing the [axes] table: each axis a list of values, such as python = [\"3.11\", "
                             "\"3.12\"]", "axes", ())
        if not isinstance(table, Mapping) or not table:
            raise self.error("expected a table of at least one axis, such as python = [\"3.11\", \"3.12\"]", "axes", ())
        if len(table) > MAX_AXES:
            raise self.error(f"{len(table)} axes: a matrix is limited to {MAX_AXES}", "axes", ())
        return tuple(self.axis(name, value) for name, value in table.items())

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

    def axis(self, name: Any, value: Any) -> RawAxis:
        if not isinstance(name, str) or len(name) > MAX_KEY or not is_name(name):
            raise self.error("not an axis name: python, platform, cuda, driver, gpu, compute_capability or a "
                             "package name", str(name)[:80])
        line = _toml.locate(self.text, ("axes",), name) if self.text is not None else None
        if name in SYSTEM_AXES:
            if isinstance(value, str):
                raise self.error("a specifier string expands only a package axis: give a list of values, "
                                 f"such as {name} = [\"{value}\"]", name)
            return RawAxis(name, self.strings(name, value), line)
        return RawAxis(name, value if isinstance(value, str) else self.strings(name, value), line)

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
                raise self.error(f"expected a string of at most {MAX_VERSION} characters, got {kind(item)}", name)
        duplicates = sorted({v for v in value if value.count(v) > 1})
        if duplicates:
            raise self.error(f"lists {duplicates[0]!r} twice", name)
        return tuple(value)
