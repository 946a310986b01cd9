"""The stack file (stack.toml, version 1): one deployment, its machine and its software.

`read_stack` reads a file or a mapping into a `RawStack`: every value
checked and converted (versions, specifiers, the compute capability, the
flags' values), the names it gives (the GPU, the packages, the model, the
flags, the PyTorch index) as written. Every problem is a `StackError` that
names the file and the key (and the line, where the TOML parser or a scan
of the text can tell); `RawStack.error` makes the same for a value found
wrong later. knowledge/binding.py binds the names to the catalogs
(`compat.load_stack` does both).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Mapping
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from .._record import Record
from .. import _toml
from .._text import dotted_numbers
from .._names import did_you_mean, is_name, nearest, normalize
from .._versions import admits_some
from ..errors import StackError, one_line
from ..stack import ACCELERATORS, Model, Place, System, parse_compute_capability

__all__ = ["RawStack", "RawHardware", "RawPackage", "NotAVersion", "read_stack", "reads_stack", "read_tables",
           "check_ignore", "is_cpython", "kind", "MACHINE_KEYS"]

SCHEMA = 1
# What [system] index takes (an error then says what it got).
INDEX_EXPECTED = "expected \"pypi\" or a PyTorch index variant such as \"cu128\", \"cu130\", \"rocm6.4\" or \"cpu\", got "

_TABLES = {
    "stack": ("name", "description", "schema"),
    "system": ("python", "platform", "cuda", "rocm", "driver", "glibc", "index"),
    "hardware": ("gpu", "compute_capability", "count", "accelerator"),
    "packages": None,  # package names
    "options": None,  # package names, then option names
    "model": ("name", "repo", "family", "head_dim", "checkpoint_dtype", "moe", "hybrid", "multimodal"),
    "env": None,  # variable names
    "compat": ("ignore", "strict", "require_known", "overlay", "only_binary"),
}
_PACKAGE_KEYS = ("version", "extras", "external")
# The keys of the machine, by the name [packages] would read them as: one of them there is a misplaced key.
MACHINE_KEYS = {normalize(key): table for table in ("system", "hardware") for key in _TABLES[table] or ()}
# Versions are ASCII digits and dots only (_text.dotted_numbers: a bare \d
# also takes "３" and "٣", which no version parser reads).
_BARE_KEY = r"(?a)[A-Za-z0-9_-]+"
# A TOML integer or decimal float as a line writes it (3.10, 1_000, 6e2).
_NUMBER = r"(?a)(?<![\w.])[+-]?\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d[\d_]*)?(?![\w.])"

# Bounds on a stack (docs/reliability.md, "Readers"): the reader refuses,
# with exit 2, any input past them, so that it never starts work it cannot
# finish. The file itself is bounded by `_toml.MAX_BYTES` (4 MiB).
MAX_PACKAGES = 1000  # entries of [packages]
MAX_VALUES = 20_000  # keys and values in the whole stack, at any depth
MAX_DEPTH = 8  # tables and arrays inside one another
MAX_KEY = 256  # characters of a key
MAX_STRING = 4096  # characters of a string value
MAX_VERSION = 256  # characters of a version or specifier string
MAX_INT = 2**63  # TOML integers are 64-bit
MAX_PYTHON_MINOR = 99  # 3.x: a check walks every minor up to x for the wheel tags it accepts


def is_cpython(version: Version) -> bool:
    """Whether `version` is one a stack may give as its Python: CPython 3.x or 3.x.y.

    >>> is_cpython(Version("3.12")), is_cpython(Version("3")), is_cpython(Version("3.12rc1"))
    (True, False, False)
    """
    parts = dotted_numbers(str(version))  # 3.12 or 3.12.1: no pre-release, post, dev or local part
    return parts is not None and len(parts) in (2, 3) and version.major == 3 and version.minor <= MAX_PYTHON_MINOR


class _Reader:
    """Reads the parsed TOML, raising StackError with file, key and line."""

    def __init__(self, file: str, text: str | None, places: Mapping[tuple[str, str], Place] | None = None) -> None:
        self.file = file
        self.text = text
        self.places = places or {}  # (table, key) -> the input that gave that value, for a merged stack

    def error(self, message: str, table: tuple[str, ...], key: str | None = None) -> StackError:
        shown_table = tuple(_show_key(t) for t in table)
        shown_key = _show_key(key) if key is not None else None
        dotted = ".".join((*shown_table, shown_key) if shown_key else shown_table) or None
        shown = None
        if dotted:
            shown = f"[{'.'.join(shown_table)}] {shown_key}" if (table and key is not None) else (
                f"[{dotted}]" if table else dotted)
        line = None
        place = self.places.get((table[0], key)) if len(table) == 1 and isinstance(key, str) else None
        if place is not None:
            return StackError(one_line(message), file=place.file, key=shown, line=place.line)
        if all(isinstance(t, str) for t in table) and (key is None or isinstance(key, str)):
            line = _toml.locate(self.text, table, key)
        return StackError(one_line(message), file=self.file, key=shown, line=line)

    def table(self, data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, Mapping):
            raise self.error(f"expected a table [{name}], got {kind(value)}", (), name)
        return value

    def written(self, value: int | float, table: tuple[str, ...], key: str) -> str:
        """The number `value` at `key` as the stack wrote it (``3.10``,
        which TOML reads as 3.1), from the text of its line; else as Python
        shows it. An error that says to quote a number quotes this."""
        number = _toml.locate(self.text, table, key) if self.text is not None else None
        if number is not None and self.text is not None:
            line = self.text.splitlines()[number - 1][: _toml.MAX_LINE]
            for token in re.findall(_NUMBER, line.split("=", 1)[-1].split("#", 1)[0]):
                try:
                    if float(token.replace("_", "")) == value:
                        return token
                except ValueError:  # past the float range: not the number read
                    continue
        return repr(value)

    def number_error(self, value: int | float, table: tuple[str, ...], key: str, what: str = "a version",
                     name: str | None = None) -> StackError:
        """`value` is a number where a string belongs: say what TOML read, and
        the line to write instead (`name`: its key there, default `key`)."""
        written = self.written(value, table, key)
        read_as = "as a number" if written == repr(value) else f"as the number {value!r}"
        return self.error(f"{what} must be a string: TOML reads {written} {read_as}; quote it: "
                          f"{_show_key(name or key)} = \"{written}\"", table, key)

    def version(self, value: Any, table: tuple[str, ...], key: str, example: str) -> Version:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise self.number_error(value, table, key)
        if not isinstance(value, str) or len(value) > MAX_VERSION or dotted_numbers(value.strip()) is None:
            raise self.error(f"expected a version string such as \"{example}\", got {kind(value)}", table, key)
        try:
            return Version(value.strip())
        except ValueError:
            raise self.error(f"expected a version string such as \"{example}\", got {kind(value)}", table, key) from None


def _show_key(key: Any) -> str:
    """A key as an error shows it: bare when TOML would write it bare, else quoted."""
    if isinstance(key, str) and len(key) <= 80 and re.fullmatch(_BARE_KEY, key):
        return key
    shown = repr(key) if not isinstance(key, str) else one_line(repr(key), 80)
    return shown if isinstance(key, str) else f"{shown} ({type(key).__name__})"


def kind(value: Any) -> str:
    """What `value` is, as an error says it got it (``the string 'x'``, ``an array``)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int) and abs(value) >= MAX_INT:
        return "an integer too large"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {one_line(repr(value), 120)}"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


