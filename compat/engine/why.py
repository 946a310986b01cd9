"""`compat why NAME`: every constraint on a package or on the machine, and which bind.

A package's constraints are what other releases require of it (their own
metadata, and the database's curated requirements) and the rules that test
it. The machine's subjects (``python``, ``cuda``, ``driver``, ``rocm``,
``gpu``) are constrained by the releases' Requires-Python, the rules that
test them, the builds that target them and the driver each CUDA major needs.

With a stack, each constraint says whether it binds the stack's choice and
whether it holds, and the stack's own constraint is shown first. Why a range
landed where it did is the check's own answer, not a second judgement: each
newer release the stack admits is pinned and checked, and the errors that
check adds are what stopped it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._names import did_you_mean, normalize
from .._versions import spec_text
from ..errors import CompatError
from ..knowledge.conditions import LABELS, UNKNOWN
from ..knowledge.database import Database
from ..knowledge.model import Build, Component, Release, Rule
from ..stack import PackageSpec, Stack
from .builds import judge_build, select_build
from .facts import StackFacts

__all__ = ["Constraint", "Stopped", "WhyReport", "MACHINE", "constraints_on", "render"]

# A machine subject, and the condition keys of the database that test it.
MACHINE: dict[str, tuple[str, ...]] = {
    "python": ("python",),
    "cuda": ("cuda",),
    "driver": ("driver",),
    "rocm": ("rocm",),
    "gpu": ("compute_capability", "gpu", "gpu_arch", "gpu_segment", "gpu_count", "accelerator"),
}
# How many newer releases the stack admits are checked to say what stops them
# (nearest first): each is a full check.
MAX_CHECKED = 3
# The order of the layers in a listing: the stack's own constraint first.
_VENDORS = {"cuda": "NVIDIA", "rocm": "AMD"}
_LAYERS = {"stack": 0, "metadata": 1, "curated": 1, "build": 2, "cuda": 3, "rule": 4}


@dataclass
class Constraint:
    """A requirement on the subject, from some releases of a component, a
    build, a rule, the CUDA driver table, or the stack itself."""

    origin: str  # "vllm 0.30.0 - 0.31.0 (2 releases)", "rule <id> (...)", "the stack"
    requirement: str
    layer: str  # stack, metadata, curated, rule, build, cuda
    conditions: str = ""
    kind: str = "requirement"
    binds: bool | None = None  # with a stack: does it apply to the stack's choice?
    holds: bool | None = None  # with a stack: is it met? (None: cannot be decided)
    component: str = ""
    versions: tuple[Version, ...] = ()  # the releases it comes from, oldest first
    rule: str | None = None
    source: str | None = None  # the cited source, where the database names one
    order: Version = Version("0")  # where it sorts among its peers when it comes from no releases

    def sort_key(self) -> tuple[Any, ...]:
        """The stack's own first, then those that bind and fail, those that
        bind, the rest; within each by layer, component and release, in
        version order (0.9 before 0.10)."""
        first = self.versions[0] if self.versions else self.order
        return (self.layer != "stack", self.binds is not True, self.holds is not False, _LAYERS.get(self.layer, 9),
                self.component, first, self.requirement, self.origin)

    def to_dict(self) -> dict[str, Any]:
        releases = None
        if self.versions:
            releases = {"first": str(self.versions[0]), "last": str(self.versions[-1]), "count": len(self.versions)}
        return {
            "from": self.origin,
            "component": self.component or None,
            "releases": releases,
            "requirement": self.requirement,
            "layer": self.layer,
            "kind": self.kind,
            "when": self.conditions or None,
            "rule": self.rule,
            "source": self.source,
            "binds": self.binds,
            "holds": self.holds,
        }


@dataclass
class Stopped:
    """A release newer than the one chosen, and the errors a check of the
    stack with it pinned adds: what keeps it out."""

    version: str
    errors: list[tuple[str, str]]  # (finding ID, message)

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "errors": [{"id": i, "message": m} for i, m in self.errors]}


@dataclass
class WhyReport:
    """The constraints on one subject, and with a stack, where it landed and why."""

    target: str
    kind: str  # "package" or "machine"
    constraints: list[Constraint] = field(default_factory=list)
    stack: str | None = None
    chosen: str | None = None  # the version chosen (a package), or the stack's value (the machine)
    own: str | None = None  # the stack's own constraint, as written
    resolved: bool | None = None  # with a stack: did it resolve?
    stopped: list[Stopped] = field(default_factory=list)  # newer releases the stack admits, nearest first
    unchecked: list[str] = field(default_factory=list)  # newer releases the stack admits, beyond those checked
    excluded: list[str] = field(default_factory=list)  # newer releases the stack's own constraint excludes

    @property
    def label(self) -> str:
        """The subject as people write it: ``Python``, ``GPU``, ``vllm``."""
        if self.kind == "machine":
            return "GPU" if self.target == "gpu" else LABELS[self.target]
        return self.target

    def ordered(self) -> list[Constraint]:
        return sorted(self.constraints, key=Constraint.sort_key)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": 1,
            "subject": self.target,
            "kind": self.kind,
            "stack": self.stack,
            "resolved": self.resolved,
            "chosen": self.chosen,
            "stack_constraint": self.own,
            "constraints": [c.to_dict() for c in self.ordered()],
            "newer": {
                "stopped": [s.to_dict() for s in self.stopped],
                "unchecked": list(self.unchecked),
                "excluded_by_stack": list(self.excluded),
            },
        }


def _span(versions: list[Version]) -> str:
    if len(versions) == 1:
        return str(versions[0])
    return f"{versions[0]} - {versions[-1]} ({len(versions)} releases)"


def _cite(db: Database, source_id: str | None) -> str | None:
    source = db.source(source_id)
    return source.cite() if source is not None else source_id


def constraints_on(target: str, db: Database, stack: Stack | None = None) -> WhyReport:
    """Every constraint on `target` (a normalized package name, or one of
    MACHINE), marked against `stack` when one is given. A name the database
    does not know, nor the stack names, is a `CompatError`."""
    kind = "machine" if target in MACHINE else "package"
    if kind == "package" and target not in db.names() and (stack is None or target not in stack.packages):
        raise CompatError(f"{target!r} is not in the database{did_you_mean(target, [*db.names(), *MACHINE])}")
    report = WhyReport(target, kind)
    chosen: dict[str, Version | None] = {}
    facts: StackFacts | None = None
    if stack is not None:
        from .resolver import resolve

        resolution = resolve(stack, db, closure=True)  # the whole install, as the check judges it
        report.resolved = resolution.ok
        if resolution.ok:
            chosen = {k: c.version for k, c in resolution.versions.items() if not k.startswith("__")}
        else:  # the check judges a stack that does not resolve by its own pins
            chosen = {n: s.pinned for n, s in stack.packages.items()}
        report.stack = stack.path or "<stack>"
        facts = StackFacts(stack, chosen)
    curated = db.curated()  # the components whose rules, builds and curated requirements live nowhere else
    if kind == "package":
        _package(report, db, curated, stack, chosen, facts)
    else:
        _machine(report, db, curated, stack, chosen, facts)
    return report


def _load(db: Database, names: set[str] | None) -> list[Component]:
    """The components called `names` (None: every one), by name."""
    if names is None:
        return db.components()
    return [c for c in (db.component(n) for n in sorted(names)) if c is not None]


# -- a package ------------------------------------------------------------------------------------


def _package(report: WhyReport, db: Database, curated: set[str], stack: Stack | None,
             chosen: dict[str, Version | None], facts: StackFacts | None) -> None:
    target = report.target
    naming = _requirers(db, target)
    for component in _load(db, None if naming is None else naming | curated):
        if component.name == target:
            continue
        _requirements_of(report, component, target, chosen, stack)
        for rule in component.rules:
            tests = [t for c in (rule.when, rule.require) if c is not None for t in c.walk()]
            if any(t.kind == "package" and t.key == target for t in tests):
                report.constraints.append(_rule_constraint(rule, component, chosen, facts, db))
    own = db.component(target)
    if own is not None:
        report.constraints.extend(_rule_constraint(rule, own, chosen, facts, db) for rule in own.rules)
    if stack is None:
        return
    version = chosen.get(target)
    report.chosen = str(version) if version is not None else None
    spec = stack.packages.get(target)
    if spec is not None:
        report.own = f"{target}{spec_text(spec.specifier)}" if str(spec.specifier) else target
        holds = None if version is None else spec.specifier.contains(version, prereleases=True)
        report.constraints.append(Constraint("the stack", report.own, "stack", binds=True, holds=holds,
                                             component=target))
    if report.resolved and version is not None and own is not None and own.releases:
        _landing(report, db, stack, own, version, spec)


def _requirers(db: Database, target: str) -> set[str] | None:
    """The packages whose metadata may name `target` (the snapshots' names
    graph, a superset), or None when the database has no graph: then all."""
    from ..knowledge.graph import requirers

    graph = db.graph()
    if not graph:
        return None
    return {node.split("[", 1)[0] for node in requirers(graph, target)}  # sdk[hub]: a line of sdk's extra


def _naming(release: Release, target: str) -> list[tuple[Requirement, str]]:
    """The requirements of `release` on `target`, with their layers: its own
    Requires-Dist lines (every marker, every extra; those the database
    relaxes left out) and its curated ones. Only lines that can name the
    target are parsed: a large package declares hundreds."""
    out = []
    if target not in release.relaxed:
        for index, text in enumerate(release.requires_dist):
            if target not in text.lower().replace("_", "-").replace(".", "-"):
                continue
            requirement = release.requirement(index)
            if normalize(requirement.name) == target:
                out.append((requirement, "metadata"))
    out.extend((d.requirement, d.layer) for d in release.curated if normalize(d.requirement.name) == target)
    return out


def _requirements_of(report: WhyReport, component: Component, target: str, chosen: dict[str, Version | None],
                     stack: Stack | None) -> None:
    """The requirements of `component`'s releases on the target: runs of
    releases that say the same thing are one constraint."""
    groups: dict[tuple[str, str, str], list[Version]] = {}
    requirements: dict[tuple[str, str, str], Requirement] = {}
    for version in component.versions():
        for requirement, layer in _naming(component.releases[version], target):
            key = (str(requirement.specifier), str(requirement.marker or ""), layer)
            groups.setdefault(key, []).append(version)
            requirements[key] = requirement
    have = chosen.get(target)
    for key, versions in groups.items():
        requirement, layer = requirements[key], key[2]
        spec = requirement.specifier
        constraint = Constraint(f"{component.name} {_span(versions)}", f"{target}{spec_text(spec)}", layer,
                                key[1], component=component.name, versions=tuple(versions))
        if stack is not None:
            constraint.binds = chosen.get(component.name) in versions and _marker_holds(requirement, component, stack)
            if constraint.binds and have is not None:
                constraint.holds = spec.contains(have, prereleases=True)
        report.constraints.append(constraint)


def _marker_holds(requirement: Requirement, component: Component, stack: Stack) -> bool:
    """Whether a requirement's marker holds on the stack's machine, for the
    extras the stack asks of `component` (none: the lines of extras are out)."""
    if requirement.marker is None:
        return True
    spec = stack.packages.get(component.name)
    environment = stack.system.marker_environment()
    return any(requirement.marker.evaluate({**environment, "extra": extra})
               for extra in ("", *sorted(spec.extras if spec is not None else ())))


def _rule_constraint(rule: Rule, component: Component, chosen: dict[str, Version | None],
                     facts: StackFacts | None, db: Database) -> Constraint:
    text = rule.require.describe() if rule.require is not None else rule.message
    constraint = Constraint(
        f"rule {rule.id} ({rule.kind}, {component.name} {spec_text(rule.releases) or 'all releases'})",
        text,
        "rule",
        "" if rule.when.is_empty else rule.when.describe(),
        rule.kind,
        component=component.name,
        rule=rule.id,
        source=_cite(db, rule.source),
    )
    if facts is not None:
        scoped = facts.for_component(component)
        applies = rule.covers(chosen.get(component.name)) and rule.when.evaluate(scoped) is True
        constraint.binds = applies
        if applies and rule.require is not None:
            result = rule.require.evaluate(scoped)
            constraint.holds = None if result is UNKNOWN else bool(result)
    return constraint


def _landing(report: WhyReport, db: Database, stack: Stack, component: Component, version: Version,
             spec: PackageSpec | None) -> None:
    """Why the stack got `version` and no newer release: those its own
    constraint excludes, and, for the nearest few it admits, the errors a
    check with each pinned adds to the stack's own."""
    from .check import check_stack
    from .resolver import StackProvider

    provider = StackProvider(stack, db)
    allowed = spec.specifier if spec is not None else SpecifierSet()
    newer = [v for v in provider.known_versions(component.name, SpecifierSet(), [allowed]) if v > version]
    newer.reverse()  # nearest first
    admitted = [v for v in newer if allowed.contains(v, prereleases=True)]
    report.excluded = [str(v) for v in newer if v not in admitted]
    report.unchecked = [str(v) for v in admitted[MAX_CHECKED:]]
    if not admitted:
        return
    already = {f.id for f in check_stack(stack, db, suggest_fixes=False).errors}
    for candidate in admitted[:MAX_CHECKED]:
        errors = check_stack(_pinned(stack, component.name, candidate), db, suggest_fixes=False).errors
        report.stopped.append(Stopped(str(candidate), [(f.id, f.message) for f in errors if f.id not in already]))


