"""A PEP 751 lock file (pylock.toml), read with `packaging.pylock`.

A lock lists every package an installer may install, each with the marker
that says where; ``Pylock.select`` picks, as an installer does, those of
one environment, its extras and dependency groups. compat selects for the
stack's marker environment (its Python and platform) and pins each package
to the version the lock gives. Which wheel an installer would take is left
to the check, which judges each release's wheels against the stack's
platform and glibc itself, so every wheel of the lock is offered here.

A package the lock gives as a local folder (the project itself, installed
from source) has no version to judge and is left out: the lock lists its
requirements as packages of their own. A VCS or archive package without a
version is an error, as compat cannot tell what it installs. A lock that
``compat resolve --format pylock`` wrote also names the applications
(``[tool.compat] applications``), which are no Python packages; they are
read back.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from .. import _toml
from ..errors import StackError, one_line
from .._strict import MAX_DIGITS, has_long_number
from .requirements import MARKER_ERRORS, Entry, long_version, marker_problem
from ..stack import Place

__all__ = ["LockFile", "read_pylock"]


def _packaging_pylock() -> Any:
    """packaging.pylock, which packaging 26.1 brought (compat needs 26.4)."""
    try:
        import packaging.pylock as module
    except ImportError:  # pragma: no cover - compat requires packaging>=26.4
        import packaging

        raise StackError(f"reading a lock file needs packaging 26.4 or newer; this one is {packaging.__version__}")
    if not hasattr(module.Pylock, "select"):  # pragma: no cover
        raise StackError("reading a lock file needs packaging 26.4 or newer (Pylock.select)")
    return module


class LockFile:
    """A validated lock, and where each of its packages starts in the file."""

    def __init__(self, path: str) -> None:
        self.path = "<stdin>" if path == "-" else path
        # what packaging's reader logged (a lock-version newer than 1.0): said once, in the one line of an error
        self.said: list[str] = []
        try:
            self._read(path)
        except StackError as exc:
            raise self._with_said(exc) from None

    def _with_said(self, exc: StackError) -> StackError:
        """`exc`, with what packaging's reader said folded into its one line."""
        if not self.said:
            return exc
        return StackError(f"{exc.message} (packaging's lock reader also said: {'; '.join(self.said)})",
                          file=exc.file, key=exc.key, line=exc.line, column=exc.column)

    def _read(self, path: str) -> None:
        pylock = _packaging_pylock()
        data, self.text = _toml.load(path, error=StackError)
        try:
            with _captured(pylock.__name__, self.said):
                self.lock = pylock.Pylock.from_dict(data)
        except pylock.PylockUnsupportedVersionError as exc:
            raise StackError(str(exc), file=self.path, key="lock-version",
                             line=_toml.locate(self.text, (), "lock-version")) from None
        except pylock.PylockValidationError as exc:
            # a marker's error spans three lines (the marker and a caret under it): the first says what
            raise StackError(exc.message.splitlines()[0] if exc.message else "invalid lock", file=self.path,
                             key=exc.context, line=self._line(exc.context)) from None
        # the first line of each [[packages]] table, in order (a lock written inline has none)
        starts = [line for line, _ in _toml.blocks(self.text, "packages")]
        self.lines: list[int | None] = starts if len(starts) == len(self.lock.packages) else \
            [None] * len(self.lock.packages)
        self._check_conditions(data)
        tool = data.get("tool", {})
        compat = tool.get("compat", {}) if isinstance(tool, Mapping) else {}
        applications = compat.get("applications", {}) if isinstance(compat, Mapping) else {}
        if not isinstance(applications, Mapping) or not all(isinstance(v, str) for v in applications.values()):
            raise StackError("expected a table of application = \"version\"", file=self.path,
                             key="[tool.compat] applications",
                             line=_toml.locate(self.text, ("tool", "compat"), "applications"))
        self.applications: dict[str, Requirement] = {}
        for name, version in applications.items():
            try:
                requirement = Requirement(f"{name}=={version}")
            except InvalidRequirement:
                requirement = None
            if requirement is None or requirement.name != name or requirement.marker or requirement.extras \
                    or requirement.url or long_version(requirement):
                raise StackError(f"expected application = \"version\", got {name!r} = {version[:40]!r}",
                                 file=self.path, key=f"[tool.compat.applications] {name[:40]}",
                                 line=_toml.locate(self.text, ("tool", "compat", "applications"), name))
            self.applications[name] = requirement

    def _check_conditions(self, data: Mapping[str, Any]) -> None:
        """Refuse, naming the key, what `Pylock.select` would fail on: a
        Requires-Python with a number too long to compare, and a marker
        that cannot be evaluated where PEP 751 evaluates it (``extras`` and
        ``dependency_groups`` are defined for a package's marker, not for
        ``environments``)."""
        packages = data.get("packages")
        tables = packages if isinstance(packages, list) else []
        for where, table, line in [("", data, None),
                                   *((f"packages[{i}].", t, self.lines[i]) for i, t in enumerate(tables))]:
            written = table.get("requires-python") if isinstance(table, Mapping) else None
            if isinstance(written, str) and has_long_number(written):
                raise StackError(f"a number of more than {MAX_DIGITS} digits", file=self.path,
                                 key=f"{where}requires-python", line=line or self._line(f"{where}requires-python"))
        for index, marker in enumerate(self.lock.environments or ()):
            problem = marker_problem(marker, context="requirement")
            if problem:
                raise StackError(problem, file=self.path, key=f"environments[{index}]",
                                 line=_toml.locate(self.text, (), "environments"))
        for index, package in enumerate(self.lock.packages):
            problem = marker_problem(package.marker, context="lock_file")
            if problem:
                raise StackError(problem, file=self.path, key=f"packages[{index}].marker", line=self.lines[index])

    def _line(self, context: str | None) -> int | None:
        """The line of a validation error's context (``packages[3].version``)."""
        if not context:
            return None
        head = context.split(".", 1)[0]
        if head.startswith("packages[") and head.endswith("]") and head[9:-1].isdigit():
            starts = [line for line, _ in _toml.blocks(self.text, "packages")]
            index = int(head[9:-1])
            return starts[index] if index < len(starts) else None
        return _toml.locate(self.text, (), head)

    def entries(self, environment: Mapping[str, str], *, extras: Collection[str] = (),
                groups: Collection[str] | None = None) -> list[Entry]:
        """The packages an installer would install from the lock for
        `environment` (a PEP 508 marker environment), pinned; `groups`
        None means the lock's default groups."""
        pylock = _packaging_pylock()
        index_of = {id(p): i for i, p in enumerate(self.lock.packages)}
        try:
            selected = list(self.lock.select(environment=dict(environment), tags=self._tags(), extras=extras,
                                             dependency_groups=groups))
        except pylock.PylockSelectError as exc:
            raise self._with_said(StackError(f"selects nothing for this stack: {exc}", file=self.path)) from None
        except MARKER_ERRORS as exc:  # a marker this machine's values cannot meet
            raise self._with_said(StackError(one_line(
                f"a marker cannot be evaluated on this machine ({type(exc).__name__}: {exc})", 300),
                file=self.path)) from None
        entries: list[Entry] = []
        for package, source in selected:
            place = Place(self.path, self.lines[index_of[id(package)]])
            if package.version is None:
                if isinstance(source, pylock.PackageDirectory):
                    continue  # a local project, built from source: its requirements are packages of the lock
                raise StackError(f"{package.name} has no version (it comes from {_where(source)}): compat cannot "
                                 "tell what it installs; give the version in the lock", file=place.file,
                                 line=place.line)
            entries.append(Entry(Requirement(f"{package.name}=={package.version}"), place))
        for name, requirement in sorted(self.applications.items()):
            line = _toml.locate(self.text, ("tool", "compat", "applications"), name)
            entries.append(Entry(requirement, Place(self.path, line)))
        return entries

    def _tags(self) -> list[Any]:
        """Every tag of every wheel of the lock: the check, not the
        selection, judges which wheel fits the stack."""
        tags = set()
        for package in self.lock.packages:
            for wheel in package.wheels or ():
                try:
                    tags.update(parse_wheel_filename(_wheel_name(wheel))[3])
                except (InvalidWheelFilename, TypeError):
                    continue
        return sorted(tags, key=str)


