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

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version
from resolvelib import AbstractProvider, BaseReporter, Resolver
from resolvelib.resolvers import RequirementInformation, ResolutionImpossible, ResolutionTooDeep

from .._names import normalize
from .._versions import overlap
from ..errors import ResolutionTooComplex
from ..knowledge.database import Database
from ..knowledge.model import Release, Rule
from ..sources.stack import Stack
from .builds import Platform, judge_build, select_build, wheel_fit
from .facts import VIRTUAL_PREFIX, StackFacts, virtual_name

__all__ = ["Need", "Candidate", "Gap", "Resolution", "resolve", "DEFAULT_MAX_ROUNDS"]

DEFAULT_MAX_ROUNDS = 2000


class Need(NamedTuple):
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

    __slots__ = ("name", "version", "extras", "release", "within")

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


class Gap(NamedTuple):
    """A requirement on a tracked package that no release in the database meets."""

    package: str
    need: Need


@dataclass
class Resolution:
    ok: bool
    versions: dict[str, Candidate]
    causes: list[RequirementInformation[Need, Candidate]]
    gaps: list[Gap]
    provider: StackProvider


@functools.lru_cache(maxsize=4096)
def _pins(specifier: SpecifierSet) -> bool:
    return any(s.operator in ("==", "===") for s in specifier)


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
    ) -> None:
        self.stack = stack
        self.db = db
        # The packages resolved: with `closure`, every one the database holds
        # (what an installer installs); otherwise those through which a
        # tracked package or one the stack names can be constrained.
        self.scope = None if closure else db.relevant(stack.packages)
        self.pre = pre
        # Packages to try nearest to a version first (suggestions look for the
        # smallest move), rather than newest first.
        self.near = dict(near or {})
        self.environment = stack.system.marker_environment()
        self.platform = Platform(stack.system)
        self._fits: dict[tuple[str, Version], bool] = {}
        # releases left out because they require something else than a pin of the stack: (release, that need)
        self.pruned: dict[tuple[str, Version], tuple[Release, Need]] = {}
        # id(specifier) -> (the specifier, kept so its id stays its own; version -> contains)
        self._satisfied: dict[int, tuple[SpecifierSet, dict[Version, bool]]] = {}
        self.facts = StackFacts(stack, {})
        self.gaps: list[Gap] = []
        self._gap_keys: set[tuple[str, str]] = set()
        self._dependencies: dict[tuple[str, Version, frozenset[str]], list[Need]] = {}
        self._unyanked: dict[str, list[Version]] = {}  # name -> its releases not yanked, newest first

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
            if not pinned and _pins(need.specifier):
                pinned = True
        return (not pinned, not from_stack, identifier)

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Need]],
        incompatibilities: Mapping[str, Iterator[Candidate]],
    ) -> Callable[[], Iterator[Candidate]]:
        needs = list(requirements[identifier])
        bad = {c.version for c in incompatibilities[identifier]}
        found = self._candidates(needs[0].name, needs[0].extras, needs) if needs else []

        # Lazily, newest first: resolvelib usually takes the first candidate,
        # so most releases of a large package are never tested at all.
        def matches() -> Iterator[Candidate]:
            for candidate in found:
                if candidate.version in bad:
                    continue
                if all(self.is_satisfied_by(n, candidate) for n in needs) and self._may_install(candidate):
                    yield candidate

        return matches

    def is_satisfied_by(self, requirement: Need, candidate: Candidate) -> bool:
        # resolvelib asks again, every round, whether each pin still meets each
        # requirement: the answers are remembered per specifier object (each
        # Need lives as long as the provider, in its dependency cache).
        version = candidate.version
        if version is None:
            if candidate.within is None:
                return True
            return overlap(requirement.specifier, candidate.within)
        specifier = requirement.specifier
        known = self._satisfied.get(id(specifier))
        if known is None:
            known = self._satisfied[id(specifier)] = (specifier, {})
        answers = known[1]
        answer = answers.get(version)
        if answer is None:
            answer = answers[version] = specifier.contains(version, prereleases=True)
        return answer

    def get_dependencies(self, candidate: Candidate) -> list[Need]:
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
        for dependency in release.dependencies_for(extras, self._wanted):
            requirement = dependency.requirement
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
        if not extras:
            needs.extend(self._rule_needs(release, parent))
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
            return False
        component = self.db.component(need.name)
        if component is None or not component.releases:
            return False
        if any(need.specifier.contains(v, prereleases=True) for v in component.newest_first()):
            return True
        if component.index_versions is not None and not any(
            need.specifier.contains(v, prereleases=True) for v in component.index_versions
        ):
            # Not a gap in the database: no such release exists, so nothing can install it.
            return True
        if (need.name, str(need)) not in self._gap_keys:
            self._gap_keys.add((need.name, str(need)))
            self.gaps.append(Gap(need.name, need))
        return False

    def _rule_needs(self, release: Release, parent: str) -> list[Need]:
        component = self.db.component(release.package)
        if component is None:
            return []
        facts = self.facts.for_component(component)
        needs = []
        for rule in component.rules:
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
        """A release the stack pins is taken as pinned (the check says what is
        wrong with it); the others only if they can run on the stack."""
        release = candidate.release
        if release is None or candidate.extras:
            return True
        spec = self.stack.packages.get(candidate.name)
        if spec is not None and spec.pinned is not None:
            # no installer installs a pin without a wheel for the platform (the check says which);
            # its Python and build are judged as requirements and findings
            return wheel_fit(release, self.platform).installable is not False
        return self.installable(release) and self._agrees_with_pins(release)

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
            # as pip and uv do, a release whose Requires-Python excludes the interpreter is no candidate
            python = release.requires_python
            fits = python is None or python.contains(self.stack.system.python, prereleases=True)
            fits = fits and wheel_fit(release, self.platform).installable is not False
            component = self.db.component(release.package)
            if fits and component is not None:
                selected, _ = select_build(
                    component, release, self.stack.packages.get(release.package), self.stack, self.db
                )
                if selected is not None:
                    fits = not any(p.severity == "error" for p in judge_build(selected.build, self.stack, self.db))
            self._fits[key] = fits
        return fits

    def _candidates(self, name: str, extras: frozenset[str], needs: list[Need]) -> list[Candidate]:
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
        versions = self.known_versions(name, allowed, [n.specifier for n in needs])
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
            versions = sorted(versions, key=lambda v: (abs(position[v] - here), -position[v]))
        return [Candidate(name, v, extras, releases[v]) for v in versions]

    def known_versions(
        self, name: str, specifier: SpecifierSet, also: Iterable[SpecifierSet] = (), *, installable: bool = False
    ) -> list[Version]:
        """Releases of `name` in the database that `specifier` admits, newest
        first, without yanked ones, under the pre-release policy (which the
        specifiers in `also` take part in); with `installable`, only those that
        can run on the stack, as an installer skips releases without a wheel
        for its platform (this decodes each release, so the resolver applies
        it lazily instead)."""
        component = self.db.component(name)
        if component is None:
            return []
        releases = component.releases
        unyanked = self._unyanked.get(name)
        if unyanked is None:
            unyanked = self._unyanked[name] = [v for v in component.newest_first() if not releases[v].is_yanked]
        versions = [v for v in unyanked if specifier.contains(v, prereleases=True)] if specifier else list(unyanked)
        if installable:
            versions = [v for v in versions if self.installable(releases[v])]
        return self._prerelease_policy(versions, [specifier, *also])

    def _prerelease_policy(self, versions: list[Version], specifiers: list[SpecifierSet]) -> list[Version]:
        """Pre-releases only when asked for (a specifier names one, or --pre),
        or when nothing else would do: uv's "if-necessary-or-explicit"."""
        if self.pre or any(s.prereleases for s in specifiers):
            return versions
        finals = [v for v in versions if not v.is_prerelease]
        return finals or versions


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
) -> Resolution:
    """Resolve the stack's packages and what they need: the packages that
    bear on the tracked ones and the stack's own, or with `closure` every
    dependency the database holds (for lock files)."""
    provider = StackProvider(stack, db, pre=pre, near=near, closure=closure)
    resolver: Resolver[Need, Candidate, str] = Resolver(provider, BaseReporter())
    try:
        result = resolver.resolve(stack_needs(stack), max_rounds=max_rounds)
    except ResolutionImpossible as exc:
        return Resolution(False, {}, list(exc.causes), provider.gaps, provider)
    except ResolutionTooDeep:
        raise ResolutionTooComplex(
            f"the resolver gave up after {max_rounds} rounds; the problem is too complex for this budget "
            "(raise --max-rounds, or pin more packages)",
            file=stack.path,
        ) from None
    versions = {key: c for key, c in result.mapping.items() if not c.extras}
    return Resolution(True, versions, [], provider.gaps, provider)

