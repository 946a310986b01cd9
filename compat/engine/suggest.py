"""The smallest changes that make a failing stack work.

Each package of the stack (and its Python) is relaxed in turn, then in
pairs; the relaxed stack is resolved, and a suggestion is kept only if a
full check of the stack it proposes has no error. Ranked by the number of
changed components, then by how far the versions move.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._names import normalize
from ..errors import ResolutionTooComplex
from ..knowledge.database import Database
from ..sources.stack import PackageSpec, Stack
from .resolver import resolve

__all__ = ["Change", "Suggestion", "suggest"]

PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")


@dataclass(frozen=True)
class Change:
    name: str
    old: str
    new: str
    direction: str  # upgrade, downgrade, change

    def text(self) -> str:
        if self.direction in ("upgrade", "downgrade"):
            return f"{self.name} {self.new} ({self.direction} from {self.old})"
        return f"{self.name} {self.new} (instead of {self.old})"


@dataclass
class Suggestion:
    changes: tuple[Change, ...]
    distance: int
    moves: list[Change] = field(default_factory=list)
    stack: Stack | None = field(default=None, repr=False, compare=False)

    def text(self) -> str:
        text = "use " + " and ".join(c.text() for c in self.changes)
        if self.moves:
            text += ", which also moves " + ", ".join(f"{m.name} to {m.new}" for m in self.moves)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": [dataclasses.asdict(c) for c in self.changes],
            "moves": [dataclasses.asdict(m) for m in self.moves],
            "distance": self.distance,
            "text": self.text(),
        }


def _direction(old: Version | None, new: Version) -> str:
    if old is None:
        return "change"
    return "upgrade" if new > old else "downgrade" if new < old else "change"


def _index_distance(db: Database, name: str, old: Version | None, new: Version) -> int:
    """How many releases of `name` the move crosses (at least one)."""
    component = db.component(name)
    if component is None or old is None:
        return 1
    low, high = min(old, new), max(old, new)
    return max(1, sum(1 for v in component.releases if low < v <= high))


def _relax(stack: Stack, names: tuple[str, ...]) -> list[tuple[Stack, dict[str, str]]]:
    """Stacks with each named package left open (or each other Python)."""
    variants: list[tuple[Stack, dict[str, str]]] = [(stack, {})]
    for name in names:
        grown = []
        for base, changed in variants:
            if name == "python":
                for python in PYTHONS:
                    if Version(python) != Version(f"{base.system.python.major}.{base.system.python.minor}"):
                        system = base.system._replace(python=Version(python))
                        grown.append((dataclasses.replace(base, system=system), {**changed, "python": python}))
            else:
                packages = dict(base.packages)
                packages[name] = packages[name]._replace(specifier=SpecifierSet())
                grown.append((dataclasses.replace(base, packages=packages), changed))
        variants = grown
    return variants


def suggest(
    stack: Stack, db: Database, *, limit: int = 3, max_rounds: int = 500, involved: set[str] | None = None
) -> list[Suggestion]:
    """Up to `limit` verified suggestions, smallest first.

    With `involved` (the components the errors name), only those packages are
    moved: a lock file pins some two hundred packages, and moving each pair of
    them would be tens of thousands of resolutions, none of which can fix an
    error that does not involve them."""
    from .check import check_stack

    packages = [n for n in stack.packages if involved is None or n in involved]
    names = (*packages, "python")
    found: list[Suggestion] = []
    for size in (1, 2):
        for group in itertools.combinations(names, size):
            near = {n: stack.packages[n].pinned for n in group if n != "python" and stack.packages[n].pinned}
            for relaxed, python in _relax(stack, group):
                try:
                    resolution = resolve(relaxed, db, max_rounds=max_rounds, near=near)  # type: ignore[arg-type]
                except ResolutionTooComplex:
                    continue
                if not resolution.ok:
                    continue
                suggestion = _build(stack, relaxed, resolution.versions, group, python, db)
                if suggestion is None:
                    continue
                report = check_stack(suggestion.stack, db, suggest_fixes=False)  # type: ignore[arg-type]
                if not report.errors:
                    found.append(suggestion)
        if found:
            break
    unique: dict[tuple[Change, ...], Suggestion] = {}
    for suggestion in sorted(found, key=lambda s: (len(s.changes), s.distance, s.text())):
        unique.setdefault(suggestion.changes, suggestion)
    return list(unique.values())[:limit]


def _build(stack: Stack, relaxed: Stack, versions: dict[str, Any], group: tuple[str, ...],
           python: dict[str, str], db: Database) -> Suggestion | None:
    changes: list[Change] = []
    distance = 0
    packages = dict(stack.packages)
    for name in group:
        if name == "python":
            old = stack.system.python
            new = Version(python["python"])
            changes.append(Change("python", str(old), str(new), _direction(old, new)))
            distance += abs(new.minor - old.minor)
            continue
        candidate = versions.get(name)
        if candidate is None or candidate.version is None:
            return None
        spec = stack.packages[name]
        if spec.specifier.contains(candidate.version, prereleases=True):
            return None  # relaxing it changed nothing: not the fix
        old = spec.pinned
        changes.append(Change(name, str(old) if old else str(spec.specifier), str(candidate.version),
                              _direction(old, candidate.version)))
        distance += _index_distance(db, name, old, candidate.version)
        packages[name] = PackageSpec(name, SpecifierSet(f"=={candidate.version}"), spec.extras, spec.external,
                                     str(candidate.version), spec.build)
    moves = _moves(stack, versions, group, db)
    new_stack = dataclasses.replace(relaxed, packages=packages)
    return Suggestion(tuple(changes), distance, moves, new_stack)


def _moves(stack: Stack, versions: dict[str, Any], group: tuple[str, ...], db: Database) -> list[Change]:
    """Packages outside the stack that the changed releases pin differently."""
    moves: dict[str, Change] = {}
    for name in group:
        spec = stack.packages.get(name)
        if spec is None or spec.pinned is None:
            continue
        component = db.component(name)
        release = component.release(spec.pinned) if component else None
        if release is None:
            continue
        for dependency in release.dependencies:
            requirement = dependency.requirement
            target = normalize(requirement.name)
            pins = [s.version for s in requirement.specifier if s.operator == "=="]
            if not pins or target in stack.packages or target not in versions:
                continue
            new = versions[target].version
            if new is not None and str(new) != pins[0]:
                moves.setdefault(target, Change(target, pins[0], str(new), _direction(Version(pins[0]), new)))
    return sorted(moves.values(), key=lambda c: c.name)