class RawHardware(Record):
    """[hardware] as read: the GPU's name as written, the rest checked."""

    gpu: str | None = None  # the name as written (knowledge binds it to the GPU catalog)
    compute_capability: Version | None = None
    compute_capability_written: str | None = None  # as written ("sm_90"), which an error quotes
    count: int = 1
    accelerator: str | None = None  # one of ACCELERATORS; None: not given (binding infers it)


class RawPackage(Record):
    """One entry of [packages] as read: its key as written, its version checked."""

    key: str  # as written (knowledge reads it as a tracked name: `Flash_Infer.Python` is flashinfer-python)
    specifier: SpecifierSet
    build: str | None
    extras: frozenset[str]
    external: bool
    written: str  # the version or specifier string


class RawStack(Record):
    """A stack as read, before its names are bound to the catalogs.

    Every value is checked and converted, except the names only the
    database can tell: [system] platform (a name of the platform table, and
    whether glibc is for it), [hardware] gpu, the [packages] keys, the
    [options] tables and flags, [model] name and repo, [system] index
    (``pypi`` or a PyTorch index label), and the [compat] overlay the others
    are bound with. `error` makes a `StackError` for a value found wrong
    later, with its file, key and line (the input that gave it, for a merged
    stack).
    """

    system: System  # index as written
    hardware: RawHardware
    packages: tuple[RawPackage, ...]
    options: dict[str, dict[str, Any]]  # [options.<key as written>]: flag as written -> value
    model: Model
    env: dict[str, str]
    ignore: tuple[str, ...]
    strict: bool
    require_known: bool
    only_binary: bool
    name: str | None
    description: str | None
    path: str | None
    text: str | None
    overlay: str | None  # the folder, resolved
    reader: _Reader

    def error(self, message: str, table: tuple[str, ...], key: str | None = None) -> StackError:
        """The error for the value at `key` of `table`, naming its file, key and line."""
        return self.reader.error(message, table, key)


