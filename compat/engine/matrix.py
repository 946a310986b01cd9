"""The matrix: the compatible cells of a product of axes, without checking the
product cell by cell.

The product is walked in order, axis by axis. A cell is checked only when no
known incompatibility covers it. When its check fails, each failing finding
that depends on nothing but axis values (and what the base fixes) becomes an
incompatibility of those values, and every other cell holding them is
dropped unchecked: ``vllm 0.33.0 requires Python >=3.11`` drops every cell
with vllm 0.33.0 and Python 3.10, whatever its GPU or transformers. A
requirement goes further: ``vllm 0.32.0 requires transformers<5.20`` drops
vllm 0.32.0 with every transformers of the axis that the requirement refuses.

A finding is generalized only when it cannot depend on anything the cell
varies without naming it (see `_Learner`), so the matrix is exactly the
cells whose own check passes; the check itself is given by the caller
(compat.api), which is what keeps this module free of how stacks are read
and checked.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .._record import Record
from .._names import normalize
from ..errors import CompatError, StackError
from ..sources.axes import Axes
from .covering import Coverage, cover
from .findings import Finding, Report

__all__ = ["Matrix", "Row", "Exclusion", "build_matrix"]

Choice = tuple[int, ...]  # one value index per axis, in the axes file's order
Check = Callable[[Choice], Report]
Progress = Callable[[int, int], None]

# The labels findings give the machine's fields (compat.engine.facts.VIRTUAL_LABELS, and platform).
_SYSTEM_LABELS = frozenset({"python", "platform", "cuda", "driver", "rocm", "gpu"})


@dataclass
class Row:
    """A compatible cell: its values, and the report of its check."""

    choice: Choice
    values: dict[str, str]  # axis name -> value as the axes file writes it
    report: Report
    axis_packages: frozenset[str] = field(default=frozenset(), repr=False)

    @property
    def packages(self) -> dict[str, str]:
        """The versions chosen for the stack's packages that are not axes."""
        return {name: v for name, v in sorted(self.report.packages.items()) if name not in self.axis_packages}

    @property
    def cell(self) -> dict[str, str]:
        """The cell as a CI matrix entry: axis values, then the chosen versions of the other packages."""
        return {**self.values, **{k: v for k, v in self.packages.items() if k not in self.values}}

    @property
    def warnings(self) -> list[Finding]:
        return self.report.warnings

    def to_dict(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "warnings": [f.to_dict() for f in self.warnings],
            "resolved": dict(self.report.resolved),
        }


@dataclass
class Exclusion:
    """Combinations dropped for one failing finding: every cell whose value of
    each axis named in `values` is one of those listed."""

    values: dict[str, tuple[str, ...]]
    finding: Finding
    cells: int = 0  # cells of the product this exclusion dropped first

    def to_dict(self) -> dict[str, Any]:
        return {"values": {k: list(v) for k, v in self.values.items()}, "cells": self.cells,
                "finding": self.finding.to_dict()}


class _Nogood(Record):
    """An incompatibility: axis index -> the value indices it covers (axes ascending)."""

    axes: tuple[tuple[int, frozenset[int]], ...]

    def holds(self, choice: Sequence[int]) -> bool:
        return all(choice[axis] in values for axis, values in self.axes)


class _Block(Record):
    """Cells dropped at once: from `start` to the end of the sub-product that
    fixes the axes of `order` up to `depth` (walk order)."""

    start: Choice  # in walk order
    depth: int
    exclusion: int
    cells: int


