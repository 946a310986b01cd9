"""Resolution with resolvelib: one provider over the database.

Python, CUDA, ROCm, the NVIDIA driver and the GPU's compute capability are
virtual packages (``__python``, ``__cuda``, ...), each with a single
candidate, the stack's own value. A release's Requires-Python becomes a
requirement on ``__python``; a database rule such as "fp8-scaled-mm needs
compute capability 8.9" becomes a requirement on ``__compute_capability``.
One mechanism then handles every bound, and resolvelib's backtracking picks,
within the stack's ranges, versions that satisfy all of them.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version
from resolvelib import AbstractProvider, BaseReporter
from resolvelib.resolvers import Criterion, RequirementInformation, ResolutionImpossible, ResolutionTooDeep
from resolvelib.resolvers import Resolution as Search
from resolvelib.structs import State

from .._record import Record
from .._names import normalize
from .._versions import overlap
from ..errors import ResolutionTooComplex
from ..knowledge.database import Database, Drawn, meets, newest_unyanked, pinned_version
from ..knowledge.model import Build, Component, Release, Rule
from ..knowledge.requires import parse_requirement
from ..stack import Stack
from .builds import Platform, Problem, Selected, WheelFit, judge_build, select_build, wheel_fit
from .facts import VIRTUAL_PREFIX, StackFacts, virtual_name

__all__ = ["Need", "Candidate", "Gap", "Resolution", "RoundBudget", "resolve", "DEFAULT_MAX_ROUNDS"]

DEFAULT_MAX_ROUNDS = 2000
# What resolvelib itself is told: more rounds than any budget. resolvelib
# gives its optimistic backjumping a tenth of the rounds it has left, so under
# its own count a problem took another path under another budget: a real
# stack solved in 496 rounds ran out under budgets of 2,000 and 4,000, and one
# solved in 7 was called unsolvable under budgets of 7 to 49 (tests/test_resolve.py).
# RoundBudget counts the rounds instead: the path is the same under any budget.
_UNBOUNDED = 2**62
_MAX_VIABILITY_DEPTH = 64  # requirement chains a viability judgement follows (a real closure is far shallower)


class Need(Record):
    """A requirement as the resolver sees it, and who imposes it."""

    name: str
    specifier: SpecifierSet
    extras: frozenset[str] = frozenset()
    parent: str | None = None  # "vllm 0.32.0", or None for the stack itself
    origin: str = "stack"  # stack, metadata, curated, rule
    rule: str | None = None
    source: str | None = None

    @property
    def key(self) -> str:
        return _key(self.name, self.extras)

    @property
    def is_virtual(self) -> bool:
        return self.name.startswith(VIRTUAL_PREFIX)

    def __str__(self) -> str:
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"


class Candidate:
    """One version of a package (or the stack's value of a virtual package).

    `version` None stands for a value the stack does not give (the driver of
    a stack that names none, an untracked package given as a range): it
    satisfies every requirement, and the check says it could not verify.
    Equal candidates have the same name, version and extras; the release and
    the range travel along without taking part.
    """

    __slots__ = ("name", "version", "extras", "release", "within", "answers", "installs", "needs")

    def __init__(
        self,
        name: str,
        version: Version | None,
        extras: frozenset[str] = frozenset(),
        release: Release | None = None,
        within: SpecifierSet | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.extras = extras
        self.release = release
        self.within = within
        # Remembered by the provider, which hands out one Candidate per
        # version: whether it meets each requirement (by the requirement's
        # identity, the requirement kept so its id stays its own), whether it
        # may be installed, and what it requires.
        self.answers: dict[int, tuple[Need, bool]] = {}
        self.installs: bool | None = None
        self.needs: list[Need] | None = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Candidate):
            return NotImplemented
        return (self.name, self.version, self.extras) == (other.name, other.version, other.extras)

    def __hash__(self) -> int:
        return hash((self.name, self.version, self.extras))

    def __repr__(self) -> str:
        return f"Candidate({self.name!r}, {self.version!r}, {set(self.extras) or ''})"

    @property
    def key(self) -> str:
        return _key(self.name, self.extras)

    def __str__(self) -> str:
        return f"{self.name} {self.version if self.version is not None else '(any)'}"


class Gap(Record):
    """A requirement on a tracked package that no release in the database meets."""

    package: str
    need: Need
    # the releases the requirement admits all sort above the newest final release of the snapshot's
    # list: they may have come out since it was taken (Component.beyond_snapshot)
    beyond: bool = False


class Resolution(Record):
    """What a resolution found: the versions chosen, or why there are none."""

    ok: bool
    versions: dict[str, Candidate]
    causes: list[RequirementInformation[Need, Candidate]]
    gaps: list[Gap]
    provider: StackProvider
    rounds: int = 0  # the rounds the answering attempt took: any budget of at least as many reaches the same answer


class _OutOfRounds(Exception):
    """The round budget is spent."""


class RoundBudget(BaseReporter):  # type: ignore[type-arg]
    """Counts resolvelib's rounds, and stops the resolution when `budget` of
    them are spent: the budget means rounds, whatever resolvelib does with
    them (see _UNBOUNDED)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.rounds = 0

    def starting_round(self, index: int) -> None:
        if index >= self.budget:
            raise _OutOfRounds
        self.rounds = index + 1


class _Search(Search):  # type: ignore[type-arg]
    """resolvelib's search, remembering what it asks every round.

    Every round, resolvelib asks of every package resolved so far whether its
    pin still meets each requirement on it (twice, after a successful pin),
    and of every package not yet resolved how much to prefer it: over a
    resolution, rounds × packages questions, of which nearly all have the
    same answer as the round before. A criterion (the requirements on a
    package) is never changed once made, resolvelib makes a new one, nor is
    a candidate; so an answer stands while they are the same objects.
    StackProvider's preference depends on the package's criterion alone.
    (These two methods replace methods resolvelib does not publish; were
    those renamed, the search would ask every time again, as slow as before
    and as right.)
    """

    def __init__(self, provider: StackProvider, reporter: BaseReporter) -> None:  # type: ignore[type-arg]
        super().__init__(provider, reporter)
        provider.search = self
        # name -> (criterion, pin, answer): both kept, so that their ids stay their own
        self._pin_checks: dict[str, tuple[Criterion[Need, Candidate], Candidate, bool]] = {}
        self._preferences: dict[str, tuple[Criterion[Need, Candidate], Any]] = {}

    def _get_preference(self, name: str) -> Any:
        criterion = self.state.criteria[name]
        known = self._preferences.get(name)
        if known is None or known[0] is not criterion:
            known = self._preferences[name] = (criterion, super()._get_preference(name))
        return known[1]

    def _is_current_pin_satisfying(self, name: str, criterion: Criterion[Need, Candidate]) -> bool:
        pin = self._states[-1].mapping.get(name)  # self.state, without a property call: asked rounds × packages times
        known = self._pin_checks.get(name)
        if known is not None and known[1] is pin and known[0] is criterion:
            return known[2]
        if pin is None:
            return False
        satisfied = self._p.is_satisfied_by
        answer = all(satisfied(requirement, pin) for requirement in criterion.iter_requirement())
        self._pin_checks[name] = (criterion, pin, answer)
        return answer


class _Candidates(Sequence[Candidate]):
    """The releases of a package as candidates, in the order to try them,
    each made when first reached: resolvelib usually takes one of the first,
    and most releases of a large package are never looked at."""

    def __init__(self, name: str, extras: frozenset[str], versions: Sequence[Version],
                 releases: Mapping[Version, Release]) -> None:
        self.name, self.extras, self.versions, self.releases = name, extras, versions, releases
        self.made: list[Candidate] = []

    def __len__(self) -> int:
        return len(self.versions)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self.versions)
        if not 0 <= index < len(self.versions):
            raise IndexError(index)
        made = self.made
        while len(made) <= index:
            version = self.versions[len(made)]
            made.append(Candidate(self.name, version, self.extras, self.releases.get(version)))
        return made[index]

    def __iter__(self) -> Iterator[Candidate]:
        made = self.made
        for index, version in enumerate(self.versions):  # drawn as far as they are tried
            if index == len(made):
                made.append(Candidate(self.name, version, self.extras, self.releases.get(version)))
            yield made[index]