class NotAVersion(StackError):
    """[system] cuda or rocm given as a word where a version belongs.

    Its message says the value is no version; `words` holds each of the
    two keys given as a word, for knowledge to tell a PyTorch index label
    (``cu128``, which belongs in [system] index) from any other word, and
    `at` makes the error for one of them."""

    def __init__(self, error: StackError, words: dict[str, str], reader: _Reader) -> None:
        super().__init__(error.message, file=error.file, key=error.key, line=error.line)
        self.words = words
        self._reader = reader

    def at(self, key: str, message: str) -> StackError:
        """The error `message` for [system] `key`, naming its file, key and line."""
        return self._reader.error(message, ("system",), key)


def read_stack(source: str | os.PathLike[str] | Mapping[str, Any]) -> RawStack:
    """Read a stack from a stack.toml path (``-`` for standard input) or
    from an already-parsed mapping."""
    if isinstance(source, Mapping):
        return _read(source, _Reader("<stack>", None), None)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"a stack is a path (str or os.PathLike) or a mapping, not {type(source).__name__}")
    path = os.fspath(source)
    if not isinstance(path, str):
        raise TypeError(f"a stack path must be a str, not {type(path).__name__}")
    data, text = _toml.load(path, error=StackError)
    return _read(data, _Reader("<stdin>" if path in ("-", "/dev/stdin") else path, text), path)


STRING = "<string>"  # the file an error names for a stack given as text


def reads_stack(text: str) -> RawStack:
    """Read a stack from the text of a stack.toml, as `read_stack` reads a
    file: an error names ``<string>`` as its file, with the key and line.

    >>> reads_stack('[system]\\npython = "3.12"\\n').system.python
    <Version('3.12')>
    """
    if not isinstance(text, str):
        raise TypeError(f"stack text must be a str, not {type(text).__name__}")
    if len(text) > _toml.MAX_BYTES:
        raise StackError(f"larger than {_toml.MAX_BYTES // (1024 * 1024)} MiB, the limit for a stack", file=STRING)
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as a file is read: lines agree
    data = _toml.loads(text, file=STRING, error=StackError)
    return _read(data, _Reader(STRING, text), None)


