"""The smallest changes that make a failing stack work.

Each error of a check names what it involves (vLLM and Transformers; vLLM
and Python; CUDA and the driver; the flag a rule tests), and a fix changes at
least one of those for every error. So the search takes the sets of up to
three such changes that meet every error, smallest first, and gives each
change values near the stack's own: the nearest release either side (the
newest, for a plan), the nearest Python, the driver or CUDA an error asks
for, a flag's default or its other values. A value is kept only if it fits
what does not move: the release's Requires-Python, wheels and build, its own
requirements on the stack's packages and theirs on it, the database's
requirement and lockstep rules, the flags the stack sets. That costs no
resolution. Only the combinations that fit are checked in full, nearest
first, each once; a suggestion is one whose check has no error. A check that
fails on a requirement of something that does not move (numba's numpy<2.5
while vLLM stays) narrows the next try. When nothing within reach works, the
search says so and why.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .._record import Record
from .._names import normalize
from .._versions import overlap, spec_text
from ..errors import ResolutionTooComplex
from ..knowledge.conditions import value_text
from ..knowledge.database import Database
from ..knowledge.layers import current_date
from ..knowledge.model import Component, Release
from ..stack import PackageSpec, Stack
from .builds import judge_build, select_build
from .facts import StackFacts
from .findings import Finding
from .judge import judge
from .resolver import StackProvider

if TYPE_CHECKING:
    from .findings import Report

__all__ = ["Change", "Suggestion", "Outcome", "search", "fitting", "MACHINE"]

MACHINE = ("python", "cuda", "driver", "platform")  # what pip cannot change
# How a change of the machine is named, in suggestions and in upgrade plans.
MACHINE_LABELS = {"python": "Python", "cuda": "CUDA", "driver": "NVIDIA driver", "gpu": "GPU",
                  "index": "[system] index", "platform": "[system] platform"}
MAX_SIZE = 3  # changes in one suggestion
MAX_CHECKS = 12  # full checks one search may run
_PER_AXIS = 2  # values tried for each change (one each side of the stack's own)
_WINDOW = 16  # releases each side of the stack's own that a suggestion may move to
_REFINEMENTS = 3  # re-tries of one set of changes after checks that narrow it


@dataclass(frozen=True)
class Change:
    """One change of a stack: a package's version, the machine's Python, CUDA
    or driver, or a flag (`name` "vllm-omni --diffusion-kv-cache-dtype",
    `new` "" for leaving it unset)."""

    name: str
    old: str
    new: str
    direction: str  # upgrade, downgrade, change
    kind: str = "package"  # package, python, cuda, driver, platform, index, option

    @property
    def by_pip(self) -> bool:
        """Whether an installer makes this change (not so the machine, nor a flag)."""
        return self.kind == "package"

    @property
    def verb(self) -> str:
        return "drop" if self.kind == "option" and not self.new else "use"

    def text(self) -> str:
        """The change as a suggestion says it, after its `verb`."""
        if self.kind == "option":
            if not self.new:
                return f"{self.name} (set to {self.old})"
            return f"{self.name} {self.new} (instead of {self.old or 'unset'})"
        name = MACHINE_LABELS.get(self.kind, self.name)
        new = f"{self.new} or newer" if self.kind == "driver" else self.new
        outside = "; not a change pip can make" if self.kind in MACHINE else ""
        if self.direction in ("upgrade", "downgrade"):
            return f"{name} {new} ({self.direction} from {self.old}{outside})"
        return f"{name} {new} (instead of {self.old}{outside})"


def say(changes: Iterable[Change]) -> str:
    """Changes as one sentence: "use A and B and drop C"."""
    parts: list[str] = []
    verb = None
    for change in changes:
        parts.append(change.text() if change.verb == verb else f"{change.verb} {change.text()}")
        verb = change.verb
    return " and ".join(parts)


@dataclass
class Suggestion:
    changes: tuple[Change, ...]
    distance: int
    moves: list[Change] = field(default_factory=list)
    stack: Stack | None = field(default=None, repr=False, compare=False)
    report: Report | None = field(default=None, repr=False, compare=False)  # the full check that verified it

    def text(self) -> str:
        text = say(self.changes)
        if self.moves:
            text += ", which also moves " + ", ".join(f"{m.name} to {m.new}" for m in self.moves)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": [{**dataclasses.asdict(c), "by_pip": c.by_pip} for c in self.changes],
            "moves": [dataclasses.asdict(m) for m in self.moves],
            "distance": self.distance,
            "text": self.text(),
        }


@dataclass
class Outcome:
    """What a search found, how many full checks it ran, and, when it found
    nothing, why (as a note of the report)."""

    suggestions: list[Suggestion]
    checks: int = 0
    reason: str | None = None
    axes: tuple[str, ...] = ()

    @property
    def unfixed(self) -> Finding | None:
        if self.suggestions or self.reason is None:
            return None
        return Finding(
            id="suggestions:none",
            severity="info",
            message=self.reason,
            components=self.axes,
            kind="suggestion",
            layer="stack",
        )


class Axis(Record):
    """Something a fix may change: a package, Python, CUDA, the driver, or a flag of a package."""

    kind: str  # package, python, cuda, driver, option
    name: str  # the package (for package and option), else the kind
    flag: str = ""

    def label(self) -> str:
        if self.kind == "option":
            return f"{self.name} --{self.flag}"
        return MACHINE_LABELS.get(self.kind, self.name)


class Constraint(Record):
    """A bound an error puts on one axis, while the other things it involves
    keep the values they had (`context`)."""

    axis: Axis
    specifier: SpecifierSet
    context: tuple[tuple[Axis, str], ...]


class Leaf(Record):
    """A fully chosen combination of changes, ready for a full check."""

    changes: tuple[Change, ...]
    distance: int
    stack: Stack
    values: tuple[tuple[Axis, str], ...]


def _on_build(error: Finding) -> tuple[str, str] | None:
    """(package, version) of an error on the build a release installs (its
    CUDA, driver, GPU architectures, platform or accelerator), else None."""
    if not (error.details or {}).get("build"):
        return None
    name, _, version = error.id.partition(":")[2].partition("==")
    return (name, version) if name and version else None


def _platform_asked(error: Finding) -> str | None:
    """The platform an error says the stack needs (``platform==linux-aarch64``), or None."""
    requirement = (error.details or {}).get("requirement")
    if isinstance(requirement, str) and requirement.startswith("platform=="):
        return requirement[len("platform=="):]
    return None


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


def _rank(changes: tuple[Change, ...], distance: int) -> tuple[int, int, int, list[str]]:
    """Fewest changes first; then those pip can make before the machine's; then the nearest."""
    return len(changes), sum(not c.by_pip for c in changes), distance, [c.text() for c in changes]


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