def _pins(specifier: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") for s in specifier)


def _remembered(cache: dict[int, tuple[Any, Any]], thing: Any, answer: Callable[[Any], Any]) -> Any:
    """`answer(thing)`, computed once per object: by its identity (hashing a
    SpecifierSet costs more than most answers), the object kept in the cache
    so that its id stays its own."""
    hit = cache.get(id(thing))
    if hit is None:
        hit = cache[id(thing)] = (thing, answer(thing))
    return hit[1]


def _key(name: str, extras: frozenset[str]) -> str:
    return f"{name}[{','.join(sorted(extras))}]" if extras else name


class StackProvider(AbstractProvider):  # type: ignore[type-arg]
    """Answers resolvelib's questions from the database and the stack."""

    def __init__(
        self,
        stack: Stack,
        db: Database,
        *,
        pre: bool = False,
        near: Mapping[str, Version] | None = None,
        closure: bool = False,
        dead_ends: bool = False,
    ) -> None:
        self.stack = stack
        self.db = db
        # Whether a new requirement on a package already pinned, which its pin
        # does not meet, is a conflict (backtracked) rather than a reason to pin
        # it again: resolvelib re-pins, and requirements that run in a circle
        # (a 2.0 needs b 1.0, which needs a 1.0, which needs b 2.0, which needs
        # a 2.0) re-pin it for ever; the last attempt of `resolve` proves them.
        self.no_repin = False
        self.search: _Search | None = None  # the search asking (its current pins)
        # Whether a release some requirement of which no installable release
        # meets, however deep, is passed over before resolvelib tries it
        # (`_viable`): the second attempt of `resolve`, when the first ran
        # out of rounds backtracking through such releases one by one.
        self.dead_ends = dead_ends
        # release -> the requirement no installable release meets (the check explains a failure with it)
        self.dead: dict[tuple[str, Version], tuple[Release, Need]] = {}
        self._viability: dict[tuple[str, Version], bool] = {}
        # The packages resolved: with `closure`, every one the database holds
        # (what an installer installs); otherwise those through which a
        # tracked package or one the stack names can be constrained.
        self.scope = None if closure else db.relevant(stack.packages)
        self.pre = pre
        # Packages to try nearest to a version first (suggestions look for the
        # smallest move), rather than newest first.
        self.near = dict(near or {})
        self.platform = Platform.of(stack.system, db)  # the checked database's platform table, not the last bound
        self.environment = self.platform.markers()
        self._fits: dict[tuple[str, Version], bool] = {}
        # releases an installer could take but whose build cannot run here: (build, the first error)
        self.passed_over: dict[tuple[str, Version], tuple[Build, Problem]] = {}
        self._wheel_fits: dict[tuple[str, Version], WheelFit] = {}
        self._selected: dict[tuple[str, Version], tuple[Selected | None, str | None]] = {}
        # releases left out because they require something else than a pin of the stack: (release, that need)
        self.pruned: dict[tuple[str, Version], tuple[Release, Need]] = {}
        # id(specifier) -> (the specifier, whether it pins / names a pre-release): see _remembered
        self._pinning: dict[int, tuple[Any, Any]] = {}
        self._naming_pre: dict[int, tuple[Any, Any]] = {}
        # (name, extras, pre-releases allowed) -> the candidates, one object per version for the whole resolution
        self._candidate_lists: dict[tuple[str, frozenset[str], bool], Sequence[Candidate]] = {}
        self.facts = StackFacts(stack, {})
        self.gaps: list[Gap] = []
        self._gap_keys: set[tuple[str, str]] = set()
        self._dependencies: dict[tuple[str, Version, frozenset[str]], list[Need]] = {}
        self._unyanked: dict[str, Sequence[Version]] = {}  # name -> its releases not yanked, newest first
        self._shared: _Shared | None = None  # see `shared`

    def widen(self) -> None:
        """From the scope to the whole closure: what the provider has judged
        of releases stands (their wheels, builds, Python), their requirements
        are read again with every package in."""
        self.scope = None
        self._dependencies.clear()
        self._viability.clear()

    # -- resolvelib's five questions ----------------------------------------

    def identify(self, requirement_or_candidate: Need | Candidate) -> str:
        return requirement_or_candidate.key

    def narrow_requirement_selection(
        self,
        identifiers: Iterable[str],
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[RequirementInformation[Need, Candidate]]],
        backtrack_causes: Any,
    ) -> Iterable[str]:
        """Decide the machine first (one candidate each), then, after a
        conflict, the packages it involves (as pip does): the rest cannot
        fix it, and retrying them is what makes backtracking slow."""
        identifiers = list(identifiers)
        virtual = [i for i in identifiers if i.startswith(VIRTUAL_PREFIX)]
        if virtual:
            return virtual
        if backtrack_causes:
            involved = set()
            for cause in backtrack_causes:
                involved.add(cause.requirement.key)
                if cause.parent is not None:
                    involved.add(cause.parent.key)
            chosen = [i for i in identifiers if i in involved]
            if chosen:
                return chosen
        return identifiers

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, Candidate],
        candidates: Mapping[str, Iterator[Candidate]],
        information: Mapping[str, Iterator[RequirementInformation[Need, Candidate]]],
        backtrack_causes: Any,
    ) -> Any:
        pinned = from_stack = False
        for info in information[identifier]:
            need = info.requirement
            if need.parent is None:
                from_stack = True
            if not pinned and _remembered(self._pinning, need.specifier, _pins):
                pinned = True
            if pinned and from_stack:
                break
        return (not pinned, not from_stack, identifier)

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Need]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> Callable[[], Iterator[Candidate]]:
        needs = list(requirements[identifier])
        if self.no_repin and self.search is not None:
            pin = self.search.state.mapping.get(identifier)
            if pin is not None and not all(self.is_satisfied_by(n, pin) for n in needs):
                # a requirement its pin does not meet is a conflict, backtracked as one
                return lambda: iter(())
        bad = {c.version for c in incompatibilities[identifier]}
        found = self._candidates(needs[0].name, needs[0].extras, needs) if needs else []
        satisfied = self.is_satisfied_by

        # Lazily, newest first: resolvelib usually takes the first candidate,
        # so most releases of a large package are never tested at all.
        def matches() -> Iterator[Candidate]:
            for candidate in found:
                if bad and candidate.version in bad:
                    continue
                if all(satisfied(n, candidate) for n in needs) and self._may_install(candidate):
                    yield candidate

        return matches

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        # resolvelib asks again, every round, whether each pin still meets
        # each requirement: the candidate remembers its answers.
        hit = candidate.answers.get(id(requirement))
        if hit is None:
            hit = candidate.answers[id(requirement)] = (requirement, self._satisfies(requirement, candidate))
        return hit[1]

    @staticmethod
    def _satisfies(requirement: Need, candidate: Candidate) -> bool:
        version = candidate.version
        if version is not None:
            return requirement.specifier.contains(version, prereleases=True)
        return candidate.within is None or overlap(requirement.specifier, candidate.within)

    def get_dependencies(self, candidate: Candidate) -> list[Need]:
        if candidate.needs is None:
            candidate.needs = self._candidate_needs(candidate)
        return candidate.needs

    def _candidate_needs(self, candidate: Candidate) -> list[Need]:
        if candidate.name.startswith(VIRTUAL_PREFIX) or candidate.release is None:
            if candidate.extras and candidate.version is not None:
                return [Need(candidate.name, SpecifierSet(f"=={candidate.version}"), parent=str(candidate), origin="metadata")]
            return []
        return self.dependencies(candidate.release, candidate.extras)

    # -- the database's side ---------------------------------------------------

    def dependencies(self, release: Release, extras: frozenset[str] = frozenset()) -> list[Need]:
        """What `release` requires on this stack: Requires-Python, the
        Requires-Dist whose markers hold, and the rules that apply."""
        key = (release.package, release.version, extras)
        if key not in self._dependencies:
            self._dependencies[key] = self._compute_dependencies(release, extras)
        return self._dependencies[key]

    def tried(self) -> list[tuple[str, Version, list[Need]]]:
        """Every release whose requirements were looked at, with them (for explanations)."""
        return [(package, version, needs) for (package, version, _), needs in self._dependencies.items()]

    def _compute_dependencies(self, release: Release, extras: frozenset[str]) -> list[Need]:
        parent = f"{release.package} {release.version}"
        needs: list[Need] = []
        if extras:
            needs.append(Need(release.package, SpecifierSet(f"=={release.version}"), parent=parent, origin="metadata"))
        elif release.requires_python is not None:
            needs.append(Need(virtual_name("python"), release.requires_python, parent=parent, origin="metadata"))
        build = self.build_of(release)
        shared = self.shared(release) if build is None else None
        if shared is not None:
            key = (release.package, release.version, extras)
            found = shared.requires.get(key)
            if found is None:
                # every gap these lines find, kept with them whether or not this stack met it already
                # through another release: the next stack may read this release alone
                gaps, keys = self.gaps, self._gap_keys
                self.gaps, self._gap_keys = [], set()
                try:
                    listed = self._requires_dist_needs(release, extras, None, parent)
                    found = shared.requires[key] = (tuple(listed), tuple(self.gaps))
                finally:
                    self.gaps, self._gap_keys = gaps, keys
            for gap in found[1]:  # what reading them found missing, said for this stack
                if (gap.package, str(gap.need)) not in self._gap_keys:
                    self._gap_keys.add((gap.package, str(gap.need)))
                    self.gaps.append(gap)
            needs.extend(found[0])
        else:
            needs.extend(self._requires_dist_needs(release, extras, build, parent))
        if not extras:
            if build is not None:
                needs.extend(self._build_needs(build, parent))
            needs.extend(self._rule_needs(release, parent))
        return needs

    def shared(self, release: Release) -> _Shared | None:
        """The judgments of `release` this provider shares with those of
        stacks alike (`_Shared`), or None where they may differ: a package
        the stack names, or while the scope is not the whole closure."""
        if self.scope is not None or release.package in self.stack.packages:
            return None
        if self._shared is None:
            self._shared = _shared_for(self.stack, self.db)
        return self._shared

    def _requires_dist_needs(self, release: Release, extras: frozenset[str], build: Build | None,
                             parent: str) -> list[Need]:
        """The Requires-Dist lines of `release` that apply here (markers, the build's lines, relevance)."""
        needs: list[Need] = []
        for dependency in release.dependencies_for(extras, self._wanted, self._pin_unlisted):
            requirement = dependency.requirement
            if build is not None and dependency.layer == "metadata" and build.drops_line(normalize(requirement.name)):
                continue  # the index build's line, which the wheels of the build installed here do not carry
            marker = requirement.marker
            if extras:
                # The extras candidate carries only its extras' own lines;
                # the base candidate (pinned above) carries the rest.
                if dependency.layer != "metadata" or marker is None or "extra" not in str(marker):
                    continue
                if not any(self._marker(marker, extra) for extra in extras):
                    continue
            elif marker is not None and not self._marker(marker, ""):
                continue
            target = normalize(requirement.name)
            need = Need(
                target,
                requirement.specifier,
                frozenset(normalize(e) for e in requirement.extras),
                parent=parent,
                origin=dependency.layer,
                source=dependency.source,
            )
            if self._relevant(need):
                needs.append(need)
        return needs

    def build_of(self, release: Release) -> Build | None:
        """The build of `release` the stack installs, where the database
        knows one (builds.select_build); None for a package without builds."""
        spec = self.stack.packages.get(release.package)
        component = self.db.component(release.package)
        if component is None or not (component.has_builds or (spec is not None and spec.build)):
            return None
        selected, _ = self.select_build(component, release)
        return selected.build if selected is not None else None

    def _build_needs(self, build: Build, parent: str) -> list[Need]:
        """The lines a build's wheels carry that the index build's do not (`adds`)."""
        needs = []
        for line in build.adds:
            requirement = parse_requirement(line)
            if requirement.marker is not None and not self._marker(requirement.marker, ""):
                continue
            need = Need(normalize(requirement.name), requirement.specifier,
                        frozenset(normalize(e) for e in requirement.extras), parent=parent, origin="curated",
                        source=build.requires_source)
            if self._relevant(need):
                needs.append(need)
        return needs

    def _wanted(self, name: str) -> bool:
        if name in self.stack.packages:
            return True
        return name in self.db.names() and (self.scope is None or name in self.scope)

    def _marker(self, marker: Any, extra: str) -> bool:
        return bool(marker.evaluate({**self.environment, "extra": extra}))

    def _relevant(self, need: Need) -> bool:
        """Requirements on packages the stack names, or the database tracks.

        Others are pip's business. A requirement on a tracked package that no
        release in the database meets is a gap in the database, reported as
        such, never as a conflict.
        """
        if need.name in self.stack.packages:
            return True
        if self.scope is not None and need.name not in self.scope:
            return self._pins_nothing(need)
        component = self.db.component(need.name)
        if component is None or not component.releases:
            return False
        if meets(component, need.specifier):
            return True
        beyond = False
        if component.index_versions is not None and not any(
            need.specifier.contains(v, prereleases=True) for v in component.index_versions
        ):
            if not component.beyond_snapshot(need.specifier):
                # Not a gap in the database: no such release exists, so nothing can install it.
                return True
            beyond = True  # released since the snapshot, perhaps: the check says so, and binds nothing
        if (need.name, str(need)) not in self._gap_keys:
            self._gap_keys.add((need.name, str(need)))
            self.gaps.append(Gap(need.name, need, beyond))
        return False

    def _pin_unlisted(self, name: str, version: str) -> bool:
        """Whether a line of a package outside the scope pins `version` of
        `name` and the snapshot's header may not list it (`_pins_nothing`
        says whether it exists): read and judged then, skipped otherwise."""
        return name in self.db.names() and not self.db.may_list(name, version)

    def _pins_nothing(self, need: Need) -> bool:
        """Whether `need`, on a package that cannot constrain the stack's,
        pins a release the index does not have: no installer can install
        what requires it, which the check reports (the resolution finds no
        such release). Its other requirements are pip's business."""
        pinned = pinned_version(need.specifier)
        if pinned is None or need.name not in self.db.names():
            return False
        component = self.db.component(need.name)
        return component is not None and component.exists(pinned) is False

    def _rule_needs(self, release: Release, parent: str) -> list[Need]:
        component = self.db.component(release.package)
        if component is None:
            return []
        facts = self.facts.for_component(component)
        needs = []
        for rule in component.rules_for(release.version):
            if rule.kind == "lockstep" and rule.covers(release.version):
                needs.extend(self._lockstep_needs(rule, release, parent, facts))
                continue
            if rule.kind != "requirement" or rule.require is None or not rule.covers(release.version):
                continue
            if rule.severity != "error":
                continue  # a warning (an inferred bound, say) is reported by the check, never a limit on resolution
            if rule.when.mentions_packages() or rule.when.evaluate(facts) is not True:
                continue
            bounds = rule.require.version_bounds()
            if bounds is None:
                continue
            for key, specifier in bounds.items():
                name = key.split(":", 1)[1] if key.startswith("package:") else virtual_name(key)
                need = Need(name, specifier, parent=parent, origin="rule", rule=rule.id, source=rule.source)
                if need.is_virtual or self._relevant(need):
                    needs.append(need)
        return needs

    def _lockstep_needs(self, rule: Rule, release: Release, parent: str, facts: StackFacts) -> list[Need]:
        """A partner the stack names must move with this release (one it does
        not name may be absent, which a requirement cannot say)."""
        if rule.when.mentions_packages() or rule.when.evaluate(facts) is not True:
            return []
        specifier = rule.partner_specifier(release.version)
        return [
            Need(partner, specifier, parent=parent, origin="rule", rule=rule.id, source=rule.source)
            for partner in rule.partners
            if partner in self.stack.packages
        ]

    def _may_install(self, candidate: Candidate) -> bool:
        if candidate.installs is None:
            candidate.installs = self._judge_install(candidate)
        return candidate.installs

    def _judge_install(self, candidate: Candidate) -> bool:
        """A release the stack pins is taken as pinned (the check says what is
        wrong with it); the others only if they can run on the stack."""
        release = candidate.release
        if release is None or candidate.extras:
            return True
        spec = self.stack.packages.get(candidate.name)
        if spec is not None and spec.pinned is not None:
            # no installer installs a pin without a wheel for the platform, nor an sdist to build (the
            # check says which); its Python and build are judged as requirements and findings
            return self.how_installed(release) is not None
        fits = self.installable(release) and self._agrees_with_pins(release)
        return fits and (not self.dead_ends or self._viable(release))

    def _viable(self, release: Release, depth: int = 0) -> bool:
        """Whether each requirement of `release` on a package the stack does
        not pin is met by some release that can be installed here and is
        itself viable: not so when every release of a package it needs is
        yanked, or needs one that is. A release being judged counts as
        viable (a cycle does not condemn itself), and so does everything
        past a depth no real closure reaches."""
        key = (release.package, release.version)
        known = self._viability.get(key)
        if known is not None:
            return known
        if depth > _MAX_VIABILITY_DEPTH:
            return True
        self._viability[key] = True  # while it is being judged
        viable = True
        for need in self.dependencies(release):
            if need.is_virtual or need.extras:
                continue
            spec = self.stack.packages.get(need.name)
            component = self.db.component(need.name)
            if (spec is not None and spec.pinned is not None) or component is None or not component.releases:
                continue  # a pin is _agrees_with_pins' to judge; a package the database lacks, nobody's
            admitted = self._admitted(need.name, spec.specifier if spec is not None else SpecifierSet())
            if not any(need.specifier.contains(v, prereleases=True) and self._viable_at(need.name, v, depth)
                       for v in admitted):
                self.dead[key] = (release, need)
                viable = False
                break
        self._viability[key] = viable
        return viable

    def _viable_at(self, name: str, version: Version, depth: int) -> bool:
        component = self.db.component(name)
        release = component.releases.get(version) if component is not None else None
        if release is None:
            return True
        return self.installable(release) and self._agrees_with_pins(release) and self._viable(release, depth + 1)

    def _agrees_with_pins(self, release: Release) -> bool:
        """Whether the release's own requirements leave the stack's pins (and
        its machine) standing. A release that requires numpy>=2.5 of a stack
        pinning numpy 2.4.0 can be in no solution: trying it only to
        backtrack is where resolvelib spends thousands of rounds."""
        for need in self.dependencies(release):
            if need.is_virtual:
                value = self.facts.version(need.name[len(VIRTUAL_PREFIX):])
                if isinstance(value, Version) and not need.specifier.contains(value, prereleases=True):
                    return False
                continue
            spec = self.stack.packages.get(need.name)
            pinned = spec.pinned if spec is not None else None
            if pinned is not None and not need.specifier.contains(pinned, prereleases=True):
                self.pruned.setdefault((release.package, release.version), (release, need))
                return False
        return True

    def installable(self, release: Release) -> bool:
        """Whether `release` can run on this stack: its Requires-Python admits
        the stack's Python, an installer would take one of its wheels (True
        when the snapshot records no wheel tags), and the
        build it installs fits the stack's CUDA, driver and GPU. Ranges resolve
        among these only, so a suggestion never proposes a release without a
        build for the machine."""
        key = (release.package, release.version)
        fits = self._fits.get(key)
        if fits is None:
            component = self.db.component(release.package)
            shared = self.shared(release) if component is None or not component.has_builds else None
            fits = shared.fits.get(key) if shared is not None else None
            if fits is None:
                fits, built = self._installable(release, component)
                if shared is not None and not built:  # a build's judgment reads the hardware: not shared
                    shared.fits[key] = fits
            self._fits[key] = fits
        return fits

    def _installable(self, release: Release, component: Component | None) -> tuple[bool, bool]:
        """Whether `release` can run here, and whether that judged a build of it."""
        # as pip and uv do, a release whose Requires-Python excludes the interpreter is no candidate
        python = release.requires_python
        fits = python is None or python.contains(self.stack.system.python, prereleases=True)
        fits = fits and self.how_installed(release) is not None
        if fits and component is not None:
            selected, _ = self.select_build(component, release)
            if selected is not None:
                errors = [p for p in judge_build(selected.build, self.stack, self.db) if p.severity == "error"]
                if errors:  # pip and uv would take it (they know nothing of GPUs): the check says so
                    self.passed_over[(release.package, release.version)] = (selected.build, errors[0])
                return not errors, True
        return fits, False

    def select_build(self, component: Component, release: Release) -> tuple[Selected | None, str | None]:
        """The build of `release` the stack installs (builds.select_build),
        once per release: the resolver and the check both ask."""
        key = (release.package, release.version)
        found = self._selected.get(key)
        if found is None:
            found = self._selected[key] = select_build(
                component, release, self.stack.packages.get(release.package), self.stack, self.db)
        return found

    def how_installed(self, release: Release) -> str | None:
        """How an installer installs `release` here: "wheel" (one of its
        wheels fits), "sdist" (none fits, or it has none, and pip and uv build
        its sdist, unless the stack forbids builds: [compat] only_binary),
        "unknown" (the snapshot records neither its wheels nor an sdist: a
        curated release, an older snapshot, another index's build) or None
        (nothing fits and there is nothing to build)."""
        fit = self.wheel_fit(release).installable
        if fit is True:
            return "wheel"
        sdist = release.sdist
        if isinstance(sdist, str):
            return None if self.stack.only_binary else "sdist"
        if fit is None:
            return "unknown"
        return None

    def wheel_fit(self, release: Release) -> WheelFit:
        """How the release's wheels fit the stack's interpreter and platform
        (builds.wheel_fit), once per release: the resolver and the check
        both ask."""
        key = (release.package, release.version)
        fit = self._wheel_fits.get(key)
        if fit is None:
            if self.labelled(release):
                fit = WheelFit(None, None, ())  # its wheels are not the ones the snapshot records
            else:
                shared = self.shared(release)
                fit = shared.wheels.get(key) if shared is not None else None
                if fit is None:
                    fit = wheel_fit(release, self.platform)
                    if shared is not None:
                        shared.wheels[key] = fit
            self._wheel_fits[key] = fit
        return fit

    def labelled(self, release: Release) -> bool:
        """Whether the stack pins this release with a local label (+cu129):
        that build is served by another index (PyTorch's, the project's own)
        than the one whose wheels the snapshot records."""
        spec = self.stack.packages.get(release.package)
        return spec is not None and spec.build is not None and spec.pinned == release.version

    def _candidates(self, name: str, extras: frozenset[str], needs: list[Need]) -> Sequence[Candidate]:
        """The candidates of a package, in the order to try them: listed once
        per resolution (for each pre-release policy), so that each version is
        one Candidate, whose answers last from round to round."""
        spec = self.stack.packages.get(name)
        specifiers = [n.specifier for n in needs] + ([spec.specifier] if spec is not None else [])
        pre = self.pre or any(_remembered(self._naming_pre, s, _names_prerelease) for s in specifiers)
        key = (name, extras, pre)
        found = self._candidate_lists.get(key)
        if found is None:
            found = self._candidate_lists[key] = self._list_candidates(name, extras, pre)
        return found

    def _list_candidates(self, name: str, extras: frozenset[str], pre: bool) -> Sequence[Candidate]:
        if name.startswith(VIRTUAL_PREFIX):
            value = self.facts.version(name[len(VIRTUAL_PREFIX):])
            if value is None:
                return []
            if isinstance(value, Version):
                return [Candidate(name, value)]
            return [Candidate(name, None)]  # unknown: satisfies anything
        spec = self.stack.packages.get(name)
        component = self.db.component(name)
        releases = component.releases if component is not None else {}
        if spec is not None:
            pinned = spec.pinned
            if pinned is not None:
                return [Candidate(name, pinned, extras, releases.get(pinned))]
            if not releases:
                return [Candidate(name, None, extras, within=spec.specifier)]
            allowed = spec.specifier
        else:
            allowed = SpecifierSet()
        admitted = self._admitted(name, allowed)
        # (a package the stack names is judged on the releases the snapshot holds: what it asks for is its own)
        versions = self._prerelease_policy(admitted if spec is not None else self._with_older(name, admitted, allowed),
                                           pre)
        if spec is not None and not versions:
            if any(allowed.contains(v, prereleases=True) for v in releases):
                return []  # it holds such releases, all yanked: none satisfies a range (PEP 592)
            # The stack asks for releases the database does not hold: judge
            # nothing about them rather than report a false conflict.
            return [Candidate(name, None, extras, within=spec.specifier)]
        if name in self.near:
            assert component is not None
            ordered = component.versions()
            anchor = self.near[name]
            position = {v: i for i, v in enumerate(ordered)}
            here = position.get(anchor, sum(1 for v in ordered if v < anchor))
            versions = [*sorted((v for v in versions if v in position), key=lambda v: (abs(position[v] - here),
                                                                                        -position[v])),
                        *(v for v in versions if v not in position)]  # below the snapshot's window: last
        return _Candidates(name, extras, versions, releases)

    def _with_older(self, name: str, held: Sequence[Version], allowed: SpecifierSet) -> Sequence[Version]:
        """`held` (the snapshot's releases, newest first), then the releases
        the index lists below the snapshot's window (older than the oldest
        it holds, whose metadata it did not read), newest first: an
        installer takes one of those where no newer release fits (networkx
        3.2.1 on Python 3.9, when the window starts at 3.3). Their
        requirements and wheels are unknown: the check says so of one it
        chose (`older`)."""
        component = self.db.component(name)
        if component is None or component.index_listed is None or not component.releases:
            return held
        return Drawn(itertools.chain(held, self._older(component, allowed)))

    @staticmethod
    def _older(component: Component, allowed: SpecifierSet) -> Iterator[Version]:
        # a generator: the index's whole list is parsed only when every release held has been passed over
        oldest = min(component.releases)
        below = sorted((v for v in component.index_versions or () if v < oldest), reverse=True)
        yield from (v for v in below if not allowed or allowed.contains(v, prereleases=True))

    def known_versions(
        self, name: str, specifier: SpecifierSet, also: Iterable[SpecifierSet] = (), *, installable: bool = False
    ) -> Sequence[Version]:
        """Releases of `name` in the database that `specifier` admits, newest
        first, without yanked ones, under the pre-release policy (which the
        specifiers in `also` take part in); with `installable`, only those that
        can run on the stack, as an installer skips releases without a wheel
        for its platform (this decodes each release, so the resolver applies
        it lazily instead). Drawn as far as they are read: "the newest" or
        "is there one" parses no more than it needs."""
        versions: Sequence[Version] = self._admitted(name, specifier)
        component = self.db.component(name) if installable else None
        if component is not None:  # (a package the database does not hold has no release to list)
            versions = Drawn(v for v in versions if self.installable(component.releases[v]))
        pre = self.pre or any(_names_prerelease(s) for s in (specifier, *also))
        return self._prerelease_policy(versions, pre)

    def _admitted(self, name: str, specifier: SpecifierSet) -> Sequence[Version]:
        """Releases of `name` that `specifier` admits, newest first, without
        yanked ones, drawn as far as they are read."""
        component = self.db.component(name)
        if component is None:
            return []
        unyanked = self._unyanked.get(name)
        if unyanked is None:
            unyanked = self._unyanked[name] = newest_unyanked(component)
        if not specifier:
            return unyanked
        # Newest first: past a release below the set's lower bound (>=, >, ~=), every
        # later one is below it too, and none is admitted (a release's local label
        # does not lift it over the bound: those compare by their public version).
        return Drawn(_within(unyanked, specifier, _floor(specifier)))

    @staticmethod
    def _prerelease_policy(versions: Sequence[Version], pre: bool) -> Sequence[Version]:
        """Pre-releases only when asked for (`pre`: a specifier names one, or
        --pre), or when nothing else would do: uv's "if-necessary-or-explicit"
        (drawn as far as they are read)."""
        if pre:
            return versions
        return Drawn(_finals_else_all(versions))