def read_tables(data: Mapping[str, Any], *, file: str, text: str | None = None, path: str | None = None,
                places: Mapping[tuple[str, str], Place] | None = None) -> RawStack:
    """A stack from tables that several inputs were merged into (knowledge/inputs.py),
    read as a stack file is: an error about a value that another input
    gave names that input's file and line (`places`: (table, key) -> Place);
    any other names `file` and the line of `text`, the stack file's."""
    return _read(data, _Reader(file, text, places), path)


_SCALARS = (str, bool, int, float, _dt.date, _dt.time)  # datetime is a date


def _shape(data: Mapping[str, Any], read: _Reader) -> None:
    """Check, before anything reads it, that `data` is a TOML document of
    bounded size: string keys, TOML values, and the limits above. One pass,
    without recursion (a mapping may be nested thousands deep)."""
    count = 0
    stack: list[tuple[tuple[str, ...], Any, int]] = [((), data, 0)]
    while stack:
        path, node, depth = stack.pop()
        if isinstance(node, Mapping):
            items = list(node.items())
        else:
            items = [(f"[{i}]", v) for i, v in enumerate(node)]
        count += len(items)
        if count > MAX_VALUES:
            raise read.error(f"more than {MAX_VALUES:,} keys and values: a stack is limited to that many", path[:1])
        for key, value in items:
            where = (path[:-1], path[-1]) if path else ((), None)
            if not isinstance(key, str):
                raise read.error(f"a key must be a string, not {type(key).__name__}", path, key)
            if len(key) > MAX_KEY:
                raise read.error(f"a key of {len(key):,} characters: keys are limited to {MAX_KEY}", path, key[:40] + "…")
            table, name = (path, key) if isinstance(node, Mapping) else where
            if isinstance(value, str):
                if len(value) > MAX_STRING:
                    raise read.error(f"a string of {len(value):,} characters: strings are limited to {MAX_STRING:,}",
                                     table, name)
            elif isinstance(value, int) and not isinstance(value, bool):
                if abs(value) >= MAX_INT:
                    raise read.error("an integer out of range (TOML integers are 64-bit)", table, name)
            elif isinstance(value, (Mapping, list, tuple)):
                if depth + 1 >= MAX_DEPTH:
                    raise read.error(f"nested more than {MAX_DEPTH} deep", table, name)
                stack.append(((*path, key) if isinstance(node, Mapping) else path, value, depth + 1))
            elif not isinstance(value, _SCALARS):
                raise read.error(f"expected a TOML value (string, number, boolean, date, array, table), "
                                 f"got {type(value).__name__}", table, name)


# Finding IDs of unrelated kinds and subjects: a pattern that matches two of
# them ("*", "*:*", "[a-z]*") would hide findings nobody meant to name.
_UNRELATED_IDS = ("requires-python:aaa==1", "gap:bbb", "untracked:ccc", "arch:ddd==2", "zzz.rule-id")


def _too_broad(pattern: str) -> bool:
    import fnmatch

    return sum(fnmatch.fnmatchcase(i, pattern) for i in _UNRELATED_IDS) >= 2


def check_ignore(patterns: Any, read: _Reader | None = None, *, file: str | None = None) -> tuple[str, ...]:
    """Finding ID patterns, as `[compat] ignore`, `--ignore` and
    `compat.check(ignore=...)` give them: a string is one ID. A pattern of
    wildcards alone (``*``, ``*:*``, ``[a-z]*``) would suppress findings of
    every kind, so one that matches findings of unrelated kinds is refused,
    as is one that is not a string."""
    if isinstance(patterns, str):
        patterns = (patterns,)
    if not isinstance(patterns, (list, tuple)) or not all(isinstance(p, str) for p in patterns):
        message = "expected a list of finding IDs (strings)"
        raise read.error(message, ("compat",), "ignore") if read else StackError(message, file=file, key="ignore")
    for pattern in patterns:
        problem = None
        if not pattern.strip():
            problem = "an empty finding ID"
        elif len(pattern) > MAX_KEY:
            problem = f"a finding ID of {len(pattern):,} characters (at most {MAX_KEY})"
        elif _too_broad(pattern.strip()):
            problem = (f"{pattern!r} would suppress findings of unrelated kinds (most wildcards alone do); "
                       "name the findings (\"requires-python:*\", \"untracked:*\", \"*:vllm==0.32.0\")")
        if problem:
            raise read.error(problem, ("compat",), "ignore") if read else StackError(one_line(problem), file=file,
                                                                                         key="ignore")
    return tuple(patterns)


