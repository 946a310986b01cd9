"""The plain data of an upgrade plan, a stack diff and an outdated report.

A `Plan` says what moves between two stacks (`Move`: a package, the machine
or a flag, from what to what, and why), and what the database knows that
changes with it for this stack (`Crossing`: a known issue fixed or
introduced, a behaviour change, a note), each with the conditions it holds
under and its source. `upgrade.py` makes them; `formats/` renders them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._record import Record

if TYPE_CHECKING:
    from ..knowledge.model import Source
    from ..stack import Stack
    from .findings import Finding, Report

__all__ = ["Move", "Crossing", "Plan", "Outdated", "OutdatedReport", "CATEGORIES"]


# What an upgrade crosses, in the order a reader wants them.
CATEGORIES = {
    "introduced": "Known issues introduced",
    "behaviour-change": "Behaviour changes",
    "fixed": "Known issues fixed",
    "note": "Notes (performance, requirements, scope)",
    "reverted": "Changes undone by moving back",
}
# One of each, and more than one, as the summary line counts them.
_COUNTED = {
    "introduced": ("known issue introduced", "known issues introduced"),
    "behaviour-change": ("behaviour change", "behaviour changes"),
    "fixed": ("known issue fixed", "known issues fixed"),
    "note": ("note", "notes"),
    "reverted": ("change undone", "changes undone"),
}


class Move(Record):
    """One row of the change table."""

    component: str  # a package, "Python", "CUDA", "NVIDIA driver", "GPU", or "vllm --kv-cache-dtype"
    old: str | None  # None: added
    new: str | None  # None: removed
    kind: str  # package, resolved (a dependency the stack does not name), python, cuda, driver, gpu, index, option
    why: str

    @property
    def by_pip(self) -> bool:
        """Whether an installer makes this change (the machine and the flags are the deployment's; an
        index is the installer's own --index-url)."""
        return self.kind in ("package", "resolved", "index")

    def to_dict(self) -> dict[str, Any]:
        return {"component": self.component, "from": self.old, "to": self.new, "kind": self.kind,
                "by_pip": self.by_pip, "why": self.why}


class Crossing(Record):
    """A fact of the database that the move from `old` to `new` crosses and
    that applies to the stack (or, in `Plan.undecided`, that the stack does
    not say enough to decide)."""

    id: str
    component: str
    category: str  # a key of CATEGORIES
    severity: str
    message: str
    conditions: str  # the rule's conditions, as the database states them ("always" when none)
    releases: str  # the releases the rule covers ("vllm >=0.32.0"), and the one that introduced it
    old: str | None
    new: str | None
    source: Source | None = None
    basis: str | None = None  # set when the fact is inferred, not stated by its source
    unknown: str | None = None  # for an undecided one: what the stack does not say
    layer: str = "curated"  # "local": a fact of the user's overlay (its message says so, as a check's does)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id, "component": self.component, "category": self.category, "severity": self.severity,
            "message": self.message, "conditions": self.conditions, "releases": self.releases,
            "from": self.old, "to": self.new,
            "source": self.source.cite() if self.source else None, "inferred": self.basis is not None,
            "layer": self.layer,
        }
        if self.source is not None:
            data["source_detail"] = self.source.to_dict()
        if self.basis is not None:
            data["basis"] = self.basis
        if self.unknown is not None:
            data["unknown"] = self.unknown
        return data