def _within(newest_first: Iterable[Version], specifier: SpecifierSet, floor: Version | None) -> Iterator[Version]:
    """The versions `specifier` admits, up to the first under its `floor`:
    newest first, every version past one below the set's lower bound (>=, >,
    ~=) is below it too (a local label does not lift a release over the
    bound: those compare by their public version)."""
    for version in newest_first:
        if floor is not None and version < floor:
            return
        if specifier.contains(version, prereleases=True):
            yield version


def _finals_else_all(versions: Iterable[Version]) -> Iterator[Version]:
    """The final releases among `versions`, in order; all of them when
    there is none (pre-releases are held until the end shows that)."""
    held: list[Version] = []
    final = False
    for version in versions:
        if not version.is_prerelease:
            final = True
            yield version
        elif not final:
            held.append(version)
    if not final:
        yield from held


def _floor(specifier: SpecifierSet) -> Version | None:
    """The highest lower bound of the set's >=, > and ~= specifiers, or None."""
    floors = []
    for one in specifier:
        if one.operator in (">=", ">", "~="):
            try:
                floors.append(Version(one.version))
            except InvalidVersion:
                return None
    return max(floors, default=None)


def _names_prerelease(specifier: SpecifierSet) -> bool:
    return bool(specifier.prereleases)