def _read(data: Mapping[str, Any], read: _Reader, path: str | None) -> RawStack:
    _shape(data, read)
    for name in data:
        if name not in _TABLES:
            raise read.error(_unknown(name, None), (), name)
    for name, keys in _TABLES.items():
        table = read.table(data, name)
        if keys is None:
            continue
        for key in table:
            if key not in keys:
                raise read.error(_unknown(key, name), (name,), key)

    head = read.table(data, "stack")
    schema = head.get("schema", SCHEMA)
    if schema != SCHEMA or isinstance(schema, bool):
        raise read.error(f"unsupported schema {schema!r}: this compat reads schema {SCHEMA}", ("stack",), "schema")
    for key in ("name", "description"):
        if key in head and not isinstance(head[key], str):
            raise read.error(f"expected a string, got {kind(head[key])}", ("stack",), key)
    if "name" in head and not head["name"].isprintable():  # a label reports print: a newline would forge a line
        raise read.error("expected one line of printable text (no newline or control character)", ("stack",), "name")

    overlay = _overlay(read.table(data, "compat"), read, path)
    system = _system(read.table(data, "system"), read, "system" in data)
    hardware = _hardware(read.table(data, "hardware"), read)
    packages = _packages(read.table(data, "packages"), read)
    options = _options(read.table(data, "options"), read)
    model = _model(read.table(data, "model"), read)
    env = _env(read.table(data, "env"), read)
    ignore, strict, require_known, only_binary = _compat(read.table(data, "compat"), read)
    return RawStack(
        system=system,
        hardware=hardware,
        packages=packages,
        options=options,
        model=model,
        env=env,
        ignore=ignore,
        strict=strict,
        require_known=require_known,
        only_binary=only_binary,
        name=head.get("name"),
        description=head.get("description"),
        path=path,
        text=read.text,
        overlay=overlay,
        reader=read,
    )


def _unknown(key: str, table: str | None) -> str:
    """The error for a key that `table` does not have (None: a table the
    file may not have), with the nearest known one: the table whose key it
    is (`gpu` under [system] is [hardware] gpu), else a key of `table`
    close to it, else the nearest key of another table.

    >>> _unknown("pyhton", "system")
    "unknown key; did you mean 'python'?"
    >>> _unknown("gpu", "system")
    'unknown key: gpu is a key of [hardware]; write it under [hardware]'
    >>> _unknown("gpus", "system")
    'unknown key; did you mean [hardware] gpu?'
    >>> _unknown("python", None)
    'unknown table: python is a key of [system]; write it under [system]'
    """
    what = "unknown key" if table is not None else "unknown table"
    spelled = key.lower().replace("-", "_")
    homes = {name: keys for name, keys in _TABLES.items() if keys and name != table}
    found = [name for name, keys in homes.items() if spelled in keys]
    if found:
        return f"{what}: {spelled} is a key of {' and '.join(f'[{n}]' for n in found)}; write it under [{found[0]}]"
    hint = did_you_mean(key, _TABLES if table is None else _TABLES[table] or ())
    if hint:
        return what + hint
    guess = nearest(spelled, sorted({k for keys in homes.values() for k in keys}))
    if guess is None:
        return what
    return f"{what}; did you mean {' or '.join(f'[{n}] {guess}' for n, keys in homes.items() if guess in keys)}?"