def _pinned(stack: Stack, name: str, version: Version) -> Stack:
    """`stack` with `name` pinned to `version` (added if the stack does not name it)."""
    pin = SpecifierSet(f"=={version}")
    spec = stack.packages.get(name)
    entry = spec._replace(specifier=pin, written=str(version)) if spec is not None else \
        PackageSpec(name, pin, written=str(version))
    return stack.replace(packages={**stack.packages, name: entry})


# -- the machine ----------------------------------------------------------------------------------


def _machine(report: WhyReport, db: Database, curated: set[str], stack: Stack | None,
             chosen: dict[str, Version | None], facts: StackFacts | None) -> None:
    subject = report.target
    keys = MACHINE[subject]
    if subject == "python":
        graph = db.graph()
        scope = None if not graph else set(graph["tracked"]) | curated | {n for n, v in chosen.items() if v is not None}
        for component in _load(db, scope):
            _requires_python(report, component, stack, chosen)
    components = _load(db, curated)
    for component in components:
        for rule in component.rules:
            tests = [t for c in (rule.when, rule.require) if c is not None for t in c.walk()]
            if any(t.kind in ("version", "choice", "count") and t.key in keys for t in tests):
                report.constraints.append(_rule_constraint(rule, component, chosen, facts, db))
    if subject in ("cuda", "gpu"):
        _builds(report, db, components, stack, chosen)
    if subject in ("cuda", "driver"):
        _driver_floors(report, db, stack)
    if stack is not None:
        report.chosen, report.own = _stack_value(stack, subject)
        if report.own is not None:
            report.constraints.append(Constraint("the stack", report.own, "stack", binds=True, holds=True))


