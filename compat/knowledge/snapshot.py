"""Snapshots of the real package metadata of releases on the index.

One JSON Lines file per package under ``data/metadata/``, as `compat db
sync` writes it: a header (package, index, the date it was taken, whether
sync.toml tracks the package, and every version the index lists, so that a
check can tell a release that does not exist from one that was not
recorded), then one line per release with its Requires-Python and
Requires-Dist as the index serves them and the tags of its wheels; a
release whose requirements could not be read says ``"metadata": "unknown"``
(its empty Requires-Dist does not mean "none").

The header also lists, under ``lines``, each release line's version, byte
offset (counted from the end of the header line), length and yanked mark.
A check reads only the headers of the packages it needs and seeks to the
one line of a release whose requirements it needs: the cost of a check
does not grow with the history a snapshot holds. `compat db lint` checks
the offsets against the lines; a snapshot without them (written by hand)
is read whole.

Nothing in a snapshot is trusted: a release line is checked when it is
decoded (its keys, in any order, and every value a reader uses must parse),
two lines of one release are refused, and `compat db lint` reports every
malformed line of every snapshot, each with its file, line and key.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import os
import re
from collections.abc import Callable, Iterable
from typing import Any

from packaging.specifiers import InvalidSpecifier
from packaging.version import Version

from .._record import Record
from .._text import dotted_identifiers, dotted_words
from .._versions import parse_version
from .._files import MAX_SNAPSHOT_BYTES, open_regular, read_bytes, write_atomic
from .._names import is_name, normalize
from ..errors import DatabaseError
from .._strict import MAX_DIGITS, has_long_number, is_string_list
from ._schema import database_error, decode_text, one_line
from .model import Release
from .requires import long_number, parse_requirement, parse_specifier, requirement_error

__all__ = [
    "Snapshot", "SnapshotRelease", "header_and_count", "read_header", "read_snapshot", "snapshot_names", "snapshot_problems", "write_snapshot",
    "requirement_problem", "wheel_problem", "build_system_problem", "lacks_linux_wheel", "fetches_wheel",
]

SCHEMA = 1


UNKNOWN = "unknown"  # the "metadata" of a release whose requirements could not be read


class SnapshotRelease(Record):
    version: str
    uploaded: str | None
    requires_python: str | None
    requires_dist: list[str]
    yanked: bool = False
    file: str | None = None
    wheels: tuple[dict[str, Any], ...] = ()
    tags: tuple[str, ...] | None = None  # None: not recorded (an older snapshot)
    metadata: str | None = None  # UNKNOWN: requires_dist is empty because it could not be read
    # the sdist an installer builds when no wheel fits: its file name, False when the release has none,
    # None when not recorded (an older snapshot)
    sdist: str | bool | None = None
    # how that sdist is built (its pyproject.toml's build system: `build_system_problem`), or UNKNOWN;
    # None when not recorded (a release with wheels for Linux, or an older snapshot)
    build_system: dict[str, Any] | str | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"version": self.version}
        if self.yanked:
            data["yanked"] = True
        if self.uploaded:
            data["uploaded"] = self.uploaded
        if self.requires_python:
            data["requires_python"] = self.requires_python
        if self.file:
            data["file"] = self.file
        if self.metadata:
            data["metadata"] = self.metadata
        if self.tags is not None:
            data["tags"] = sorted(self.tags)
        if self.sdist is not None:
            data["sdist"] = self.sdist
        if self.build_system is not None:
            data["build_system"] = self.build_system
        data["requires_dist"] = list(self.requires_dist)
        if self.wheels:
            data["wheels"] = [dict(w) for w in self.wheels]
        return data


class Snapshot(Record):
    name: str
    index: str
    taken: str
    releases: list[SnapshotRelease]
    tracked: bool | None = None  # whether data/sync.toml names the package (None: not recorded)
    versions: tuple[str, ...] | None = None  # every version on the index, yanked ones too
    yanked: tuple[str, ...] | None = None  # those all of whose files are yanked

    def header(self) -> dict[str, Any]:
        """The first line, without its ``lines`` (which `render_snapshot`
        adds): the keys an older snapshot lacks are left out, not guessed."""
        data: dict[str, Any] = {"schema": SCHEMA, "name": self.name, "index": self.index, "taken": self.taken}
        if self.tracked is not None:
            data["tracked"] = self.tracked
        for key, versions in (("versions", self.versions), ("yanked", self.yanked)):
            if versions is not None:
                data[key] = sorted(versions, key=Version)
        return data

    def to_dict(self) -> dict[str, Any]:
        ordered = sorted(self.releases, key=lambda r: Version(r.version))
        return {**self.header(), "releases": [r.to_dict() for r in ordered]}


HEADER_KEYS = ("schema", "name", "index", "taken", "tracked", "versions", "yanked", "lines")
RELEASE_KEYS = ("version", "yanked", "uploaded", "requires_python", "file", "metadata", "tags", "sdist", "build_system",
                "requires_dist", "wheels")
BUILD_SYSTEM_KEYS = ("backend", "requires", "index_url", "unmet")
WHEEL_KEYS = ("file", "url", "sha256", "size")
_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z"  # a pattern compiled by re on first use (as _WHEEL_NAME, _SHA256): a check never uses it
# an upload time: a date (the common case, told without compiling this), or a date and a time
_UPLOADED = r"([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ][0-9:.]*(?:Z|[+-][0-9]{2}:?[0-9]{2})?)?\Z"
_WHEEL_NAME = r"[\w.]+\Z"  # PEP 427's escaped project name, as packaging reads it
_SHA256 = r"[0-9a-f]{64}\Z"
# A compressed tag set (cp311.cp312-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64)
# stands for the product of its parts; the bundled snapshots' largest is 8.
# A reader expands it, so a hostile one must not stand for millions.
MAX_TAG_SET = 64


class _RepeatedKey(ValueError):
    """A JSON object that gives one key twice: which one counts is the
    decoder's choice, not the file's, so it is refused."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    entry = dict(pairs)
    if len(entry) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return entry


