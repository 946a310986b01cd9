"""A project's requirements from its pyproject.toml: ``[project]``
dependencies (PEP 621), the optional dependencies of the extras asked for,
and the PEP 735 dependency groups asked for.

Only static metadata is read: a field the file lists under ``dynamic`` is
computed by the build backend, and asking for it is an error that says so.
A requirement on the project itself (``myproject[gpu]`` in an extra or a
group) brings in the project's own dependencies and those of the extras it
names, as an installer does; a group's ``{include-group = "..."}`` brings in
that group. A cycle of either is an error that names it.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._record import Record
from .. import _toml
from .._names import did_you_mean, normalize
from ..errors import StackError, one_line
from .requirements import Entry, direct_reference, quote, read_requirement, with_marker
from ..stack import Place

if TYPE_CHECKING:
    from packaging.requirements import Requirement

__all__ = ["read_pyproject"]

# How far past the string before it the next string of a list is looked for
# (a comma, spaces, a comment between them); beyond, its line is the key's.
_LOOK_AHEAD = 4096
# Extras and groups one read may bring in (a project has a few dozen): each
# is read once for each marker it is reached under, and self-references
# with markers could otherwise double them at every step of a chain.
_MAX_PARTS = 1000


def read_pyproject(path: str, *, extras: Sequence[str] = (), groups: Sequence[str] = (),
                  within: tuple[str, ...] = ()) -> list[Entry]:
    """The requirements of the project at `path` (a pyproject.toml): its
    dependencies (when it has a [project] table), the optional dependencies
    of `extras` and the dependency groups `groups`. `within` holds the
    projects whose direct references led here (a cycle of them is an error)."""
    project = _Project(path, (*within, os.path.realpath(path)) if path != "-" else within)
    roots: list[_Part] = []
    if project.table is not None or not groups:
        roots.append(_Part("project"))
    roots += [_Part("extra", extra) for extra in extras]
    roots += [_Part("group", group) for group in groups]
    return project.walk(roots)


class _Part(Record):
    """A part of a project that brings in requirements: its dependencies
    ("project"), an extra or a dependency group, under the markers of the
    self-references that led to it (outermost first)."""

    kind: str
    name: str = ""
    markers: tuple[str, ...] = ()


_LEAVE = object()  # on the walk's stack: the part above it is done with


class _Project:
    """One pyproject.toml, its errors naming the file, the key and the line."""

    def __init__(self, path: str, within: tuple[str, ...] = ()) -> None:
        self.path = "<stdin>" if path == "-" else path
        self.within = within
        data, self.text = _toml.load(path, error=StackError)
        self._starts = [0] + [m.end() for m in re.finditer("\n", self.text)]  # where each line starts
        table = data.get("project")
        if table is not None and not isinstance(table, Mapping):
            raise self.error("expected a table", "project")
        self.table: Mapping[str, Any] | None = table
        name = table.get("name") if table is not None else None
        self.name = normalize(name) if isinstance(name, str) and name.strip() else None
        dynamic = table.get("dynamic", []) if table is not None else []
        if not (isinstance(dynamic, list) and all(isinstance(d, str) for d in dynamic)):
            # read as "none", a dynamic dependencies field would pass for a project without dependencies
            raise self.error('expected a list of field names (dynamic = ["version"])', "project", "dynamic")
        self.dynamic = set(dynamic)
        groups = data.get("dependency-groups", {})
        if not isinstance(groups, Mapping):
            raise self.error("expected a table of dependency groups", "dependency-groups")
        self._raw_groups: Mapping[str, Any] = groups
        self.groups = self._by_name(groups, ("dependency-groups",), "dependency group")
        optional = table.get("optional-dependencies", {}) if table is not None else {}
        if not isinstance(optional, Mapping):
            raise self.error("expected a table of extras", "project", "optional-dependencies")
        self.extras = self._by_name(optional, ("project", "optional-dependencies"), "extra")

    def error(self, message: str, table: str, key: str | None = None, line: int | None = None) -> StackError:
        parts = tuple(table.split("."))
        if line is None:
            line = _toml.locate(self.text, parts, key)
        shown = f"[{table}] {key}" if key else f"[{table}]"
        return StackError(message, file=self.path, key=shown, line=line)

    def _by_name(self, table: Mapping[str, Any], where: tuple[str, ...], what: str) -> dict[str, str]:
        """Normalized name -> the key as the file writes it (PEP 685, PEP 735:
        names are compared normalized; two that normalize alike are an error)."""
        names: dict[str, str] = {}
        for key in table:
            name = normalize(key)
            if name in names:
                raise self.error(f"{key!r} and {names[name]!r} are the same {what} (names are compared normalized)",
                                 ".".join(where), key)
            names[name] = key
        return names

    # -- what the project requires ----------------------------------------------

    def walk(self, roots: list[_Part]) -> list[Entry]:
        """The entries of `roots` and of every part they bring in, in the
        order an installer reads them: depth first, each part once (a part
        brought in again adds nothing new), with a stack of its own rather
        than recursion (a chain of thousands of extras is still read). A
        group that includes itself, through others or not, is an error."""
        entries: list[Entry] = []
        done: set[_Part] = set()
        path: list[_Part] = []  # the parts being read, outermost first
        pending: list[_Part | Entry | object] = list(reversed(roots))
        while pending:
            item = pending.pop()
            if item is _LEAVE:
                path.pop()
            elif isinstance(item, Entry):
                entries.append(item)
            else:
                assert isinstance(item, _Part)
                key = item._replace(name=normalize(item.name))
                if key in done:
                    if key.kind == "group" and key in path:
                        cycle = " -> ".join(p.name for p in path[path.index(key):] if p.kind == "group")
                        raise self.error(f"the groups include one another in a cycle: {cycle} -> {key.name}",
                                         "dependency-groups", self.groups[key.name])
                    continue
                done.add(key)
                if len(done) > _MAX_PARTS:
                    raise StackError(f"brings in more than {_MAX_PARTS:,} extras and groups (through its "
                                     "requirements on itself and its include-group tables)", file=self.path)
                path.append(key)
                pending.append(_LEAVE)
                pending += reversed(self._expand(item))
        return entries

    def _expand(self, part: _Part) -> list[_Part | Entry]:
        """What one part brings in: its requirements, and the parts they name."""
        if part.kind == "project":
            return self._requirements(self._dependencies(), "project", "dependencies", part.markers)
        if part.kind == "extra":
            written = self._extra(part.name)
            return self._requirements(self.table["optional-dependencies"][written],  # type: ignore[index]
                                      "project.optional-dependencies", written, part.markers)
        return self._group(part.name)

    def _dependencies(self) -> Any:
        if self.table is None:
            raise StackError("has no [project] table: compat reads the requirements of a project from its "
                             "[project] dependencies (or of the dependency groups --group names)", file=self.path)
        if "dependencies" in self.dynamic:
            raise self.error("the dependencies are dynamic (computed by the build backend at build time): compat "
                             "reads static metadata only; give them in a requirements file", "project", "dynamic")
        return self.table.get("dependencies", [])

    def _extra(self, name: str) -> str:
        """The key of the extra `name` as the file writes it."""
        key = normalize(name)
        if self.table is None:
            raise StackError(f"has no [project] table, so no extra {quote(name)}", file=self.path)
        if "optional-dependencies" in self.dynamic:
            raise self.error("the optional dependencies are dynamic (computed by the build backend): compat reads "
                             "static metadata only", "project", "dynamic")
        if key not in self.extras:
            known = _listed(self.extras.values())
            raise self.error(f"no extra {quote(name)}{did_you_mean(key, self.extras)} (the extras: {known})",
                             "project.optional-dependencies")
        return self.extras[key]

    def _group(self, name: str) -> list[_Part | Entry]:
        """A dependency group's requirements, and the groups it includes, in order."""
        key = normalize(name)
        if key not in self.groups:
            known = _listed(self.groups.values())
            raise StackError(f"no dependency group {quote(name)}{did_you_mean(key, self.groups)} (the groups: "
                             f"{known})", file=self.path, key="[dependency-groups]",
                             line=_toml.locate(self.text, ("dependency-groups",)))
        written = self.groups[key]
        found: list[_Part | Entry] = []
        strings: list[Any] = []
        for member in self._data_group(written):
            if isinstance(member, Mapping):
                if set(member) != {"include-group"} or not isinstance(member["include-group"], str):
                    raise self.error("a table in a dependency group must be {include-group = \"name\"} and nothing "
                                     "else (PEP 735)", "dependency-groups", written)
                found += self._requirements(strings, "dependency-groups", written, ())
                strings = []
                found.append(_Part("group", member["include-group"]))
            else:
                strings.append(member)
        found += self._requirements(strings, "dependency-groups", written, ())
        return found

    def _data_group(self, written: str) -> list[Any]:
        members = self._raw_groups[written]
        if not isinstance(members, list):
            raise self.error("expected a list of requirements and {include-group = \"...\"} tables",
                             "dependency-groups", written)
        return members

    # -- one list of PEP 508 strings --------------------------------------------------

    def _requirements(self, values: Any, table: str, key: str, markers: tuple[str, ...]) -> list[_Part | Entry]:
        """The entries of one list of PEP 508 strings, read as a requirements
        file's lines are (a direct reference is its file's version), each
        under `markers`; a requirement on the project itself is the parts it
        names."""
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise self.error("expected a list of PEP 508 requirement strings", table, key)
        lines = self._lines(table, key, values)
        found: list[_Part | Entry] = []
        for value, line in zip(values, lines):
            requirement = read_requirement(value, lambda why: self.error(why, table, key, line))
            if self.name is not None and normalize(requirement.name) == self.name:
                inner = (*markers, str(requirement.marker)) if requirement.marker else markers
                found.append(_Part("project", "", inner))
                found += [_Part("extra", extra, inner) for extra in sorted(requirement.extras)]
                continue
            place = Place(self.path, line)
            given = self._direct(requirement, place, table, key) if requirement.url else [Entry(requirement, place)]
            found += [e._replace(requirement=with_marker(e.requirement, _all(markers))) for e in given] if markers \
                else given
        return found

    def _direct(self, requirement: Requirement, place: Place, table: str, key: str) -> list[Entry]:
        """``name @ URL``, read as a requirements file reads it; its error
        names the key too (one of a project it leads to names that project)."""
        try:
            return direct_reference(requirement, place, self.within)
        except StackError as exc:
            if exc.file != self.path or exc.key is not None:
                raise
            raise self.error(exc.message, table, key, place.line) from None

    def _lines(self, table: str, key: str, values: list[str]) -> list[int]:
        """The line of each string of a list: each is looked for a little
        after the one before (the strings of a list come in order), so a
        list of thousands on one line is read in one pass."""
        if not values:
            return []
        start = _toml.locate(self.text, tuple(table.split(".")), key) or 1
        cursor = self._starts[start - 1] if start <= len(self._starts) else len(self.text)
        lines = []
        for value in values:
            window = cursor + len(value) + _LOOK_AHEAD
            # as a literal string, or a basic one (whose escapes are JSON's for quotes and backslashes)
            written = {f"'{value}'", json.dumps(value, ensure_ascii=False)}
            found = [(at, len(w)) for w in written if (at := self.text.find(w, cursor, window)) >= 0]
            if found:
                at, length = min(found)
                cursor = at + length
            lines.append(bisect.bisect_right(self._starts, at) if found else start)
        return lines


def _listed(names: Iterable[str], shown: int = 10) -> str:
    """The names an error lists: the first few, sorted, each quoted and cut
    (a file may define thousands, or one of thousands of characters), and
    how many more.

    >>> _listed(["b", "a"]), _listed([]), _listed(map(str, range(12)), 2)
    ('a, b', 'none', '0, 1, … and 10 more')
    """
    names = sorted(names)
    if not names:
        return "none"
    more = f", … and {len(names) - shown:,} more" if len(names) > shown else ""
    return ", ".join(one_line(n, 40) for n in names[:shown]) + more


def _all(markers: tuple[str, ...]) -> str:
    """One marker that holds where each of `markers` holds (innermost first,
    as the self-references apply them), without nesting: a chain of
    thousands stays a flat list that packaging reads without recursion."""
    return " and ".join(f"({m})" for m in reversed(markers))
