"""Requirements and constraints files, as pip reads them.

Each line is a PEP 508 requirement (``vllm==0.32.0``,
``transformers>=5.16; python_version >= "3.11"``) or an option. pip's rules
hold: a ``#`` at the start of a line or after whitespace starts a comment; a
line ending in ``\\`` continues on the next; ``${NAME}`` is replaced by the
environment variable of that name (upper-case letters, digits and ``_``,
when it is set). ``-r FILE`` includes requirements and ``-c FILE``
constraints, each relative to the file that names it; a file that includes
itself, directly or not, is an error that names the chain.

Options that tell an installer where and how to fetch (``--hash``,
``--index-url``, ``--find-links``, ``--pre``, ``--only-binary``, ...) change
nothing compat judges and are skipped, except the index URLs, which are
kept: one of PyTorch's wheel indexes (``https://download.pytorch.org/whl/cu128``,
as cuda.toml's ``[labels]`` name them) says which builds the file installs
(``[system] index = "cu128"``; knowledge/inputs.py). A requirement that
is a place rather than a version is read as pip would install it: a wheel or
an sdist (a path, a URL or ``name @ URL``) is the version its file name
gives; a local project folder (``.``, ``-e ./service``) stands for the
requirements of its pyproject.toml. What compat cannot read a version from
(a VCS checkout, a folder without static metadata) is refused with the line
that gives it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from .._record import Record
from .. import _markers, _toml
from ..errors import StackError, one_line
from .._strict import MAX_DIGITS, has_long_number
from ..stack import Place
from .stack import MAX_KEY, MAX_VERSION

if TYPE_CHECKING:
    from packaging.markers import EvaluateContext, Marker

__all__ = ["Entry", "Requirements", "read_requirements", "with_marker", "unusable", "marker_problem",
           "read_requirement", "direct_reference", "quote", "MARKER_ERRORS"]

# pip's own expressions (pip/_internal/req/req_file.py)
_COMMENT = re.compile(r"(^|\s+)#.*$")
_ENV_VAR = re.compile(r"\$\{([A-Z0-9_]+)\}")
_VCS = ("git+", "hg+", "svn+", "bzr+")
_ARCHIVES = (".whl", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tar", ".zip")
_TRAILING_EXTRAS = re.compile(r"^(.*?)(\[[^\]]*\])$")

# The options a requirements file may give (pip's SUPPORTED_OPTIONS and
# SUPPORTED_OPTIONS_REQ), under every spelling, and whether each takes a value.
_OPTIONS: dict[str, tuple[str, bool]] = {
    "-r": ("requirement", True), "--requirement": ("requirement", True),
    "-c": ("constraint", True), "--constraint": ("constraint", True),
    "-e": ("editable", True), "--editable": ("editable", True),
    "-i": ("index-url", True), "--index-url": ("index-url", True),
    "--extra-index-url": ("extra-index-url", True),
    "-f": ("find-links", True), "--find-links": ("find-links", True),
    "--no-binary": ("no-binary", True), "--only-binary": ("only-binary", True),
    "--trusted-host": ("trusted-host", True), "--use-feature": ("use-feature", True),
    "--hash": ("hash", True), "--config-settings": ("config-settings", True),
    "--global-option": ("global-option", True),
    "--no-index": ("no-index", False), "--prefer-binary": ("prefer-binary", False),
    "--require-hashes": ("require-hashes", False), "--pre": ("pre", False),
}
_MAX_DEPTH = 32  # files included inside one another
# What packaging raises when it cannot evaluate a marker: UndefinedComparison
# and a number too long to convert (ValueError), UndefinedEnvironmentName
# (LookupError), and a marker nested too deeply.
MARKER_ERRORS = (ValueError, LookupError, RecursionError)
# Characters of a line an error quotes: enough to show where it goes wrong,
# too few to print a file that is no requirements file (a -r /etc/shadow).
_QUOTED = 40
_MAX_EXTRAS = 100  # extras of one requirement (a package declares a few dozen at most)
# The marker variables PEP 751 defines for a lock's packages alone.
_LOCK_VARIABLES = re.compile(r"\b(?:extras|dependency_groups)\b")


class Entry(Record):
    """One requirement an input gives, and where it gives it.

    A constraint (from ``-c``) narrows the versions of a package the other
    inputs give; it adds no package of its own.
    """

    requirement: Requirement
    place: Place
    constraint: bool = False


class Requirements(Record):
    """What a requirements file and the files it includes give: the
    requirements and constraints, and the URLs of their index options (with
    where)."""

    entries: list[Entry]
    indexes: list[tuple[str, Place]]


def read_requirements(path: str, *, constraint: bool = False) -> Requirements:
    """Read a requirements file (``-`` is standard input), or with
    `constraint` a constraints file, and every file it includes."""
    found = Requirements([], [])
    _read_file(path, constraint, (), found, None)
    return found


def _read_file(path: str, constraint: bool, chain: tuple[tuple[str, str], ...], found: Requirements,
               named_at: Place | None) -> None:
    """Read one file; `chain` holds the files that include it, as (real path, shown path)."""
    shown = "<stdin>" if path == "-" else path
    if "\x00" in path:  # no file system path holds one (os.path raises ValueError)
        where = named_at or Place(shown)
        raise StackError(f"{quote(path)}: a file name with a NUL character", file=where.file, line=where.line)
    real = path if path == "-" else os.path.realpath(path)
    if any(real == r for r, _ in chain):
        assert named_at is not None
        cycle = " -> ".join([s for _, s in chain] + [shown])
        raise StackError(f"the included files form a cycle: {cycle}", file=named_at.file, line=named_at.line)
    if len(chain) >= _MAX_DEPTH:
        assert named_at is not None
        raise StackError(f"files included more than {_MAX_DEPTH} deep", file=named_at.file, line=named_at.line)
    try:
        text = _toml.read_limited(path, error=StackError)
    except StackError as exc:
        if named_at is None:
            raise
        # say which line named the file that could not be read
        raise StackError(f"{shown}: {exc.message}", file=named_at.file, line=named_at.line) from None
    base = os.path.dirname(path) if path != "-" else ""
    for number, line in logical_lines(text):
        _read_line(line, Place(shown, number), base, constraint, (*chain, (real, shown)), found)


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines that say something, each with the number of its first
    physical line: continuations joined, comments dropped, ``${VAR}``
    expanded, as pip does.

    >>> list(logical_lines("a==1 \\\\\\n  --hash=sha256:00\\n# note\\nb  # why\\n"))
    [(1, 'a==1   --hash=sha256:00'), (4, 'b')]
    """
    joined: list[str] = []
    first = 0
    lines: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.endswith("\\") or _COMMENT.match(line):
            if _COMMENT.match(line):
                line = " " + line  # so that the comment is dropped below
            if joined:
                joined.append(line)
                lines.append((first, "".join(joined)))
                joined = []
            else:
                lines.append((number, line))
        else:
            if not joined:
                first = number
            joined.append(line.strip("\\"))
    if joined:
        lines.append((first, "".join(joined)))
    for number, line in lines:
        line = _COMMENT.sub("", line).strip()
        if line:
            yield number, _ENV_VAR.sub(lambda m: os.environ.get(m.group(1)) or m.group(0), line)