def _overlay(table: Mapping[str, Any], read: _Reader, path: str | None) -> str | None:
    """[compat] overlay: a folder of the user's own facts, relative to the stack file
    (to the working directory for a stack without a file)."""
    folder = table.get("overlay")
    if folder is None:
        return None
    if not isinstance(folder, str) or not folder.strip():
        raise read.error(f"expected the path of a folder of your own facts, got {kind(folder)}", ("compat",), "overlay")
    base = os.path.dirname(os.path.abspath(path)) if path and path not in ("-", "/dev/stdin") else os.getcwd()
    where = os.path.normpath(os.path.join(base, os.path.expanduser(folder)))
    if not os.path.isdir(where):
        raise read.error(f"no such folder: {where}", ("compat",), "overlay")
    return where


def _system(table: Mapping[str, Any], read: _Reader, present: bool) -> System:
    where = ("system",)
    if not present:
        raise read.error("missing the [system] table (it needs at least python = \"3.12\")", (), "system")
    if "python" not in table:
        raise read.error("missing (the CPython version, such as \"3.12\")", where, "python")
    python = read.version(table["python"], where, "python", "3.12")
    if not is_cpython(python):
        raise read.error(f"expected a CPython 3 version such as \"3.12\" or \"3.12.7\", got {table['python']!r}", where, "python")
    platform = table.get("platform", "linux-x86_64")
    if not isinstance(platform, str):  # which names are platforms is the platform table's: knowledge binds it
        raise read.error(f"expected a platform name, a string such as \"linux-x86_64\", got {kind(platform)}", where,
                         "platform")
    _words(table, read)
    cuda = read.version(table["cuda"], where, "cuda", "13.0") if "cuda" in table else None
    rocm = read.version(table["rocm"], where, "rocm", "7.0") if "rocm" in table else None
    driver = read.version(table["driver"], where, "driver", "580.95.05") if "driver" in table else None
    if cuda is not None and rocm is not None:
        raise read.error("a stack targets CUDA or ROCm, not both", where, "rocm")
    written = str(table["driver"]).strip() if driver is not None else None
    glibc = read.version(table["glibc"], where, "glibc", "2.35") if "glibc" in table else None
    if glibc is not None and (glibc.major != 2 or len(glibc.release) != 2):
        raise read.error(f"expected a GNU C library version such as \"2.35\", got {table['glibc']!r}", where, "glibc")
    index = table.get("index", "pypi")
    if not isinstance(index, str):  # a PyTorch index label (cu128) is told by knowledge, which knows them
        raise read.error(INDEX_EXPECTED + kind(index), where, "index")
    return System(python=python, platform=platform, cuda=cuda, rocm=rocm, driver=driver, driver_written=written,
                  glibc=glibc, index=index)


def _words(table: Mapping[str, Any], read: _Reader) -> None:
    """Refuse [system] cuda or rocm given as a word (a string that is no
    dotted version) with a `NotAVersion`, whose words knowledge checks for
    a PyTorch index label (``cu128``) before it raises it."""
    words = {key: table[key].strip() for key in ("cuda", "rocm")
             if isinstance(table.get(key), str) and not dotted_numbers(table[key].strip())}
    if words:
        try:  # the error the versions give: a word is none
            for key, example in (("cuda", "13.0"), ("rocm", "7.0")):
                if key in table:
                    read.version(table[key], ("system",), key, example)
        except StackError as error:
            raise NotAVersion(error, words, read) from None