@dataclass
class Matrix:
    """The result of `compat.matrix`: the rows to run and what was dropped, and why."""

    axes: Axes
    rows: list[Row]  # the rows to run: every compatible cell, or with a strength the covering rows
    compatible: list[Row]  # every compatible cell
    excluded: list[Exclusion]  # each incompatibility that dropped cells, with the finding behind it
    checked: int  # cells checked one by one
    coverage: Coverage | None = None
    _blocks: list[_Block] = field(default_factory=list, repr=False)
    _order: tuple[int, ...] = field(default=(), repr=False)

    @property
    def cells(self) -> int:
        """How many cells the product of the axes has."""
        return self.axes.cells

    def to_github(self) -> dict[str, list[dict[str, str]]]:
        """The object GitHub Actions' ``fromJSON`` reads as ``strategy.matrix``."""
        return {"include": [row.cell for row in self.rows]}

    def to_dict(self, *, explain: bool = False) -> dict[str, Any]:
        """The JSON of ``compat matrix --format json`` (`explain`: the excluded combinations too)."""
        data: dict[str, Any] = {
            "schema": 1,
            "axes": {axis.name: list(axis.values) for axis in self.axes.axes},
            "summary": {"cells": self.cells, "compatible": len(self.compatible), "rows": len(self.rows),
                        "checked": self.checked, "excluded": self.cells - len(self.compatible)},
            "rows": [row.to_dict() for row in self.rows],
        }
        if self.coverage is not None:
            data["coverage"] = coverage_dict(self.coverage, self.axes)
        if explain:
            data["excluded"] = [e.to_dict() for e in self.excluded]
        return data

    def excluded_cells(self) -> Iterator[tuple[dict[str, str], Exclusion]]:
        """Every dropped cell (axis name -> value), with the exclusion that dropped it."""
        for choice, exclusion in self._excluded_choices():
            yield self.axes.values(choice), self.excluded[exclusion]

    def _excluded_choices(self) -> Iterator[tuple[Choice, int]]:
        sizes = [len(self.axes.axes[a].values) for a in self._order]
        for block in self._blocks:
            walk = list(block.start)
            for _ in range(block.cells):
                yield _file_order(walk, self._order), block.exclusion
                _advance(walk, sizes, len(sizes) - 1)

    def exclusion_for(self, values: Mapping[str, str]) -> Exclusion | None:
        """The exclusion that dropped the cell `values` (axis name -> value), or None if it is compatible."""
        wanted = tuple(values[a.name] for a in self.axes.axes)
        for cell, exclusion in self.excluded_cells():
            if tuple(cell[a.name] for a in self.axes.axes) == wanted:
                return exclusion
        return None


def coverage_dict(coverage: Coverage, axes: Axes) -> dict[str, Any]:
    names = [a.name for a in axes.axes]
    uncoverable = None
    if coverage.uncoverable is not None:
        uncoverable = [{names[a]: axes.axes[a].values[v] for a, v in t} for t in coverage.uncoverable]
    return {"strength": coverage.strength, "tuples": coverage.tuples, "covered": coverage.covered,
            "uncoverable": uncoverable}


def build_matrix(axes: Axes, check: Check, *, strength: int | None = None, seed: int = 0,
                 progress: Progress | None = None) -> Matrix:
    """Walk the product of `axes`, checking (with `check`) only the cells no
    known incompatibility covers; with `strength`, keep the fewest compatible
    rows that cover every t-tuple of values some compatible row holds."""
    if strength is not None and not 1 <= strength <= len(axes.axes):
        raise ValueError(f"strength must be between 1 and the number of axes ({len(axes.axes)}), not {strength}")
    walk = _Walk(axes, check, progress)
    walk.run()
    compatible = sorted(walk.rows, key=lambda r: r.choice)
    rows, coverage = compatible, None
    if strength is not None:
        coverage = cover([r.choice for r in compatible], axes.sizes, strength=strength, seed=seed)
        rows = [compatible[i] for i in coverage.rows]
    excluded, renumber = _merge([e for e in walk.exclusions if e.cells], axes)
    blocks = [b._replace(exclusion=renumber[id(walk.exclusions[b.exclusion])]) for b in walk.blocks]
    return Matrix(axes=axes, rows=rows, compatible=compatible, excluded=excluded, checked=walk.checked,
                  coverage=coverage, _blocks=blocks, _order=walk.order)