def _split(line: str) -> tuple[str, str]:
    """The requirement and the options of a line: the options start at the
    first word that starts with ``-`` (pip's break_args_options)."""
    words = line.split(" ")
    for index, word in enumerate(words):
        if word.startswith("-"):
            return " ".join(words[:index]), " ".join(words[index:])
    return line, ""


def _options(text: str, place: Place) -> list[tuple[str, str | None]]:
    """The options of a line as (name, value) pairs, whatever their spelling
    (``-rfile``, ``-r file``, ``--requirement=file``)."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise StackError(f"cannot read the options {quote(text)}: {exc}", file=place.file, line=place.line) from None
    found: list[tuple[str, str | None]] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        written, value = word, None
        if word.startswith("--") and "=" in word:
            written, value = word.split("=", 1)
        elif word.startswith("-") and not word.startswith("--") and len(word) > 2:
            written, value = word[:2], word[2:]
        if written not in _OPTIONS:
            from .._names import did_you_mean

            raise StackError(f"unknown option {quote(written)}{did_you_mean(written, _OPTIONS)}", file=place.file,
                             line=place.line)
        name, takes_value = _OPTIONS[written]
        if takes_value and value is None:
            if index >= len(words):
                raise StackError(f"{written} needs a value", file=place.file, line=place.line)
            value = words[index]
            index += 1
        elif not takes_value and value is not None:
            raise StackError(f"{written} takes no value", file=place.file, line=place.line)
        found.append((name, value))
    return found


def _read_line(line: str, place: Place, base: str, constraint: bool, chain: tuple[tuple[str, str], ...],
               found: Requirements) -> None:
    text, options = _split(line)
    text = text.strip()
    parsed = _options(options, place) if options else []
    for name, value in parsed:
        assert value is not None or name in ("no-index", "prefer-binary", "require-hashes", "pre")
        if name in ("requirement", "constraint"):
            # pip: -r includes requirements, -c constraints, whatever the file that names them
            target = os.path.join(base, value or "")  # an absolute path stays itself
            if "://" in (value or ""):
                raise StackError(f"{quote(value or '')} is a URL: compat reads only local files (download it first)",
                                 file=place.file, line=place.line)
            _read_file(target, name == "constraint", chain, found, place)
        elif name == "editable":
            found.entries.extend(_editable(value or "", place, constraint))
        elif name in ("index-url", "extra-index-url"):
            found.indexes.append((value or "", place))
    if text:
        found.entries.extend(_requirement(text, place, constraint))


def _editable(target: str, place: Place, constraint: bool) -> list[Entry]:
    if constraint:
        raise StackError("editable requirements are not allowed as constraints (as pip says)", file=place.file,
                         line=place.line)
    if target.startswith(_VCS):
        raise _no_version(target, place)
    return _location(target, place, None)


def _requirement(text: str, place: Place, constraint: bool) -> list[Entry]:
    """The entries of one requirement: a PEP 508 line, or a place to install from."""
    if _looks_like_location(text):
        if constraint:
            raise StackError(f"{quote(text)}: unnamed requirements are not allowed as constraints (as pip says)",
                             file=place.file, line=place.line)
        return _location(text, place, None)
    requirement = read_requirement(text, lambda why: StackError(why, file=place.file, line=place.line))
    if constraint and requirement.extras:
        raise StackError(f"{quote(text)}: constraints cannot have extras (as pip says)", file=place.file,
                         line=place.line)
    if requirement.url:
        return direct_reference(requirement, place)
    return [Entry(requirement, place, constraint)]


def read_requirement(text: str, error: Callable[[str], StackError]) -> Requirement:
    """The PEP 508 requirement `text`, one compat can judge; else the
    StackError `error` makes of why not (each input says where)."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise error(_not_pep508(text, exc)) from None
    problem = unusable(requirement)
    if problem:
        raise error(problem)
    return requirement