def stack_needs(stack: Stack) -> list[Need]:
    """The stack's own requirements: each package it names, as written."""
    return [Need(spec.name, spec.specifier, spec.extras) for spec in stack.packages.values()]


def resolve(
    stack: Stack,
    db: Database,
    *,
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    pre: bool = False,
    near: Mapping[str, Version] | None = None,
    closure: bool = False,
    exhaustive: bool = False,
) -> Resolution:
    """Resolve the stack's packages and what they need: the packages that
    bear on the tracked ones and the stack's own, or with `closure` every
    dependency the database holds (what an installer installs).

    Found the cheap way first: every package chosen greedily (`_greedy`);
    where a choice fails, with `closure`, the scope resolved by resolvelib,
    the rest of the closure added greedily (`_widened`), and the
    whole assignment verified; where that does not hold (a constraint
    through the rest that the scope's pins break, no release that fits),
    and always with `exhaustive`, resolvelib resolves the whole closure.
    """
    if not exhaustive and near is None and not pre:
        greedy = _greedy(stack, db, max_rounds=max_rounds, closure=closure)
        if greedy is not None:
            return greedy
    if closure and not exhaustive:
        widened = _widened(stack, db, max_rounds=max_rounds, pre=pre, near=near)
        if widened is not None:
            return widened
    # Out of rounds, once more: often a package no release of which can be
    # installed, found again under each release of what requires it, so the
    # second attempt passes over such releases before trying them; the third
    # never re-pins (see StackProvider.no_repin), for requirements that run
    # in a circle.
    for dead_ends, no_repin in ((False, False), (True, False), (True, True)):
        provider = StackProvider(stack, db, pre=pre, near=near, closure=closure, dead_ends=dead_ends)
        provider.no_repin = no_repin
        budget = RoundBudget(max_rounds)
        search = _Search(provider, budget)
        try:
            state = search.resolve(stack_needs(stack), max_rounds=_UNBOUNDED)
            break
        except ResolutionImpossible as exc:
            return Resolution(False, {}, list(exc.causes), provider.gaps, provider, budget.rounds)
        except (_OutOfRounds, ResolutionTooDeep):
            continue
    else:
        raise ResolutionTooComplex(
            f"the resolver gave up after {max_rounds} rounds; the problem is too complex for this budget "
            "(raise --max-rounds, or pin more packages)",
            file=stack.path,
        ) from None
    versions = {key: c for key, c in _required(state).items() if not c.extras}
    return Resolution(True, versions, [], provider.gaps, provider, budget.rounds)