def _stack_value(stack: Stack, subject: str) -> tuple[str | None, str | None]:
    """The stack's value of a machine subject, and the stack's own words for it."""
    system, hardware = stack.system, stack.hardware
    if subject == "gpu":
        if hardware.gpu is not None:
            capability = f" (compute capability {hardware.compute_capability})" if hardware.compute_capability else ""
            return f"{hardware.gpu.name}{capability}", f"GPU {hardware.gpu.name}"
        if hardware.compute_capability is not None:
            return f"compute capability {hardware.compute_capability}", \
                f"compute capability {hardware.compute_capability}"
        return None, None
    value = {"python": system.python, "cuda": system.cuda, "rocm": system.rocm}.get(subject)
    if subject == "driver":
        value = system.driver_written or system.driver
    return (None, None) if value is None else (str(value), f"{LABELS[subject]} {value}")


def _requires_python(report: WhyReport, component: Component, stack: Stack | None,
                     chosen: dict[str, Version | None]) -> None:
    groups: dict[str, list[Version]] = {}
    specifiers: dict[str, SpecifierSet] = {}
    for version in component.versions():
        spec = component.releases[version].requires_python
        if spec is not None and str(spec):
            groups.setdefault(str(spec), []).append(version)
            specifiers[str(spec)] = spec
    for key, versions in groups.items():
        constraint = Constraint(f"{component.name} {_span(versions)}", f"Python {spec_text(specifiers[key])}",
                                "metadata", kind="requires-python", component=component.name,
                                versions=tuple(versions))
        if stack is not None:
            constraint.binds = chosen.get(component.name) in versions
            if constraint.binds:
                constraint.holds = specifiers[key].contains(stack.system.python, prereleases=True)
        report.constraints.append(constraint)