def direct_reference(requirement: Requirement, place: Place, within: tuple[str, ...] = ()) -> list[Entry]:
    """The entries of ``name @ URL``, as pip installs it: a wheel or sdist
    is the version its file name gives, a project folder its requirements;
    a VCS checkout is refused. `within` holds the projects being read (a
    pyproject.toml's own direct references), so that two that name each
    other are an error, not an endless read."""
    assert requirement.url is not None
    return _location(requirement.url, place, requirement, within)


def _not_pep508(text: str, exc: InvalidRequirement) -> str:
    """The error of a line that does not parse: packaging's reason, and the
    line quoted up to where the parse stopped (a file that is no
    requirements file is not printed)."""
    span = getattr(exc.__cause__, "span", None)
    end = span[1] + 3 if isinstance(span, tuple) else None  # and the few characters it stopped at
    return f"not a PEP 508 requirement ({str(exc).splitlines()[0]}): {quote(text[:end])}"


def quote(text: str) -> str:
    """`text` as an error quotes it: escaped, and cut at a few dozen characters.

    >>> print(quote("root:*:19000:0:99999:7:::"[:5]))
    'root:'
    """
    return f"'{one_line(text, _QUOTED)}'"


def unusable(requirement: Requirement) -> str | None:
    """Why a requirement an input gives cannot be judged, or None: a name
    or extras no stack can hold, a version too long to compare, or a
    marker that cannot be evaluated. Each is refused here, where the line
    is known, rather than in the stack the packages are merged into."""
    if len(requirement.name) > MAX_KEY:
        return f"a package name of {len(requirement.name):,} characters: names are limited to {MAX_KEY}"
    if len(requirement.extras) > _MAX_EXTRAS:
        return f"{len(requirement.extras):,} extras: a requirement names at most {_MAX_EXTRAS}"
    longest = max(requirement.extras, key=len, default="")
    if len(longest) > MAX_KEY:
        return f"an extra name of {len(longest):,} characters: names are limited to {MAX_KEY}"
    return long_version(requirement) or marker_problem(requirement.marker)