# -- judgments shared by the resolutions of stacks alike ----------------------------------------


class _Shared:
    """The judgments of releases that depend on a stack only through its
    machine and the names of its packages, shared by the resolutions of
    every stack alike checked against one database object in one thread: a
    matrix's cells, the candidates a search for fixes checks, a deployment
    script's variants. For a release of a package the stack does not name,
    in the whole closure: the Requires-Dist lines that apply (their markers
    are the machine's; whether a line's package counts, the names'), with
    the gaps reading them found; whether it can be installed, for a package
    without builds (Requires-Python, wheels, sdist); how its wheels fit.
    What the stack's pins, flags, hardware rules or builds decide is judged
    by each resolution on its own (StackProvider.shared says which)."""

    __slots__ = ("requires", "fits", "wheels")

    def __init__(self) -> None:
        self.requires: dict[tuple[str, Version, frozenset[str]], tuple[tuple[Need, ...], tuple[Gap, ...]]] = {}
        self.fits: dict[tuple[str, Version], bool] = {}
        self.wheels: dict[tuple[str, Version], WheelFit] = {}


_SHARED_PER_DATABASE = 8  # the machines (and package names) a thread keeps shared judgments of, per database


def _shared_for(stack: Stack, db: Database) -> _Shared:
    """The shared judgments of stacks alike `stack` (same machine, same
    package names, same locked/only-binary), kept on `db` as the reused
    resolutions are."""
    key = repr((stack.system, sorted(stack.packages), stack.only_binary, stack.locked))
    return _kept(db, "_shared_judgments", key, _Shared, _SHARED_PER_DATABASE)