def _merge(exclusions: list[Exclusion], axes: Axes) -> tuple[list[Exclusion], dict[int, int]]:
    """Exclusions for the same finding that differ in the values of one axis
    alone, as one: a requirement learned once per Python is one line, not
    one per Python. Returns them, and each original's (by id) new number."""
    position = {axis.name: {v: i for i, v in enumerate(axis.values)} for axis in axes.axes}
    merged: list[Exclusion] = []
    members: list[list[Exclusion]] = []
    for exclusion in exclusions:
        for number, other in enumerate(merged):
            axis = _differs_in_one(other, exclusion)
            if axis is not None:
                union = sorted({*other.values[axis], *exclusion.values[axis]}, key=position[axis].__getitem__)
                merged[number] = Exclusion({**other.values, axis: tuple(union)}, other.finding,
                                           other.cells + exclusion.cells)
                members[number].append(exclusion)
                break
        else:
            merged.append(Exclusion(dict(exclusion.values), exclusion.finding, exclusion.cells))
            members.append([exclusion])
    return merged, {id(e): number for number, group in enumerate(members) for e in group}


def _differs_in_one(a: Exclusion, b: Exclusion) -> str | None:
    """The one axis whose values tell `a` and `b` apart, when they are for the same finding."""
    if a.finding.id != b.finding.id or a.values.keys() != b.values.keys():
        return None
    differ = [name for name in a.values if a.values[name] != b.values[name]]
    return differ[0] if len(differ) == 1 else None


def _file_order(walk: Sequence[int], order: Sequence[int]) -> Choice:
    choice = [0] * len(order)
    for position, axis in enumerate(order):
        choice[axis] = walk[position]
    return tuple(choice)


def _advance(walk: list[int], sizes: Sequence[int], depth: int) -> int | None:
    """Move `walk` to the first cell after the sub-product fixed up to
    `depth`; returns the shallowest depth that changed, or None at the end."""
    for position in range(depth + 1, len(walk)):
        walk[position] = 0
    while depth >= 0:
        walk[depth] += 1
        if walk[depth] < sizes[depth]:
            return depth
        walk[depth] = 0
        depth -= 1
    return None


def _remaining(walk: Sequence[int], sizes: Sequence[int], depth: int) -> int:
    """Cells from `walk` to the end of the sub-product fixed up to `depth`."""
    offset = 0
    for position in range(depth + 1, len(walk)):
        offset = offset * sizes[position] + walk[position]
    return math.prod(sizes[depth + 1:]) - offset