def _builds(report: WhyReport, db: Database, components: list[Component], stack: Stack | None,
            chosen: dict[str, Version | None]) -> None:
    """The builds that target a CUDA version or a GPU architecture; with a
    stack, the one each chosen release installs binds (and one the database
    infers from a release's own CUDA pins is listed too)."""
    subject = report.target
    selected: dict[str, Build] = {}
    if stack is not None:
        for name, version in chosen.items():
            component = db.component(name)
            release = component.release(version) if component is not None and version is not None else None
            if release is not None:
                found, _ = select_build(component, release, stack.packages.get(name), stack, db)  # type: ignore[arg-type]
                if found is not None:
                    selected[name] = found.build
    builds = [b for c in components for b in c.builds]
    builds += [b for b in selected.values() if b.layer == "metadata"]
    for build in builds:
        if subject == "cuda":
            if build.cuda is None:
                continue
            requirement = f"CUDA {build.cuda.major}.x (the build targets CUDA {build.cuda})"
        elif build.archs:
            requirement = f"a GPU it carries kernels for: {build.arch_text()}"
        elif build.needs_gpu and build.accelerator in _VENDORS:
            requirement = f"an {_VENDORS[build.accelerator]} GPU"
        else:
            continue
        constraint = Constraint(f"build {build.id} ({build.package} {spec_text(build.releases) or 'all releases'})",
                                requirement, "build", component=build.package, source=_cite(db, build.source))
        if stack is not None:
            mine = selected.get(build.package)
            constraint.binds = mine is not None and mine.id == build.id
            if constraint.binds:
                problems = judge_build(build, stack, db)
                constraint.holds = not any(p.severity == "error" and subject in p.components for p in problems)
        report.constraints.append(constraint)