def _kept(db: Database, store_name: str, key: Any, make: Callable[[], Any], limit: int) -> Any:
    """What `make` gives for `key`, kept on `db` (one store per thread, the
    `limit` most recently used; forgotten with `forget_resolutions`). On the
    database object, not beside it keyed by it: what is kept refers to the
    database, and a store beside it would keep every database loaded alive."""
    store = db.__dict__.setdefault(store_name, threading.local())
    cache: dict[Any, Any] | None = getattr(store, "cache", None)
    if cache is None:
        cache = store.cache = {}
    key = (key, getattr(_GENERATION, "value", 0))
    found = cache.pop(key, None)
    if found is None:
        found = make()
        if len(cache) >= limit:
            del cache[next(iter(cache))]  # the least recently used (or one forgotten)
    cache[key] = found  # (re)inserted last: the most recently used
    return found


# -- the same install resolved once per process --------------------------------------------------

_GENERATION = threading.local()  # per thread: reused resolutions older than its `value` are forgotten
_RESOLVED_PER_DATABASE = 16  # the closures a thread keeps per database, the most recently used (each holds its provider's memo: a bound on memory in a long matrix or suggestion search)


def resolution_key(stack: Stack) -> str:
    """What a resolution of `stack` reads of it: its machine, its packages and
    what conditions of rules test (options, model, environment variables),
    the overlay, and whether it is a locked install or allows builds from
    source; not its name, path, text, ignored findings or strictness, which
    only the report reads. Two stacks with the same key resolve alike."""
    return repr((
        stack.system, stack.hardware, sorted(stack.packages.items()),
        sorted((name, sorted(values.items())) for name, values in stack.options.items()),
        stack.model, stack.catalog_model, sorted(stack.env.items()), stack.overlay, stack.locked,
        stack.only_binary, stack.require_known, id(stack.environment) if stack.environment is not None else None,
    ))