def _hardware(table: Mapping[str, Any], read: _Reader) -> RawHardware:
    where = ("hardware",)
    name = None
    if "gpu" in table:
        name = table["gpu"]
        if not isinstance(name, str) or not name.strip():
            raise read.error(f"expected a GPU name such as \"H200\", got {kind(name)}", where, "gpu")
        if len(name) > 200 or not name.isprintable():
            raise read.error(f"expected a GPU name such as \"H200\", got {kind(name)}", where, "gpu")
    compute_capability = written = None
    if "compute_capability" in table:
        written = value = table["compute_capability"]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            raise read.number_error(value, where, "compute_capability", "a compute capability")
        if not isinstance(value, str) or len(value) > 32 or not value.isascii():
            raise read.error(f"expected a string such as \"9.0\" or \"sm_90\", got {kind(value)}", where, "compute_capability")
        try:
            compute_capability = parse_compute_capability(value)
        except ValueError as exc:
            raise read.error(str(exc), where, "compute_capability") from None
    count = table.get("count", 1)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise read.error(f"expected a whole number of GPUs, 1 or more, got {count!r}", where, "count")
    accelerator = table.get("accelerator")
    if "accelerator" in table and (not isinstance(accelerator, str) or accelerator not in ACCELERATORS):
        raise read.error(
            f"unknown accelerator {one_line(repr(accelerator), 80)}{did_you_mean(str(accelerator)[:64], ACCELERATORS)} (one of {', '.join(ACCELERATORS)})",
            where,
            "accelerator",
        )
    return RawHardware(gpu=name, compute_capability=compute_capability, compute_capability_written=written,
                       count=count, accelerator=accelerator)


def _specifier(value: str, read: _Reader, key: str) -> tuple[SpecifierSet, str | None]:
    """The entry's specifier, and the local version label of a pin
    (``2.10.0+cu130``, as pip freeze prints it), which selects a build."""
    text = value.strip()
    if len(text) > MAX_VERSION or not text.isascii():
        raise read.error(
            f"{one_line(repr(value[:60]), 80)}{'…' if len(value) > 60 else ''} is not a version (\"0.32.0\") nor a PEP 440 "
            f"specifier set (\">=5.16,<5.21\") of at most {MAX_VERSION} ASCII characters",
            ("packages",),
            key,
        )
    if text in ("", "*"):
        return SpecifierSet(), None
    if text.startswith("==") and "*" not in text and "," not in text:
        text = text[2:].strip()
    try:
        version = Version(text)
    except ValueError:  # InvalidVersion, or a number past int()'s digit limit
        pass
    else:
        return SpecifierSet(f"=={version.public}"), version.local
    try:
        specifier = SpecifierSet(text)
        empty = not admits_some(specifier)
    except ValueError:  # InvalidSpecifier, InvalidVersion, a number past int()'s digit limit
        raise read.error(
            f"{value!r} is neither a version (\"0.32.0\") nor a PEP 440 specifier set (\">=5.16,<5.21\")",
            ("packages",),
            key,
        ) from None
    if empty:
        raise read.error(f"{value!r} admits no version at all", ("packages",), key)
    return specifier, None


def _packages(table: Mapping[str, Any], read: _Reader) -> tuple[RawPackage, ...]:
    where = ("packages",)
    if len(table) > MAX_PACKAGES:
        raise read.error(
            f"{len(table):,} packages: a stack is limited to {MAX_PACKAGES:,} (split the deployment, or mark "
            "the packages compat need not judge as dependencies of those it does)",
            (),
            "packages",
        )
    packages = []
    for key, value in table.items():
        if not is_name(key):
            raise read.error("not a package name (PEP 508: letters, digits, '.', '_' and '-', starting and ending "
                             "with a letter or digit)", where, key)
        extras: frozenset[str] = frozenset()
        external = False
        if isinstance(value, Mapping):
            for sub in value:
                if sub not in _PACKAGE_KEYS:
                    raise read.error(f"unknown key {sub!r}{did_you_mean(sub, _PACKAGE_KEYS)}", where, key)
            external = value.get("external", False)
            if not isinstance(external, bool):
                raise read.error(f"external must be true or false, got {kind(external)}", where, key)
            raw_extras = value.get("extras", [])
            if not isinstance(raw_extras, list) or not all(isinstance(e, str) and is_name(e) for e in raw_extras):
                raise read.error("extras must be a list of extra names, such as [\"cu13\"]", where, key)
            extras = frozenset(normalize(e) for e in raw_extras)
            version = value.get("version", "*" if external else None)
            if version is None:
                raise read.error("a package table needs version = \"...\" (or external = true)", where, key)
        else:
            version = value
        if isinstance(version, (int, float)) and not isinstance(version, bool):
            raise read.number_error(version, where, key, name="version" if isinstance(value, Mapping) else None)
        if not isinstance(version, str):
            raise read.error(f"expected a version or specifier string, got {kind(version)}", where, key)
        specifier, build = _specifier(version, read, key)
        packages.append(RawPackage(key=key, specifier=specifier, build=build, extras=extras, external=external,
                                   written=version))
    return tuple(packages)


