"""The plain data the database is made of."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any, NamedTuple

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .conditions import Condition

_NAME = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


_SEPARATORS = re.compile(r"[-_.]+")


def _normalize_extra(name: str) -> str:
    return _SEPARATORS.sub("-", name).lower()


__all__ = ["Source", "OptionSpec", "Dependency", "Release", "Rule", "Component", "SEVERITIES", "RULE_KINDS"]

SEVERITIES = ("error", "warning", "info")
RULE_KINDS = ("requirement", "known-issue", "behaviour-change", "note")
DEFAULT_SEVERITY = {
    "requirement": "error",
    "known-issue": "warning",
    "behaviour-change": "info",
    "note": "info",
}
LAYERS = ("metadata", "curated")


class Source(NamedTuple):
    """Where a fact comes from: a release, a pull request, a vendor table, an index."""

    id: str
    project: str
    title: str
    kind: str
    url: str | None = None
    ref: str | None = None
    commit: str | None = None
    date: _dt.date | None = None
    item: str | None = None

    def cite(self) -> str:
        """One line for reports.

        >>> Source("x", "vLLM", "vLLM 0.32.0 release", "release", commit="5df63a7", date=_dt.date(2026, 10, 18)).cite()
        'vLLM 0.32.0 release (5df63a7, 2026-10-18)'
        """
        extra = [p for p in (self.commit, self.date.isoformat() if self.date else None) if p]
        text = self.title
        if extra:
            text += f" ({', '.join(extra)})"
        return text

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "project": self.project, "title": self.title, "kind": self.kind}
        for key in ("url", "ref", "commit", "item"):
            value = getattr(self, key)
            if value:
                data[key] = value
        if self.date:
            data["date"] = self.date.isoformat()
        return data


class OptionSpec(NamedTuple):
    """A runtime option (command-line flag) of a component that rules may test."""

    name: str
    summary: str
    values: tuple[str, ...] = ()
    default: Any = None
    source: str | None = None


class Dependency(NamedTuple):
    """A requirement of a release, and the layer it comes from."""

    requirement: Requirement
    layer: str  # "metadata" (the release's own Requires-Dist) or "curated"
    source: str | None = None
    reason: str | None = None


@dataclass
class Release:
    """One release of a component, with the requirements it declares.

    Requirements are parsed on first use: a snapshot holds hundreds of
    Requires-Dist lines per package, and a check needs only a few releases.
    """

    package: str
    version: Version
    date: _dt.date | None = None
    status: str = "release"  # release, pre-release, yanked
    requires_python: SpecifierSet | None = None
    requires_dist: tuple[str, ...] = ()
    curated: tuple[Dependency, ...] = ()
    extras: tuple[str, ...] = ()
    commit: str | None = None
    source: str | None = None
    layer: str = "metadata"
    file: str | None = None
    _parsed: tuple[Dependency, ...] | None = field(default=None, repr=False)
    _cache: dict[str, Requirement] = field(default_factory=dict, repr=False)

    @property
    def is_prerelease(self) -> bool:
        return self.status == "pre-release" or self.version.is_prerelease

    @property
    def is_yanked(self) -> bool:
        return self.status == "yanked"

    @property
    def dependencies(self) -> tuple[Dependency, ...]:
        """Every requirement: declared (metadata) ones first, then curated ones."""
        if self._parsed is None:
            declared = tuple(Dependency(Requirement(text), "metadata") for text in self.requires_dist)
            self._parsed = declared + self.curated
        return self._parsed

    def dependencies_for(
        self, extras: frozenset[str] = frozenset(), wanted: Callable[[str], bool] | None = None
    ) -> list[Dependency]:
        """The requirements that can apply when `extras` are requested.

        Most Requires-Dist lines of a large package belong to extras nobody
        asked for, or name packages nobody tracks; those are skipped before
        they are parsed (`wanted` sees the normalized name). Parsed lines are
        kept for the next call.
        """
        out = []
        cache = self._cache
        for text in self.requires_dist:
            named = _EXTRA.findall(text)
            if named and not any(_normalize_extra(e) in extras for e in named):
                continue
            if wanted is not None:
                head = _NAME.match(text)
                if head is not None and not wanted(_normalize_extra(head.group(0).strip())):
                    continue
            requirement = cache.get(text)
            if requirement is None:
                requirement = cache[text] = Requirement(text)
            out.append(Dependency(requirement, "metadata"))
        out.extend(self.curated)
        return out


class Rule(NamedTuple):
    """A curated fact about some releases of a component.

    kind "requirement": when `when` holds, `require` must hold too, or the
    stack fails at `severity`. The other kinds are notes shown (at their
    severity) to the stacks that meet `when`: a known issue of the affected
    releases (`fixed_in` says where it is fixed), a behaviour change of the
    releases since it came, a measured note with the conditions it was
    measured under.
    """

    id: str
    package: str
    kind: str
    releases: SpecifierSet
    when: Condition
    require: Condition | None
    severity: str
    message: str
    source: str
    fixed_in: Version | None = None
    file: str | None = None

    def covers(self, version: Version | None) -> bool:
        if version is None:
            return False
        return self.releases.contains(version, prereleases=True)


@dataclass
class Component:
    """A tracked component: a Python package on the index, or an application."""

    name: str
    kind: str  # "package" or "application"
    summary: str = ""
    homepage: str | None = None
    options: dict[str, OptionSpec] = field(default_factory=dict)
    releases: dict[Version, Release] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    file: str | None = None
    snapshot_taken: _dt.date | None = None
    snapshot_index: str | None = None

    def release(self, version: Version) -> Release | None:
        return self.releases.get(version)

    def versions(self) -> list[Version]:
        return sorted(self.releases)