def forget_resolutions() -> None:
    """Drop this thread's reused resolutions (after changing how a resolution
    is made, as a test that patches the resolver does)."""
    _GENERATION.value = getattr(_GENERATION, "value", 0) + 1


def resolve_install(stack: Stack, db: Database, *, max_rounds: int = DEFAULT_MAX_ROUNDS) -> Resolution:
    """The whole install's resolution (`resolve` with `closure`), reused for a
    stack of the same key (`resolution_key`) checked before in this thread
    against the same database object: a deployment script that checks many
    variants of one stack (its name, the findings it ignores, --strict), or
    the search for fixes that checks one candidate stack again, resolves it
    once. The reused resolution's provider keeps the memo of what it judged
    (each release's requirements and fit), which depends on the key alone.

    The resolutions live on the database object (one store per thread): they
    refer to it, so a store kept beside it, keyed by it, would keep every
    database a process ever loaded alive; on it, they go with it.
    """
    return _kept(db, "_resolved_installs", (resolution_key(stack), max_rounds),
                 lambda: resolve(stack, db, max_rounds=max_rounds, closure=True), _RESOLVED_PER_DATABASE)


def _greedy(stack: Stack, db: Database, *, max_rounds: int, closure: bool) -> Resolution | None:
    """The resolution with no search at all, or None where it needs one.

    Most stacks need none: each package is chosen after everything that can
    require it, at the newest release that meets them all, can be installed
    here and whose own requirements the releases chosen before it meet
    (`_Extension`). tests/test_widening.py holds this to resolvelib's
    answer on the examples and 300-odd real stacks (with `closure`, the
    whole install; without, the packages that bear on the tracked ones),
    and spares resolvelib's rounds, which scan every criterion each time.
    A choice counts as a round of the budget; where a choice fails, or the
    budget is spent, resolvelib searches.
    """
    provider = StackProvider(stack, db, closure=closure)
    extension = _Extension(provider, {})
    if extension.complete(stack_needs(stack)) and extension.added <= max_rounds:
        return Resolution(True, extension.chosen, [], provider.gaps, provider, extension.added)
    return None


