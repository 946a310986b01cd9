"""One stack from several inputs: a stack file, requirements files, a
pyproject.toml, a pylock.toml and an installed environment.

The stack file describes the machine (``[system]``, ``[hardware]``) and
what only it can say (``[options]``, ``[model]``, ``[env]``, ``[compat]``);
the other inputs give packages. The interpreter of ``--env`` (or of
``--python``; the one running compat when there is no stack file) gives the
Python, platform and glibc the stack file leaves out, and must agree with
those it gives. Each input's packages are merged: a package given by two
inputs takes the versions both allow (``>=5.16`` and ``5.19.0`` make
``5.19.0``; ``2.10.0`` and ``2.10.0+cu128`` make the build-labelled one),
and two that allow no common version are an error naming both places. A
constraint (``-c``) narrows a package another input gives and adds none.

The merged tables are then validated as a stack file is
(`stack_from_tables`), so every rule of the format holds, and an error about
a value another input gave names that input's file and line.

A package the database does not track, given by an input other than the
stack file, is taken as ``external``: it takes part through other packages'
requirements, without a warning of its own (a requirements file lists
dozens of them). Of an installed environment, the distributions the
database knows become packages of the stack; every distribution, known or
not, is judged against its own metadata by the environment check
(engine/installed.py).

Each input is read by its reader in sources/, which knows no database; the
merge is knowledge's, as it binds what the inputs give to what the
database knows: the tracked packages' names, PyTorch's index URLs, the
extras a pinned release's metadata names.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import Record
from .. import _toml
from .._names import normalize
from .._versions import admits_some
from ..errors import StackError
from ..sources.stack import MAX_PACKAGES
from ..stack import PackageSpec, Place, Stack
from .binding import load_stack, squashed_names, stack_from_tables, tracked_name

if TYPE_CHECKING:
    from ..sources.environment import Environment, PendingEnvironment
    from ..sources.pylock import LockFile
    from ..sources.requirements import Entry
    from .database import Database

__all__ = ["Inputs", "load_inputs", "start_environment"]

_STDIN = ("-", "/dev/stdin")


class Inputs(Record):
    """What `compat check` reads: the stack files and the other inputs
    merged into each of them."""

    stacks: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()
    pyproject: str | None = None
    pylock: str | None = None
    extras: tuple[str, ...] = ()  # of the pyproject's project, or of the lock
    groups: tuple[str, ...] = ()  # dependency groups of the pyproject or of the lock
    env: bool = False
    python: str | None = None

    @property
    def merged(self) -> bool:
        """Whether anything is merged into the stack files (else each is read as it is)."""
        return bool(self.requirements or self.pyproject or self.pylock or self.env or self.python)


def start_environment(inputs: Inputs) -> PendingEnvironment | None:
    """Start the interpreter of --env or --python listing its distributions,
    so that compat loads what it needs meanwhile (`load_inputs` waits)."""
    if not (inputs.env or inputs.python):
        return None
    from ..sources.environment import PendingEnvironment  # (a subprocess: imported only when one runs)

    return PendingEnvironment(inputs.python)


def load_inputs(inputs: Inputs, db: Database, pending: PendingEnvironment | None = None) -> list[Stack]:
    """The stacks to check: one per stack file, each with the other inputs
    merged in (or one stack from the other inputs alone). Every input is
    read, and any problem raised, before a stack is returned. `pending` is
    the interpreter `start_environment` started, if it was."""
    named = [*inputs.stacks, *inputs.requirements, *(p for p in (inputs.pyproject, inputs.pylock) if p)]
    if sum(1 for p in named if p in _STDIN) > 1:
        raise StackError("standard input (-) can be read once: give it for one input only", key="-")
    if not named and not inputs.env:
        raise StackError("nothing to check: give a stack file, or the packages to check with -r/--requirement, "
                         "--pyproject, --pylock or --env")
    if (inputs.extras or inputs.groups) and not (inputs.pyproject or inputs.pylock):
        raise StackError("--extra and --group name extras and dependency groups of --pyproject or --pylock, "
                         "and neither is given", key="--extra" if inputs.extras else "--group")
    if not inputs.merged:
        return [load_stack(path, db) for path in inputs.stacks]
    if pending is None:
        pending = start_environment(inputs)
    try:
        merger = _Merger(inputs, db)
        files = [(path, *_toml.load(path, error=StackError)) for path in inputs.stacks]
        if pending is not None:
            merger.interpreter = pending.result()
            merger.environment = merger.interpreter if inputs.env else None
    finally:
        if pending is not None:
            pending.cancel()
    if not files:
        return [merger.stack(None, {}, None)]
    return [merger.stack(path, data, text) for path, data, text in files]


class _Given(Record):
    """A package as one input (or several, merged) gives it."""

    key: str  # its key under [packages]: as the stack file writes it, or the normalized name
    specifier: SpecifierSet
    pin: Version | None  # with its local label
    extras: frozenset[str]
    place: Place
    external: bool = False
    origin: str = "input"  # "stack" (the stack file), "input" (another file), "environment", or "merged"

    @property
    def written(self) -> str:
        return str(self.pin) if self.pin is not None else (str(self.specifier) or "any version")


class _Merger:
    def __init__(self, inputs: Inputs, db: Database) -> None:
        self.inputs = inputs
        self.db = db
        self.known = db.names()
        self.squashed = squashed_names(self.known)
        self.interpreter: Environment | None = None  # --python (or --env): the machine
        self.environment: Environment | None = None  # --env: what is installed
        self.entries: list[Entry] = []
        self.indexes: list[tuple[str, Place]] = []
        # each reader is imported only when its input is given
        if inputs.requirements:
            from ..sources.requirements import read_requirements

            for path in inputs.requirements:
                found = read_requirements(path)
                self.entries += found.entries
                self.indexes += found.indexes
        if inputs.pyproject:
            from ..sources.pyproject import read_pyproject

            self.entries += read_pyproject(inputs.pyproject, extras=inputs.extras, groups=inputs.groups)
        self.lock: LockFile | None = None
        if inputs.pylock:
            from ..sources.pylock import read_pylock

            self.lock = read_pylock(inputs.pylock)

    def name(self, written: str) -> str:
        """A package name as [packages] reads it."""
        return tracked_name(written, self.known, self.squashed)

    # -- one stack ---------------------------------------------------------------

    def stack(self, path: str | None, data: Mapping[str, Any], text: str | None) -> Stack:
        from ..sources.environment import current_interpreter

        shown = "<stdin>" if path in _STDIN else (path or self._first_input())
        tables = dict(data)
        places: dict[tuple[str, str], Place] = {}
        interpreter = self.interpreter if self.interpreter is not None or path is not None else \
            current_interpreter()
        system = tables.get("system", {} if interpreter is not None else None)
        if isinstance(system, Mapping):
            system = dict(system)
            if interpreter is not None:
                self._machine(system, interpreter, shown, text, places)
            self._index(system, shown, text, places)
            tables["system"] = system
        # the machine and the stack file's own packages, validated as the stack file's
        given = stack_from_tables({k: tables[k] for k in ("system", "packages") if k in tables}, self.db,
                                  file=shown, text=text, path=path, places=places)
        markers = dict(self.interpreter.markers) if self.interpreter is not None else \
            given.system.marker_environment()
        written = tables.get("packages", {})
        merged = self._merge(given, written, shown, text, markers)
        tables["packages"] = {g.key: written[g.key] if g.origin == "stack" else _value(g) for g in merged.values()}
        places.update({("packages", g.key): g.place for g in merged.values() if g.origin != "stack"})
        stack = stack_from_tables(tables, self.db, file=shown, text=text, path=path or shown, places=places)
        return stack.replace(places={n: g.place for n, g in merged.items()},
                             environment=self.environment,
                             locked=self.lock is not None or self.environment is not None)

    def _first_input(self) -> str:
        for path in (*self.inputs.requirements, self.inputs.pyproject, self.inputs.pylock):
            if path:
                return "<stdin>" if path in _STDIN else path
        return self.interpreter.interpreter if self.interpreter is not None else sys.executable

    def _machine(self, system: dict[str, Any], interpreter: Environment, file: str, text: str | None,
                 places: dict[tuple[str, str], Place]) -> None:
        """The interpreter's Python, platform and glibc, where the stack file
        leaves them out; where it gives them, they must agree."""
        where = Place(interpreter.interpreter)
        platform = self.db.platforms.for_host(*interpreter.host)
        if platform is None:
            raise StackError(f"runs on {interpreter.markers['sys_platform']} {interpreter.markers['platform_machine']}"
                             ", a platform compat does not know", file=where.file, key="--python")
        facts = {"python": str(interpreter.python_release), "platform": platform.name}
        if interpreter.glibc and re.fullmatch(r"2\.[0-9]+", interpreter.glibc) and platform.glibc:
            facts["glibc"] = interpreter.glibc
        for key, value in facts.items():
            if key not in system:
                system[key] = value
                places[("system", key)] = where
            elif not _agrees(key, system[key], value):
                raise StackError(f"{system[key]!r} disagrees with the interpreter {where.file}, which runs "
                                 f"{'Python ' if key == 'python' else ''}{value}", file=file,
                                 key=f"[system] {key}", line=_toml.locate(text, ("system",), key))
            elif key == "python":
                system[key] = value  # the interpreter's own: the file's "3.12" is 3.12.7 here

    def _index(self, system: dict[str, Any], file: str, text: str | None,
               places: dict[tuple[str, str], Place]) -> None:
        """The PyTorch index variant the requirements files install from, as [system] index."""
        for url, place in self.indexes:
            variant = self.db.cuda.index_label(url)
            if variant is None:
                continue  # not one of PyTorch's: it says nothing about builds
            if "index" not in system:
                system["index"] = variant
                places[("system", "index")] = place
            elif system["index"] != variant:
                other = places.get(("system", "index")) or Place(file, _toml.locate(text, ("system",), "index"))
                raise StackError(f"installs from the PyTorch index {variant!r}, but {other} gives "
                                 f"{system['index']!r}", file=place.file, line=place.line, key="index")

    # -- the packages ---------------------------------------------------------------

    def _merge(self, given: Stack, written: Any, file: str, text: str | None,
               markers: dict[str, str]) -> dict[str, _Given]:
        """Every input's packages, merged; the stack file's first."""
        keys = {self.name(k): k for k in written} if isinstance(written, Mapping) else {}
        merged: dict[str, _Given] = {}
        for name, spec in given.packages.items():
            key = keys.get(name, name)
            merged[name] = _Given(key, spec.specifier, _pin(spec), spec.extras,
                                  Place(file, _toml.locate(text, ("packages",), key)), spec.external, "stack")
        entries = self._entries(markers)
        disagreements: list[tuple[_Given, _Given]] = []
        for entry in entries:
            if not entry.constraint:
                self._add(merged, self._given(entry), disagreements)
        for installed in self._installed():
            self._add(merged, installed, disagreements)
        for entry in entries:
            if entry.constraint and self.name(entry.requirement.name) in merged:
                self._add(merged, self._given(entry), disagreements)
        if disagreements:
            raise _disagree(disagreements)
        self._extras_of_pins(merged, markers)
        scope = self._installed_scope()
        kept = {n: g for n, g in merged.items() if g.origin != "environment" or n in scope}
        if len(kept) > MAX_PACKAGES:
            # the file that gives the first package past the limit, not the stack file the packages are merged into
            place = list(kept.values())[MAX_PACKAGES].place
            raise StackError(f"more than {MAX_PACKAGES:,} packages in all: a stack is limited to {MAX_PACKAGES:,} "
                             "(split the deployment)", file=place.file, line=place.line)
        return kept

    def _extras_of_pins(self, merged: dict[str, _Given], markers: dict[str, str]) -> None:
        """The extras that a flat list of pins installs without naming them.

        A lock file (or ``pip freeze``) pins every package, those an extra
        brings in included, and names no extra: vLLM's ``fastapi[standard]``
        is fastapi and, beside it, the packages of its standard extra. Each
        pinned package another file gives takes the extras of its release
        whose requirements (the database's metadata, with their markers for
        this stack) the pins all meet, an extra named there in turn
        included; so the check judges the extras really installed, and one
        whose packages are missing is still reported.
        """
        from ..sources.environment import extras_named

        pins = {n: g.pin for n, g in merged.items() if g.pin is not None}
        adds: dict[str, dict[str, list[Requirement]]] = {}  # package -> extra -> what that extra adds
        for name, given in merged.items():
            if given.origin in ("stack", "environment") or given.pin is None:
                continue
            component = self.db.component(name)
            release = component.release(given.pin) if component is not None else None
            named = {e for line in release.requires_dist for e in extras_named(line)} if release is not None else ()
            if named:
                adds[name] = {extra: _extra_lines(release, extra, markers) for extra in named}
        claimed = {name: set(extras) for name, extras in adds.items()}

        def met(requirement: Requirement) -> bool:
            target = self.name(requirement.name)
            pin = pins.get(target)
            if pin is None or not requirement.specifier.contains(pin, prereleases=True):
                return False
            return all(normalize(e) in claimed[target] or normalize(e) not in adds[target]
                       for e in requirement.extras) if target in adds else True

        changed = True
        while changed:  # the largest set of extras that all meet one another's requirements
            changed = False
            for name, extras in claimed.items():
                for extra in sorted(extras):
                    if not all(met(r) for r in adds[name][extra]):
                        extras.discard(extra)
                        changed = True
        for name, extras in claimed.items():
            if extras:
                merged[name] = merged[name]._replace(extras=merged[name].extras | frozenset(extras))

    def _installed_scope(self) -> set[str]:
        """The installed distributions that take part in the stack: those the
        database has curated facts about (rules, builds, options), and those
        whose requirements can reach one of them or a tracked package (the
        packages a check resolves, knowledge/graph.py). The others can turn
        no verdict of the database; the environment check judges them
        against their own metadata, as every installed distribution."""
        installed = {self.name(n) for n in self.environment.installed} if self.environment is not None else set()
        scope = self.db.relevant(installed & self.db.curated())
        return installed & (set(scope) if scope is not None else self.known)

    def _entries(self, markers: dict[str, str]) -> list[Entry]:
        """The entries of the files, less those whose marker excludes this stack."""
        entries = list(self.entries)
        if self.lock is not None:
            entries += self.lock.entries(markers, extras=self.inputs.extras, groups=self.inputs.groups or None)
        environment = {**markers, "extra": ""}
        return [e for e in entries if _applies(e, environment)]

    def _installed(self) -> list[_Given]:
        """The installed distributions, each pinned to its version. An
        environment does not say which extras were asked for: the
        environment check judges, from the installed metadata, whether the
        extras other distributions name are met."""
        environment = self.environment
        if environment is None:
            return []
        found = []
        for name, installed in sorted(environment.installed.items()):
            if installed.version is None:
                continue  # judged (and reported) by the environment check alone
            name = self.name(name)
            found.append(_Given(name, SpecifierSet(f"=={installed.version}"), installed.version,
                                frozenset(), Place(installed.distribution.metadata),
                                name not in self.known, "environment"))
        return found

    def _given(self, entry: Entry) -> _Given:
        requirement: Requirement = entry.requirement
        name = self.name(requirement.name)
        return _Given(name, requirement.specifier, PackageSpec(name, requirement.specifier).pinned,
                      frozenset(normalize(e) for e in requirement.extras), entry.place, name not in self.known)

    def _add(self, merged: dict[str, _Given], new: _Given, disagreements: list[tuple[_Given, _Given]]) -> None:
        name = self.name(new.key)
        old = merged.get(name)
        if old is None:
            merged[name] = new
            return
        both = _combine(old, new)
        if both is None:
            disagreements.append((old, new))
        else:
            merged[name] = both


def _applies(entry: Entry, environment: dict[str, str]) -> bool:
    """Whether an entry's marker holds for this stack. The readers refuse a
    marker that cannot be evaluated; one that fails on this machine alone
    (an interpreter's odd platform_release) is an error naming the entry."""
    marker = entry.requirement.marker
    if marker is None:
        return True
    from ..sources.requirements import MARKER_ERRORS, marker_problem

    try:
        return bool(marker.evaluate(environment))
    except MARKER_ERRORS:
        problem = marker_problem(marker, environment) or "marker: cannot be evaluated"
        raise StackError(f"{problem} on this machine", file=entry.place.file, line=entry.place.line) from None


def _disagree(disagreements: list[tuple[_Given, _Given]]) -> StackError:
    """One line for every package two inputs give differently: the first in full."""
    first, second = disagreements[0]
    more = ""
    if len(disagreements) > 1:
        others = [normalize(b.key) for _, b in disagreements[1:]]
        more = f" (and {len(others)} more: {', '.join(others[:5])}{', …' if len(others) > 5 else ''})"
    return StackError(f"{second.written} here disagrees with {first.written} at {first.place}: a package given "
                      f"twice must allow a common version{more}", file=second.place.file, line=second.place.line,
                      key=normalize(second.key))


def _combine(old: _Given, new: _Given) -> _Given | None:
    """The package as both inputs allow it, or None if no version satisfies both."""
    if old.pin is not None and new.pin is not None:
        if old.pin == new.pin:
            pin: Version | None = old.pin
        elif old.pin.public == new.pin.public and (old.pin.local is None or new.pin.local is None):
            pin = old.pin if old.pin.local else new.pin  # 2.10.0 and 2.10.0+cu128: the build-labelled one
        else:
            return None
    elif old.pin is not None or new.pin is not None:
        pin, other = (old.pin, new) if old.pin is not None else (new.pin, old)
        assert pin is not None
        if not other.specifier.contains(pin, prereleases=True):
            return None
    else:
        pin = None
    specifier = SpecifierSet(f"=={pin}") if pin is not None else old.specifier & new.specifier
    if pin is None and not admits_some(specifier):
        return None
    origin = old.origin if old.origin == new.origin else "merged"
    return _Given(old.key, specifier, pin, old.extras | new.extras, old.place, old.external and new.external, origin)


def _extra_lines(release: Any, extra: str, markers: dict[str, str]) -> list[Requirement]:
    """The requirements that `extra` of a release adds for this stack (its own metadata's)."""
    plain, named = {**markers, "extra": ""}, {**markers, "extra": extra}
    return [
        d.requirement for d in release.dependencies_for(frozenset({extra}))
        if d.layer == "metadata" and d.requirement.marker is not None and "extra" in str(d.requirement.marker)
        and d.requirement.marker.evaluate(named) and not d.requirement.marker.evaluate(plain)
    ]


def _value(given: _Given) -> dict[str, Any]:
    """The [packages] value of a package another input gave (or changed)."""
    value: dict[str, Any] = {"version": str(given.pin) if given.pin is not None else (str(given.specifier) or "*")}
    if given.extras:
        value["extras"] = sorted(given.extras)
    if given.external:
        value["external"] = True
    return value


def _pin(spec: PackageSpec) -> Version | None:
    """The version a stack file's entry pins, with its build label."""
    pinned = spec.pinned
    if pinned is None or spec.build is None:
        return pinned
    return Version(f"{pinned}+{spec.build}")


def _agrees(key: str, written: Any, value: str) -> bool:
    """Whether the stack file's [system] `key` agrees with the interpreter's `value`
    (a Python written "3.12" agrees with 3.12.7)."""
    if key in ("python", "glibc"):
        try:
            mine, theirs = Version(str(written)), Version(value)
        except ValueError:
            return True  # the stack's own validation says what is wrong with it
        return mine.release == theirs.release[: len(mine.release)] if key == "python" else mine == theirs
    return bool(written == value)