def _options(table: Mapping[str, Any], read: _Reader) -> dict[str, dict[str, Any]]:
    options: dict[str, dict[str, Any]] = {}
    for key, values in table.items():
        if not isinstance(values, Mapping):
            raise read.error(f"expected a table [options.{key}] of flag = value", ("options",), key)
        for flag, value in values.items():
            if not isinstance(value, (str, int, float, bool)):
                raise read.error(f"expected a string, number or boolean, got {kind(value)}", ("options", key), flag)
        options[key] = dict(values)
    return options


def _model(table: Mapping[str, Any], read: _Reader) -> Model:
    where = ("model",)
    for key in ("name", "repo", "family", "checkpoint_dtype"):
        if key in table and (not isinstance(table[key], str) or not table[key].strip()):
            raise read.error(f"expected a non-empty string, got {kind(table[key])}", where, key)
    for key in ("moe", "hybrid", "multimodal"):
        if key in table and not isinstance(table[key], bool):
            raise read.error(f"expected true or false, got {kind(table[key])}", where, key)
    head_dim = table.get("head_dim")
    if head_dim is not None and (not isinstance(head_dim, int) or isinstance(head_dim, bool) or head_dim < 1):
        raise read.error(f"expected a positive whole number, got {head_dim!r}", where, "head_dim")
    family = table.get("family")
    return Model(
        name=table["name"].strip() if "name" in table else None,
        family=family.strip().lower() if family else None,
        head_dim=head_dim,
        checkpoint_dtype=table.get("checkpoint_dtype", "").strip().lower() or None,
        repo=table["repo"].strip() if "repo" in table else None,
        moe=table.get("moe"),
        hybrid=table.get("hybrid"),
        multimodal=table.get("multimodal"),
    )


def _env(table: Mapping[str, Any], read: _Reader) -> dict[str, str]:
    env = {}
    for key, value in table.items():
        if not key or "=" in key or "\0" in key or not key.isprintable():
            # no environment holds such a name: a condition on it could never be met
            raise read.error("not an environment variable name (no =, NUL or control character; not empty)",
                             ("env",), key)
        if not isinstance(value, str):
            shown = str(value).lower() if isinstance(value, bool) else \
                read.written(value, ("env",), key) if isinstance(value, (int, float)) else value
            raise read.error(f"expected a string, got {kind(value)}; quote it: {key} = \"{shown}\"", ("env",), key)
        env[key] = value
    return env


def _compat(table: Mapping[str, Any], read: _Reader) -> tuple[tuple[str, ...], bool, bool, bool]:
    ignore = table.get("ignore", [])
    if not isinstance(ignore, list):
        raise read.error("expected a list of finding IDs (strings)", ("compat",), "ignore")
    ignore = check_ignore(ignore, read)
    flags = []
    for key in ("strict", "require_known", "only_binary"):
        value = table.get(key, False)
        if not isinstance(value, bool):
            raise read.error(f"expected true or false, got {kind(value)}", ("compat",), key)
        flags.append(value)
    return ignore, flags[0], flags[1], flags[2]