def search(
    stack: Stack,
    db: Database,
    errors: list[Finding],
    *,
    limit: int = 3,
    frozen: Iterable[str] = (),
    newest: bool = False,
    ignore: tuple[str, ...] | list[str] = (),
    max_checks: int = MAX_CHECKS,
    warned: Iterable[str] = (),
) -> Outcome:
    """The smallest verified changes that clear `errors` (the check of `stack`'s).

    `frozen` names packages (or python, cuda, driver) the search must not
    move: the targets of a plan;
    `newest` gives a package that must move its newest release that fits, as
    pip and uv do, rather than the nearest one; `ignore` is passed to the
    checks that verify each suggestion; `max_checks` bounds them; `warned`
    holds the IDs of the stack's own warnings (a fix may keep those, not
    add one on the packages of the errors)."""
    found = _Search(stack, db, errors, frozen=frozenset(frozen), newest=newest, ignore=tuple(ignore),
                    limit=limit, max_checks=max_checks, warned=frozenset(warned))
    return found.run()


def fitting(stack: Stack, db: Database, name: str, versions: Iterable[Version]) -> list[Version]:
    """Of `versions` of the stack's package `name`, those that can stand
    beside the rest of the stack as it is, by the search's own test (no
    resolution, no full check): what is worth a full check."""
    component = db.component(name)
    if component is None:
        return []
    finder = _Search(stack, db, [], frozen=frozenset(), newest=False, ignore=(), limit=0, max_checks=0)
    state = finder.base()
    state.values[name] = None
    return [v for v in versions if v in component.releases and finder.fits(component, v, state)]


class _State:
    """A partial choice of changes: the stack as changed so far, and the value
    (a Version, a SpecifierSet, or None while it is still to be chosen) of
    each package of the stack."""

    def __init__(self, stack: Stack, values: dict[str, Version | SpecifierSet | None],
                 changes: tuple[Change, ...] = (), chosen: tuple[tuple[Axis, str], ...] = (), distance: int = 0) -> None:
        self.stack = stack
        self.values = values
        self.changes = changes
        self.chosen = chosen
        self.distance = distance

    def then(self, axis: Axis, key: str, change: Change, distance: int, *, stack: Stack | None = None,
             value: Version | SpecifierSet | None = None) -> _State:
        values = dict(self.values)
        if axis.kind == "package":
            values[axis.name] = value
        return _State(stack or self.stack, values, (*self.changes, change), (*self.chosen, (axis, key)),
                      self.distance + distance)