_DECODER = json.JSONDecoder(object_pairs_hook=_object)


def decode_json(line: str, file: str, number: int) -> Any:
    """One line of JSON; anything the decoder refuses (or cannot hold) is a DatabaseError."""
    try:
        return _DECODER.decode(line)
    except _RepeatedKey as exc:
        raise database_error("given twice in one object", file=file, line=number, key=one_line(repr(exc.args[0]), 80)) from None
    except json.JSONDecodeError as exc:
        raise database_error(f"invalid JSON: {exc.msg}", file=file, line=number, column=exc.colno) from None
    except (ValueError, RecursionError):  # a number of thousands of digits, arrays nested thousands deep
        raise database_error("invalid JSON: a number too large or nesting too deep", file=file, line=number) from None


def _header(line: str, file: str, *, full: bool = True) -> dict[str, Any]:
    """The header, checked; `full=False` (the check's path) leaves the
    offsets of the lines to `lazy_releases`, which checks those it uses."""
    header = decode_json(line, file, 1)
    if not isinstance(header, dict):
        raise database_error("the first line must be a JSON object", file=file, line=1)
    _only(header, HEADER_KEYS, file, 1)
    if header.get("schema") != SCHEMA:
        raise database_error(f"unsupported schema {one_line(repr(header.get('schema')), 80)} (expected {SCHEMA})",
                            file=file, line=1, key="schema")
    for key in ("name", "index", "taken"):
        if not isinstance(header.get(key), str) or not header[key]:
            raise database_error("expected a non-empty string", file=file, line=1, key=key)
    if not is_name(header["name"]):
        raise database_error(f"expected a project name, got {header['name'][:80]!r}", file=file, line=1, key="name")
    if full and not re.match(_DATE, header["taken"]):
        raise database_error(f"expected a date such as 2026-12-03, got {one_line(repr(header['taken']), 80)}",
                            file=file, line=1, key="taken")
    if not isinstance(header.get("tracked", False), bool):
        raise database_error("expected true or false", file=file, line=1, key="tracked")
    for key in ("versions", "yanked"):
        if not is_string_list(header.get(key, [])):
            raise database_error("expected a list of version strings", file=file, line=1, key=key)
        if has_long_number("\n".join(header.get(key, []))):  # a check parses them as versions
            raise database_error(f"a version with a number of more than {MAX_DIGITS} digits", file=file, line=1, key=key)
    lines = header.get("lines")
    if lines is not None and full and not (isinstance(lines, list) and all(_is_line_entry(e) for e in lines)):
        raise database_error("expected a list of [version, offset, length, yanked] entries", file=file, line=1, key="lines")
    return header


def _only(entry: dict[str, Any], allowed: tuple[str, ...], file: str, number: int) -> None:
    """Refuse a key the format does not have: a misspelt ``requires-dist``
    would otherwise read as a release without requirements."""
    for key in entry:
        if key not in allowed:
            raise database_error(f"unknown key (one of {', '.join(allowed)})", file=file, line=number,
                                key=one_line(repr(key), 80))


def _is_line_entry(entry: Any) -> bool:
    return (
        isinstance(entry, list)
        and len(entry) == 4
        and isinstance(entry[0], str)
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in entry[1:3])
        and isinstance(entry[3], bool)
    )


def read_header(path: str) -> dict[str, Any]:
    """The header of a snapshot, reading only its first line: what a caller
    needs to know which versions exist without listing the releases."""
    header, _ = _read_first_line(path)
    header.pop("lines", None)
    return header


def header_and_count(path: str) -> tuple[dict[str, Any], int]:
    """The header of a snapshot and the number of release lines it locates,
    reading only its first line (`compat db status`)."""
    header, _ = _read_first_line(path)
    count = len(header.pop("lines", None) or ())
    return header, count


def _read_first_line(path: str, *, full: bool = True) -> tuple[dict[str, Any], int]:
    """The header and the byte offset where the release lines start."""
    try:
        with open_regular(path) as handle:
            first = handle.readline(MAX_SNAPSHOT_BYTES + 1)
    except OSError as exc:
        raise database_error(f"cannot be read: {exc.strerror}", file=path) from None
    if not first.strip():
        raise database_error("empty snapshot", file=path)
    return _header(decode_text(first, path), path, full=full), len(first)


def _raw_lines(path: str) -> list[bytes]:
    """The lines of a JSON Lines file, as bytes: offsets and lengths are
    counted in bytes, and only "\\n" ends a line (a JSON string may hold a
    U+2028 that `str.splitlines` would split at)."""
    try:
        raw = read_bytes(path)
    except OSError as exc:
        raise database_error(f"cannot be read: {exc.strerror}", file=path) from None
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    if not lines or not lines[0].strip():
        raise database_error("empty snapshot", file=path)
    return lines