class _Walk:
    """The walk of the product: cells in order, incompatibilities learned on the way."""

    def __init__(self, axes: Axes, check: Check, progress: Progress | None) -> None:
        self.axes = axes
        self.check = check
        self.progress = progress
        # Small axes first: an incompatibility is tested where its deepest axis is fixed.
        self.order = tuple(sorted(range(len(axes.axes)), key=lambda a: (len(axes.axes[a].values), a)))
        self.depth_of = {axis: depth for depth, axis in enumerate(self.order)}
        self.sizes = [len(axes.axes[a].values) for a in self.order]
        self.learner = _Learner(axes)
        self.rows: list[Row] = []
        self.exclusions: list[Exclusion] = []
        self.blocks: list[_Block] = []
        self.checked = 0
        self.done = 0
        # nogoods by (depth of their deepest axis, value there)
        self._index: dict[tuple[int, int], list[tuple[_Nogood, int]]] = {}
        self._known: dict[_Nogood, int] = {}
        self._nogoods: list[_Nogood] = []  # by exclusion number
        self._axis_packages = frozenset(a.key for a in axes.axes if a.is_package)

    def run(self) -> None:
        walk = [0] * len(self.order)
        verified = 0
        while True:
            hit = self._covered(walk, verified)
            if hit is not None:
                depth, exclusion = hit
                changed = self._drop(walk, depth, exclusion)
            else:
                changed = self._visit(walk)
            if changed is None:
                return
            verified = changed

    def _covered(self, walk: Sequence[int], start: int) -> tuple[int, int] | None:
        """The shallowest depth from `start` at which a known incompatibility covers the walk's prefix."""
        choice = None
        for depth in range(start, len(walk)):
            candidates = self._index.get((depth, walk[depth]))
            if not candidates:
                continue
            choice = choice or _file_order(walk, self.order)
            for nogood, exclusion in candidates:
                if nogood.holds(choice):
                    return depth, exclusion
        return None

    def _drop(self, walk: list[int], depth: int, exclusion: int) -> int | None:
        cells = _remaining(walk, self.sizes, depth)
        self.blocks.append(_Block(tuple(walk), depth, exclusion, cells))
        self.exclusions[exclusion].cells += cells
        self._advance_progress(cells)
        return _advance(walk, self.sizes, depth)

    def _visit(self, walk: list[int]) -> int | None:
        """Check the cell at `walk`; keep it, or learn why it fails and drop what that covers."""
        choice = _file_order(walk, self.order)
        try:
            report = self.check(choice)
        except StackError as error:  # values each valid alone that no stack accepts together
            return self._drop_alone(walk, choice, _invalid(error))
        except CompatError as error:  # a resolution too complex for the budget, say: which cell
            shown = ", ".join(f"{k}={v}" for k, v in self.axes.values(choice).items())
            raise type(error)(f"the cell {shown}: {error.message}", file=self.axes.shown_file) from None
        self.checked += 1
        if report.ok:
            self.rows.append(Row(choice, self.axes.values(choice), report, self._axis_packages))
            self._advance_progress(1)
            return _advance(walk, self.sizes, len(walk) - 1)
        learned = [self._remember(nogood, finding) for nogood, finding in self.learner.learn(report, choice)]
        if not learned:  # nothing generalizes: this cell alone
            return self._drop_alone(walk, choice, _failing(report)[0])
        depth, exclusion = min((self._deepest(self._nogoods[e]), e) for e in learned)
        return self._drop(walk, depth, exclusion)

    def _drop_alone(self, walk: list[int], choice: Choice, finding: Finding) -> int | None:
        exact = _Nogood(tuple((a, frozenset([i])) for a, i in enumerate(choice)))
        return self._drop(walk, len(walk) - 1, self._remember(exact, finding, index=False))

    def _remember(self, nogood: _Nogood, finding: Finding, *, index: bool = True) -> int:
        """The number of the exclusion for `nogood`, made (and indexed for the walk) if it is new."""
        if nogood in self._known:
            return self._known[nogood]
        values = {self.axes.axes[a].name: tuple(self.axes.axes[a].values[i] for i in sorted(v))
                  for a, v in nogood.axes}
        self.exclusions.append(Exclusion(values, finding))
        self._nogoods.append(nogood)
        number = self._known[nogood] = len(self.exclusions) - 1
        if index and nogood.axes:  # (one of no axes drops the rest of the product now, and is never met again)
            depth = self._deepest(nogood)
            for value in dict(nogood.axes)[self.order[depth]]:
                self._index.setdefault((depth, value), []).append((nogood, number))
        return number

    def _deepest(self, nogood: _Nogood) -> int:
        """The walk depth where `nogood` is decided; -1 for one that holds everywhere."""
        return max((self.depth_of[a] for a, _ in nogood.axes), default=-1)

    def _advance_progress(self, cells: int) -> None:
        self.done += cells
        if self.progress is not None:
            self.progress(self.done, self.axes.cells)


def _failing(report: Report) -> list[Finding]:
    """The findings that make the check fail: its errors, and under strict its warnings."""
    return report.errors + (report.warnings if report.strict else [])