class _Search:
    def __init__(self, stack: Stack, db: Database, errors: list[Finding], *, frozen: frozenset[str], newest: bool,
                 ignore: tuple[str, ...], limit: int, max_checks: int, warned: frozenset[str] = frozenset()) -> None:
        self.stack = stack
        self.db = db
        self.errors = errors
        self.warned = warned  # the stack's own warnings
        self.frozen = frozen
        self.newest = newest
        self.ignore = ignore
        self.limit = limit
        self.checks_left = max_checks
        self.checks = 0
        self.names = frozenset(stack.packages)
        self._providers: dict[tuple[Any, ...], StackProvider] = {}  # one per machine, index and labels
        # a release's requirement lines on the stack's packages, with their markers
        self._projected: dict[tuple[str, Version, frozenset[str]], list[tuple[str, SpecifierSet, Any]]] = {}
        self._markers: dict[tuple[int, str, frozenset[str]], bool] = {}
        self._reports: dict[tuple[tuple[Axis, str], ...], Report | None] = {}
        self.constraints: list[Constraint] = []
        self.nearest_failure: tuple[Leaf, Report] | None = None
        self.failures: list[tuple[frozenset[tuple[Axis, str]], set[Axis]]] = []  # (its changes, what its errors involve)
        self.leaves_tried = 0

    # -- what the errors involve -----------------------------------------------------

    def axes_of(self, error: Finding) -> set[Axis]:
        axes: set[Axis] = set()
        for name in error.components:
            if name in self.names and name not in self.frozen:
                axes.add(Axis("package", name))
            elif name == "python":
                axes.add(Axis("python", "python"))
            elif name in ("cuda", "driver") and self.stack.hardware.accelerator == "cuda":
                axes.update((Axis("cuda", "cuda"), Axis("driver", "driver")))
        if _on_build(error) is not None:  # another index serves another build of the release
            axes.add(Axis("index", "index"))
        if _platform_asked(error) is not None:  # a GPU that comes only with another host (GB200: aarch64)
            axes.add(Axis("platform", "platform"))
        axes.update(self.option_axes(error))
        return {a for a in axes if a.kind not in MACHINE or a.kind not in self.frozen}

    def option_axes(self, error: Finding) -> set[Axis]:
        """The flags the stack sets that the failing rule (or flag check) tests."""
        out: set[Axis] = set()
        if error.id.startswith(("option-value:", "option-removed:", "option-unknown:")):
            _, package, flag = error.id.split(":", 2)
            if flag in self.stack.options.get(package, {}):
                out.add(Axis("option", package, flag))
            return out
        for name in error.components:
            component = self.db.component(name) if name in self.stack.options else None
            rule = next((r for r in component.rules if r.id == error.id), None) if component else None
            if rule is None:
                continue
            for test in rule.when.walk():
                if test.kind == "option" and test.key in self.stack.options[name]:
                    out.add(Axis("option", name, test.key))
        return out

    def constraints_of(self, error: Finding, state: _State) -> list[Constraint]:
        """The bound an error's requirement puts on the axis it names, while the
        other axes of the error stay as they are in `state`."""
        requirement = (error.details or {}).get("requirement")
        if not isinstance(requirement, str):
            return []
        axis: Axis | None = None
        text = requirement
        machine = next((k for k in ("driver", "cuda") if requirement.startswith(k)
                        and requirement[len(k):][:1] in "<>=!~"), None)
        if error.id.startswith("requires-python:"):
            axis = Axis("python", "python")
        elif machine is not None:
            axis, text = Axis(machine, machine), requirement[len(machine):]
        else:
            try:
                parsed = Requirement(requirement)
            except InvalidRequirement:
                parsed = None
            if parsed is not None and parsed.url is None and parsed.marker is None \
                    and normalize(parsed.name) in self.names:
                axis = Axis("package", normalize(parsed.name))
                text = str(parsed.specifier)
        if axis is None or (axis.kind == "package" and axis.name in self.frozen):
            return []
        try:
            specifier = SpecifierSet(text.strip())
        except InvalidSpecifier:
            return []
        others = sorted(self.axes_of(error) - {axis})
        return [Constraint(axis, specifier, tuple((a, self.key_of(a, state)) for a in others))]

    def key_of(self, axis: Axis, state: _State) -> str:
        """The value of an axis in a state, as text."""
        chosen = dict(state.chosen)
        if axis in chosen:
            return chosen[axis]
        system = self.stack.system
        if axis.kind == "package":
            spec = self.stack.packages[axis.name]
            return str(spec.pinned) if spec.pinned is not None else str(spec.specifier)
        if axis.kind == "option":
            value = self.stack.options.get(axis.name, {}).get(axis.flag)
            return value_text(value) if value is not None else ""
        value = {"python": system.python, "cuda": system.cuda, "driver": system.driver, "index": system.index,
                 "platform": system.platform}[axis.kind]
        return str(value) if value is not None else ""

    def applicable(self, axis: Axis, state: _State) -> list[SpecifierSet]:
        return [c.specifier for c in self.constraints
                if c.axis == axis and all(self.key_of(a, state) == v for a, v in c.context)]

    # -- the search -----------------------------------------------------------------

    def base(self) -> _State:
        """The stack as it is: each package at its pin (or its range)."""
        return _State(self.stack, {n: s.pinned if s.pinned is not None else s.specifier
                                   for n, s in self.stack.packages.items()})

    def run(self) -> Outcome:
        if not self.errors:
            return self.outcome([], None)
        base = self.base()
        hits: list[set[Axis]] = []
        for error in self.errors:
            axes = self.axes_of(error)
            if not axes:
                return self.outcome([], self.unreachable(error))
            hits.append(axes)
            self.constraints.extend(self.constraints_of(error, base))
        universe = sorted(set().union(*hits)) if hits else []
        found: list[Suggestion] = []
        for size in range(1, MAX_SIZE + 1):
            sets = [s for s in itertools.combinations(universe, size) if all(h & set(s) for h in hits)]
            found = self.verify_sets(sets, base)
            if found or not self.checks_left:
                break
        reason = None if found else self.why_nothing(universe)
        return self.outcome(found, reason, universe)

    def verify_sets(self, sets: list[tuple[Axis, ...]], base: _State) -> list[Suggestion]:
        """Suggestions from these sets of changes (all of one size), nearest first."""
        found: dict[tuple[Change, ...], Suggestion] = {}
        pending = list(sets)
        rounds = dict.fromkeys(sets, 0)
        solved: set[tuple[Axis, ...]] = set()  # one suggestion for each set of changes: its nearest
        while pending and len(found) < self.limit and self.checks_left:
            leaves = sorted({leaf.values: leaf for s in pending for leaf in self.assign(s, base)}.values(),
                            key=lambda leaf: _rank(leaf.changes, leaf.distance))
            narrowed: set[tuple[Axis, ...]] = set()
            for leaf in leaves:
                if len(found) >= self.limit or not self.checks_left:
                    break
                axes = tuple(sorted(a for a, _ in leaf.values))
                if leaf.values in self._reports or axes in solved or self.doomed(leaf):
                    continue  # checked already, these changes have a nearer suggestion, or it fails as one did
                report = self.check(leaf)
                if report is None:
                    continue
                if not report.errors and self.kernels_known(leaf.stack, report) and not self.new_doubt(report):
                    found.setdefault(leaf.changes, self.suggestion(leaf, report))
                    solved.add(axes)
                    continue
                if self.narrow(report, leaf):
                    narrowed.add(axes)
            pending = [s for s in narrowed if rounds.get(s, _REFINEMENTS) < _REFINEMENTS]
            for s in pending:
                rounds[s] += 1
        return sorted(found.values(), key=lambda s: _rank(s.changes, s.distance))[: self.limit]

    def doomed(self, leaf: Leaf) -> bool:
        """Whether the leaf holds every change of one that failed, and changes
        nothing more that the errors of that one involve: it fails the same way."""
        values = set(leaf.values)
        return any(failed <= values and not ({a for a, _ in values - failed} & involved)
                   for failed, involved in self.failures)

    def new_doubt(self, report: Report) -> bool:
        """Whether a fix is not verified with full knowledge: it trades an
        error for a warning that predicts a failure and that the stack did
        not have (vLLM 0.10.2 with Transformers 5: the inferred form of the
        error on 0.11.0), or it passes only because the check that verifies
        it knows no build of a release it installs (an index the database
        knows no vLLM build of: its CUDA, driver and kernels go unchecked)."""
        return any((w.predicts_failure or w.id.startswith("build:")) and w.id not in self.warned
                   for w in report.warnings)

    def kernels_known(self, stack: Stack, report: Report) -> bool:
        """A stack that fails for want of its GPU's kernels is fixed only by
        a build whose architectures are known to include them: one the
        database knows no architectures of passes a check unjudged, and one
        whose list is only inferred passes with a warning; neither is a
        verified fix."""
        gpu = stack.hardware.compute_capability
        failing = {name for e in self.errors if e.id.startswith("arch:") for name, _ in [_on_build(e) or ("", "")] if name}
        for name in sorted(failing):
            written = report.packages.get(name) or report.resolved.get(name)
            component = self.db.component(name)
            try:
                version = Version(str(written).split("+", 1)[0])
            except InvalidVersion:
                continue
            release = component.releases.get(version) if component is not None else None
            if release is None or gpu is None:
                continue
            selected, _ = select_build(component, release, stack.packages.get(name), stack, self.db)
            if selected is None or not selected.build.archs or not selected.build.serves(gpu):
                return False  # unknown kernels, or (where that is only inferred, a warning) none for the GPU
        return True

    def narrow(self, report: Report, leaf: Leaf) -> bool:
        """Learn the bounds a failed check puts on the changed axes; True if any is new."""
        state = _State(leaf.stack, {}, chosen=leaf.values)
        changed = {a for a, _ in leaf.values}
        new = False
        for error in report.errors:
            for constraint in self.constraints_of(error, state):
                if constraint.axis in changed and constraint not in self.constraints:
                    self.constraints.append(constraint)
                    new = True
        return new

    def check(self, leaf: Leaf) -> Report | None:
        self.checks_left -= 1
        self.checks += 1
        try:
            report: Report | None = judge(leaf.stack, self.db, ignore=self.ignore).report
        except ResolutionTooComplex:
            report = None
        self._reports[leaf.values] = report
        if report is not None and report.errors:
            involved = set().union(*(self.axes_of(e) for e in report.errors))
            self.failures.append((frozenset(leaf.values), involved))
        if report is not None and report.errors and (
            self.nearest_failure is None or leaf.distance < self.nearest_failure[0].distance
        ):
            self.nearest_failure = (leaf, report)
        return report

    # -- choosing values ---------------------------------------------------------------

    def assign(self, axes: tuple[Axis, ...], base: _State) -> Iterator[Leaf]:
        """Every combination of values of `axes` that fits (the machine first)."""
        order = sorted(axes, key=lambda a: (("platform", "python", "cuda", "driver", "index", "option", "package").index(a.kind),
                                            list(self.stack.packages).index(a.name) if a.name in self.names else 0,
                                            a.flag))
        values = dict(base.values)
        for axis in order:
            if axis.kind == "package":
                values[axis.name] = None  # to be chosen: nothing fits against it yet
        yield from self._assign(order, _State(base.stack, values))

    def _assign(self, axes: list[Axis], state: _State) -> Iterator[Leaf]:
        if not axes:
            if self.machine_fits(state):
                self.leaves_tried += 1
                yield Leaf(state.changes, state.distance, state.stack, tuple(sorted(state.chosen)))
            return
        axis, rest = axes[0], axes[1:]
        for after in itertools.islice(self.values_of(axis, state), _PER_AXIS + (axis.kind == "option")):
            yield from self._assign(rest, after)

    def values_of(self, axis: Axis, state: _State) -> Iterator[_State]:
        if axis.kind == "package":
            return self.package_values(axis, state)
        if axis.kind == "option":
            return self.option_values(axis, state)
        return self.machine_values(axis, state)

    def machine_values(self, axis: Axis, state: _State) -> Iterator[_State]:
        if axis.kind == "index":
            yield from self.index_values(axis, state)
            return
        if axis.kind == "platform":
            yield from self.platform_values(axis, state)
            return
        system = state.stack.system
        bounds = self.applicable(axis, state)
        if axis.kind == "python":
            current = Version(f"{system.python.major}.{system.python.minor}")
            today = current_date()
            choices = [p.version for p in self.db.pythons if p.version != current and p.supported_on(today)]
            choices.sort(key=lambda v: (abs(v.minor - current.minor), v < current))
        elif axis.kind == "driver":
            current = system.driver
            floors = {floor for floor, _ in self.db.cuda.drivers.values()}
            floors.update(Version(s.version) for b in bounds for s in b if s.operator == ">=")
            choices = sorted(f for f in floors if current is not None and f > current)
        else:
            current = system.cuda
            choices = sorted((c for c in self.build_cudas(state) if current is not None and c != current),
                             key=lambda v: (abs(v.major - current.major), abs(v.minor - current.minor), v))
        for value in dict.fromkeys(choices):
            if not all(b.contains(value, prereleases=True) for b in bounds):
                continue
            if axis.kind == "python":
                changed = state.stack.system._replace(python=value)
                distance = abs(value.minor - current.minor)
            elif axis.kind == "driver":
                changed = state.stack.system._replace(driver=value, driver_written=str(value))
                distance = 1
            else:
                changed = state.stack.system._replace(cuda=value)
                distance = 1
            stack = state.stack.replace(system=changed)
            if not self.packages_fit(stack, state):
                continue
            shown = system.driver_written if axis.kind == "driver" and system.driver_written else current
            change = Change(axis.name, str(shown) if current is not None else "unset", str(value),
                            _direction(current, value), axis.kind)
            yield state.then(axis, str(value), change, distance, stack=stack)

    def platform_values(self, axis: Axis, state: _State) -> Iterator[_State]:
        """The platform an error asks for (the host a GPU comes with)."""
        system = state.stack.system
        for platform in dict.fromkeys(p for p in map(_platform_asked, self.errors) if p and p != system.platform):
            stack = state.stack.replace(system=system._replace(platform=platform))
            if self.packages_fit(stack, state):
                yield state.then(axis, platform, Change("platform", system.platform, platform, "change", "platform"), 1,
                                 stack=stack)

    def index_values(self, axis: Axis, state: _State) -> Iterator[_State]:
        """The indexes that serve a build of each of the stack's releases
        that fits its machine (PyTorch's cu126 for torch 2.13.0 on a 575
        driver), nearest the stack's CUDA first."""
        system = state.stack.system
        fitting: dict[str, Version | None] = {}
        releases = dict(state.values)
        for error in self.errors:  # the builds that fail may be of releases the stack does not name (torch, for sglang)
            name, version = _on_build(error) or ("", "")
            if name and name not in releases:
                try:
                    releases[name] = Version(version)
                except InvalidVersion:
                    continue
        for name, value in releases.items():
            component = self.db.component(name)
            if component is None or not isinstance(value, Version):
                continue
            for build in component.builds:
                if build.index == system.index or not build.covers(value) or \
                        (build.platforms and system.platform not in build.platforms):
                    continue
                # a build that fits: no error, and one that runs on the stack's accelerator (a CPU build
                # "fits" a GPU stack only by leaving the GPU unused)
                if not any(p.severity == "error" or p.kind == "accelerator"
                           for p in judge_build(build, state.stack, self.db)):
                    fitting.setdefault(build.index, build.cuda)
        cuda = system.cuda
        for index in sorted(fitting, key=lambda i: (fitting[i] is None or cuda is None,
                                                     abs(fitting[i].minor - cuda.minor) + 10 * abs(fitting[i].major - cuda.major)
                                                     if fitting[i] is not None and cuda is not None else 0, i)):
            stack = state.stack.replace(system=system._replace(index=index))
            if not self.packages_fit(stack, state):
                continue
            yield state.then(axis, index, Change("index", system.index, index, "change", "index"), 1, stack=stack)

    def build_cudas(self, state: _State) -> set[Version]:
        """The CUDA versions of the builds of the stack's releases."""
        out: set[Version] = set()
        for name, value in state.values.items():
            component = self.db.component(name)
            if component is None or not isinstance(value, Version):
                continue
            out.update(b.cuda for b in component.builds if b.cuda is not None and b.covers(value))
        return out

    def option_values(self, axis: Axis, state: _State) -> Iterator[_State]:
        given = dict(state.stack.options.get(axis.name, {}))
        old = value_text(given[axis.flag])
        component = self.db.component(axis.name)
        spec = component.options.get(axis.flag) if component is not None else None
        catalog = self.db.option_catalog(axis.name)
        version = state.values.get(axis.name)
        here = catalog.at(axis.flag, version) if catalog is not None and isinstance(version, Version) else None
        values = ["", *(spec.values if spec else ()), *(here.values if here else ())]
        for value in dict.fromkeys(values):
            if value == old:
                continue
            flags = {k: v for k, v in given.items() if k != axis.flag}
            if value:
                flags[axis.flag] = value
            stack = state.stack.replace(options={**state.stack.options, axis.name: flags})
            change = Change(axis.label(), old, value, "change", "option")
            yield state.then(axis, value, change, 1, stack=stack)

    def package_values(self, axis: Axis, state: _State) -> Iterator[_State]:
        name = axis.name
        spec = self.stack.packages[name]
        component = self.db.component(name)
        if component is None or not component.releases:
            yield from self.untracked_values(axis, state)
            return
        old = spec.pinned
        # the build a label chose is what fails (its CUDA, driver, GPU or platform): try the index's instead
        unlabel = spec.build is not None and any(
            (_on_build(e) or ("",))[0] == name for e in self.errors)
        build = None if unlabel else spec.build
        if unlabel and old is not None and old in component.releases:
            # the same release without its label: the build the package index serves (the full check judges it)
            change = Change(name, f"{old}+{spec.build}", str(old), "change")
            packages = dict(state.stack.packages)
            packages[name] = spec._replace(written=str(old), build=None)
            yield state.then(axis, f"{old} unlabelled", change, 1,
                             stack=state.stack.replace(packages=packages), value=old)
        provider = self.provider(state.stack)
        versions = provider.known_versions(name, SpecifierSet(), [spec.specifier])
        bounds = self.applicable(axis, state)
        probe = state  # what a candidate is fitted against: without the label, when that is what fails
        if unlabel:
            probe = _State(state.stack.replace(packages={**state.stack.packages,
                                                                      name: spec._replace(build=None)}),
                           state.values, state.changes, state.chosen, state.distance)
        fitting = (v for v in self.ordered(versions, old) if not spec.specifier.contains(v, prereleases=True)
                   and all(b.contains(v, prereleases=True) for b in bounds) and self.fits(component, v, probe))
        taken: list[Version] = []
        for version in fitting:
            if old is not None and not self.newest and taken and (version > old) == (taken[0] > old):
                continue  # one each side of the stack's own release
            taken.append(version)
            was = (f"{old}+{spec.build}" if spec.build else str(old)) if old else str(spec.specifier)
            change = Change(name, was, f"{version}+{build}" if build else str(version), _direction(old, version))
            packages = dict(state.stack.packages)
            packages[name] = PackageSpec(name, SpecifierSet(f"=={version}"), spec.extras, spec.external,
                                         str(version), build)
            stack = state.stack.replace(packages=packages)
            # a plan ranks the newest release that fits first; a suggestion, the nearest
            distance = len(taken) - 1 if self.newest else _index_distance(self.db, name, old, version)
            yield state.then(axis, str(version), change, distance, stack=stack, value=version)
            if len(taken) >= _PER_AXIS:
                return

    def ordered(self, versions: list[Version], old: Version | None) -> list[Version]:
        """Nearest to the stack's own first (newer first on a tie), at most
        _WINDOW releases away; or, for a plan or a range, newest first."""
        if old is None or self.newest:
            return sorted(versions, reverse=True)
        position = {v: i for i, v in enumerate(sorted(set(versions) | {old}))}
        here = position[old]
        near = [v for v in versions if abs(position[v] - here) <= _WINDOW]
        return sorted(near, key=lambda v: (abs(position[v] - here), -position[v]))

    def untracked_values(self, axis: Axis, state: _State) -> Iterator[_State]:
        """A package the database holds no release of moves to what the others require of it."""
        spec = self.stack.packages[axis.name]
        wanted = SpecifierSet()
        for other, value in state.values.items():
            release = self.release(other, value)
            if release is None:
                continue
            for target, specifier in self.projected(release, self.stack.packages[other].extras, state.stack):
                if target == axis.name:
                    wanted &= specifier
        for bound in self.applicable(axis, state):
            wanted &= bound
        if not str(wanted):
            return  # nothing requires it: no version to move to
        if spec.pinned is not None and wanted.contains(spec.pinned, prereleases=True):
            return
        if spec.pinned is None and overlap(wanted, spec.specifier):
            return
        pins = [s.version for s in wanted if s.operator == "==" and "*" not in s.version]
        value: Version | SpecifierSet = Version(pins[0]) if len(pins) == 1 else wanted
        written = str(value) if isinstance(value, Version) else spec_text(value)
        old = str(spec.pinned) if spec.pinned else spec.written
        direction = _direction(spec.pinned, value) if isinstance(value, Version) else "change"
        change = Change(axis.name, old, written, direction)
        packages = dict(state.stack.packages)
        specifier = SpecifierSet(f"=={value}") if isinstance(value, Version) else value
        packages[axis.name] = PackageSpec(axis.name, specifier, spec.extras, spec.external, written)
        yield state.then(axis, written, change, 1, stack=state.stack.replace(packages=packages),
                         value=value)

    # -- what fits ---------------------------------------------------------------------

    def provider(self, stack: Stack) -> StackProvider:
        """One provider per machine, shared by every value tried on it."""
        system = stack.system
        labels = tuple(sorted((n, s.build) for n, s in stack.packages.items() if s.build))  # they choose builds too
        key = (str(system.python), str(system.cuda), str(system.driver), system.index, system.platform, labels)
        if key not in self._providers:
            self._providers[key] = StackProvider(stack, self.db)
        return self._providers[key]

    def release(self, name: str, value: Any) -> Release | None:
        if not isinstance(value, Version):
            return None
        component = self.db.component(name)
        return component.release(value) if component is not None else None

    def projected(self, release: Release, extras: frozenset[str], stack: Stack) -> list[tuple[str, SpecifierSet]]:
        """The release's requirements on packages of the stack whose markers
        hold on its Python and platform (parsing only those lines, once)."""
        key = (release.package, release.version, extras)
        lines = self._projected.get(key)
        if lines is None:
            lines = []
            for dependency in release.dependencies_for(extras, self.names.__contains__):
                requirement = dependency.requirement
                target = normalize(requirement.name)
                if target in self.names and target != release.package:
                    lines.append((target, requirement.specifier, requirement.marker))
            self._projected[key] = lines
        environment = self.provider(stack).environment
        return [(target, specifier) for target, specifier, marker in lines
                if marker is None or self.marker_holds(marker, environment, extras)]

    def marker_holds(self, marker: Any, environment: dict[str, str], extras: frozenset[str]) -> bool:
        key = (id(marker), environment["python_full_version"], extras)
        held = self._markers.get(key)
        if held is None:
            held = self._markers[key] = any(marker.evaluate({**environment, "extra": e}) for e in ("", *sorted(extras)))
        return held

    def fits(self, component: Component, version: Version, state: _State) -> bool:
        """Whether release `version` can stand beside what the state holds."""
        name = component.name
        release = component.releases[version]
        stack = state.stack
        for other, value in state.values.items():  # what the others require of it (their lines are parsed once)
            theirs = self.release(other, value) if other != name else None
            if theirs is None:
                continue
            for target, specifier in self.projected(theirs, self.stack.packages[other].extras, stack):
                if target == name and not specifier.contains(version, prereleases=True):
                    return False
        if not self.provider(stack).installable(release) or self.predates_option(component, release, stack):
            return False
        for target, specifier in self.projected(release, self.stack.packages[name].extras, stack):
            if not self.admits(specifier, state.values.get(target)):
                return False
        values = {**state.values, name: version}
        return self.rules_hold(component, version, stack, values) and self.partners_hold(name, version, values)

    @staticmethod
    def admits(specifier: SpecifierSet, value: Version | SpecifierSet | None) -> bool:
        if value is None:
            return True  # still to be chosen
        if isinstance(value, Version):
            return specifier.contains(value, prereleases=True)
        return overlap(specifier, value)

    def rules_hold(self, component: Component, version: Version, stack: Stack, values: dict[str, Any]) -> bool:
        """The database's error-level requirement and lockstep rules of the release."""
        versions = {n: v for n, v in values.items() if isinstance(v, Version)}
        facts = StackFacts(stack, versions, component)
        for rule in component.rules:
            if rule.severity != "error" or rule.kind not in ("requirement", "lockstep") or not rule.covers(version):
                continue
            if rule.when.evaluate(facts) is not True:
                continue
            if rule.kind == "requirement" and rule.require is not None and rule.require.evaluate(facts) is False:
                return False
            if rule.kind == "lockstep" and any(isinstance(versions.get(p), Version)
                                               and not rule.in_step(version, versions[p]) for p in rule.partners):
                return False
        return True

    def partners_hold(self, name: str, version: Version, values: dict[str, Any]) -> bool:
        """The lockstep rules of the stack's other releases that name this package."""
        for other, value in values.items():
            component = self.db.component(other) if other != name and isinstance(value, Version) else None
            for rule in component.rules if component is not None else ():
                if rule.kind == "lockstep" and name in rule.partners and rule.covers(value) \
                        and not rule.in_step(value, version):
                    return False
        return True

    def machine_fits(self, state: _State) -> bool:
        """After a change of Python, CUDA or a flag: every release of the stack still fits."""
        if not any(a.kind != "package" for a, _ in state.chosen):
            return True
        provider = self.provider(state.stack)
        for name, value in state.values.items():
            release = self.release(name, value)
            if release is None:
                continue
            component = self.db.component(name)
            assert component is not None
            if not provider.installable(release) or not self.rules_hold(component, release.version, state.stack,
                                                                        state.values):
                return False
        return True

    def predates_option(self, component: Component, release: Release, stack: Stack) -> bool:
        """Whether the release cannot have a flag the stack sets: the flags the
        database lists for it lack it, or the pull request that brought the
        flag was merged after the release was uploaded."""
        given = stack.options.get(component.name, {})
        if not given:
            return False
        catalog = self.db.option_catalog(component.name)
        for flag in given:
            if catalog is not None and catalog.covers_release(release.version) and catalog.knows(flag) \
                    and catalog.at(flag, release.version) is None:
                return True
            spec = component.options.get(flag)
            source = self.db.source(spec.source) if spec is not None and spec.source else None
            if source is not None and source.kind == "pull-request" and source.date is not None \
                    and release.date is not None and release.date < source.date:
                return True
        return False

    def packages_fit(self, stack: Stack, state: _State) -> bool:
        """Whether the stack's chosen releases install on a changed machine."""
        provider = self.provider(stack)
        return all(provider.installable(r) for r in
                   (self.release(n, v) for n, v in state.values.items()) if r is not None)

    # -- the answer --------------------------------------------------------------------

    def suggestion(self, leaf: Leaf, report: Report) -> Suggestion:
        return Suggestion(leaf.changes, leaf.distance, self.moves(leaf, report), leaf.stack, report)

    def moves(self, leaf: Leaf, report: Report) -> list[Change]:
        """Packages outside the stack that the changed releases pinned differently."""
        moves: dict[str, Change] = {}
        for change in leaf.changes:
            if change.kind != "package":
                continue
            release = self.release(change.name, self.stack.packages[change.name].pinned)
            for dependency in release.dependencies if release is not None else ():
                requirement = dependency.requirement
                target = normalize(requirement.name)
                pins = [s.version for s in requirement.specifier if s.operator == "=="]
                new = report.resolved.get(target)
                if not pins or target in self.names or new is None or new == pins[0]:
                    continue
                old, moved = _version(pins[0]), _version(new)
                direction = _direction(old, moved) if moved is not None else "change"
                moves.setdefault(target, Change(target, pins[0], new, direction))
        return sorted(moves.values(), key=lambda c: c.name)

    def outcome(self, found: list[Suggestion], reason: str | None, universe: Iterable[Axis] = ()) -> Outcome:
        return Outcome(found, self.checks, reason, tuple(dict.fromkeys(a.name for a in universe)))

    def unreachable(self, error: Finding) -> str:
        held = [c for c in error.components if c in self.frozen]
        rest = [self.gpu_text() if c == "gpu" else c for c in error.components if c not in self.frozen]
        parts = [f"{' and '.join(held)}, which the targets set"] if held else []
        if rest or not held:
            parts.append(f"{' and '.join(rest) or 'nothing else'}, which no change of the stack's packages, Python, "
                         "CUDA, driver or flags reaches")
        return f"no suggestion: {error.id} involves only " + "; and ".join(parts)

    def gpu_text(self) -> str:
        hardware = self.stack.hardware
        if hardware.gpu is not None:
            return f"the GPU ({hardware.gpu.name}, compute capability {hardware.compute_capability})"
        if hardware.compute_capability is not None:
            return f"the GPU (compute capability {hardware.compute_capability})"
        return "the GPU (the stack has none)"

    def why_nothing(self, universe: list[Axis]) -> str:
        among = ", ".join(a.label() for a in universe)
        head = f"no suggestion: no combination of up to {MAX_SIZE} changes among {among} passes a full check"
        if self.nearest_failure is not None:
            leaf, report = self.nearest_failure
            tried = say(leaf.changes)
            head += f" (the nearest tried, to {tried}, still fails: {report.errors[0].message})"
        elif not self.leaves_tried:
            head += (": none fits what stays (Requires-Python, wheels, builds, rules and the other packages' "
                     "requirements)")
            gpu = next((e for e in self.errors if "gpu" in e.components), None)
            if gpu is not None:
                head += f"; {gpu.id} involves {self.gpu_text()}, which no change of the stack reaches"
        if not self.checks_left:
            head += f"; the search stops after {self.checks} full checks"
        return head