class _Said(logging.Handler):
    """Keeps what a logger says, one line each, instead of printing it."""

    def __init__(self, said: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.said = said

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # noqa: BLE001 - a message that cannot be formatted is still something said
            text = str(record.msg)
        self.said.append(one_line(text, 200))


@contextlib.contextmanager
def _captured(name: str, said: list[str]) -> Iterator[None]:
    """What the logger `name` says while reading goes into `said`, not to
    standard error: packaging reads a lock-version 1.1 (PEP 751: a newer
    minor version is read, with a warning) and logs "pylock minor version
    1.1 is not supported", which, with no logging set up, Python prints as
    a line of its own beside compat's output."""
    logger = logging.getLogger(name)
    handler, propagate = _Said(said), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _wheel_name(wheel: Any) -> str | None:
    """A wheel's file name: its `name`, or, as PEP 751 lets a lock leave it
    out (uv does), the last part of its `url` or `path`."""
    if wheel.name:
        return wheel.name  # type: ignore[no-any-return]
    where = wheel.url or wheel.path
    if not where:
        return None
    return str(where).split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1] or None


def _where(source: Any) -> str:
    url = getattr(source, "url", None) or getattr(source, "path", None)
    return f"{type(source).__name__.removeprefix('Package').lower()} {url}" if url else type(source).__name__


def read_pylock(path: str) -> LockFile:
    """Read and validate a pylock.toml (``-`` is standard input)."""
    return LockFile(path)