def marker_problem(marker: Marker | None, environment: Mapping[str, Any] | None = None,
                   context: EvaluateContext = "metadata") -> str | None:
    """Why `marker` cannot be evaluated, or None: a number too long to
    convert, a comparison packaging cannot make, or a name the `context`
    does not define (``extras`` and ``dependency_groups`` are a lock
    file's, PEP 751). Outside a lock, the marker is held to what a
    snapshot's Requires-Dist is (`compat._markers`, which says best
    why). Then it is evaluated in `environment` (by default this
    interpreter's): packaging evaluates every comparison, so one
    evaluation finds any that raises."""
    if marker is None:
        return None
    text = str(marker)
    if has_long_number(text):
        return f"marker: a number of more than {MAX_DIGITS} digits"
    lock_only = context == "lock_file" and _LOCK_VARIABLES.search(text) is not None
    problem = None if lock_only else _markers.marker_problem(text)
    if problem is not None:
        return problem
    try:
        marker.evaluate(environment, context)
    except MARKER_ERRORS as exc:
        why = f"no marker variable {exc}" if isinstance(exc, LookupError) else str(exc)
        return one_line(f"marker: {text} cannot be evaluated ({why})", 300)
    return None


def long_version(requirement: Requirement) -> str | None:
    """Why `requirement` cannot be used when one of its versions is longer
    than a stack allows (a version of thousands of digits is no number
    Python reads), else None."""
    for spec in requirement.specifier:
        if len(spec.version) > MAX_VERSION:
            return f"{requirement.name}: a version of more than {MAX_VERSION} characters"
    return None


def _looks_like_location(text: str) -> bool:
    """Whether a line names a place (path, URL, archive) rather than a project,
    as pip's parse_req_from_line tells them apart."""
    head = text.split(";", 1)[0].strip()
    if "@" in head.split("/", 1)[0] and not head.startswith((".", "/")):
        return False  # name @ URL: a PEP 508 direct reference
    return (
        "://" in head
        or head.startswith(("file:", ".", "/", "~"))
        or "/" in head
        or "\\" in head
        or _TRAILING_EXTRAS.sub(r"\1", head).lower().endswith(_ARCHIVES)
    )


def _no_version(target: str, place: Place) -> StackError:
    return StackError(
        f"{quote(target)}: compat cannot tell which version a VCS checkout installs; pin the version instead "
        "(name==1.2.3), or give it in a stack file's [packages]",
        file=place.file,
        line=place.line,
    )


def _location(written: str, place: Place, named: Requirement | None, within: tuple[str, ...] = ()) -> list[Entry]:
    """The entries of a requirement that names a place: a wheel or sdist is
    the version its file name says; a project folder, its pyproject.toml's
    requirements. `named` is the PEP 508 requirement of ``name @ URL``."""
    marker = named.marker if named is not None else None
    target = written.strip()
    if named is None:
        separator = "; " if "://" in target else ";"
        if separator in target:
            target, marker_text = target.split(separator, 1)
            target = target.strip()
            marker = _marker(marker_text, place)
    if target.startswith(_VCS):
        raise _no_version(target, place)
    extras: set[str] = set(named.extras) if named is not None else set()
    match = _TRAILING_EXTRAS.match(target)
    if match and "://" not in target:
        target = match.group(1)
        extras |= {e.strip() for e in match.group(2)[1:-1].split(",") if e.strip()}
    try:
        url = urlsplit(target)
    except ValueError as exc:  # a malformed host ("Invalid IPv6 URL")
        raise StackError(f"{quote(written)}: not a URL compat can read ({exc})", file=place.file,
                         line=place.line) from None
    if url.scheme in ("http", "https"):
        filename = unquote(url.path.rsplit("/", 1)[-1])
        return [_archive(filename, extras, marker, place, named, written)]
    if url.scheme == "file":
        from urllib.request import url2pathname

        target = url2pathname(url.path)
    elif url.scheme and len(url.scheme) > 1:
        raise StackError(f"{quote(written)}: compat reads local paths and http(s) URLs, not {url.scheme}: URLs",
                         file=place.file, line=place.line)
    path = os.path.expanduser(target.split("#", 1)[0])
    if os.path.isdir(path):
        return _project(path, extras, marker, place, within)
    if path.lower().endswith(_ARCHIVES):
        return [_archive(os.path.basename(path), extras, marker, place, named, written)]
    raise StackError(f"{quote(written)} is neither a project folder nor a wheel or sdist (no such folder)",
                     file=place.file, line=place.line)


