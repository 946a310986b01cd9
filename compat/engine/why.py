"""`compat why NAME`: every constraint on a component, and which bind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from .._versions import spec_text
from ..knowledge.conditions import UNKNOWN
from ..knowledge.database import Database
from ..sources.stack import Stack
from .facts import StackFacts
from .resolver import resolve

__all__ = ["Constraint", "WhyReport", "constraints_on", "render"]


@dataclass
class Constraint:
    """A requirement on the target, from some releases of a component, or a rule."""

    source: str  # "vllm 0.30.0 - 0.31.0", or "rule <id>"
    requirement: str
    layer: str  # metadata, curated, rule
    conditions: str = ""
    kind: str = "requirement"
    binds: bool | None = None  # with a stack: does it apply to the stack's choice?
    holds: bool | None = None  # with a stack: is it met?


@dataclass
class WhyReport:
    target: str
    constraints: list[Constraint] = field(default_factory=list)
    chosen: str | None = None
    stack: str | None = None


def _ranges(versions: list[Version]) -> str:
    if len(versions) == 1:
        return str(versions[0])
    return f"{versions[0]} - {versions[-1]} ({len(versions)} releases)"


def constraints_on(target: str, db: Database, stack: Stack | None = None) -> WhyReport:
    report = WhyReport(target)
    chosen: dict[str, Version | None] = {}
    if stack is not None:
        resolution = resolve(stack, db)
        chosen = {k: c.version for k, c in resolution.versions.items() if not k.startswith("__")}
        if not resolution.ok:
            chosen = {n: s.pinned for n, s in stack.packages.items()}
        report.stack = stack.path or "<stack>"
        version = chosen.get(target)
        report.chosen = str(version) if version is not None else None
    facts = StackFacts(stack, chosen) if stack is not None else None

    for component in db.components():
        if component.name == target:
            continue
        groups: dict[tuple[SpecifierSet, str, str], list[Version]] = {}
        for version in component.versions():
            release = component.releases[version]
            for dependency in release.dependencies:
                requirement = dependency.requirement
                if canonicalize_name(requirement.name) != target:
                    continue
                key = (requirement.specifier, str(requirement.marker or ""), dependency.layer)
                groups.setdefault(key, []).append(version)
        for (spec, marker, layer), versions in sorted(groups.items(), key=lambda item: item[1][0]):
            constraint = Constraint(f"{component.name} {_ranges(versions)}", f"{target}{spec_text(spec)}", layer, marker)
            if stack is not None:
                constraint.binds = chosen.get(component.name) in versions
                have = chosen.get(target)
                if constraint.binds and have is not None:
                    constraint.holds = spec.contains(have, prereleases=True)
            report.constraints.append(constraint)
        for rule in component.rules:
            tests = [t for c in (rule.when, rule.require) if c is not None for t in c.walk()]
            if any(t.kind == "package" and t.key == target for t in tests):
                report.constraints.append(_rule_constraint(rule, component, chosen, facts))

    own = db.component(target)
    if own is not None:
        for rule in own.rules:
            report.constraints.append(_rule_constraint(rule, own, chosen, facts))
    return report


def _rule_constraint(rule: Any, component: Any, chosen: dict[str, Version | None], facts: StackFacts | None) -> Constraint:
    text = rule.require.describe() if rule.require is not None else rule.message
    constraint = Constraint(
        f"rule {rule.id} ({rule.kind}, {component.name} {spec_text(rule.releases) or 'all releases'})",
        text,
        "rule",
        "" if rule.when.is_empty else rule.when.describe(),
        rule.kind,
    )
    if facts is not None:
        scoped = facts.for_component(component)
        applies = rule.covers(chosen.get(component.name)) and rule.when.evaluate(scoped) is True
        constraint.binds = applies
        if applies and rule.require is not None:
            result = rule.require.evaluate(scoped)
            constraint.holds = None if result is UNKNOWN else bool(result)
    return constraint


def render(report: WhyReport) -> str:
    lines = [f"Constraints on {report.target}" + (f" in {report.stack} (chosen: {report.chosen or 'none'})" if report.stack else "")]
    if not report.constraints:
        lines.append("  none in the database")
    ordered = sorted(report.constraints, key=lambda c: (c.binds is not True, c.layer == "rule", c.source))
    for constraint in ordered:
        mark = ""
        if report.stack is not None:
            if not constraint.binds:
                mark = "   "
            elif constraint.kind != "requirement":
                mark = " ! "
            elif constraint.holds is False:
                mark = " ✗ "
            elif constraint.holds is None:
                mark = " ? "
            else:
                mark = " ✓ "
        where = f" [{constraint.layer}]"
        when = f" when {constraint.conditions}" if constraint.conditions else ""
        lines.append(f" {mark}{constraint.source}: {constraint.requirement}{when}{where}")
    if report.stack is not None:
        lines.append("")
        lines.append("  ✓ binds and holds · ✗ binds and fails · ? binds, cannot be decided · ! a note or known issue that applies · blank: does not bind this stack")
    return "\n".join(lines) + "\n"
