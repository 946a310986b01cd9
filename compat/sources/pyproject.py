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

from collections.abc import Mapping, Sequence
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from .. import _toml
from .._names import did_you_mean, normalize
from ..errors import StackError
from .requirements import Entry, long_version, with_marker
from .stack import Place

__all__ = ["read_pyproject"]


def read_pyproject(path: str, *, extras: Sequence[str] = (), groups: Sequence[str] = ()) -> list[Entry]:
    """The requirements of the project at `path` (a pyproject.toml): its
    dependencies (when it has a [project] table), the optional dependencies
    of `extras` and the dependency groups `groups`."""
    project = _Project(path)
    entries = project.dependencies() if project.table is not None or not groups else []
    for extra in extras:
        entries += project.extra(extra, (), None)
    for group in groups:
        entries += project.group(group, ())
    return entries


class _Project:
    """One pyproject.toml, its errors naming the file, the key and the line."""

    def __init__(self, path: str) -> None:
        self.path = "<stdin>" if path == "-" else path
        data, self.text = _toml.load(path, error=StackError)
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

    def dependencies(self, seen: tuple[str, ...] = ()) -> list[Entry]:
        if self.table is None:
            raise StackError("has no [project] table: compat reads the requirements of a project from its "
                             "[project] dependencies (or of the dependency groups --group names)", file=self.path)
        if "dependencies" in self.dynamic:
            raise self.error("the dependencies are dynamic (computed by the build backend at build time): compat "
                             "reads static metadata only; give them in a requirements file", "project", "dynamic")
        return self._requirements(self.table.get("dependencies", []), "project", "dependencies", seen)

    def extra(self, name: str, seen: tuple[str, ...], marker: str | None) -> list[Entry]:
        key = normalize(name)
        if self.table is None:
            raise StackError(f"has no [project] table, so no extra {name!r}", file=self.path)
        if "optional-dependencies" in self.dynamic:
            raise self.error("the optional dependencies are dynamic (computed by the build backend): compat reads "
                             "static metadata only", "project", "dynamic")
        if key not in self.extras:
            known = ", ".join(sorted(self.extras.values())) or "none"
            raise self.error(f"no extra {name!r}{did_you_mean(key, self.extras)} (the extras: {known})",
                             "project.optional-dependencies")
        if f"extra:{key}" in seen:
            return []  # an extra that names itself through the project adds nothing new
        written = self.extras[key]
        entries = self._requirements(self.table["optional-dependencies"][written], "project.optional-dependencies",
                                     written, (*seen, f"extra:{key}"))
        return [e._replace(requirement=with_marker(e.requirement, marker)) for e in entries] if marker else entries

    def group(self, name: str, seen: tuple[str, ...]) -> list[Entry]:
        key = normalize(name)
        if key not in self.groups:
            known = ", ".join(sorted(self.groups.values())) or "none"
            raise StackError(f"no dependency group {name!r}{did_you_mean(key, self.groups)} (the groups: {known})",
                             file=self.path, key="[dependency-groups]",
                             line=_toml.locate(self.text, ("dependency-groups",)))
        written = self.groups[key]
        if f"group:{key}" in seen:
            cycle = " -> ".join(s.split(":", 1)[1] for s in seen if s.startswith("group:"))
            raise self.error(f"the groups include one another in a cycle: {cycle} -> {key}", "dependency-groups",
                             written)
        members = self._data_group(written)
        entries: list[Entry] = []
        strings: list[Any] = []
        for member in members:
            if isinstance(member, Mapping):
                if set(member) != {"include-group"} or not isinstance(member["include-group"], str):
                    raise self.error("a table in a dependency group must be {include-group = \"name\"} and nothing "
                                     "else (PEP 735)", "dependency-groups", written)
                entries += self._requirements(strings, "dependency-groups", written, (*seen, f"group:{key}"))
                strings = []
                entries += self.group(member["include-group"], (*seen, f"group:{key}"))
            else:
                strings.append(member)
        entries += self._requirements(strings, "dependency-groups", written, (*seen, f"group:{key}"))
        return entries

    def _data_group(self, written: str) -> list[Any]:
        members = self._raw_groups[written]
        if not isinstance(members, list):
            raise self.error("expected a list of requirements and {include-group = \"...\"} tables",
                             "dependency-groups", written)
        return members

    # -- one list of PEP 508 strings --------------------------------------------------

    def _requirements(self, values: Any, table: str, key: str, seen: tuple[str, ...]) -> list[Entry]:
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise self.error("expected a list of PEP 508 requirement strings", table, key)
        start = _toml.locate(self.text, tuple(table.split(".")), key) or 1
        entries: list[Entry] = []
        for value in values:
            line = _line_of(self.text, start, value)
            try:
                requirement = Requirement(value)
            except InvalidRequirement as exc:
                raise self.error(f"not a PEP 508 requirement ({str(exc).splitlines()[0]}): {value!r}", table, key,
                                 line) from None
            too_long = long_version(requirement)
            if too_long:
                raise self.error(too_long, table, key, line)
            if self.name is not None and normalize(requirement.name) == self.name:
                entries += self._itself(requirement, seen)
                continue
            entries.append(Entry(requirement, Place(self.path, line)))
        return entries

    def _itself(self, requirement: Requirement, seen: tuple[str, ...]) -> list[Entry]:
        """A requirement on the project itself: its dependencies and the extras it names."""
        marker = str(requirement.marker) if requirement.marker else None
        entries: list[Entry] = []
        if "project" not in seen:
            own = self.dependencies((*seen, "project"))
            entries += [e._replace(requirement=with_marker(e.requirement, marker)) for e in own] if marker else own
        for extra in sorted(requirement.extras):
            entries += self.extra(extra, (*seen, "project"), marker)
        return entries


def _line_of(text: str, start: int, value: str) -> int:
    """The line, from `start` on, where the string `value` is written (or `start`)."""
    lines = text.splitlines()
    for quoted in (f'"{value}"', f"'{value}'"):
        for number in range(start, min(len(lines), start + 10_000) + 1):
            if quoted in lines[number - 1]:
                return number
    return start