def _marker(text: str, place: Place) -> Marker:
    from packaging.markers import InvalidMarker, Marker

    try:
        marker = Marker(text.strip())
    except InvalidMarker as exc:
        raise StackError(f"not a PEP 508 marker ({str(exc).splitlines()[0]}): {quote(text.strip())}",
                         file=place.file, line=place.line) from None
    problem = marker_problem(marker)
    if problem:
        raise StackError(problem, file=place.file, line=place.line)
    return marker


def _archive(filename: str, extras: set[str], marker: Marker | None, place: Place, named: Requirement | None,
             written: str) -> Entry:
    """A wheel or sdist: the version its file name gives, pinned."""
    if has_long_number(filename):  # a version Python cannot convert (its int() limit), or compare
        raise StackError(f"{quote(written)}: the file name {quote(filename)} holds a number of more than "
                         f"{MAX_DIGITS} digits, no version compat can read; pin the version instead (name==1.2.3)",
                         file=place.file, line=place.line)
    try:
        if filename.lower().endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        else:
            name, version = parse_sdist_filename(filename)
    except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
        raise StackError(
            f"{quote(written)}: compat cannot tell the version of what it installs (the file name "
            f"{quote(filename)} is not a wheel's or an sdist's); pin the version instead (name==1.2.3)",
            file=place.file,
            line=place.line,
        ) from None
    if named is not None and canonicalize_name(named.name) != name:
        raise StackError(f"{quote(written)} is a file of {name}, not of {named.name}", file=place.file, line=place.line)
    try:
        pinned = _pinned(named.name if named else str(name), str(version), extras, marker)
    except InvalidRequirement as exc:  # a file name packaging parses but no requirement names ("ág3-3.0-...")
        raise StackError(f"{quote(written)}: the file name {quote(filename)} gives no requirement compat can read "
                         f"({str(exc).splitlines()[0]}); pin the version instead (name==1.2.3)",
                         file=place.file, line=place.line) from None
    problem = unusable(pinned)
    if problem:
        raise StackError(problem, file=place.file, line=place.line)
    return Entry(pinned, place)


def _pinned(name: str, version: str, extras: set[str], marker: Marker | None) -> Requirement:
    text = name + (f"[{','.join(sorted(extras))}]" if extras else "") + f"=={version}"
    if marker is not None:
        text += f"; {marker}"
    return Requirement(text)


def _project(folder: str, extras: set[str], marker: Marker | None, place: Place,
             within: tuple[str, ...] = ()) -> list[Entry]:
    """A local project (``-e .``): pip installs it and its requirements; compat
    reads those from its pyproject.toml."""
    from .pyproject import read_pyproject

    pyproject = os.path.normpath(os.path.join(folder, "pyproject.toml"))
    if os.path.realpath(pyproject) in within:
        raise StackError(f"{quote(folder)}: the projects require one another in a cycle (through their direct "
                         "references)", file=place.file, line=place.line)
    if not os.path.isfile(pyproject):
        raise StackError(
            f"{quote(folder)} is a project folder without a pyproject.toml: compat reads a project's requirements from "
            "its [project] table only (give them in a requirements file instead)",
            file=place.file,
            line=place.line,
        )
    entries = read_pyproject(pyproject, extras=sorted(extras), within=within)
    if marker is None:
        return entries
    return [e._replace(requirement=with_marker(e.requirement, str(marker))) for e in entries]


def with_marker(requirement: Requirement, marker: str) -> Requirement:
    """`requirement`, applying only where `marker` holds too.

    >>> str(with_marker(Requirement('numpy>=2; python_version >= "3.11"'), 'sys_platform == "linux"'))
    'numpy>=2; python_version >= "3.11" and sys_platform == "linux"'
    """
    combined = f"({requirement.marker}) and ({marker})" if requirement.marker else marker
    copy = Requirement(str(requirement))
    from packaging.markers import Marker

    copy.marker = Marker(combined)
    return copy