def _driver_floors(report: WhyReport, db: Database, stack: Stack | None) -> None:
    """The oldest NVIDIA driver each CUDA major release runs on (cuda.toml)."""
    for major, (floor, source) in sorted(db.cuda.drivers.items()):
        constraint = Constraint(f"CUDA {major}.x", f"NVIDIA driver >={floor}", "cuda", order=Version(str(major)),
                                source=_cite(db, source))
        if stack is not None:
            cuda, driver = stack.system.cuda, stack.system.driver
            constraint.binds = cuda is not None and cuda.major == major
            if constraint.binds and driver is not None:
                constraint.holds = driver >= floor
        report.constraints.append(constraint)


# -- text -----------------------------------------------------------------------------------------


def _mark(constraint: Constraint) -> str:
    if not constraint.binds:
        return "   "
    if constraint.kind not in ("requirement", "requires-python"):
        return " ! "
    if constraint.holds is False:
        return " ✗ "
    if constraint.holds is None:
        return " ? "
    return " ✓ "


def render(report: WhyReport, show_all: bool = False) -> str:
    """The report for people: the constraints, binding ones first, and with
    a stack, why no newer release was chosen. With a stack and not
    `show_all`, only what binds it is listed (as `uv pip tree --invert`
    answers "why is this here"), and a line counts the rest."""
    head = f"Constraints on {report.label}"
    if report.stack is not None:
        what = "the stack has" if report.kind == "machine" else "chosen:"
        head += f" in {report.stack} ({what} {report.chosen or 'none'})"
    lines = [head]
    if report.stack is not None and report.resolved is False:
        lines.append("  the stack does not resolve (compat check says why): its own pins are judged")
    if not report.constraints:
        lines.append("  none in the database")
    hidden = 0
    for constraint in report.ordered():
        if report.stack is not None and not show_all and not constraint.binds:
            hidden += 1
            continue
        mark = _mark(constraint) if report.stack is not None else ""
        when = f" when {constraint.conditions}" if constraint.conditions else ""
        lines.append(f" {mark}{constraint.origin}: {constraint.requirement}{when} [{constraint.layer}]")
    if hidden:
        lines.append(f"  and {hidden} constraint(s) that do not bind this stack (--all lists them)")
    if report.stopped or report.excluded:
        lines += ["", f"Why {report.target} {report.chosen} and not a newer release",
                  "  (each newer release the stack admits, pinned and checked: the errors it adds)"]
        for stopped in report.stopped:
            if not stopped.errors:
                lines.append(f"  {stopped.version}: passes a check too (the resolver took {report.chosen} first)")
            for finding_id, message in stopped.errors:
                lines.append(f"  {stopped.version}: {message} [{finding_id}]")
        if report.unchecked:
            lines.append(f"  {_listed(report.unchecked)}: not checked (only the nearest {MAX_CHECKED} are)")
        if report.excluded:
            lines.append(f"  {_listed(report.excluded)}: excluded by the stack's own {report.own}")
    if report.stack is not None:
        lines.append("")
        legend = "  ✓ binds and holds · ✗ binds and fails · ? binds, cannot be decided · ! a note or known issue that applies"
        lines.append(legend + (" · blank: does not bind this stack" if show_all else ""))
    return "\n".join(lines) + "\n"


def _listed(versions: list[str]) -> str:
    """Newer releases, nearest first, as a span: ``5.21.0 - 5.24.0 (4 releases)``."""
    return versions[0] if len(versions) == 1 else f"{versions[0]} - {versions[-1]} ({len(versions)} releases)"