def _head(line: str) -> tuple[str, bool] | None:
    """(version, yanked) of a release line, in any key order, or None when
    the line is not an object with a version string."""
    try:
        entry = _DECODER.decode(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
        return None
    return entry["version"], entry.get("yanked") is True


# -- release lines -----------------------------------------------------------------

# Most Requires-Dist lines are simple: a name, extras, version bounds, and a
# marker of plain comparisons. This pattern matches only lines packaging
# parses and evaluates (a subset of PEP 508; tests/test_db_readers.py holds
# it to that over every line of the bundled snapshots and generated ones),
# in a tenth of packaging's time; any other line is parsed by packaging.
# Linear: each part starts with a character the one before cannot match.
_NAME = r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*"
_RELEASE = r"[0-9]+(?:\.[0-9]+)*"
_SUFFIX = r"(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?"
_SPEC = (rf"(?:(?:==|!=)(?:{_RELEASE}\.\*|{_RELEASE}{_SUFFIX})"
         rf"|~=[0-9]+(?:\.[0-9]+)+{_SUFFIX}"
         rf"|(?:<=|>=|<|>){_RELEASE}{_SUFFIX})")
_SPECS = rf"{_SPEC}(?: ?, ?{_SPEC})*"
_VAR = ("(?:python_(?:full_)?version|os_name|sys_platform|platform_(?:release|system|version|machine"
        "|python_implementation)|implementation_(?:name|version)|extra)")
_QUOTED = r"""(?:"[^"\\\x00-\x1f\x7f]*"|'[^'\\\x00-\x1f\x7f]*')"""  # no escapes: packaging reads those as Python
_ATOM = rf"{_VAR}(?: ?(?:==|!=|<=|>=|<|>) ?| (?:not )?in ){_QUOTED}"
_TERM = rf"(?:{_ATOM}|\( ?{_ATOM}(?: (?:and|or) {_ATOM})* ?\))"
# Each part written once (re compiles a pattern in Python, and its time grows
# with the pattern's length): the specifiers' parenthesis is a conditional
# group, outside any repetition (a group repeated keeps an earlier turn's
# match), and the marker is a run of terms each followed by "and", "or" or
# the end. Compiled on first use: by lint and sync, which validate every
# line; a check validates only the lines it parses, and never compiles it.
_SIMPLE_REQUIREMENT = (
    rf"{_NAME}(?:\[{_NAME}(?:, ?{_NAME})*\])?(?: ?(\()?{_SPECS}(?(1)\)))?"
    rf"(?: ?; ?(?:{_TERM}(?: (?:and|or) (?!\Z)|\Z))+)?\Z"
)


@functools.cache
def simple_requirement() -> re.Pattern[str]:
    """The pattern of the common Requires-Dist lines (see above), compiled."""
    return re.compile(_SIMPLE_REQUIREMENT)


_VALID_REQUIREMENTS: set[str] = set()  # other lines known to be valid: the same ones recur release after release
_MAX_REMEMBERED = 100_000
def requirement_problem(text: str) -> str | None:
    """Why a Requires-Dist line cannot be used, or None: it must parse
    (PEP 508, as `packaging` reads it), name no number too long to compare
    (`_schema.MAX_DIGITS`), and its marker must be one that evaluates on
    every machine. The snapshot reader, `db lint` and `db sync` all ask it,
    so that sync never stores a line the reader refuses, nor one a check
    cannot evaluate (a check asks `requires.parse_requirement`, line by
    line, of the lines it uses).

    >>> requirement_problem("torch>=2.9; sys_platform == 'linux'") is None
    True
    >>> requirement_problem("torch[")
    'Expected matching RIGHT_BRACKET for LEFT_BRACKET, after extras'
    >>> requirement_problem("numpy; python_version ~= '3'")
    "marker: python_version ~= '3': '~=3' is not a version specifier"
    >>> requirement_problem('numpy; "x" in extras')
    "marker: 'x' in extras: extras is not a variable of package metadata's markers"
    """
    long = long_number(text)
    if long is not None:
        return long
    if simple_requirement().match(text) is not None or text in _VALID_REQUIREMENTS:
        return None
    try:
        parse_requirement(text)
    except ValueError as exc:
        return str(exc)
    if len(_VALID_REQUIREMENTS) >= _MAX_REMEMBERED:
        _VALID_REQUIREMENTS.clear()
    _VALID_REQUIREMENTS.add(text)
    return None


def decode_entry(line: str, file: str, number: int, *, requirements: bool = True,
                 decoded: Any = None) -> dict[str, Any]:
    """One release line, checked: every value a reader will use must be of
    its type and parse, so that no check can fail on it later (a bad value
    is a DatabaseError naming the file, the line and the key).

    Without `requirements`, the Requires-Dist lines are checked to be
    strings only: a check reads a release's lines lazily, and the release
    validates each line it parses (model.Release.requirement), with the
    same error; most lines of a large package are never parsed at all."""
    entry = decode_json(line, file, number) if decoded is None else decoded
    if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
        raise database_error("expected an object with a version string", file=file, line=number)
    _only(entry, RELEASE_KEYS, file, number)

    def error(message: str, key: str) -> DatabaseError:
        return database_error(one_line(message), file=file, line=number, key=key)

    if not isinstance(entry.get("yanked", False), bool):
        raise error("expected true or false", "yanked")
    for key in ("requires_dist", "tags"):
        if not is_string_list(entry.get(key, [])):
            raise error("expected a list of strings", key)
    if entry.get("metadata", UNKNOWN) != UNKNOWN:
        raise error(f"expected {UNKNOWN!r} or no key", "metadata")
    for key in ("requires_python", "uploaded", "file"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise error("expected a string", key)
    requires_python = entry.get("requires_python")
    if requires_python:
        try:
            parse_specifier(requires_python)
        except InvalidSpecifier:
            raise error(f"invalid version specifier {requires_python[:200]!r}", "requires_python") from None
        if long_number(requires_python):
            raise error(f"{requires_python[:200]!r}: {long_number(requires_python)}", "requires_python")
    sdist = entry.get("sdist")
    if sdist is not None and sdist is not False and not (
            isinstance(sdist, str) and sdist_problem(sdist, entry["version"]) is None):
        shown = sdist[:120] if isinstance(sdist, str) else sdist
        raise error(f"expected the file name of the release's sdist (name-version.tar.gz or .zip) or false, "
                    f"got {shown!r}", "sdist")
    if "build_system" in entry:
        problem = build_system_problem(entry["build_system"], requirements=requirements)
        if problem is None and not isinstance(sdist, str):
            problem = "build_system", "a build system recorded for a release without an sdist (its \"sdist\" key)"
        if problem is not None:
            raise error(problem[1], problem[0])
    uploaded = entry.get("uploaded")
    if uploaded and not _is_timestamp(uploaded):
        raise error(f"expected a date such as 2026-10-18 (or an ISO 8601 time), got {uploaded[:80]!r}", "uploaded")
    for index, text in enumerate(entry.get("requires_dist", ()) if requirements else ()):
        problem = requirement_problem(text)
        if problem is not None:
            raise requirement_error(text, problem, file, number, index)
    for index, tag in enumerate(entry.get("tags", ())):
        problem = tag_problem(tag)
        if problem is not None:
            raise error(f"{problem}, got {tag[:80]!r}", f"tags[{index}]")
    wheels = entry.get("wheels", [])
    if not isinstance(wheels, list):
        raise error("expected a list of {file, url, sha256, size} objects", "wheels")
    return entry


def sdist_problem(file: str, version: str) -> str | None:
    """Why `file` is not the name of an sdist of release `version`, or None.

    >>> sdist_problem("cuda_tile-1.6.0rc5.tar.gz", "1.6.0rc5") is None, sdist_problem("x.whl", "1.0")
    (True, 'not an sdist file name')
    """
    from packaging.utils import parse_sdist_filename

    if not file.endswith((".tar.gz", ".zip")) or "/" in file or "\\" in file or not file.isprintable():
        return "not an sdist file name"
    try:
        _, named = parse_sdist_filename(file)
    except ValueError:
        return "not an sdist file name"
    try:
        if named != parse_version(version):
            return f"a file of release {named}"
    except ValueError:
        return "not an sdist file name"
    return None


# What pip assumes of an sdist without a pyproject.toml, or whose pyproject.toml has no [build-system]
LEGACY_BUILD_SYSTEM = {"backend": "setuptools.build_meta:__legacy__", "requires": ["setuptools>=40.8.0"]}
MAX_BUILD_REQUIRES = 100  # the bundled snapshots' longest list has 7
MAX_URL = 1000


def build_system_problem(value: Any, *, requirements: bool = True) -> tuple[str, str] | None:
    """(key, why) when `value` is not a release's ``build_system``, or None.

    It is "unknown" (the sdist was read, its build system could not be), or
    ``{"backend": "pkg.module:object", "requires": [PEP 508 lines]}``, with
    ``index_url`` (the index a wheel_stub backend fetches the wheel from)
    and ``unmet`` (those of ``requires`` that no release on the index met
    when the snapshot was taken) when there are. Without `requirements`,
    the lines of ``requires`` are checked to be strings only: a check
    parses those it uses (model.Release.build_requirement).

    >>> build_system_problem({"backend": "wheel_stub.buildapi", "requires": ["wheel-stub"]}) is None
    True
    >>> build_system_problem({"backend": "python setup.py", "requires": []})
    ('build_system.backend', "expected a PEP 517 backend such as 'setuptools.build_meta', got 'python setup.py'")
    """
    if value == UNKNOWN:
        return None
    if not isinstance(value, dict):
        return "build_system", f'expected {{"backend": ..., "requires": [...]}} or {UNKNOWN!r}'
    for key in value:
        if key not in BUILD_SYSTEM_KEYS:
            return f"build_system.{one_line(key, 80)}", f"unknown key (one of {', '.join(BUILD_SYSTEM_KEYS)})"
    backend = value.get("backend")
    if not isinstance(backend, str) or not _is_backend(backend):
        shown = one_line(repr(backend), 120) if isinstance(backend, str) else type(backend).__name__
        return "build_system.backend", f"expected a PEP 517 backend such as 'setuptools.build_meta', got {shown}"
    requires = value.get("requires")
    if not is_string_list(requires) or len(requires) > MAX_BUILD_REQUIRES:
        return "build_system.requires", f"expected a list of at most {MAX_BUILD_REQUIRES} requirement strings"
    for index, text in enumerate(requires if requirements else ()):
        problem = requirement_problem(text)
        if problem is not None:
            return f"build_system.requires[{index}]", f"invalid requirement {text[:200]!r}: {problem}"
    url = value.get("index_url")
    if url is not None and not (isinstance(url, str) and url.startswith(("https://", "http://"))
                                and url.isprintable() and len(url) <= MAX_URL):
        return "build_system.index_url", "expected an https:// (or http://) URL"
    unmet = value.get("unmet")
    if unmet is not None and not (is_string_list(unmet) and unmet and all(text in requires for text in unmet)):
        return "build_system.unmet", "expected a list of lines of its requires"
    return None


def _is_backend(text: str) -> bool:
    """Whether `text` names a PEP 517 backend: ``module.path`` or ``module.path:object.path``."""
    parts = text.split(":")
    return len(text) <= 200 and len(parts) <= 2 and all(
        all(word.isidentifier() and word.isascii() for word in part.split(".")) for part in parts)


def fetches_wheel(build_system: Any) -> bool:
    """Whether the build system is wheel-stub's: "building" the sdist
    downloads the real wheel from another index (its ``index_url``)."""
    return isinstance(build_system, dict) and build_system.get("backend", "").split(":")[0].split(".")[0] == "wheel_stub"


_LINUX_MACHINES = ("x86_64", "aarch64")


def lacks_linux_wheel(tags: Any) -> bool:
    """Whether a release's wheels (their tags) leave Linux on x86-64 or on
    aarch64 without a wheel: a pure-Python one, or a manylinux one of that
    machine. There an installer builds the sdist, whatever the Python; the
    snapshots record how (``build_system``) for these releases only, which
    keeps what `db sync` downloads small."""
    machines = set()
    for tag in tags:
        for platform in tag.split("-")[-1].split("."):
            if platform == "any":
                return False
            for machine in _LINUX_MACHINES:
                if platform.endswith("_" + machine) and platform.startswith(("manylinux", "linux_")):
                    machines.add(machine)
    return len(machines) < len(_LINUX_MACHINES)


def _is_timestamp(text: str) -> bool:
    digits = text[:4] + text[5:7] + text[8:]
    if len(text) == 10 and text[4] == text[7] == "-" and digits.isascii() and digits.isdigit():
        date = text
    else:
        match = re.match(_UPLOADED, text)
        if match is None:
            return False
        date = match.group(1)
    try:
        _dt.date.fromisoformat(date)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=4096)  # a few hundred distinct tags recur across 90,000 wheels
def tag_problem(tag: str) -> str | None:
    """Why `tag` is not a wheel tag a reader can expand, or None.

    >>> tag_problem("cp311.cp312-abi3-manylinux_2_17_x86_64") is None
    True
    >>> tag_problem("cp312-cp312")
    "expected a wheel tag such as 'cp312-cp312-manylinux_2_28_x86_64'"
    """
    parts = tag.split("-")
    if len(parts) != 3 or not dotted_identifiers(parts[0]) or not all(dotted_words(p) for p in parts[1:]):
        return "expected a wheel tag such as 'cp312-cp312-manylinux_2_28_x86_64'"
    if math.prod(part.count(".") + 1 for part in parts) > MAX_TAG_SET:
        return f"a compressed tag set of more than {MAX_TAG_SET} tags"
    return None


def _wheel_file(file: str) -> tuple[str, Version] | str:
    """(normalized project name, version) of a wheel's file name, or why it
    is not one: the rules of `packaging.utils.parse_wheel_filename` (which a
    lock file calls), without building its tag sets, which would cost lint
    a second on the 90,000 records of the bundled database."""
    stem = file[: -len(".whl")]
    dashes = stem.count("-")
    if not file.endswith(".whl") or dashes not in (4, 5):
        return "not a wheel's file name (name-version[-build]-python-abi-platform.whl)"
    parts = stem.split("-", dashes - 2)
    named = _wheel_release(parts[0], parts[1])
    if isinstance(named, str):
        return named
    if dashes == 5 and not (parts[2][:1].isascii() and parts[2][:1].isdigit() and "\n" not in parts[2]):
        return "not a wheel's file name (its build tag)"
    problem = tag_problem(parts[-1])
    if problem is not None:
        return f"not a wheel's file name (its tags: {problem})"
    return named


@functools.lru_cache(maxsize=1024)  # every wheel of a release has the same two
def _wheel_release(name: str, version: str) -> tuple[str, Version] | str:
    if "__" in name or not re.match(_WHEEL_NAME, name):
        return "not a wheel's file name (its project name)"
    try:
        return normalize(name), Version(version)
    except ValueError:  # InvalidVersion, or a number too long to convert
        return "not a wheel's file name (its version)"


def wheel_problem(record: Any, project: str, version: Version | None) -> tuple[str, str] | None:
    """(key, why) when a wheel record cannot go into a lock file: a wheel
    file name of this release, an http(s) URL, a SHA-256 and a size."""
    if not isinstance(record, dict):
        return "", "expected an object {file, url, sha256, size}"
    for key in record:
        if key not in WHEEL_KEYS:
            return one_line(repr(key), 80), f"unknown key (one of {', '.join(WHEEL_KEYS)})"
    file = record.get("file")
    if not isinstance(file, str):
        return "file", "expected a wheel's file name"
    parsed = _wheel_file(file)
    if isinstance(parsed, str):
        return "file", one_line(f"{parsed}: {file[:200]!r}")
    name, found = parsed
    if name != project or (version is not None and found != version):
        return "file", one_line(f"{file[:200]!r} is a wheel of {name} {found}, not of {project} {version}")
    url = record.get("url")
    if not isinstance(url, str) or not url.startswith(("https://", "http://")) or not url.isprintable():
        return "url", "expected an https:// (or http://) URL"
    if not isinstance(record.get("sha256"), str) or not re.match(_SHA256, record["sha256"]):
        return "sha256", "expected 64 lower-case hexadecimal digits"
    size = record.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return "size", "expected a size in bytes (an integer, 0 or more)"
    return None


def _check_wheels(records: Any, project: str, version: Version, file: str, number: int) -> None:
    for index, record in enumerate(records):
        problem = wheel_problem(record, project, version)
        if problem is not None:
            key, why = problem
            raise database_error(why, file=file, line=number, key=f"wheels[{index}]{'.' + key if key else ''}")


# -- reading a whole snapshot (lint, sync) ------------------------------------------


def read_snapshot(path: str) -> Snapshot:
    """Read and check a whole snapshot and its wheel records (sync); the
    first problem is raised. A check uses `lazy_releases`, lint
    `snapshot_problems`."""
    problems: list[DatabaseError] = []
    snapshot = _read_snapshot(path, problems)
    if problems:
        raise problems[0]
    assert snapshot is not None
    return snapshot


def _check_wheel_tags(releases: list[SnapshotRelease], wheels: dict[str, list[dict[str, Any]]],
                      entries: dict[Version, int], path: str, problems: list[DatabaseError]) -> None:
    """Each wheel a release's records name has tags its line records (a
    check judges the line's tags, a lock writes the records): a record of
    another wheel is a problem at the release's line. Fewer records than
    tags is no problem: db sync keeps no record of a yanked release's
    wheels, nor of one whose URL or digest it refused."""
    numbers = {str(v): n for v, n in entries.items()}
    for release in releases:
        records = wheels.get(release.version)
        if not records or release.tags is None:
            continue
        named = {"-".join(str(r.get("file", ""))[: -len(".whl")].split("-")[-3:]) for r in records}
        stray = sorted(named - set(release.tags))
        if stray:
            problems.append(database_error(
                f"the wheel records of {release.version} in {os.path.basename(wheels_path(path))} name wheels "
                f"whose tags the release does not record ({', '.join(stray[:3])}): compat db sync writes both",
                file=path, line=numbers.get(release.version), key="tags"))


def snapshot_problems(path: str) -> list[DatabaseError]:
    """Every problem of a snapshot and its wheel records, each naming its
    line and key: one bad line does not hide the next (``compat db lint``)."""
    problems: list[DatabaseError] = []
    try:
        _read_snapshot(path, problems, lint=True)
    except DatabaseError as exc:  # the file itself could not be read
        problems.append(exc)
    return problems


def _read_snapshot(path: str, problems: list[DatabaseError], *, lint: bool = False) -> Snapshot | None:
    lines = _raw_lines(path)
    header = None
    try:
        header = _header(decode_text(lines[0], path), path)
    except DatabaseError as exc:
        problems.append(exc)
    project = normalize(header["name"]) if header is not None else None
    heads: list[list[Any]] = []
    releases: list[SnapshotRelease] = []
    entries: dict[Version, int] = {}
    offset, bad = 0, len(problems)
    for number, raw in enumerate(lines[1:], start=2):
        try:
            line = decode_text(raw, path, number)
            entry = decode_entry(line, path, number)
            version = _release_version(entry["version"], path, number, entries)
            if project is not None:
                _check_wheels(entry.get("wheels", ()), project, version, path, number)
        except DatabaseError as exc:
            problems.append(exc)
        else:
            heads.append([entry["version"], offset, len(raw), entry.get("yanked", False)])
            releases.append(_release(entry))
            entries[version] = number
        offset += len(raw) + 1
    lines_read = len(problems) == bad
    if header is not None and "lines" in header and lines_read and header["lines"] != heads:
        problems.append(database_error(
            "the header's line offsets do not match the release lines (was the file edited by hand? "
            "remove the header's \"lines\" key or run compat db sync)", file=path, line=1, key="lines"))
    # which releases the wheels may be of is known when every release line read
    wheels = _read_wheels(path, project, problems, set(entries) if lines_read else None)
    if lint:  # a reader takes the records as they are (a lock names them); lint says where they disagree
        _check_wheel_tags(releases, wheels, entries, path, problems)
    if header is None:
        return None
    return Snapshot(
        name=header["name"],
        index=header["index"],
        taken=header["taken"],
        releases=[r._replace(wheels=tuple(wheels.get(r.version, r.wheels))) for r in releases],
        tracked=header.get("tracked"),
        versions=tuple(header["versions"]) if "versions" in header else None,
        yanked=tuple(header["yanked"]) if "yanked" in header else None,
    )


def _release(entry: dict[str, Any]) -> SnapshotRelease:
    return SnapshotRelease(
        version=entry["version"],
        uploaded=entry.get("uploaded"),
        requires_python=entry.get("requires_python"),
        requires_dist=entry.get("requires_dist", []),
        yanked=entry.get("yanked", False),
        file=entry.get("file"),
        wheels=tuple(entry.get("wheels", ())),
        tags=tuple(entry["tags"]) if "tags" in entry else None,
        metadata=entry.get("metadata"),
        sdist=entry.get("sdist"),
        build_system=entry.get("build_system"),
    )


def _release_version(text: str, path: str, number: int, seen: dict[Version, int]) -> Version:
    """The version of a release line, parsed, and not one an earlier line
    holds: a second line for a release would silently replace the first."""
    try:
        version = parse_version(text)
    except ValueError:  # InvalidVersion, or a number too long to convert
        raise database_error(f"invalid version {one_line(repr(text), 80)}", file=path, line=number, key="version") from None
    if version in seen:
        raise database_error(f"release {version} is listed twice (lines {seen[version]} and {number})",
                            file=path, line=number, key="version")
    return version


def line_offsets(lines: list[str]) -> list[list[Any]]:
    """The header's ``lines``: [version, offset, length, yanked] of each release line."""
    out: list[list[Any]] = []
    offset = 0
    for line in lines:
        head = _head(line)
        assert head is not None, line
        size = len(line.encode("utf-8"))
        out.append([head[0], offset, size, head[1]])
        offset += size + 1
    return out


WHEELS = ".wheels.jsonl"


def snapshot_names(files: Iterable[str]) -> list[str]:
    """The packages whose snapshots are among the file names `files`, in their
    order (``vllm.jsonl``, not its wheel records ``vllm.wheels.jsonl``).

    >>> snapshot_names(["vllm.jsonl", "vllm.wheels.jsonl", "_graph.json", "last-sync.json"])
    ['vllm']
    """
    return [f[: -len(".jsonl")] for f in files if f.endswith(".jsonl") and not f.endswith(WHEELS)]


def wheels_path(path: str) -> str:
    """Where the wheel records of snapshot `path` live: kept apart, because
    only lock files need them and a check should not read them."""
    return path[: -len(".jsonl")] + WHEELS


def write_snapshot(snapshot: Snapshot, path: str) -> bool:
    """Write the snapshot and its wheel records, each atomically and only
    when it changed. Returns whether anything changed."""
    main, wheels = render_snapshot(snapshot)
    changed = False
    for target, text in ((path, main), (wheels_path(path), wheels)):
        try:
            with open(target, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except (OSError, UnicodeDecodeError):
            pass
        write_atomic(target, text)
        changed = True
    return changed


def render_snapshot(snapshot: Snapshot) -> tuple[str, str]:
    """JSON Lines: a header, then one release a line, oldest first; and the
    same for the releases' wheels.

    Each line starts with the version (and the yanked mark), so that a
    reader can list the releases without decoding them. The wheels file's
    header names the package only: the versions are the snapshot's to list.
    """
    data = snapshot.to_dict()
    releases = data.pop("releases")
    lines = []
    wheel_lines = [json.dumps({k: data[k] for k in ("schema", "name", "index", "taken")}, ensure_ascii=False)]
    for entry in releases:
        wheels = entry.pop("wheels", [])
        lines.append(json.dumps(entry, ensure_ascii=False))
        wheel_lines.append(json.dumps({"version": entry["version"], "wheels": wheels}, ensure_ascii=False))
    data["lines"] = line_offsets(lines)
    return "\n".join([json.dumps(data, ensure_ascii=False), *lines]) + "\n", "\n".join(wheel_lines) + "\n"


def read_wheels(path: str) -> dict[str, list[dict[str, Any]]]:
    """version -> wheel records, from the wheels file of snapshot `path`
    (empty if there is none); a malformed line or record is a DatabaseError
    naming its line and key, raised before a lock file is written."""
    problems: list[DatabaseError] = []
    wheels = _read_wheels(path, None, problems, None)
    if problems:
        raise problems[0]
    return wheels


def _read_wheels(path: str, project: str | None, problems: list[DatabaseError],
                 versions: set[Version] | None) -> dict[str, list[dict[str, Any]]]:
    """Read the wheels file of snapshot `path`, adding its problems to
    `problems`. `project` (else the file's own header) names the package
    the wheels must be of; `versions`, when given, the releases the
    snapshot holds (a record of another release is a problem)."""
    target = wheels_path(path)
    if not os.path.exists(target):
        return {}
    try:
        lines = _raw_lines(target)
        header = _header(decode_text(lines[0], target), target)
    except DatabaseError as exc:
        problems.append(exc)
        return {}
    name = normalize(header["name"])
    if project is not None and name != project:
        problems.append(database_error(f"names {header['name']!r}, but the snapshot is of {project!r}",
                                      file=target, line=1, key="name"))
    project = project or name
    out: dict[str, list[dict[str, Any]]] = {}
    seen: dict[Version, int] = {}
    for number, raw in enumerate(lines[1:], start=2):
        try:
            entry = decode_entry(decode_text(raw, target, number), target, number)
            version = _release_version(entry["version"], target, number, seen)
            seen[version] = number
            _check_wheels(entry.get("wheels", ()), project, version, target, number)
            if versions is not None and version not in versions:
                raise database_error(f"release {version} is not in the snapshot", file=target, line=number, key="version")
        except DatabaseError as exc:
            problems.append(exc)
            continue
        out[entry["version"]] = entry.get("wheels", [])
    return out


# -- what a check reads --------------------------------------------------------------


def lazy_releases(path: str) -> tuple[dict[str, Any], list[Release]]:
    """The header and the releases of a snapshot, each decoded on first use.

    With the header's ``lines``, only the header is read now; a release's
    line is read (one seek) when its requirements are first needed. Two
    lines of one release are a DatabaseError, never one silently replacing
    the other.
    """
    header, table = release_table(path)
    wheels = wheel_records(path)
    out = []
    seen: dict[Version, int] = {}
    for text, entry in table.items():
        number, yanked, _ = entry
        version = _release_version(text, path, number, seen)
        seen[version] = number
        out.append(snapshot_release(header["name"], path, text, version, yanked, line_reader(path, text, entry), wheels,
                                    number))
    return header, out


def release_table(path: str) -> tuple[dict[str, Any], dict[str, tuple[int, bool, Any]]]:
    """The header (less its ``lines``) and, in file order, each release
    line's version as written -> (its line number, its yanked mark, where
    it is): an (offset, length) pair from the header's ``lines``, read when
    `line_reader` is called, or, for a header without them, the line read
    now. A version written twice (as written) is a DatabaseError now;
    lazy_releases and database.Releases refuse two spellings of one."""
    header, start = _read_first_line(path, full=False)
    stated = header.pop("lines", None)
    if stated is None:
        entries = _decoded_lines(path)
        table = {text: (number, yanked, raw) for number, (text, yanked, raw) in enumerate(entries, start=2)}
        texts: list[Any] = [text for text, _, _ in entries]
    else:
        try:
            table = {version: (number, yanked is True, (start + offset, length))
                     for number, (version, offset, length, yanked) in enumerate(stated, start=2)}
            if not all(type(version) is str for version in table):  # each version a dict key, as written
                raise TypeError
        except (TypeError, ValueError):  # not a list of lists of four; an offset that is no number
            raise database_error(
                "expected a list of [version, offset, length, yanked] entries", file=path, line=1, key="lines"
            ) from None
        texts = [entry[0] for entry in stated]
    if len(table) < len(texts):  # one version written twice: refuse the second line
        seen: dict[Version, int] = {}
        for number, text in enumerate(texts, start=2):
            seen[_release_version(text, path, number, seen)] = number
    return header, table


def _decoded_lines(path: str) -> list[tuple[str, bool, Callable[[], dict[str, Any]]]]:
    """A snapshot without the header's ``lines``: each line read now, as (version, yanked, its decoder)."""
    entries = []
    for number, raw in enumerate(_raw_lines(path)[1:], start=2):
        line = decode_text(raw, path, number)
        head = _head(line)
        if head is None:
            decode_entry(line, path, number)  # raises what is wrong with it
            raise database_error("expected a JSON object with a version string", file=path, line=number)
        entries.append((head[0], head[1], functools.partial(decode_entry, line, path, number, requirements=False)))
    return entries


def line_reader(path: str, text: str, entry: tuple[int, bool, Any]) -> Callable[[], dict[str, Any]]:
    """The reader of the release line `release_table` gives `entry` (of version `text`)."""
    number, yanked, where = entry
    if type(where) is tuple:  # (offset, length): one seek, when first read
        return functools.partial(_read_line, path, where[0], where[1], text, yanked, number)
    return where  # type: ignore[no-any-return]


def wheel_records(path: str) -> Callable[[], dict[str, list[dict[str, Any]]]]:
    """The wheel records of snapshot `path` (`read_wheels`), read once, on first use."""
    return functools.lru_cache(maxsize=1)(functools.partial(read_wheels, path))


def snapshot_release(name: str, path: str, text: str, version: Version, yanked: bool,
                     raw: Callable[[], dict[str, Any]], wheels: Callable[[], dict[str, list[dict[str, Any]]]],
                     number: int | None = None) -> Release:
    """The release of one line of snapshot `path` (see `release_table`), its line decoded on first use."""
    status = "yanked" if yanked else ("pre-release" if version.is_prerelease else "release")
    return Release(
        package=name,
        version=version,
        status=status,
        layer="metadata",
        file=path,
        raw=raw,
        wheels=functools.partial(lambda v, load: load().get(v, []), text, wheels),
        line=number,
    )


def _read_line(path: str, offset: Any, length: Any, version: str, yanked: bool, number: int) -> dict[str, Any]:
    """A release line of a snapshot, read and decoded: one seek. (Bound to
    its place by functools.partial, one per release: a check lists
    thousands and reads a few dozen, so nothing is checked before it is read.)"""
    if type(offset) is not int or type(length) is not int or offset < 0 or length < 0:
        raise database_error("expected a list of [version, offset, length, yanked] entries", file=path, line=1,
                            key="lines")
    try:
        with open_regular(path) as handle:
            handle.seek(offset)
            # and the byte after it: the line must end there (a length past
            # the file's bound is read as far as the bound: it then does not end)
            data = handle.read(min(length, MAX_SNAPSHOT_BYTES) + 1)
    except (OSError, ValueError, OverflowError) as exc:
        raise database_error(f"cannot be read: {getattr(exc, 'strerror', None) or exc}", file=path) from None
    ends = len(data) <= length or data[-1:] == b"\n"
    data = data[:length]
    line = data.decode("utf-8", errors="replace")
    try:  # the line decoded once: its version and yanked mark, then the rest of it checked
        entry = _DECODER.decode(line)
    except (ValueError, RecursionError):
        entry = None
    head = (entry["version"], entry.get("yanked") is True) \
        if isinstance(entry, dict) and isinstance(entry.get("version"), str) else None
    # A line that starts as its release's should but does not decode is
    # reported as itself (invalid JSON at its line), not as a stale offset.
    malformed = head is None and line.startswith(f'{{"version": "{version}"')
    if not ends or (head != (version, yanked) and not malformed):
        raise database_error(
            f"the header's offset of {one_line(version, 80)} does not point at its line (run compat db lint)",
            file=path,
            line=1,
            key="lines",
        )
    return decode_entry(decode_text(data, path, number), path, number, requirements=False, decoded=entry)