def _widened(
    stack: Stack, db: Database, *, max_rounds: int, pre: bool, near: Mapping[str, Version] | None
) -> Resolution | None:
    """The closure's resolution from a scope's, where the greedy one
    (`_greedy`) needs a search: resolvelib resolves the
    packages through which a tracked package can be constrained; the rest
    of the closure is then added one package at a time, in resolvelib's
    order of preference, each at the first release (newest, or nearest
    with `near`) that meets every requirement on it so far and can be
    installed here, and every requirement of every chosen release (its
    extras merged) is verified against the choices. Where one is not met,
    or a package has no release that meets them all, the packages whose
    requirements clash join the scope and the scope is resolved again;
    None, for a full resolution, when that does not settle it.

    Each release added is the first that meets every requirement on it in
    the end (it met those known when it was chosen, and it meets the rest),
    the release resolvelib pins when it need not backtrack through it.
    """
    base = db.relevant(stack.packages)
    if base is None:
        return None  # no names graph: the scope is the closure
    learned: set[str] = set()
    rounds = 0
    for _ in range(_MAX_WIDENINGS):
        provider = StackProvider(stack, db, pre=pre, near=near, closure=False)
        provider.scope = base | learned
        budget = RoundBudget(max(max_rounds - rounds, 0))
        try:
            state = _Search(provider, budget).resolve(stack_needs(stack), max_rounds=_UNBOUNDED)
        except (ResolutionImpossible, _OutOfRounds, ResolutionTooDeep):
            return None  # the whole closure fails too, or needs the second attempt: resolvelib says how
        rounds += budget.rounds
        provider.widen()
        extension = _Extension(provider, {k: c for k, c in _required(state).items() if not c.extras})
        if extension.complete(stack_needs(stack)):
            return Resolution(True, extension.chosen, [], provider.gaps, provider, rounds + extension.added)
        if extension.culprits <= learned:
            return None
        learned |= extension.culprits
    return None


_MAX_WIDENINGS = 4  # scopes tried before the whole closure is left to resolvelib


class _Extension:
    """The greedy completion of a scope's resolution (see _widened)."""

    def __init__(self, provider: StackProvider, chosen: dict[str, Candidate]) -> None:
        self.provider = provider
        self.chosen = dict(chosen)
        self.needs: dict[str, list[tuple[Need, str | None]]] = {}  # name -> every requirement on it so far, by whom
        self.applied: set[tuple[str, frozenset[str]]] = set()  # (name, extras) whose requirements are in
        self.waiting: list[tuple[str, frozenset[str]]] = []
        # packages required and not yet chosen: a pinned one first (it has one release to choose), then
        # those that whatever is still to choose cannot require (graph.requirers_first), so that each
        # is chosen knowing what requires it; an entry may be stale (chosen since, or pinned since:
        # then the pinned entry comes first)
        self.pending: list[tuple[bool, int, str]] = []
        self.order = provider.db.requirers_first()
        self.added = 0
        self.culprits: set[str] = set()  # after a failure: the packages whose requirements clash

    def complete(self, stack_needs: list[Need]) -> bool:
        for need in stack_needs:
            if not self.require(need, None):
                return False
        self.waiting.extend((name, frozenset()) for name in sorted(self.chosen))
        while True:
            while self.waiting:
                name, extras = self.waiting.pop()
                if (name, extras) in self.applied:
                    continue
                self.applied.add((name, extras))
                release = self.chosen[name].release
                if release is None:
                    continue
                for need in self.provider.dependencies(release, extras):
                    if not self.require(need, name):
                        return False
            while self.pending and self.pending[0][2] in self.chosen:
                heapq.heappop(self.pending)
            if not self.pending:
                return True
            if not self.choose(heapq.heappop(self.pending)[2]):
                return False

    def require(self, need: Need, by: str | None) -> bool:
        """Record `need` (of package `by`); False when the release chosen for its package does not meet it."""
        self.needs.setdefault(need.name, []).append((need, by))
        candidate = self.chosen.get(need.name)
        if candidate is None:
            if need.is_virtual:
                return self.choose(need.name)
            heapq.heappush(self.pending, (not _pins(need.specifier), self.order.get(need.name, len(self.order)),
                                          need.name))
            return True
        if not self.provider.is_satisfied_by(need, candidate):
            self._blame(need.name)
            return False
        self.waiting.extend((need.name, frozenset([extra])) for extra in need.extras)
        return True

    def choose(self, name: str) -> bool:
        """Pin `name` at the first release that meets every requirement on it and may be installed."""
        needs = [n for n, _ in self.needs[name]]
        satisfied, may_install = self.provider.is_satisfied_by, self.provider._may_install
        for candidate in self.provider._candidates(name, frozenset(), needs):
            if all(satisfied(n, candidate) for n in needs) and may_install(candidate) and self._agrees(candidate):
                self.chosen[name] = candidate
                self.added += 1
                self.waiting.append((name, frozenset()))
                self.waiting.extend((name, frozenset([e])) for n in needs for e in n.extras)
                return True
        self._blame(name)
        return False

    def _agrees(self, candidate: Candidate) -> bool:
        """Whether the candidate's own requirements are met by the releases
        chosen so far: a release that requires another of a package already
        chosen is passed over for an older one, as resolvelib backtracks to
        one when the two meet (vLLM 0.26.0 pins apache-tvm-ffi 0.1.10;
        xgrammar 0.2.9 needs 0.1.11 or newer, 0.2.8 does not)."""
        if candidate.release is None:
            return True
        chosen, satisfied = self.chosen, self.provider.is_satisfied_by
        for need in self.provider.dependencies(candidate.release):
            pinned = chosen.get(need.name)
            if pinned is not None and not satisfied(need, pinned):
                return False
        return True

    def _blame(self, name: str) -> None:
        self.culprits = {name, *(by for _, by in self.needs[name] if by is not None)}
        self.culprits = {n for n in self.culprits if not n.startswith(VIRTUAL_PREFIX)}


def _required(state: State[Need, Candidate, str]) -> dict[str, Candidate]:
    """The pins some chain of requirements leads to from the stack; a pin
    left over from a release no longer chosen is not one.

    What resolvelib's Resolver returns, walked without recursion: its own
    walk recurses without end on a cycle of packages the stack no longer
    reaches (a RecursionError, where a dependency cycle is allowed).
    """
    keys: dict[int, str | None] = {id(c): k for k, c in state.mapping.items()}
    keys[id(None)] = None
    below: dict[str | None, list[str]] = {}
    for key, criterion in state.criteria.items():
        for parent in criterion.iter_parent():
            if id(parent) in keys:
                below.setdefault(keys[id(parent)], []).append(key)
    reached: set[str | None] = {None}
    waiting: list[str | None] = [None]
    while waiting:
        for key in below.get(waiting.pop(), ()):
            if key not in reached:
                reached.add(key)
                waiting.append(key)
    return {k: c for k, c in state.mapping.items() if k in reached}