def _invalid(error: StackError) -> Finding:
    """The finding of a cell no stack file could state: the reader's error."""
    where = f"{error.key}: " if error.key else ""
    return Finding(id="invalid-stack", severity="error", message=f"not a valid stack: {where}{error.message}",
                   components=(), kind="stack", layer="stack")


class _Learner:
    """Turns a failing finding into an incompatibility of axis values, when it
    depends on nothing else the cells vary.

    A finding names the components it involves: packages, and ``python``,
    ``cuda``, ``driver``, ``gpu`` for the machine. It generalizes when each
    of them is an axis or fixed by the base (a pinned package, a field no
    axis sets); a package the resolver chose varies with the cell, so a
    finding naming one stays with its cell. What a finding depends on
    without naming it is held fixed too: Python and the platform (the markers
    of every requirement, the wheels), the GPU when the axes mix
    accelerators (rules may test the accelerator), and for a build every
    field of the machine. A conflict, or a resolution that failed as a
    whole, never generalizes.
    """

    def __init__(self, axes: Axes) -> None:
        self.axes = axes
        self.by_label: dict[str, int] = {axis.label: i for i, axis in enumerate(axes.axes)}
        context = {"python", "platform"}
        if len(axes.accelerators) > 1:
            context.add("gpu")
        self.context = sorted(self.by_label[label] for label in context if label in self.by_label)
        # how a build fits is judged against the whole machine (its CUDA decides which driver it needs)
        self.machine = sorted(i for i, axis in enumerate(axes.axes) if not axis.is_package)

    def learn(self, report: Report, choice: Choice) -> Iterator[tuple[_Nogood, Finding]]:
        for finding in _failing(report):
            nogood = self.nogood(finding, report, choice)
            if nogood is not None:
                yield nogood, finding

    def nogood(self, finding: Finding, report: Report, choice: Choice) -> _Nogood | None:
        if finding.kind in ("conflict", "stack") or finding.id == "unresolvable" or not finding.components:
            return None
        # a release that requires what the index does not have depends on that release alone
        components = finding.components[:1] if finding.kind == "existence" else finding.components
        axes = set(self.machine if finding.kind == "build" else self.context)
        for component in components:
            if component in self.by_label:
                axes.add(self.by_label[component])
            elif not self._fixed(component, report):
                return None
        values = {a: frozenset([choice[a]]) for a in axes}
        target = self._target(finding, choice)
        if target is not None:
            values[target[0]] = target[1]
        return _Nogood(tuple(sorted(values.items())))

    def _fixed(self, component: str, report: Report) -> bool:
        """Whether the base fixes `component` for every cell: a pinned package, or a field no axis sets."""
        if component in _SYSTEM_LABELS:
            return True
        spec = report.stack.packages.get(component)
        return spec is not None and spec.pinned is not None

    def _target(self, finding: Finding, choice: Choice) -> tuple[int, frozenset[int]] | None:
        """For an unmet requirement on an axis, every value of that axis it refuses."""
        requirement = (finding.details or {}).get("requirement")
        if finding.kind != "requirement" or not isinstance(requirement, str) or len(finding.components) != 2:
            return None
        label = "python" if finding.id.startswith("requires-python:") else finding.components[1]
        axis = self.by_label.get(label)
        if axis is None or label in ("gpu", "platform"):
            return None
        try:
            if self.axes.axes[axis].is_package:
                parsed = Requirement(requirement)
                if normalize(parsed.name) != label or parsed.marker is not None or parsed.extras:
                    return None
                specifier = parsed.specifier
            else:
                specifier = SpecifierSet(requirement)
            refused = frozenset(i for i, value in enumerate(self.axes.axes[axis].values)
                                if not specifier.contains(Version(Version(value).public), prereleases=True))
        except (InvalidRequirement, InvalidSpecifier, InvalidVersion):
            return None
        return (axis, refused) if choice[axis] in refused else None
