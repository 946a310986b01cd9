"""Plans: what an upgrade moves and what it changes, for one stack.

`upgrade` applies the targets (``vllm==0.33.0``, or ``vllm`` for its newest
release that can work), checks the result, and when it fails asks the
suggestion search for the fewest other changes that make it pass (a package
that must move takes its newest release that fits, as pip and uv do; every
other pin stays). `diff` compares two stack files. Both then say, for each
component that moves, which facts of the database the move crosses (a known
issue fixed or introduced, a behaviour change, a note) *that apply to this
stack*: each rule's own condition is evaluated on the stack's hardware,
precision, flags and model, by the same machinery as `compat check`; one it
cannot decide is listed apart as undecided, never shown as applying.
`outdated` says, for each package, the newest release it could move to
without breaking anything else, and what blocks the newest of all.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .._record import Record
from .._names import did_you_mean, normalize
from .._versions import spec_text
from ..errors import StackError
from ..knowledge.conditions import UNKNOWN, value_text
from ..knowledge.database import Database
from ..knowledge.layers import cites_local, is_local
from ..knowledge.model import Component, Release, Rule
from ..sources.stack import is_cpython
from ..stack import PackageSpec, Stack
from .check import check_stack
from .facts import VIRTUAL_PREFIX, StackFacts
from .findings import Finding, Report
from .plan import Crossing, Move, Outdated, OutdatedReport, Plan
from .resolver import StackProvider
from .suggest import MACHINE_LABELS, fitting, search

__all__ = ["Target", "parse_targets", "upgrade", "diff", "outdated"]

MACHINE_TARGETS = ("python", "cuda", "driver")
MAX_ATTEMPTS = 6  # target releases tried, newest first, for a target given as a name or a range
ATTEMPT_CHECKS = 6  # full checks the search may spend on each of them
_TARGET = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(.*?)\s*", re.ASCII)


class Target(Record):
    """One ``--to``: a package (or python, cuda, driver) and the versions it may take."""

    name: str
    specifier: SpecifierSet
    written: str

    @property
    def machine(self) -> bool:
        return self.name in MACHINE_TARGETS


def parse_targets(texts: Iterable[str], stack: Stack, db: Database) -> list[Target]:
    """Read ``--to`` values: ``vllm``, ``vllm==0.33.0``, ``vllm 0.33.0``,
    ``transformers>=5.20``, ``python==3.12``. Bad input is a StackError that
    names ``--to`` and says what would be right."""
    targets: dict[str, Target] = {}
    for text in texts:
        target = _parse_target(text, stack, db)
        if target.name in targets:
            raise StackError(f"{text!r} names {target.name} a second time", key="--to")
        targets[target.name] = target
    if not targets:
        raise StackError("give at least one target, such as --to vllm==0.33.0 or --to vllm", key="--to")
    return list(targets.values())


def _parse_target(text: str, stack: Stack, db: Database) -> Target:
    match = _TARGET.fullmatch(text) if isinstance(text, str) and len(text) <= 256 else None
    if match is None:
        raise StackError(f"{text!r} is not a package name with an optional version or specifier "
                         "(vllm, vllm==0.33.0, transformers>=5.20)", key="--to")
    name, rest = normalize(match.group(1)), match.group(2)
    try:
        version = Version(rest) if rest and rest[0].isdigit() else None
        specifier = SpecifierSet(f"=={version}") if version is not None else SpecifierSet(rest)
    except (InvalidVersion, InvalidSpecifier):
        raise StackError(f"{text!r}: {rest!r} is neither a version nor a PEP 440 specifier", key="--to") from None
    if name in MACHINE_TARGETS:
        pins = [s for s in specifier if s.operator == "=="]
        if len(pins) != 1 or len(list(specifier)) != 1 or "*" in pins[0].version:
            raise StackError(f"{text!r}: give {name} one version, such as {name}==3.12", key="--to")
        if name == "python" and not is_cpython(Version(pins[0].version)):
            raise StackError(f"{text!r}: expected a CPython 3 version such as python==3.12", key="--to")
        return Target(name, specifier, text.strip())
    if name not in db.names() and name not in stack.packages:
        raise StackError(f"{text!r}: the database does not track {name!r}{did_you_mean(name, db.names())}",
                         key="--to")
    component = db.component(name)
    if component is not None and component.releases and not _target_versions(Target(name, specifier, text), db):
        newest = component.newest_first()[0]
        raise StackError(f"{text!r}: the database holds no release of {name} that {spec_text(specifier) or 'it'} "
                         f"admits (the newest it holds is {newest})", key="--to")
    if (component is None or not component.releases) and not any(s.operator == "==" for s in specifier):
        raise StackError(f"{text!r}: the database holds no release of {name}: give the version, such as "
                         f"{name}==1.0", key="--to")
    return Target(name, specifier, text.strip())


def _target_versions(target: Target, db: Database) -> list[Version]:
    """The releases a target admits, newest first: final releases unless it names a pre-release."""
    component = db.component(target.name)
    if component is None:
        return []
    versions = [v for v in component.newest_first() if not component.releases[v].is_yanked
                and target.specifier.contains(v, prereleases=True)]
    finals = [v for v in versions if not v.is_prerelease]
    return versions if target.specifier.prereleases else (finals or versions)


# -- upgrade ----------------------------------------------------------------------------------

def upgrade(stack: Stack, db: Database, targets: list[Target], *, ignore: tuple[str, ...] = ()) -> Plan:
    """The smallest plan that takes `stack` to `targets` and passes a check."""
    old_report = check_stack(stack, db, ignore=ignore, suggest_fixes=False)
    written = [t.written for t in targets]
    first_failure: tuple[Report, str | None] | None = None
    for attempt in _attempts(stack, db, targets):
        moved = _apply(stack, attempt)
        report = check_stack(moved, db, ignore=ignore, suggest_fixes=False)
        # a plan passes only with no error and no warning that predicts a failure (vLLM 0.10.2 with
        # Transformers 5: compat's own inferred warning that the tokenizer fails)
        failing = [f for f in report.findings if f.predicts_failure and not f.suppressed]
        if not failing:
            return _plan("upgrade", stack, moved, db, written, old_report, report, _requested(attempt), [])
        outcome = search(moved, db, failing, frozen=[t.name for t, _ in attempt],
                         newest=True, limit=1, ignore=ignore, max_checks=ATTEMPT_CHECKS,
                         warned=[f.id for f in report.warnings if not f.predicts_failure])
        if outcome.suggestions:
            fixed, final = outcome.suggestions[0].stack, outcome.suggestions[0].report
            assert fixed is not None and final is not None
            return _plan("upgrade", stack, fixed, db, written, old_report, final, _requested(attempt), report.errors)
        if first_failure is None:
            first_failure = (report, outcome.reason)
    assert first_failure is not None
    report, reason = first_failure
    first = next(f for f in report.findings if f.predicts_failure and not f.suppressed)
    why = f"{first.message}" + (f"; {reason.removeprefix('no suggestion: ')}" if reason else "")
    return Plan("upgrade", stack, None, written, report=report, old_report=old_report, reason=why)


def _attempts(stack: Stack, db: Database, targets: list[Target]) -> list[tuple[tuple[Target, Version], ...]]:
    """The versions to try for the targets together, newest first, at most MAX_ATTEMPTS."""
    choices = []
    for target in targets:
        if target.machine:
            choices.append([Version(next(iter(target.specifier)).version)])
            continue
        versions = _target_versions(target, db)
        current = stack.packages[target.name].pinned if target.name in stack.packages else None
        if not versions:  # a package the database holds no release of: the version given
            versions = [Version(next(iter(target.specifier)).version)]
        elif current is not None and not any(s.operator in ("==", "===") for s in target.specifier):
            versions = [v for v in versions if v >= current] or [current]  # "--to vllm": no older release
        choices.append(versions)
    combos = itertools.product(*choices)
    return [tuple(zip(targets, combo)) for combo in itertools.islice(combos, MAX_ATTEMPTS)]


def _apply(stack: Stack, attempt: tuple[tuple[Target, Version], ...]) -> Stack:
    system, packages = stack.system, dict(stack.packages)
    for target, version in attempt:
        if target.name == "python":
            system = system._replace(python=version)
        elif target.name == "cuda":
            system = system._replace(cuda=version)
        elif target.name == "driver":
            system = system._replace(driver=version, driver_written=str(version))
        elif target.name in packages:
            packages = _pin(stack.replace(packages=packages), target.name, version).packages
        else:
            packages[target.name] = PackageSpec(target.name, SpecifierSet(f"=={version}"), written=str(version))
    return stack.replace(system=system, packages=packages)


def _requested(attempt: tuple[tuple[Target, Version], ...]) -> dict[str, str]:
    return {MACHINE_LABELS.get(t.name, t.name): f"requested (--to {t.written})" for t, _ in attempt}


# -- diff ---------------------------------------------------------------------------------------

def diff(old: Stack, new: Stack, db: Database, *, ignore: tuple[str, ...] = ()) -> Plan:
    """What moves between two stack files and what it changes for the new one
    (whose check, when it fails, carries its explanation and suggestions)."""
    old_report = check_stack(old, db, ignore=ignore, suggest_fixes=False)
    new_report = check_stack(new, db, ignore=ignore)
    edited = {name for name in set(old.packages) | set(new.packages)
              if _written(old, name) != _written(new, name)}
    return _plan("diff", old, new, db, [], old_report, new_report, {}, [], edited=edited)


def _written(stack: Stack, name: str) -> str | None:
    spec = stack.packages.get(name)
    return spec.written if spec is not None else None


# -- the plan itself ----------------------------------------------------------------------------

def _plan(kind: str, old: Stack, new: Stack, db: Database, targets: list[str], old_report: Report,
          report: Report, requested: dict[str, str], errors: list[Finding], edited: set[str] | None = None) -> Plan:
    """The change table and the crossings between two checked stacks. `errors`
    are those the targets alone caused: each change that clears one says so;
    `edited` names the packages a diff's new stack file writes differently
    (its machine and flags are the file's own changes too)."""
    old_versions, new_versions = _versions(old_report), _versions(report)
    moves = _moves(old, new, old_report, report)
    kept = _kept(new, db, old_versions, report, ignore=tuple(f.id for f in report.findings if f.suppressed))
    if kept is not None:
        # a dependency moves as far as the upgrade requires it to, with the reason read from that install
        moves = [m._replace(new=str(kept[m.component])) if m.kind == "resolved" and m.component in kept
                 and not _optional(m, kept) else m for m in moves]
        new_versions = {**new_versions, **{k: v for k, v in kept.items() if k in new_versions}}

    def why(move: Move) -> str:
        if move.component in requested:
            return requested[move.component]
        if edited is not None and (move.kind not in ("package", "resolved") or move.component in edited):
            return "changed in the new stack file"
        if move.kind != "resolved" and _because(move, errors):
            return _because(move, errors)
        return _forced(move, new, new_versions, old, old_versions, db)

    explained = [m._replace(why=why(m)) for m in moves]
    kinds = ("python", "cuda", "driver", "gpu", "platform", "index", "package", "option", "resolved")
    explained.sort(key=lambda m: (m.component not in requested, kinds.index(m.kind)))
    required = [m for m in explained if not _optional(m, kept)]
    optional = [m._replace(new=report.resolved.get(m.component, m.new),
                           why=f"not required ({m.component} {m.old} still fits): {_newest_why(m, report)}")
                for m in explained if _optional(m, kept)]
    crossings, undecided = _crossings(old, new, old_versions, new_versions, db)
    return Plan(kind, old, new, targets, required, crossings, undecided, report, old_report, optional=optional)


def _newest_why(move: Move, report: Report) -> str:
    """Why the new stack's own resolution takes a newer release of a
    dependency nothing requires to move: it is the newest that fits."""
    return f"{report.resolved.get(move.component, move.new)} is the newest release that fits"


def _optional(move: Move, kept: dict[str, Version] | None) -> bool:
    """Whether `move`, of a dependency the stack does not name, is one an
    installer that upgrades only what it must would not make."""
    if kept is None or move.kind != "resolved" or move.old is None:
        return False
    try:
        return kept.get(move.component) == Version(move.old)
    except InvalidVersion:
        return False


def _kept(new: Stack, db: Database, old_versions: dict[str, Version], report: Report, *,
          ignore: tuple[str, ...] = ()) -> dict[str, Version] | None:
    """The versions an installer that upgrades only what it must (pip's
    default, uv's without --upgrade) installs for `new` over the old
    install: the whole install resolved nearest the old versions, then
    verified by a full check with each of them pinned. None when that
    check does not pass as the new stack's own does: then every move the
    new stack's resolution makes counts as required."""
    from .resolver import resolve

    if report.errors:
        return None
    near = resolve(new, db, closure=True, near=old_versions)
    if not near.ok:
        return None
    kept = {name: c.version for name, c in near.versions.items()
            if c.version is not None and not name.startswith(VIRTUAL_PREFIX)}
    pinned = dict(new.packages)
    for name, version in kept.items():
        if name not in pinned and old_versions.get(name) == version:
            pinned[name] = PackageSpec(name, SpecifierSet(f"=={version}"), written=str(version))
    verified = check_stack(new.replace(packages=pinned), db, ignore=ignore, suggest_fixes=False)
    if verified.errors or any(f.predicts_failure and not f.suppressed for f in verified.findings):
        return None
    return kept


def _versions(report: Report) -> dict[str, Version]:
    """The version of every package a check chose (the stack's and the resolved ones)."""
    out = {}
    for name, text in (*report.packages.items(), *report.resolved.items()):
        try:
            out[name] = Version(text)
        except InvalidVersion:
            continue  # a range nothing could be chosen for
    return out


def _moves(old: Stack, new: Stack, old_report: Report, report: Report) -> list[Move]:
    """Every difference: the machine, the stack's packages, what they resolve to, the flags."""
    moves = []
    for key, label, a, b in _machine(old, new):
        if a != b:
            moves.append(Move(label, a, b, key, ""))
    named = set(old.packages) | set(new.packages)
    for name in sorted(named):
        a, b = old_report.packages.get(name), report.packages.get(name)
        if a != b:
            moves.append(Move(name, a, b, "package", ""))
    for name in sorted((set(old_report.resolved) | set(report.resolved)) - named):
        a, b = old_report.resolved.get(name), report.resolved.get(name)
        if a != b and a is not None and b is not None:  # one the other side does not resolve is not a move
            moves.append(Move(name, a, b, "resolved", ""))
    for package in sorted(set(old.options) | set(new.options)):
        mine, theirs = old.options.get(package, {}), new.options.get(package, {})
        for flag in sorted(set(mine) | set(theirs)):
            a = value_text(mine[flag]) if flag in mine else None
            b = value_text(theirs[flag]) if flag in theirs else None
            if a != b:
                moves.append(Move(f"{package} --{flag}", a, b, "option", ""))
    return moves


def _machine(old: Stack, new: Stack) -> list[tuple[str, str, str | None, str | None]]:
    def gpu(stack: Stack) -> str | None:
        hardware = stack.hardware
        if hardware.gpu is not None:
            return hardware.gpu.name + (f" x{hardware.count}" if hardware.count > 1 else "")
        return f"compute capability {hardware.compute_capability}" if hardware.compute_capability else None

    def text(value: object) -> str | None:
        return str(value) if value is not None else None

    a, b = old.system, new.system
    return [
        ("python", MACHINE_LABELS["python"], text(a.python), text(b.python)),
        ("platform", MACHINE_LABELS["platform"], a.platform, b.platform),
        ("cuda", MACHINE_LABELS["cuda"], text(a.cuda), text(b.cuda)),
        ("driver", MACHINE_LABELS["driver"], a.driver_written, b.driver_written),
        ("gpu", MACHINE_LABELS["gpu"], gpu(old), gpu(new)),
        ("index", MACHINE_LABELS["index"], a.index, b.index),  # the index the builds come from (PyTorch's cu126, say)
    ]


def _because(move: Move, errors: list[Finding]) -> str:
    """The error of the targets alone that this change clears."""
    key = {"Python": "python", "CUDA": "cuda", "NVIDIA driver": "driver"}.get(move.component, move.component)
    if move.kind == "index":  # an error on the build a release installs
        hits = [e for e in errors if (e.details or {}).get("build")]
    elif move.kind == "option":
        package, flag = move.component.split(" --", 1)
        hits = [e for e in errors if e.id.endswith(f":{package}:{flag}") or package in e.components]
    else:
        # an error about a requirement on this component first ("requires:vllm==0.32.0:transformers")
        hits = sorted((e for e in errors if key in e.components), key=lambda e: not e.id.endswith(f":{key}"))
    return hits[0].message if hits else ""


def _forced(move: Move, new: Stack, new_versions: dict[str, Version], old: Stack,
            old_versions: dict[str, Version], db: Database) -> str:
    """Which requirement of the new stack excludes the old version (or of the
    old release, the new version of what it requires)."""
    if move.kind not in ("package", "resolved") or move.old is None or move.new is None:
        return ""
    try:
        before, after = Version(move.old), Version(move.new)
    except InvalidVersion:
        return "resolved anew"
    provider = StackProvider(new, db, closure=True)  # the whole install's requirements, as the check's
    for name, version in sorted(new_versions.items()):
        release = _release(db, name, version)
        for need in provider.dependencies(release) if release is not None else ():
            if need.name == move.component and not need.specifier.contains(before, prereleases=True):
                return f"{name} {version} requires {need.name}{spec_text(need.specifier)}"
    before_provider = StackProvider(old, db, closure=True)
    release = _release(db, move.component, before)
    for need in before_provider.dependencies(release) if release is not None else ():
        moved = new_versions.get(need.name)
        if moved is not None and not need.name.startswith(VIRTUAL_PREFIX) \
                and not need.specifier.contains(moved, prereleases=True):
            return f"{move.component} {before} requires {need.name}{spec_text(need.specifier)}, and {need.name} moves to {moved}"
    for name, version in sorted(old_versions.items()):  # a bound of the old stack that the move lifts
        holder = _release(db, name, version) if new_versions.get(name) != version else None
        for need in before_provider.dependencies(holder) if holder is not None else ():
            if need.name == move.component and not need.specifier.contains(after, prereleases=True):
                return (f"{name} {version} requires {need.name}{spec_text(need.specifier)}; "
                        f"{name} moves to {new_versions.get(name, '(none)')}")
    release = _release(db, move.component, after)
    python = old.system.python
    if release is not None and release.requires_python is not None \
            and not release.requires_python.contains(python, prereleases=True):
        return (f"the newest release that fits: {move.component} {after} requires Python "
                f"{spec_text(release.requires_python)}, which the old stack's {python} is not")
    return "the newest release that fits" if after > before else "resolved anew"


def _release(db: Database, name: str, version: Version) -> Release | None:
    component = db.component(name)
    return component.release(version) if component is not None else None


# -- what the moves cross -------------------------------------------------------------------

_SHOWN = ("known-issue", "behaviour-change", "note")


def _crossings(old: Stack, new: Stack, old_versions: dict[str, Version], new_versions: dict[str, Version],
               db: Database) -> tuple[list[Crossing], list[Crossing]]:
    """The facts each move crosses that apply to the stack, and those it cannot decide."""
    applying: list[Crossing] = []
    undecided: list[Crossing] = []
    for name in sorted(set(old_versions) & set(new_versions)):
        before, after = old_versions[name], new_versions[name]
        component = db.component(name)
        if component is None or Version(before.public) == Version(after.public):
            continue
        if component.snapshot_index is not None and not all(component.release(v) for v in (before, after)):
            continue  # a release the index snapshot does not hold: as check, say nothing of the rules around it
        for rule in component.rules:
            category = _crossed(rule, before, after)
            if category is None:
                continue
            # what it fixed or undid applied to the old stack; what it brings, to the new one
            stack, versions = (old, old_versions) if category in ("fixed", "reverted") else (new, new_versions)
            facts = StackFacts(stack, versions, component)
            truth = rule.when.evaluate(facts)
            if truth is False:
                continue
            crossing = _crossing(rule, category, component, before, after, db)
            if truth is True:
                applying.append(crossing)
            else:
                unknown = "; ".join(dict.fromkeys(t.describe() for t in rule.when.walk()
                                                  if t.kind not in ("any", "all", "not")
                                                  and t.evaluate(facts) is UNKNOWN))
                undecided.append(crossing._replace(unknown=unknown or rule.when.describe()))
    order = {c: i for i, c in enumerate(("introduced", "behaviour-change", "fixed", "note", "reverted"))}
    key = (lambda c: (order[c.category], c.component, c.id))
    return sorted(applying, key=key), sorted(undecided, key=key)


def _crossed(rule: Rule, before: Version, after: Version) -> str | None:
    """How the move from `before` to `after` crosses the rule, if it does."""
    if rule.kind not in _SHOWN:
        return None
    had, has = rule.covers(before), rule.covers(after)
    if rule.kind == "known-issue":
        return "fixed" if had and not has else "introduced" if has and not had else None
    if rule.introduced is not None:
        low, high = sorted((Version(before.public), Version(after.public)))
        if not low < rule.introduced <= high:
            return None
        return rule.kind if after > before else "reverted"
    return rule.kind if has and not had else "reverted" if had and not has else None


def _crossing(rule: Rule, category: str, component: Component, before: Version, after: Version,
              db: Database) -> Crossing:
    message = rule.message
    if category == "fixed" and rule.fixed_in is not None:
        message += f" (fixed in {rule.fixed_in})"
    releases = f"{component.name} {spec_text(rule.releases) or '(every release)'}"
    if rule.introduced is not None:
        releases += f", introduced in {rule.introduced}"
    source = db.source(rule.source)
    local = is_local(db, rule.file) or cites_local(db, source)
    return Crossing(
        id=rule.id, component=component.name, category=category, severity=rule.severity,
        message=f"[local] {message}" if local else message,
        conditions=rule.when.describe(), releases=releases, old=str(before), new=str(after),
        source=source, basis=rule.basis if rule.inferred else None, layer="local" if local else "curated",
    )


# -- outdated -------------------------------------------------------------------------------------

MAX_BLOCKERS = 3


def outdated(stack: Stack, db: Database, *, ignore: tuple[str, ...] = ()) -> OutdatedReport:
    """For each package of the stack: the newest release it could move to with
    everything else as it is (verified by a full check), and the newest
    release of all with the errors that block it."""
    report = check_stack(stack, db, ignore=ignore, suggest_fixes=False)
    provider = StackProvider(stack, db)
    entries = [_outdated(stack, db, name, report, provider, ignore) for name in stack.packages]
    return OutdatedReport(stack, entries, report)


def _outdated(stack: Stack, db: Database, name: str, report: Report, provider: StackProvider,
              ignore: tuple[str, ...]) -> Outdated:
    spec = stack.packages[name]
    current = report.packages[name]
    component = db.component(name)
    if component is None or not component.releases:
        note = "not tracked by the database" if component is None else "the database holds no release of it"
        return Outdated(name, current, None, None, note=note)
    versions = provider.known_versions(name, SpecifierSet(), [spec.specifier])
    if not versions:
        return Outdated(name, current, None, None, note="the database holds no release of it")
    try:
        mine: Version | None = Version(current)
    except InvalidVersion:
        mine = None
    newest = versions[0]
    newer = [v for v in versions if mine is None or v > Version(mine.public)]
    fits, blocked = None, ()
    candidates = set(fitting(stack, db, name, newer))
    for version in newer:
        if version != newest and version not in candidates:
            continue  # cannot stand beside the rest: no full check needed
        checked = check_stack(_pin(stack, name, version), db, ignore=ignore, suggest_fixes=False)
        if version == newest and checked.errors:
            blocked = tuple(e.message for e in checked.errors[:MAX_BLOCKERS])
        if not checked.errors:
            fits = str(version)
            break
    return Outdated(name, current, fits, str(newest), blocked)


def _pin(stack: Stack, name: str, version: Version) -> Stack:
    spec = stack.packages[name]
    packages = {**stack.packages, name: spec._replace(specifier=SpecifierSet(f"=={version}"), written=str(version))}
    return stack.replace(packages=packages)
