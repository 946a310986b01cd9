"""`judge`: every violated constraint of a stack, as findings.

1. Resolve the stack (resolver.py). Success gives a version for every
   package of the stack and for the tracked packages they need.
2. On failure, take the stack's own pins (and, for a range, its newest
   allowed release) so that each constraint can still be judged.
3. Judge every requirement edge of those releases on its own, every rule of
   the database that applies, and the status of each release. Each violated
   constraint is a finding, so a stack with three problems shows three, not
   the first one the resolver tripped on.

What a failing stack also gets (why it cannot be resolved, the smallest
changes that work) is composed one step up, in check.py: the search for
those changes judges candidate stacks here.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import TYPE_CHECKING, Any, NamedTuple

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._names import import_names, normalize
from .._versions import overlap, spec_text
from ..knowledge.conditions import LABELS, UNKNOWN, Condition, value_text
from ..knowledge.database import Database, meets
from ..knowledge.layers import STALE_DAYS, cites_local, current_date, is_local, stale_snapshot, with_overlay
from ..knowledge.model import Build, Component, Release, Rule, Source
from ..knowledge.snapshot import fetches_wheel
from ..stack import PackageSpec, Stack
from ..errors import CompatError
from .builds import Selected, WheelFit, judge_build, label_torch
from .facts import VIRTUAL_LABELS, VIRTUAL_PREFIX, StackFacts, virtual_name
from .findings import SEVERITY_ORDER, Finding, Report
from .resolver import DEFAULT_MAX_ROUNDS, Gap, Need, Resolution, StackProvider, resolve_install

__all__ = ["judge", "Judged"]

if TYPE_CHECKING:  # the option files are read only for stacks that give flags
    from ..knowledge.options import GpuPlan, OptionCatalog


class Judged(NamedTuple):
    """A stack judged: its report (findings, no explanation or suggestions
    yet), the install's resolution, and the facts that keep the releases a
    conflict needs off this machine (for the explanation), and the database
    it was judged against (the stack's overlay laid over the one given)."""

    report: Report
    resolution: Resolution
    blocking: list[str]
    db: Database


def judge(
    stack: Stack,
    db: Database,
    *,
    strict: bool | None = None,
    ignore: tuple[str, ...] | list[str] = (),
    max_rounds: int = DEFAULT_MAX_ROUNDS,
    require_known: bool | None = None,
) -> Judged:
    """The findings of `stack` against `db` (the report, with no explanation
    or suggestions yet: check.check_stack adds them), and what check.py
    needs to explain a failure."""
    if stack.overlay is not None:  # [compat] overlay: the stack's own facts over the database
        db = with_overlay(db, stack.overlay)
    resolution = resolve_install(stack, db, max_rounds=max_rounds)
    checker = _Checker(stack, db, resolution.provider, bool(require_known) or stack.require_known)
    versions = checker.assign(resolution)
    checker.stack_findings()
    checker.machine()
    checker.host()
    checker.edges(versions)
    checker.flags(versions)
    checker.parallel(versions)
    checker.rules(versions)
    checker.statuses(versions)
    checker.stale(versions)
    checker.installs(versions)
    checker.label_ties(versions)
    checker.passed_over(resolution, versions)
    checker.gaps(resolution)
    if not resolution.ok:
        checker.blocked(resolution)
        checker.pruned(resolution)
        checker.dead_ends(resolution)
        checker.missing_causes(resolution)
    if not resolution.ok and not any(f.severity == "error" for f in checker.findings):
        checker.unexplained(resolution)
    findings = sorted(_unique(checker.findings), key=lambda f: (SEVERITY_ORDER[f.severity], f.id))
    packages = {name: _shown(versions.get(name), spec) for name, spec in stack.packages.items()}
    resolved = {
        name: str(v) for name, v in sorted(versions.items()) if name not in stack.packages and v is not None
    }
    report = Report(
        stack=stack,
        findings=findings,
        packages=packages,
        resolved=resolved,
        strict=bool(strict) or stack.strict,
        resolution_ok=resolution.ok,
    )
    report.suppress(tuple(stack.ignore) + tuple(ignore))
    return Judged(report, resolution, checker.blocking, db)


def _release_source(catalog: Any, version: Version | None) -> str | None:
    """The source of the definitions that hold for `version` (any one of them cites its release's parser)."""
    holding = [o for o in catalog.options if o.has(version) and o.source]
    if not holding:
        return None
    # the definition that changed most recently before `version`: its source is the nearest release read
    newest = max(holding, key=lambda o: max(_lower_edges(o), default=Version("0")))
    return newest.source  # type: ignore[no-any-return]


def _lower_edges(definition: Any) -> list[Version]:
    """The versions a definition's range starts from (its >= and > bounds)."""
    return [Version(s.version) for s in definition.releases if s.operator in (">=", ">")]


def _shown(version: Version | None, spec: PackageSpec) -> str:
    if version is None:
        return spec.written
    return f"{version}+{spec.build}" if spec.build else str(version)


def _unique(findings: list[Finding]) -> list[Finding]:
    seen: dict[str, Finding] = {}
    for finding in findings:
        seen.setdefault(finding.id, finding)
    return list(seen.values())


class _Checker:
    def __init__(self, stack: Stack, db: Database, provider: StackProvider, require_known: bool = False) -> None:
        self.stack = stack
        self.db = db
        self.findings: list[Finding] = []
        self.unknown_checked: dict[str, list[str]] = {}  # a release the snapshot lacks -> the rules applied to it
        self.provider = provider
        self.require_known = require_known
        self.blocking: list[str] = []  # why releases a failed resolution needed cannot install here (for the explanation)
        self.extras: dict[str, frozenset[str]] = {}  # the extras of each package an installer installs (edges())

    # -- helpers -------------------------------------------------------------

    def add(self, id: str, severity: str, message: str, components: tuple[str, ...], kind: str, layer: str,
            source: str | Source | None = None, *, basis: str | None = None, also: tuple[str, ...] = (),
            **details: Any) -> None:
        if not isinstance(source, Source):
            source = self.db.source(source)
        if layer == "curated" and cites_local(self.db, source):
            layer = "local"
        if layer == "local":  # a fact of the user's own overlay: the text report says so too
            message = f"[local] {message}"
        self.findings.append(
            Finding(
                id=id,
                severity=severity,
                message=message,
                components=components,
                kind=kind,
                layer=layer,
                source=source,
                details={k: v for k, v in details.items() if v is not None} or None,
                basis=basis,
                also=tuple(s for s in map(self.db.source, also) if s is not None),
            )
        )

    def release_of(self, name: str, version: Version | None) -> Release | None:
        if version is None:
            return None
        component = self.db.component(name)
        return component.release(version) if component is not None else None

    # -- 1 and 2: a version for every package --------------------------------

    def assign(self, resolution: Resolution) -> dict[str, Version | None]:
        if resolution.ok:
            versions: dict[str, Version | None] = {}
            for key, candidate in resolution.versions.items():
                if key.startswith(VIRTUAL_PREFIX):
                    continue
                versions[key] = candidate.version
            return versions
        versions = {}
        for name, spec in self.stack.packages.items():
            if spec.pinned is not None:
                versions[name] = spec.pinned
                continue
            known = self.provider.known_versions(name, spec.specifier, installable=True)
            versions[name] = known[0] if known else None
        return versions

    @property
    def unknown_severity(self) -> str:
        return "error" if self.require_known else "warning"

    def skipped(self, component: Component, checked: list[str] | tuple[str, ...] = ()) -> str:
        """What a check can and cannot judge of a release the database does
        not hold: the rules whose ranges cover it (`checked`) are applied;
        what needs its metadata (its requirements, wheels and builds) is not."""
        parts = ["its own requirements", "its wheels"]
        if component.has_builds:
            parts.append("its builds")
        text = "not checked: " + ", ".join(parts)
        if checked:
            shown = ", ".join(checked[:4]) + (f" and {len(checked) - 4} more" if len(checked) > 4 else "")
            text += f"; checked: the {len(checked)} rule{'s' if len(checked) != 1 else ''} whose releases cover it ({shown})"
        return text

    # -- 3: the stack file itself ------------------------------------------------

    def unknown_model(self) -> None:
        """[model] names a model the catalog lacks: say so, rather than nothing."""
        model = self.stack.model
        named = model.name or model.repo
        if not named or self.stack.catalog_model is not None:
            return
        key = "name" if model.name else "repo"
        try:
            catalog = self.db.models
        except CompatError:
            return  # lint reports a broken catalog; the check goes on without it
        spellings = {n: m.name for m in catalog.models for n in (m.name, m.repo, *m.aliases) if n}
        from .._names import nearest

        start = sorted({m for n, m in spellings.items() if n.lower().startswith(named.lower())})
        guess = nearest(named, spellings, cutoff=0.75)
        if start:
            hint = f" (the catalog has {', '.join(repr(n) for n in start)})"
        else:
            hint = f" (did you mean {spellings[guess]!r}?)" if guess else ""
        family = f"; the stack's family {model.family!r} is used" if model.family else "; give [model] family and traits to decide the rules about models"
        self.add(
            "model:unknown",
            "info",
            f"the model catalog does not know [model] {key} {named!r}{hint}{family}",
            (),
            "unverified",
            "stack",
        )

    def stack_findings(self) -> None:
        self.unknown_model()
        for name, spec in self.stack.packages.items():
            component = self.db.component(name)
            if spec.pinned is not None or component is None or not component.releases:
                continue
            known = self.provider.known_versions(name, spec.specifier)
            if known and not any(self.provider.installable(component.releases[v]) for v in known):
                self.add(
                    f"wheel:{name}",
                    "error",
                    f"no release of {name} that {name}{spec_text(spec.specifier)} admits can run on this stack: "
                    f"none admits Python {self.stack.system.python}, has a wheel for {self.stack.system.platform}"
                    + (f" with glibc {self.stack.system.glibc}" if self.stack.system.glibc else "")
                    + " and a build that fits its CUDA, driver and GPU",
                    (name, "python"),
                    "platform",
                    "metadata",
                )
            elif not known:
                self.add(
                    f"unknown-release:{name}",
                    self.unknown_severity,
                    f"the database holds no release of {name} that {name}{spec_text(spec.specifier)} admits; "
                    f"{self.skipped(component)}",
                    (name,),
                    "unknown-release",
                    "metadata",
                )
        imported = import_names(self.db.names()) if self.stack.untracked else {}
        for name in self.stack.untracked:
            meant = imported.get(name)
            hint = (f"; did you mean {meant!r}? ([packages] names a distribution as pip installs it, not as "
                    f"Python imports it; {name} may also be a project of its own)") if meant else ""
            self.add(
                f"untracked:{name}",
                "warning",
                f"{name} is not tracked by the database; it is checked only against the requirements of other "
                f"packages{hint}",
                (name,),
                "untracked",
                "stack",
            )
        for package, option in self.stack.unknown_options:
            self.add(
                f"unknown-option:{package}:{option}",
                "warning",
                f"the database knows no option {option!r} of {package}; it is not checked",
                (package,),
                "unknown-option",
                "stack",
            )
        for package, values in self.stack.options.items():
            component = self.db.component(package)
            if component is None:
                continue
            catalog = self.db.option_catalog(package)
            for option, value in values.items():
                spec = component.options.get(option)
                if spec is None or not spec.values or (catalog is not None and catalog.knows(option)):
                    continue  # a flag the engine's own definitions list is judged by `flags`, per release
                if value_text(value) not in spec.values:
                    self.add(
                        f"option-value:{package}:{option}",
                        "warning",
                        f"{package} option {option} = {value!r} is not one of the values the database knows: "
                        f"{', '.join(spec.values)}",
                        (package,),
                        "option-value",
                        "curated",
                        spec.source,
                    )

    def flags(self, versions: dict[str, Version | None]) -> None:
        """The stack's flags against the definitions of the release it installs."""
        if not self.stack.options:
            return
        from ..knowledge.options import value_problem  # only stacks that give flags

        for package, values in self.stack.options.items():
            catalog = self.db.option_catalog(package)
            if catalog is None:
                continue
            version = versions.get(package)
            judged = catalog.covers_release(version)
            component = self.db.component(package)
            declared = component.options if component is not None else {}
            for option, value in values.items():
                definitions = catalog.definitions(option)
                if not definitions:
                    guess = catalog.suggest(option)
                    hint = f"; did you mean --{guess}?" if guess else ""
                    if judged and option not in declared:
                        # the file lists every flag this release's parser registers: the server refuses this one
                        self.findings = [f for f in self.findings if f.id != f"unknown-option:{package}:{option}"]
                        self.add(
                            f"option-unknown:{package}:{option}",
                            "error",
                            f"{package} {version} has no --{option}: its command line refuses it{hint}",
                            (package,),
                            "option-removed",
                            "curated",
                            _release_source(catalog, version),
                        )
                    elif hint:
                        self.findings = [
                            f._replace(message=f.message + hint) if f.id == f"unknown-option:{package}:{option}" else f
                            for f in self.findings
                        ]
                    continue
                here = catalog.at(option, version) if judged else None
                if here is None and judged:
                    self._missing_flag(package, option, version, definitions)
                    continue
                candidates = [here] if here is not None else definitions
                problems = [value_problem(d.type, d.values, value, ignore_case=d.ignore_case) for d in candidates]
                if any(p is None for p in problems):
                    continue
                where = f"{package} {version}" if here is not None else package
                self.add(
                    f"option-value:{package}:{option}",
                    "error",
                    f"{where}: --{option} = {value!r}: {problems[-1]}",
                    (package,),
                    "option-value",
                    "curated",
                    candidates[-1].source,
                )

    def parallel(self, versions: dict[str, Version | None]) -> None:
        """The GPUs a server's parallel sizes start on this node against
        [hardware] count, by the [gpus] table of the engine's option file:
        a server that needs more GPUs than the node has cannot start."""
        if not self.stack.options or self.stack.hardware.accelerator not in ("cuda", "rocm"):
            return
        for package, values in sorted(self.stack.options.items()):
            catalog = self.db.option_catalog(package)
            plan = catalog.gpus if catalog is not None else None
            if plan is None:
                continue
            given = {catalog.canonical(flag) or flag: value for flag, value in values.items()}
            if any(value_text(given.get(flag, "")) == value for flag, value in plan.elsewhere):
                continue  # the workers are placed over a cluster whose nodes the stack does not describe
            if any(f in given for f in (*plan.multiply, plan.replicas, plan.replicas_here, plan.count) if f is not None):
                self._parallel(package, versions.get(package), plan, catalog, given)

    def _parallel(self, package: str, version: Version | None, plan: GpuPlan, catalog: OptionCatalog,
                  given: dict[str, Any]) -> None:
        def size(flag: str | None) -> int | None:
            """The flag's value, or its default in this release (1 where none is known)."""
            if flag is None:
                return None
            definition = catalog.at(flag, version) or next(iter(catalog.definitions(flag)), None)
            value = given.get(flag, definition.default if definition is not None else None)
            try:
                return int(value) if value is not None and not isinstance(value, bool) else 1
            except (TypeError, ValueError, OverflowError):  # inf, nan: not a size either
                return None  # not a number: option-value says so

        terms = [(flag, size(flag)) for flag in plan.multiply]
        shared = plan.replicas_shared is not None and value_text(given.get(plan.replicas_shared, False)) == "true"
        if plan.replicas is not None and not shared:
            replicas = plan.replicas_here if plan.replicas_here in given else plan.replicas
            terms.append((replicas, size(replicas)))
        if any(n is None for _, n in terms):
            return
        need = 1
        for _, n in terms:
            need *= n  # type: ignore[operator]
        nodes = size(plan.nodes) if plan.nodes in given else 1
        if nodes is None or nodes < 1:
            return
        need = -(-need // nodes)
        used = [flag for flag, n in terms if flag in given or n != 1]
        if shared:
            used.append(plan.replicas_shared)
        if nodes > 1:
            used.append(plan.nodes)
        shown = " x ".join(f"--{flag} {n}" for flag, n in terms if flag in given or n != 1)
        across = f" over --{plan.nodes} {nodes}" if nodes > 1 else ""
        total = size(plan.count) if plan.count in given else None
        if total is not None and total > need:
            need, shown, across, used = total, f"--{plan.count} {total}", "", [plan.count]
        count = self.stack.hardware.count
        if need <= count:
            return
        unset = " (the count when [hardware] count is not given)" if count == 1 else ""
        inferred = [flag for flag in used if flag in plan.inferred]
        how = f" (how --{', --'.join(inferred)} counts is inferred, not stated by the source)" if inferred else ""
        self.add(
            f"parallel:{package}",
            "error" if count > 1 and not inferred else "warning",
            f"{package}{f' {version}' if version else ''}: {shown}{across} start {need} GPU workers on a node; "
            f"[hardware] count is {count}{unset}{how}",
            (package, "gpu"),
            "requirement",
            "curated",
            plan.source_of(used),
            basis=plan.basis if inferred else None,
            requirement=f"gpu_count>={need}",
            found=str(count),
        )

    def _missing_flag(self, package: str, option: str, version: Version | None, definitions: list[Any]) -> None:
        """A flag the release does not have: removed, renamed, or newer than it."""
        from ..knowledge.options import range_text

        assert version is not None
        later = [d for d in definitions if any(edge > version for edge in _lower_edges(d))]
        renamed = next((d.renamed_to for d in definitions if d.renamed_to and d not in later), None)
        if len(later) == len(definitions):
            what = f"has no --{option} (it was added later: releases {range_text(later[0].releases)} have it)"
        elif renamed:
            what = f"has no --{option}: it was renamed --{renamed}"
        else:
            what = f"has no --{option} (it was removed; releases {range_text(definitions[-1].releases)} have it)"
        self.add(
            f"option-removed:{package}:{option}",
            "error",
            f"{package} {version} {what}; the server refuses an unknown flag",
            (package,),
            "option-removed",
            "curated",
            definitions[-1].source,
        )

    # -- 3: every requirement edge ---------------------------------------------

    def installed_extras(self, versions: dict[str, Version | None]) -> dict[str, frozenset[str]]:
        """The extras of each package that an installer installs: those the
        stack names and, as pip and uv merge them, every extra a requirement
        of an installed release (or of an installed extra) asks for, wherever
        else the package is named. A locked stack (a lock file, an installed
        environment) installs only the extras its pins show."""
        extras = {name: spec.extras for name, spec in self.stack.packages.items() if spec.extras}
        if self.stack.locked:
            return extras
        waiting = [(name, frozenset()) for name in versions] + [(n, frozenset([e])) for n, es in extras.items()
                                                               for e in es]
        seen: set[tuple[str, frozenset[str]]] = set()
        while waiting:
            name, asked = waiting.pop()
            if (name, asked) in seen:
                continue
            seen.add((name, asked))
            release = self.release_of(name, versions.get(name))
            if release is None:
                continue
            for need in self.provider.dependencies(release, asked):
                if need.is_virtual or not need.extras or need.name not in versions:
                    continue
                new = need.extras - extras.get(need.name, frozenset())
                if new:
                    extras[need.name] = extras.get(need.name, frozenset()) | new
                    waiting.extend((need.name, frozenset([e])) for e in new)
        return extras

    def edges(self, versions: dict[str, Version | None]) -> None:
        wanted: dict[str, list[tuple[Need, Release]]] = defaultdict(list)
        self.extras = self.installed_extras(versions)
        for name, version in versions.items():
            release = self.release_of(name, version)
            if release is None:
                continue
            extras = self.extras.get(name, frozenset())
            needs = self.provider.dependencies(release)
            for extra in sorted(extras):
                needs += self.provider.dependencies(release, frozenset([extra]))[1:]
            for need in needs:
                if need.origin == "rule":
                    continue  # judged with the rule's own message in rules()
                if need.is_virtual:
                    self.virtual_edge(need, release)
                elif self.nonexistent(need, release, versions.get(need.name)):
                    continue
                elif need.name in versions:
                    self.package_edge(need, release, versions)
                else:
                    wanted[need.name].append((need, release))
        for target, needs in sorted(wanted.items()):
            self.shared_target(target, needs)
        self.unsnapshotted_extras(versions)

    def unsnapshotted_extras(self, versions: dict[str, Version | None]) -> None:
        """The requirements of an installed extra on projects the snapshot
        holds nothing of (`compat db sync` follows the extras that installed
        releases ask for, not every extra a stack may name): whether the
        index has them, and what they require, is not checked, and a check
        says so rather than dropping them without a word."""
        names = self.db.names()
        for name, extras in sorted(self.extras.items()):
            release = self.release_of(name, versions.get(name))
            if release is None:
                continue
            for extra in sorted(extras):
                targets = []
                for requirement in release.extra_requirements(extra):
                    target = normalize(requirement.name)
                    if target in names or target == name:
                        continue
                    if requirement.marker is not None and not self.provider._marker(requirement.marker, extra):
                        continue
                    targets.append(f"{target}{requirement.specifier}" if requirement.specifier else target)
                if targets:
                    self.add(
                        f"extra-unknown:{name}=={release.version}[{extra}]",
                        self.unknown_severity,
                        f"{name} {release.version}'s extra [{extra}] requires {', '.join(sorted(targets))}, of which "
                        "the database's snapshot holds nothing: not checked (whether the index has them, and "
                        "what they require)",
                        (name,),
                        "unknown-release",
                        "metadata",
                        self.db.metadata_source(release),
                    )

    def nonexistent(self, need: Need, release: Release, chosen: Version | None = None,
                    via: tuple[str, ...] = ()) -> bool:
        """A requirement that only a release absent from the index would meet:
        no installer can install `release`. Reported, and True. `via`: the
        stack's packages that pull `release` in (what a fix may move)."""
        component = self.db.component(need.name)
        if component is None or component.index_listed is None:
            return False
        if meets(component, need.specifier, [chosen]):  # the version chosen first: most often it does
            return False
        if any(need.specifier.contains(v, prereleases=True) for v in component.index_versions or ()):
            return False
        self.add(
            f"missing:{release.package}=={release.version}:{need.name}",
            "error",
            f"{self._who(release)} requires {need.name}{spec_text(need.specifier)}, and the index has no such release "
            f"of {need.name} (its snapshot of {component.snapshot_taken} lists every release): no installer can install "
            f"{self._who(release)}",
            (release.package, need.name, *(v for v in via if v not in (release.package, need.name))),
            "existence",
            need.origin,
            self._source(need, release),
            requirement=f"{need.name}{spec_text(need.specifier)}",
        )
        return True

    def _source(self, need: Need, release: Release, field: str = "Requires-Dist") -> Source | str | None:
        if need.origin == "metadata":
            return self.db.metadata_source(release, field)
        return need.source

    def _who(self, release: Release) -> str:
        return f"{release.package} {release.version}"

    def virtual_edge(self, need: Need, release: Release) -> None:
        key = need.name[len(VIRTUAL_PREFIX):]
        value = self.provider.facts.version(key)
        if value is UNKNOWN:
            return
        label = LABELS[key]
        if value is None:
            ok, have = False, f"the stack has no {label}"
        else:
            ok = need.specifier.contains(value, prereleases=True)
            have = f"the stack has {value}"
        if ok:
            return
        component = VIRTUAL_LABELS[need.name]
        if key == "python":
            id_ = f"requires-python:{release.package}=={release.version}"
            text = f"{self._who(release)} requires Python {spec_text(need.specifier)}; {have}"
        else:
            id_ = f"requires:{release.package}=={release.version}:{component}"
            text = f"{self._who(release)} requires {label} {spec_text(need.specifier)}; {have}"
        self.add(id_, "error", text, (release.package, component), "requirement",
                 need.origin, self._source(need, release, "Requires-Python" if key == "python" else "Requires-Dist"),
                 requirement=str(need.specifier))

    def package_edge(self, need: Need, release: Release, versions: dict[str, Version | None]) -> None:
        target = need.name
        have = versions[target]
        who = self._who(release)
        spec = self.stack.packages.get(target)
        if spec is not None and spec.pinned is None:
            self.range_edge(need, release, spec.specifier)
        elif have is not None and not need.specifier.contains(have, prereleases=True):
            self.broken(need, release, f"the stack has {target} {have}", str(have))
            return
        # a package's own extra that asks for another of its extras (sglang[srt] -> sglang[runtime_common]):
        # pip installs that one too
        missing = sorted(need.extras - self.extras.get(target, frozenset())) \
            if spec is not None and target != release.package else []
        unprovided = self._unprovided(need, self.release_of(target, have)) if target != release.package else []
        if unprovided:
            self.add(
                f"extras:{release.package}=={release.version}:{target}",
                "warning",
                f"{who} needs {target}[{','.join(unprovided)}]; {target} {have} states no requirement for the "
                f"{', '.join(unprovided)} extra (pip: \"does not provide the extra\"), so what {who} expects "
                "from it is not installed",
                (release.package, target),
                "requirement",
                need.origin,
                self._source(need, release),
            )
        elif missing:
            self.add(
                f"extras:{release.package}=={release.version}:{target}",
                "warning",
                f"{who} needs {target}[{','.join(missing)}]; the stack installs {target} without "
                f"the {', '.join(missing)} extra",
                (release.package, target),
                "requirement",
                need.origin,
                self._source(need, release),
            )

    @staticmethod
    def _unprovided(need: Need, target: Release | None) -> list[str]:
        """The extras `need` asks for that `target` names in none of its
        requirement lines (pip installs nothing for them); none when its
        requirements are unknown."""
        if not need.extras or target is None or not target.metadata_known:
            return []
        from ..sources.environment import extras_named

        named = {e for line in target.requires_dist for e in extras_named(line)}
        named.update(e for d in target.curated if d.requirement.marker is not None
                     for e in extras_named(str(d.requirement.marker)))
        named.update(normalize(e) for e in target.extras)
        return sorted(e for e in need.extras if e not in named)

    def range_edge(self, need: Need, release: Release, allowed: SpecifierSet) -> None:
        """A requirement on a package the stack gives as a range: does the
        range leave any release (or, for an untracked package, any version)
        that the requirement accepts?"""
        target = need.name
        both = allowed & need.specifier
        if self.db.component(target) is not None and self.db.component(target).releases:  # type: ignore[union-attr]
            if not self.provider.known_versions(target, allowed):
                return  # reported as an unknown release of the stack's range
            if self.provider.known_versions(target, both):
                return
        elif overlap(allowed, need.specifier):
            return
        self.broken(
            need, release, f"the stack's {target}{spec_text(allowed)} admits no such release", spec_text(allowed)
        )

    def broken(self, need: Need, release: Release, what_the_stack_has: str, found: str) -> None:
        """A requirement of `release` on a package of the stack that the stack does not meet."""
        target = need.name
        curated = " (a curated requirement)" if need.origin == "curated" else ""
        self.add(
            f"requires:{release.package}=={release.version}:{target}",
            "error",
            f"{self._who(release)} requires {target}{spec_text(need.specifier)}{curated}; {what_the_stack_has}",
            (release.package, target),
            "requirement",
            need.origin,
            self._source(need, release),
            requirement=f"{target}{spec_text(need.specifier)}",
            found=found,
        )

    def shared_target(self, target: str, needs: list[tuple[Need, Release]]) -> None:
        """A package the stack leaves open: can all of its requirers agree?"""
        for i, (first, a) in enumerate(needs):
            for second, b in needs[i + 1:]:
                if a.package == b.package:
                    continue
                if not overlap(first.specifier, second.specifier):
                    self.add(
                        f"conflict:{target}",
                        "error",
                        f"{self._who(a)} requires {target}{spec_text(first.specifier)}, but {self._who(b)} requires "
                        f"{target}{spec_text(second.specifier)}: no version of {target} satisfies both",
                        (a.package, b.package, target),
                        "conflict",
                        first.origin if first.origin == second.origin else "metadata",
                        self._source(first, a),
                        requirements=[f"{target}{first.specifier}", f"{target}{second.specifier}"],
                    )
                    return

    # -- 3: every rule that applies ----------------------------------------------

    def rules(self, versions: dict[str, Version | None]) -> None:
        facts = StackFacts(self.stack, versions)
        self.unjudged_model: dict[str, tuple[str, list[str]]] = {}  # rule ID -> (package, model tests)
        self.unjudged_files: dict[str, str] = {}  # rule ID -> its file, as the database's folders name it
        # known issues among them that a release fixes whatever the model: rule ID -> (package, fixed in)
        self.unjudged_fixes: dict[str, tuple[str, str]] = {}
        for name, version in sorted(versions.items()):
            component = self.db.component(name)
            if component is None:
                continue
            covering = component.rules_for(version)
            if component.snapshot_index is not None and version is not None and component.release(version) is None:
                # A release the index snapshot does not hold: its metadata is
                # unknown, but a rule whose range covers it says so of it (a
                # rule for ">=0.4" is stated for every release from 0.4 on, a
                # lockstep rule needs no metadata). statuses names what was
                # and was not checked.
                self.unknown_checked[name] = [rule.id for rule in covering]
            scoped = facts.for_component(component)
            for rule in covering:
                if rule.kind == "lockstep":
                    self.lockstep(rule, component, version, versions)
                else:
                    self.rule(rule, component, version, scoped)
        self.model_unverified()

    def model_unverified(self) -> None:
        """One note for the rules whose model conditions the stack cannot decide:
        an unknown model must not look like a model no rule is about."""
        if not self.unjudged_model:
            return
        model = self.stack.model
        named = model.name or model.repo
        tests = sorted({t for _, found in self.unjudged_model.values() for t in found})
        rules = ", ".join(sorted(self.unjudged_model))
        if named and self.stack.catalog_model is None:
            why = f"the model catalog does not know [model] {'name' if model.name else 'repo'} {named!r}"
        elif self.stack.catalog_model is not None:
            why = f"neither the stack nor the model catalog's {self.stack.catalog_model.name} says"
        else:
            why = "the stack gives no [model]" if model == type(model)() else "the stack's [model] does not say"
        self.add(
            "model:unverified",
            "info",
            f"{why}: could not judge {'; '.join(repr(t) for t in tests)} (the condition of {rules}); "
            "give [model] family (and moe, hybrid, multimodal, head_dim, checkpoint_dtype as they apply) to decide them"
            + self._fixes_whatever_the_model(),
            tuple(sorted({package for package, _ in self.unjudged_model.values()})),
            "unverified",
            "curated",
            Source(
                id="model:unverified",
                project="compat",
                title="the conditions of these rules in "
                + ", ".join(sorted(set(self.unjudged_files.values()))),
                kind="documentation",
            ),
            rules=sorted(self.unjudged_model),
            tests=tests,
        )

    def _fixes_whatever_the_model(self) -> str:
        """The releases that fix known issues whose model condition is unknown:
        the upgrade that makes the question moot."""
        fixes: dict[tuple[str, str], list[str]] = defaultdict(list)
        for rule_id, (package, fixed_in) in sorted(self.unjudged_fixes.items()):
            fixes[(package, fixed_in)].append(rule_id)
        said = [f"{package} {fixed_in} fixes {', '.join(ids)}" for (package, fixed_in), ids in sorted(fixes.items())]
        return f"; whatever the model, {'; '.join(said)}" if said else ""

    def lockstep(self, rule: Rule, component: Component, version: Version | None,
                 versions: dict[str, Version | None]) -> None:
        if version is None or rule.when.evaluate(StackFacts(self.stack, versions, component)) is not True:
            return
        for partner in rule.partners:
            theirs = versions.get(partner)
            if theirs is None or rule.in_step(version, theirs):
                continue
            same = "version" if rule.same == "version" else "major.minor version"
            self.add(
                rule.id,
                rule.severity,
                f"{component.name} {version} and {partner} {theirs} must have the same {same}: {rule.message}",
                (component.name, partner),
                "lockstep",
                self.layer_of(rule),
                rule.source,
                requirement=f"{partner}{rule.partner_specifier(version)}",
                found=str(theirs),
            )

    def layer_of(self, rule: Rule) -> str:
        """``local`` for a rule of the user's overlay (knowledge/layers.py), else ``curated``."""
        return "local" if is_local(self.db, rule.file) else "curated"

    def rule(self, rule: Rule, component: Component, version: Version | None, facts: StackFacts) -> None:
        when = rule.when.evaluate(facts)
        if when is not True:
            if when is UNKNOWN:
                unknown = [t.describe() for t in rule.when.walk()
                           if t.kind.startswith("model-") and t.evaluate(facts) is UNKNOWN]
                if unknown and hasattr(self, "unjudged_model"):
                    self.unjudged_model[rule.id] = (component.name, unknown)
                    folder = os.path.basename(os.path.dirname(rule.file or "")) or "constraints"
                    self.unjudged_files[rule.id] = f"{folder}/{component.name}.toml"
                    if rule.kind == "known-issue" and rule.fixed_in is not None:
                        self.unjudged_fixes[rule.id] = (component.name, str(rule.fixed_in))
            return
        if not rule.shown_for(version) and not self._stack_sets(rule.when, component):
            # A note of the release that introduced it: news to an upgrade that
            # crosses it, noise to a check of a later release, unless the
            # stack's own options, model or environment make it matter.
            return
        basis = self._basis(rule.basis if rule.inferred else None, rule.when, rule.require)
        who = f"{component.name} {version}"
        components = (component.name, *self._subjects(rule.when), *(self._subjects(rule.require) if rule.require else ()))
        components = tuple(dict.fromkeys(components))
        if rule.kind == "requirement":
            assert rule.require is not None
            holds = rule.require.evaluate(facts)
            if holds is True:
                return
            if holds is UNKNOWN:
                # A feature the stack turns on that cannot be verified is worth
                # a warning; a platform bound (driver, architecture) the stack
                # simply does not describe is worth a note.
                turned_on = any(t.kind == "option" for t in rule.when.walk())
                self.add(
                    rule.id,
                    "warning" if turned_on else "info",
                    f"{who}: cannot verify: {rule.message} (the stack does not say enough to decide: "
                    f"{rule.require.describe()})",
                    components,
                    "unverified",
                    self.layer_of(rule),
                    rule.source,
                    basis=basis,
                )
                return
            failing = "; ".join(t.describe() for t in rule.require.failing(facts))
            self.add(rule.id, rule.severity, f"{who}: {rule.message}", components, rule.kind, self.layer_of(rule),
                     rule.source, basis=basis, also=rule.also, needs=rule.require.describe(), failing=failing or None)
            return
        message = f"{who}: {rule.message}"
        if rule.kind == "known-issue" and rule.fixed_in is not None:
            message += f" (fixed in {rule.fixed_in})"
        self.add(rule.id, rule.severity, message, components, rule.kind, self.layer_of(rule), rule.source, basis=basis,
                 fixed_in=str(rule.fixed_in) if rule.fixed_in else None,
                 introduced=str(rule.introduced) if rule.introduced else None)

    def _stack_sets(self, condition: Condition, component: Component) -> bool:
        """Whether the stack itself gives an option, model property or variable `condition` tests."""
        stack = self.stack
        given = stack.options.get(component.name, {})
        for test in condition.walk():
            if test.kind == "option" and test.key in given:
                return True
            if test.kind.startswith("model-") and getattr(stack.model, test.key, None) is not None:
                return True
            if test.kind == "env" and test.key in stack.env:
                return True
        return False

    def _arch_basis(self, build: Build, inferred: str | None = None) -> str | None:
        """What an architecture finding rests on, where it is inferred: the
        build's list (inferred for these releases), what the finding itself
        infers, the GPU's capability."""
        parts = [p for p in (build.archs_basis, inferred, self._capability_basis()) if p]
        return "; ".join(parts) or None

    def _capability_basis(self) -> str | None:
        """What the GPU's compute capability rests on, where the catalog infers it."""
        hardware = self.stack.hardware
        gpu = hardware.gpu
        if gpu is None or not gpu.inferred or hardware.compute_capability != gpu.compute_capability:
            return None
        return f"the {gpu.name}'s compute capability {gpu.compute_capability} is not in NVIDIA's tables: {gpu.basis}"

    def _basis(self, basis: str | None, *conditions: Condition | None) -> str | None:
        """A finding's basis, with the GPU's when the finding turns on an inferred compute capability."""
        gpu = self._capability_basis()
        tests = (t for condition in conditions if condition is not None for t in condition.walk())
        if gpu is None or not any(t.kind == "version" and t.key == "compute_capability" for t in tests):
            return basis
        return f"{basis}; {gpu}" if basis else gpu

    @staticmethod
    def _subjects(condition: Condition | None) -> list[str]:
        out = []
        for test in condition.walk() if condition else ():
            if test.kind == "package":
                out.append(test.key)
            elif test.kind == "version":
                out.append(VIRTUAL_LABELS[virtual_name(test.key)])
            elif test.kind in ("choice", "count") and test.key.startswith("gpu"):
                out.append("gpu")
        return out

    # -- 3: the releases themselves ---------------------------------------------

    def statuses(self, versions: dict[str, Version | None]) -> None:
        for name, version in sorted(versions.items()):
            component = self.db.component(name)
            if component is None or version is None:
                continue
            release = component.release(version)
            if release is None:
                self.unknown_release(component, version)
                continue
            if not release.metadata_known:
                self.add(
                    f"unknown-metadata:{name}=={version}",
                    self.unknown_severity,
                    f"the index does not state the requirements of {name} {version} (it has only an sdist, whose "
                    "metadata is dynamic): they are not checked",
                    (name,),
                    "unknown-release",
                    "metadata",
                    self.db.metadata_source(release, "sdist metadata"),
                )
            if release.is_yanked:
                self.add(f"yanked:{name}=={version}", "warning", f"{name} {version} was yanked from the index",
                         (name,), "status", "metadata")
            elif release.is_prerelease and name in self.stack.packages:
                # (one the resolution brings in is what an installer must take: its requirer names it)
                self.add(
                    f"pre-release:{name}=={version}",
                    "warning",
                    f"{name} {version} is a pre-release, not a final release",
                    (name,),
                    "status",
                    release.layer,
                    release.source,
                )

    def stale(self, versions: dict[str, Version | None]) -> None:
        """One note, not one a package, when the newest snapshot the check
        read is older than STALE_DAYS: releases and yanks since are unknown to it."""
        found = stale_snapshot(self.db, (name for name, version in versions.items() if version is not None))
        if found is None:
            return
        taken, age = found
        self.add("snapshot:stale", "info",
                 f"the newest package snapshot this check read was taken {taken}, {age} days ago (more than "
                 f"{STALE_DAYS}): releases and yanks since then are unknown to it; `compat db sync` refreshes the "
                 "snapshots", (), "stale", "metadata", taken=str(taken), age_days=age)

    def unknown_release(self, component: Component, version: Version) -> None:
        """A version the database holds no record of: absent from the index,
        newer than the snapshot, or outside the snapshot's window."""
        name = component.name
        if not component.releases:
            return
        if name not in self.stack.packages:
            if version < min(component.releases):  # the resolution went below the snapshot's window (_with_older)
                self.add(
                    f"older-release:{name}=={version}",
                    self.unknown_severity,
                    f"{name} {version} is what an installer takes here: no release the snapshot holds (from "
                    f"{min(component.releases)}) fits the stack, and the index lists older ones, which the snapshot "
                    "did not read; its requirements, Python and wheels are not checked",
                    (name,),
                    "unknown-release",
                    "metadata",
                )
            return
        exists = component.exists(version)
        taken = component.snapshot_taken
        if exists is False:
            self.add(
                f"missing:{name}=={version}",
                "error",
                f"{name} {version} does not exist on the index (its snapshot of {taken} lists every release); "
                f"the newest final release is {component.newest_final}",
                (name,),
                "existence",
                "metadata",
                self.db.metadata_source(component.releases[component.newest_first()[0]], "release list"),
            )
            return
        if exists is None and component.index_versions is not None and taken is not None:
            age = (current_date() - taken).days
            newest = component.newest_final
            above = f"the newest final release ({newest})" if newest is not None else "every final release"
            why = (f"{name} {version} is newer than {above} in the database's snapshot, taken {taken} "
                   f"({age} day{'s' if age != 1 else ''} ago; `compat db sync` refreshes it)")
        else:
            why = f"the database has no record of {name} {version}"
        self.add(
            f"unknown-release:{name}=={version}",
            self.unknown_severity,
            f"{why}; {self.skipped(component, self.unknown_checked.get(name, ()))}{self._neighbours(component)}",
            (name,),
            "unknown-release",
            "metadata",
        )

    def _neighbours(self, component: Component) -> str:
        """Of a release the snapshot does not hold: whether the newest releases
        it does hold (up to three finals) all lack a wheel and an sdist for the
        stack's platform, which makes the unknown one likely to lack them too
        (said, not concluded: an inference from its neighbours)."""
        finals = [v for v in component.newest_first() if not v.is_prerelease][:3]
        if not finals:
            return ""
        fits = []
        for version in finals:
            release = component.release(version)
            if release is None or not release.tags or isinstance(release.sdist, str):
                return ""  # a release with no recorded wheels, or an sdist to build: nothing to infer
            fits.append(self.provider.wheel_fit(release))
        if any(fit.installable is not False for fit in fits):
            return ""
        shown = ", ".join(str(v) for v in finals)
        return (f". None of its newest releases the snapshot holds ({shown}) has a wheel or an sdist for "
                f"CPython {self.stack.system.python} on {self.stack.system.platform}: it likely has none either "
                "(inferred from those releases)")

    # -- 3: what really gets installed --------------------------------------------

    def machine(self) -> None:
        """The stack's own CUDA against its driver."""
        system = self.stack.system
        if system.cuda is None:
            return
        floor = self.db.driver_floor(system.cuda)
        if floor is not None and system.driver is None and self.stack.hardware.accelerator == "cuda":
            self.add(
                "driver:unknown",
                "info",
                f"the stack does not give [system] driver; CUDA {system.cuda} needs NVIDIA driver {floor[0]} or newer",
                ("cuda", "driver"),
                "unverified",
                "curated",
                floor[1],
            )
        elif floor is not None and system.driver is not None and system.driver < floor[0]:
            self.add(
                f"driver:cuda-{system.cuda.major}",
                "error",
                f"CUDA {system.cuda} needs NVIDIA driver {floor[0]} or newer; the stack has {system.driver_written or system.driver} "
                "(an older one fails with \"The NVIDIA driver on your system is too old\")",
                ("cuda", "driver"),
                "requirement",
                "curated",
                floor[1],
                requirement=f"driver>={floor[0]}",
                found=str(system.driver),
            )

    def host(self) -> None:
        """A GPU that comes only with its own host CPU (a Grace superchip, a
        Jetson module: the catalog's `host`) on a stack of another platform:
        its wheels would be judged for a machine that does not exist."""
        gpu, platform = self.stack.hardware.gpu, self.stack.system.platform
        if gpu is None or gpu.host is None or gpu.host == platform:
            return
        default = type(self.stack.system)._field_defaults.get("platform")
        unset = " (the platform when [system] platform is not given)" if platform == default else ""
        self.add(
            "platform:gpu",
            "error",
            f"the {gpu.name} comes with its own host CPU, a {gpu.host} machine; the stack's platform is "
            f"{platform}{unset}: give [system] platform = \"{gpu.host}\" so that wheels are judged for that machine",
            ("gpu",),
            "platform",
            "curated",
            gpu.source,
            requirement=f"platform=={gpu.host}",
            found=platform,
        )

    def installs(self, versions: dict[str, Version | None]) -> None:
        """Each release's wheels against the platform and glibc, and the build
        the stack installs against its CUDA, driver, accelerator and GPU."""
        floors: list[tuple[tuple[int, int], str, Release]] = []
        for name, version in sorted(versions.items()):
            release = self.release_of(name, version)
            component = self.db.component(name)
            if release is None or component is None:
                continue
            fit = self.install(release, component)
            if fit.installable is not False and fit.glibc is not None and self.stack.system.glibc is None:
                floors.append((fit.glibc, self._who(release), release))
        if floors:
            need, who, release = max(floors, key=lambda f: (f[0], f[1]))
            self.add(
                "glibc:unknown",
                "info",
                f"the stack does not give [system] glibc; {who}'s wheels need glibc {need[0]}.{need[1]} or newer "
                "(an older Linux installs no wheel of it)",
                (who.split()[0],),
                "platform",
                "metadata",
                self.db.metadata_source(release, "wheel tags"),
            )

    def label_ties(self, versions: dict[str, Version | None]) -> None:
        """A build whose local label names the torch it was built for
        (``flash-attn==2.7.4.post1+cu12torch2.6cxx11abifalse``) beside
        another torch: its compiled extension, linked against that torch's
        C++ library, fails to load (an undefined symbol at import)."""
        sources = self.db.cuda.torch_label_sources
        if not sources:
            return  # the database says nothing of such labels
        torch = versions.get("torch")
        for name, spec in sorted(self.stack.packages.items()):
            if spec.build is None or name == "torch":
                continue
            named = label_torch(spec.build)
            if named is None:
                continue
            built_for = named[1]
            shown = versions.get(name) or name
            if torch is None:
                self.add(f"label-torch:{name}=={shown}", "info",
                         f"{name} +{spec.build} is a build for torch {built_for} (its label says so); the stack "
                         "installs no torch to check it against", (name, "torch"), "build", "curated", sources[0])
                continue
            if (torch.major, torch.minor) == (built_for.major, built_for.minor):
                continue
            self.add(
                f"label-torch:{name}=={shown}",
                "error",
                f"{name} {shown}+{spec.build} is a build for torch {built_for} (its label says so); the stack installs "
                f"torch {torch}: an extension built against one torch's C++ library fails to load with another "
                "(an undefined symbol at import). Install the build labelled for torch "
                f"{torch.major}.{torch.minor}, or torch {built_for}.*",
                (name, "torch"),
                "build",
                "curated",
                sources[0],
                also=sources[1:],
                requirement=f"torch=={built_for}.*",
                found=str(torch),
            )

    def install(self, release: Release, component: Component) -> WheelFit:
        """One release's wheels against the platform and glibc, and the build
        it installs against the machine: each misfit is a finding."""
        name, version, who = release.package, release.version, self._who(release)
        fit = self.provider.wheel_fit(release)
        labelled = self.provider.labelled(release)
        if labelled:
            label = self.stack.packages[name].build
            self.add(f"wheel:{name}=={version}+{label}", "info",
                     f"{who}+{label} is a build of another index than the snapshot's: its wheels' platform and "
                     "glibc are not checked", (name,), "platform", "metadata",
                     self.db.metadata_source(release, "wheel tags"))
        # (a labelled pin installs that build's wheel, which the snapshot does not record: not the index's sdist)
        how = "unknown" if labelled and not release.tags else self.provider.how_installed(release)
        glibc = f", glibc {self.stack.system.glibc}" if self.stack.system.glibc else ""
        machine = f"CPython {self.stack.system.python} on {self.stack.system.platform}{glibc}"
        has = f"its wheels are for {', '.join(fit.platforms)}" if fit.platforms else "it has no wheel at all"
        if how is None:  # no wheel fits, and no sdist to build or builds forbidden
            forbidden = (f"; its sdist ({release.sdist}) would be built from source, which [compat] only_binary "
                         "(--only-binary) forbids") if isinstance(release.sdist, str) else ""
            self.add(
                f"wheel:{name}=={version}",
                "error",
                f"{who} has no wheel for {machine}: {has}{forbidden}",
                (name, "python"),
                "platform",
                "metadata",
                self.db.metadata_source(release, "wheel tags" if fit.platforms else "index files"),
                found=", ".join(fit.platforms) or None,
            )
        elif how == "sdist":
            self.source_build(release, f"{who} has no wheel for {machine} ({has})", machine,
                              ", ".join(fit.platforms) or None)
        selected, problem = self.provider.select_build(component, release)
        if problem is not None:
            said = self.db.cuda.label(self.stack.system.index)
            target = said[0] if said is not None else self.stack.hardware.accelerator  # what the build must run on
            unchecked = ("whether it runs without a GPU is not checked" if target == "cpu" else
                         "its ROCm and architectures are not checked" if target == "rocm" else
                         "whether it runs on an Apple GPU is not checked" if target == "mps" else
                         "its CUDA, driver and architectures are not checked")
            self.add(f"build:{name}=={version}", self.unknown_severity, f"{problem}; {unchecked}", (name,),
                     "unknown-release", "curated")
        if selected is not None:
            self.build(release, selected)
        return fit

    def source_build(self, release: Release, head: str, machine: str, found: str | None) -> None:
        """A release pip and uv install here by building its sdist: what
        that build needs, as far as the snapshot records how the sdist is
        built (its pyproject.toml's build system). A build requirement that
        no release on the index meets is an error (`sdist-build`): pip
        cannot build it. A wheel_stub backend compiles nothing: it downloads
        the real wheel from another index, which compat cannot see."""
        name, version = release.package, release.version
        source = self.db.metadata_source(release, "index files")
        built = release.build_system
        sdist = f"its sdist ({release.sdist})"
        if isinstance(built, dict):
            backend = built["backend"]
            unmet = self._unmet_build_requirements(release, built)
            if unmet:
                self.add(f"sdist-build:{name}=={version}", "error",
                         f"{head}, and pip cannot build {sdist}: its build system ({backend}) requires "
                         f"{'; '.join(unmet)}",
                         (name, "python"), "existence", "metadata", source, found=found)
                return
            if fetches_wheel(built):
                index = built.get("index_url")
                where = (f"from {index}" if index else
                         "from the index named by WHEEL_STUB_PIP_INDEX_URL (its pyproject.toml names none)")
                self.add(f"source-build:{name}=={version}", "warning",
                         f"{head}: pip and uv build {sdist}, which compiles nothing: its build backend "
                         f"(wheel_stub) downloads the real wheel {where} at install time. compat cannot see that "
                         f"index: the install fails where it has no wheel of {name} {version} for {machine}, or "
                         "cannot be reached; --only-binary makes this an error",
                         (name, "python"), "source-build", "metadata", source, found=found)
                return
            how = f" with {backend}" + (f" (build requirements: {', '.join(built['requires'])})"
                                        if built["requires"] else "")
        elif built is not None:
            how = " (how it is built is not known: its pyproject.toml could not be read)"
        else:
            how = ""
        self.add(f"source-build:{name}=={version}", "warning",
                 f"{head}: pip and uv build it from {sdist}{how}, which needs a compiler toolchain on the machine "
                 "(and, for a package with CUDA code, the CUDA toolkit), and can fail where they are missing; "
                 "--only-binary makes this an error",
                 (name, "python"), "source-build", "metadata", source, found=found)

    def _unmet_build_requirements(self, release: Release, built: dict[str, Any]) -> list[str]:
        """The build requirements of `release`'s sdist (those whose marker
        holds here) that no release on the index meets, each with why: a
        package the database holds a snapshot of is judged by the index's
        list of its releases; any other by what the snapshot recorded of
        the index when it was taken (``unmet``)."""
        environment = {**self.provider.environment, "extra": ""}
        recorded = built.get("unmet", ())
        out = []
        for index, text in enumerate(built["requires"]):
            requirement = release.build_requirement(index)
            if requirement.url or (requirement.marker is not None and not requirement.marker.evaluate(environment)):
                continue
            target = normalize(requirement.name)
            component = self.db.component(target)
            if component is not None and component.index_versions is not None:
                if any(requirement.specifier.contains(v, prereleases=True) for v in component.index_versions):
                    continue
                out.append(f"{text}, which no release of {target} on the index meets (its snapshot of "
                           f"{component.snapshot_taken} lists every release)")
            elif text in recorded:
                taken = self.db.component(release.package)
                when = f" of {taken.snapshot_taken}" if taken is not None and taken.snapshot_taken else ""
                out.append(f"{text}, which no release on the index met when the snapshot{when} was taken")
        return out

    def build(self, release: Release, selected: Selected) -> None:
        build, how = selected
        name, version = release.package, release.version
        who = f"{name} {version}" + (f"+{build.label}" if build.label and how == "label" else "")
        inferred = f" ({build.note})" if build.layer != "curated" and build.note else ""
        # a build read off the release's own pins cites its metadata; one a label names, the label convention
        source: Source | str = self.db.metadata_source(release) if build.layer == "metadata" else build.source
        problems = judge_build(build, self.stack, self.db)
        self.build_requires(release, build, who)
        hint = self.other_build(release, build) if any(p.severity == "error" for p in problems) else ""
        for problem in problems:
            self.add(f"{problem.kind}:{name}=={version}", problem.severity,
                     f"{who} installs {build.describe()}{inferred}{problem.text}{hint}", (name, *problem.components),
                     "build", build.layer,
                     problem.source or (build.archs_source or source if problem.kind == "arch" else source),
                     build=build.id, basis=self._arch_basis(build, problem.basis) if problem.kind == "arch" else None,
                     **problem.details)

    def build_requires(self, release: Release, build: Build, who: str) -> None:
        """What is not known of the requirements of the build installed: the
        index's own build states them (the snapshot); another index's build
        carries its own, which the database states (its drops and adds) or
        does not."""
        name, version = release.package, release.version
        if not build.requires_declared:
            self.add(f"build-requires:{name}=={version}", self.unknown_severity,
                     f"{who} installs {build.describe()}, whose own requirements are not known here (its index is "
                     "not read, and no source states how they differ): the check judges those of the package "
                     "index's build, which may differ", (name,), "unknown-release", build.layer, build.source,
                     build=build.id)
        elif build.requires_unknown:
            self.add(f"build-requires:{name}=={version}", "info",
                     f"{who} installs {build.describe()}: {build.requires_unknown} are not known here, and not "
                     "checked (the package index's build's lines on them are not applied)", (name,),
                     "unverified", build.layer, build.requires_source or build.source, build=build.id)

    def other_build(self, release: Release, wrong: Build) -> str:
        """A build of the same release that would fit the stack, as a hint."""
        component = self.db.component(release.package)
        if component is None:
            return ""
        # the package index's own build first: taking it needs no other index
        for build in sorted(component.builds_for(release.version), key=lambda b: b.index != "pypi"):
            if build is wrong or build.index == wrong.index:
                continue
            if build.accelerator != self.stack.hardware.accelerator:
                continue  # a CPU build "fits" a GPU stack only by leaving the GPU unused
            if build.platforms and self.stack.system.platform not in build.platforms:
                continue
            capability = self.stack.hardware.compute_capability
            if build.accelerator == "cuda" and capability is not None and (
                    not build.archs or not build.serves(capability)):
                continue  # its kernels are not known to serve the GPU (or, inferred, known not to): no hint to take it
            if any(p.severity == "error" for p in judge_build(build, self.stack, self.db)):
                continue
            if build.index == "pypi":
                how = f"{release.package}=={release.version} from the package index, with no local label"
            else:
                how = f'[system] index = "{build.index}"'
                if build.label:
                    how += f" or {release.package}=={release.version}+{build.label}"
            return f"; {build.describe()} fits: {how}"
        return ""

    def passed_over(self, resolution: Resolution, versions: dict[str, Version | None]) -> None:
        """A range of the stack whose newest releases cannot run here.

        The check resolves a range to the newest release that can run on
        the machine; pip and uv take the newest that the requirements admit,
        whatever its build needs. Where they would take a newer release
        whose build cannot run here, installing the stack as written
        installs that one: say which, and why, and which release to pin.
        """
        if not resolution.ok:
            return
        provider = self.provider
        bounds: dict[str, list[SpecifierSet]] = defaultdict(list)  # what the chosen releases require of each package
        for candidate in resolution.versions.values():
            if candidate.release is not None:
                for need in provider.dependencies(candidate.release, candidate.extras):
                    bounds[need.name].append(need.specifier)
        for name, spec in self.stack.packages.items():
            chosen = versions.get(name)
            if spec.pinned is not None or not isinstance(chosen, Version):
                continue
            taken = [(version, build, problem) for (package, version), (build, problem) in provider.passed_over.items()
                     if package == name and version > chosen and (chosen.is_prerelease or not version.is_prerelease)
                     and spec.specifier.contains(version, prereleases=True)
                     and all(b.contains(version, prereleases=True) for b in bounds[name])]
            if not taken:
                continue
            version, build, problem = max(taken, key=lambda t: t[0])
            self.add(f"passed-over:{name}=={version}", "warning",
                     f"{name} {spec.written!r} admits {version}, which pip and uv install (they do not look at the "
                     f"machine): it installs {build.describe()}{problem.text}; the check judged {chosen}, the newest "
                     f"release not known to fail here: pin {name}=={chosen} to install it", (name, *problem.components),
                     "build", build.layer, build.source, build=build.id, judged=str(chosen), **problem.details)

    def gaps(self, resolution: Resolution) -> None:
        for gap in resolution.gaps:
            need = gap.need
            if gap.beyond:
                self.newer_than_snapshot(gap)
                continue
            self.add(
                f"gap:{gap.package}",
                "warning",
                f"{need.parent} requires {need.name}{spec_text(need.specifier)}, but the database has no such release of "
                f"{need.name}; that requirement is not checked",
                (need.parent.split()[0] if need.parent else gap.package, gap.package),
                "database-gap",
                need.origin,
                need.source,
            )

    def newer_than_snapshot(self, gap: Gap) -> None:
        """A requirement only a release newer than the snapshot's list can
        meet (transformers 5.25.0's kernels>=0.19.1,<0.20 of a snapshot that
        stops at 0.17.2): the index may well have it, so it is the warning an
        unknown pinned release gets, not a conflict nor a missing release."""
        need = gap.need
        component = self.db.component(gap.package)
        assert component is not None
        taken = component.snapshot_taken
        age = f", {(current_date() - taken).days} days ago" if taken is not None else ""
        requirer, _, version = (need.parent or gap.package).partition(" ")
        release = self.release_of(requirer, Version(version)) if version else None
        self.add(
            f"unknown-release:{requirer}=={version}:{gap.package}" if version else f"unknown-release:{gap.package}",
            self.unknown_severity,
            f"{need.parent} requires {need.name}{spec_text(need.specifier)}, newer than the newest final release "
            f"({component.newest_final}) in the database's snapshot of {need.name}, taken {taken}{age}; "
            f"`compat db sync` refreshes it. That requirement, and what {need.name} requires, is not checked",
            (requirer, gap.package),
            "unknown-release",
            need.origin,
            self._source(need, release) if release is not None else need.source,
            requirement=f"{need.name}{spec_text(need.specifier)}",
        )

    def blocked(self, resolution: Resolution) -> None:
        """What keeps the releases a failed resolution needed off this
        machine: torch 2.13.0, which vLLM 0.32.0 pins, installs a build
        without kernels for a V100. The stack names no such release, so no
        other judgement sees it; each reason is the finding the release would
        get if the stack pinned it."""
        for cause in resolution.causes:
            need = cause.requirement
            if need.is_virtual:
                continue
            spec = self.stack.packages.get(need.name)
            if spec is not None and spec.pinned is not None:
                continue  # a pin is judged as the release the stack installs
            admitted = need.specifier if spec is None or need.parent is None else need.specifier & spec.specifier
            via = (f"which {need.parent} requires" if need.parent
                   else f"which the stack's {need.name}{spec_text(need.specifier)} admits")
            self._unavailable(need.name, admitted, via)

    def _unavailable(self, name: str, admitted: SpecifierSet, via: str) -> None:
        """Report why no release `admitted` admits can run here, when none can:
        one finding per reason, on the newest release it keeps out."""
        component = self.db.component(name)
        if component is None or not component.releases:
            return
        reasons: dict[Version, list[Finding]] = {}
        for version in self.provider.known_versions(name, admitted):
            found = self._why_not(component.releases[version], component)
            if found is None:
                return  # a release that could run here: the conflict lies elsewhere
            reasons[version] = found
        # one reason kept out several releases: one finding, on the newest, naming the others
        groups: dict[tuple[str, str], list[tuple[Version, Finding, str]]] = {}
        for version, found in reasons.items():
            who = f"{name} {version}"
            for finding in found:
                rest = finding.message[len(who):] if finding.message.startswith(who) else f": {finding.message}"
                key = (finding.id.replace(f"=={version}", ""), rest.replace(str(version), "{}"))
                groups.setdefault(key, []).append((version, finding, rest))
        for members in groups.values():
            (newest, finding, rest), others = members[0], ", ".join(str(v) for v, _, _ in members[1:])
            likewise = f"; {others} likewise" if others else ""
            self.findings.append(finding._replace(message=f"{name} {newest} ({via}{likewise}){rest}"))
            fact = f"{name} {newest}{f' (and {others})' if others else ''}{rest}"
            if fact not in self.blocking:
                self.blocking.append(fact)
        if groups:  # the reasons replace the bare "no release of it can run here"
            self.findings = [f for f in self.findings if f.id != f"wheel:{name}"]

    def _why_not(self, release: Release, component: Component) -> list[Finding] | None:
        """The errors `release` would meet if the stack pinned it (its wheels,
        its build, the machine bounds of its requirements and of the rules it
        takes); [] if it is kept out for a reason reported elsewhere (a
        requirement at odds with a pin); None if it can run here."""
        saved, self.findings = self.findings, []
        try:
            self.install(release, component)
            needs = self.provider.dependencies(release)
            for need in needs:
                if need.is_virtual and need.origin != "rule":
                    self.virtual_edge(need, release)
            ruled = {need.rule for need in needs if need.is_virtual and need.origin == "rule"}
            if ruled:
                facts = StackFacts(self.stack, {release.package: release.version}).for_component(component)
                for rule in component.rules_for(release.version):
                    if rule.id in ruled:
                        self.rule(rule, component, release.version, facts)
            found = [f for f in self.findings if f.severity == "error"]
        finally:
            self.findings = saved
        if found:
            return found
        if (release.package, release.version) in self.provider.pruned or not self.provider.installable(release):
            return []
        return None

    def pruned(self, resolution: Resolution) -> None:
        """A requirement of the failed resolution that only releases at odds
        with a pin of the stack would meet: numba 0.65.0, which vLLM 0.32.0
        pins, requires numpy<2.5, and the stack pins numpy 2.5.5."""
        for cause in resolution.causes:
            need = cause.requirement
            for (name, version), (release, theirs) in sorted(self.provider.pruned.items(), key=lambda i: str(i[0])):
                if name != need.name or not need.specifier.contains(version, prereleases=True):
                    continue
                pin = self.stack.packages[theirs.name].pinned
                via = f" (which {need.parent} requires)" if need.parent else ""
                self.add(
                    f"requires:{name}=={version}:{theirs.name}",
                    "error",
                    f"{name} {version}{via} requires {theirs.name}{spec_text(theirs.specifier)}; the stack has "
                    f"{theirs.name} {pin}",
                    tuple(dict.fromkeys((*(need.parent.split()[:1] if need.parent else ()), name, theirs.name))),
                    "requirement",
                    theirs.origin,
                    self._source(theirs, release),
                    requirement=f"{theirs.name}{spec_text(theirs.specifier)}",
                    found=str(pin),
                )

    def dead_ends(self, resolution: Resolution) -> None:
        """A requirement of the failed resolution whose releases all need,
        however deep, a package no release of which can be installed here
        (all yanked, or none meets the requirement): the chain, from the
        release the stack needed to the package that has none."""
        dead = self.provider.dead

        def newest(need: Need) -> tuple[Version, Need] | None:
            held = [(v, theirs) for (name, v), (_, theirs) in dead.items()
                    if name == need.name and need.specifier.contains(v, prereleases=True)]
            return max(held, key=lambda h: h[0]) if held else None

        for cause in resolution.causes:
            first = newest(cause.requirement)
            if first is None:
                continue
            version, theirs = first
            steps, seen = [f"{cause.requirement.name} {version} requires {theirs}"], {cause.requirement.name}
            while theirs.name not in seen and (deeper := newest(theirs)) is not None:
                seen.add(theirs.name)
                steps.append(f"{theirs.name} {deeper[0]}, the newest it admits, requires {deeper[1]}")
                theirs = deeper[1]
            fact = (f"{'; '.join(steps)}; no release of {theirs.name} that {theirs} admits can be installed here "
                    "(none is on the index, all are yanked, or none can run on the machine)")
            name = cause.requirement.name
            self.add(f"requires:{name}=={version}:{theirs.name}", "error", fact,
                     tuple(dict.fromkeys((name, theirs.name))), "requirement", theirs.origin,
                     theirs.source, requirement=str(theirs))
            if fact not in self.blocking:
                self.blocking.append(fact)

    def missing_causes(self, resolution: Resolution) -> None:
        """A requirement of the failed resolution that only a release absent
        from the index meets (flashinfer-python 0.4.1, which SGLang 0.5.4
        pins, requires apache-tvm-ffi==0.1.0b15, gone from the index): said
        as what it is, with its source, not as a conflict without one."""
        requirers: dict[str, set[str]] = defaultdict(set)  # package -> the packages whose releases required it
        for package, _, needs in self.provider.tried():
            for need in needs:
                requirers[need.name].add(package)
        for cause in resolution.causes:
            parent = cause.parent
            if cause.requirement.is_virtual or parent is None or parent.release is None:
                continue
            self.nonexistent(cause.requirement, parent.release, via=self._stack_roots(parent.name, requirers))

    def _stack_roots(self, name: str, requirers: dict[str, set[str]]) -> tuple[str, ...]:
        """The stack's packages through whose requirements `name` was pulled in."""
        seen, pending, roots = {name}, [name], set()
        while pending:
            current = pending.pop()
            if current in self.stack.packages:
                roots.add(current)
            for requirer in requirers.get(current, ()):
                if requirer not in seen:
                    seen.add(requirer)
                    pending.append(requirer)
        return tuple(sorted(roots))

    def unexplained(self, resolution: Resolution) -> None:
        parts = []
        for cause in resolution.causes:
            who = str(cause.parent) if cause.parent is not None else "the stack"
            parts.append(f"{who} requires {cause.requirement}")
        names = tuple(dict.fromkeys(VIRTUAL_LABELS.get(c.requirement.name, c.requirement.name) for c in resolution.causes))
        self.add(
            "unresolvable",
            "error",
            "no set of versions satisfies every requirement: " + "; ".join(dict.fromkeys(parts)),
            names,
            "conflict",
            "metadata",
        )