@dataclass
class Plan:
    """What moves from `old` to `new` and what that changes for this stack.

    `ok` when the new stack passes a check; otherwise `reason` says why no
    plan reaches the target, and `report` is the failing check."""

    kind: str  # "upgrade" or "diff"
    old: Stack
    new: Stack | None
    targets: list[str]
    moves: list[Move] = field(default_factory=list)
    crossings: list[Crossing] = field(default_factory=list)
    undecided: list[Crossing] = field(default_factory=list)
    report: Report | None = None  # the check of the new stack
    old_report: Report | None = None
    reason: str | None = None
    # moves of dependencies the new stack's resolution makes but nothing requires: an installer that
    # upgrades only what it must keeps the old release, and a check with it pinned passes
    optional: list[Move] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.report is not None and self.report.ok and self.reason is None

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1

    @property
    def outside_pip(self) -> list[Move]:
        return [m for m in self.moves if not m.by_pip]

    def by_category(self) -> list[tuple[str, list[Crossing]]]:
        """The crossings grouped as CATEGORIES orders them (empty groups left out)."""
        groups = [(c, [x for x in self.crossings if x.category == c]) for c in CATEGORIES]
        return [(c, group) for c, group in groups if group]

    def summary(self) -> str:
        """One line: what moves, what it brings, and the verdict."""
        if self.reason is not None:
            return f"no plan: {self.reason}"
        moves = len(self.moves)
        parts = [f"{moves} change{'s' if moves != 1 else ''}"]
        if self.outside_pip:
            parts[0] += f" ({len(self.outside_pip)} outside pip)"
        if self.optional:
            parts[0] += f" ({len(self.optional)} more not required)"
        for category, group in self.by_category():
            parts.append(f"{len(group)} {_COUNTED[category][len(group) != 1]}")
        assert self.report is not None
        report = self.report
        verdict = "passes compat check" if report.ok else "fails compat check"
        counts = f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
        return f"{', '.join(parts)}; the new stack {verdict} ({counts})"

    def problems(self) -> list[Finding]:
        """The new stack's errors and warnings that the crossings do not
        already say (its notes are the check's business)."""
        if self.report is None:
            return []
        said = {c.id for c in self.crossings}
        return [f for f in self.report.active if f.severity in ("error", "warning") and f.id not in said]

    def to_dict(self) -> dict[str, Any]:
        new = self.new
        return {
            "schema": 1,
            "kind": self.kind,
            "ok": self.ok,
            "summary": self.summary(),
            "targets": list(self.targets),
            "old": _stack_dict(self.old, self.old_report),
            "new": _stack_dict(new, self.report) if new is not None else None,
            "changes": [m.to_dict() for m in self.moves],
            "optional_changes": [m.to_dict() for m in self.optional],
            "crossings": [c.to_dict() for c in self.crossings],
            "undecided": [c.to_dict() for c in self.undecided],
            "reason": self.reason,
            "check": self.report.to_dict() if self.report is not None else None,
        }


def _stack_dict(stack: Stack, report: Report | None) -> dict[str, Any]:
    system, hardware = stack.system, stack.hardware
    return {
        "path": stack.path,
        "name": stack.name,
        "python": str(system.python),
        "cuda": str(system.cuda) if system.cuda else None,
        "driver": system.driver_written,
        "gpu": hardware.gpu.name if hardware.gpu else None,
        "packages": dict(report.packages) if report is not None else {n: s.written for n, s in stack.packages.items()},
        "resolved": dict(report.resolved) if report is not None else {},
    }


class Outdated(Record):
    """One component of a stack against the releases the database holds."""

    name: str
    current: str
    fits: str | None  # the newest release it could move to without breaking anything else (None: none newer)
    newest: str | None  # the newest release at all (None: the database holds none)
    blocked_by: tuple[str, ...] = ()  # why `newest` does not fit: the errors of a check with it
    note: str | None = None  # a package the database does not track, an application with no release held

    @property
    def status(self) -> str:
        if self.note is not None:
            return "unknown"
        if self.newest is None or self.current == self.newest:
            return "up to date"
        if self.fits == self.newest:
            return "can move"
        return "blocked" if self.fits is None else "partly blocked"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "current": self.current, "fits": self.fits, "newest": self.newest,
                "status": self.status, "blocked_by": list(self.blocked_by), "note": self.note}


@dataclass
class OutdatedReport:
    stack: Stack
    entries: list[Outdated]
    report: Report  # the check of the stack as it is

    @property
    def exit_code(self) -> int:
        return 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": 1,
            "stack": self.stack.path,
            "ok": self.report.ok,
            "components": [e.to_dict() for e in self.entries],
        }
