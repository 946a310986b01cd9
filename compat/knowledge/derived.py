"""Derived facts: what a script in ``tools/`` read from an upstream's own
files, release by release (``data/derived/<name>.toml``, and
``data/derived/<name>.<topic>.toml`` where a second script derives another
kind of fact of the same package: each file has one writer).

A hand-written component file (``constraints/<name>.toml``) states what a
person read in a release note, an issue or a table. A derived file states
what a script read at a release's tag or in a release's wheel: the
architecture list of a build script, the compute-capability check a kernel
makes. It holds the same ``[[build]]`` and ``[[rule]]`` tables as a
component file, and the ``[[source]]`` tables they cite, each naming the
exact file, commit and line (or the wheel file and its sha256) the fact was
read from. The script writes the whole file; nobody edits it by hand, and a
new release is one more run of the script.

Its facts join the component's: a check cannot tell a derived build from a
hand-written one except by its source, and an ID given in both files is
refused (one home per fact).
"""

from __future__ import annotations

import os
import re
from typing import Any

from .. import _toml
from .._names import normalize
from ..errors import DatabaseError
from ._schema import Table
from .model import Source

__all__ = ["DERIVED_DIR", "DerivedFile", "derived_name", "derived_path", "read_derived", "source_problem"]

DERIVED_DIR = "derived"
SCHEMA = 1
SOURCE_KINDS = ("code", "artifact")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# where it was read, as the script writes it: "flash-attn@v2.6.3:csrc/flash_attn/flash_api.cpp#L361"
_SOURCE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-@:/#+]*")


def derived_path(root: str, stem: str) -> str:
    return os.path.join(root, DERIVED_DIR, f"{stem}.toml")


def derived_name(stem: str) -> str:
    """The component a derived file's stem is of (a normalized name has no dot).

    >>> derived_name("torch"), derived_name("torch.builds")
    ('torch', 'torch')
    """
    return stem.partition(".")[0]


class DerivedFile:
    """One derived file, read: its sources by ID, and its build and rule
    tables (parsed by the component reader, as a component file's are)."""

    def __init__(self, path: str, package: str, tool: str, sources: dict[str, Source],
                 builds: list[Table], rules: list[Table]) -> None:
        self.path = path
        self.package = package
        self.tool = tool
        self.sources = sources
        self.builds = builds
        self.rules = rules


def source_problem(source: Source) -> tuple[str, str] | None:
    """What a derived source lacks to say where its fact was read, as (key, message), or None.

    >>> source_problem(Source("s", "p", "t", "code", commit="a" * 40, path="setup.py", line=3))
    >>> source_problem(Source("s", "p", "t", "code", commit="a1b2c3d", path="setup.py", line=3))
    ('commit', 'a derived fact cites the full commit (40 hex digits), got a1b2c3d')
    """
    if source.kind == "code":
        if source.commit is None or not _COMMIT.fullmatch(source.commit):
            return "commit", f"a derived fact cites the full commit (40 hex digits), got {source.commit}"
        if not source.path:
            return "path", "a derived fact cites the file it was read from"
        if source.line is None or source.line < 1:
            return "line", "a derived fact cites the line that states it"
        return None
    if not source.path or not source.path.endswith(".whl"):
        return "path", "an artifact source names the wheel file the fact was read from"
    if source.sha256 is None or not _SHA256.fullmatch(source.sha256):
        return "sha256", "an artifact source gives the wheel's sha256 (64 hex digits)"
    return None


def read_derived(path: str, name: str) -> DerivedFile:
    """Read `path`, the derived file of component `name`; a DatabaseError
    naming the file and key for anything out of place (an unknown key, a
    source that does not say where it was read, a fact citing a source the
    file does not hold).

    Read once per process while the file stays as it is (its size and
    modification time): a derived file runs to thousands of lines, and a
    process that loads several databases (a test run, a tool comparing
    overlays) would parse it for each. What it returns is not changed by
    its readers (the component reader copies the tables' list)."""
    try:
        status = os.stat(path)
    except OSError:
        status = None  # _toml.load says what is wrong, with the file's name
    key = (os.path.abspath(path), name, status.st_mtime_ns, status.st_size) if status is not None else None
    if key is not None and key in _READ:
        return _READ[key]
    read = _read_derived(path, name)
    if key is not None:
        if len(_READ) >= 256:
            _READ.clear()
        _READ[key] = read
    return read


_READ: dict[tuple[str, str, int, int], DerivedFile] = {}


def _read_derived(path: str, name: str) -> DerivedFile:
    data, text = _toml.load(path, error=DatabaseError)
    root = Table(data, path, "", text=text)
    root.only(["schema", "package", "tool", "source", "build", "rule"])
    if data.get("schema", SCHEMA) != SCHEMA:
        raise root.error(f"unsupported schema {data.get('schema')!r} (expected {SCHEMA})", "schema")
    package = root.text("package", required=True)
    assert package is not None
    if normalize(package) != name:
        raise root.error(f"names {package!r}, but the file is {os.path.basename(path)}", "package")
    tool = root.text("tool", required=True)
    assert tool is not None
    if not tool.startswith("tools/") or not tool.endswith(".py"):
        raise root.error(f"expected the script that wrote the file (tools/<name>.py), got {tool!r}", "tool")
    sources: dict[str, Source] = {}
    for table in root.tables("source"):
        table.only(["id", "project", "title", "kind", "url", "ref", "commit", "path", "line", "sha256", "date"])
        source_id = table.text("id", required=True)
        assert source_id is not None
        if not _SOURCE_ID.fullmatch(source_id):
            raise table.error(f"invalid ID {source_id!r} (letters, digits and . - _ @ : / # +)", "id")
        if source_id in sources:
            raise table.error(f"source {source_id!r} is given twice", "id")
        source = Source.from_table(table, source_id, SOURCE_KINDS, "code", located=True)
        problem = source_problem(source)
        if problem is not None:
            raise table.error(problem[1], problem[0])
        sources[source_id] = source
    builds = root.tables("build")
    rules = root.tables("rule")
    for kind, tables in (("build", builds), ("rule", rules)):
        for table in tables:
            for key in ("source", "archs_source"):
                cited = table.data.get(key)
                if cited is not None and not isinstance(cited, str):
                    raise table.error(f"expected the ID of a [[source]] of this file, got {cited!r}"[:200], key)
                if cited is not None and cited not in sources:
                    raise table.error(f"cites {cited!r}, which is no [[source]] of this file: a derived fact "
                                      "cites the file, commit and line it was read from", key)
            if table.data.get("source") is None:
                raise table.error(f"a derived {kind} cites the [[source]] it was read from", "source")
            also = table.data.get("also", [])
            for index, cited in enumerate(also if isinstance(also, list) else []):
                if not isinstance(cited, str) or cited not in sources:
                    raise table.error(f"cites {cited!r}, which is no [[source]] of this file", f"also[{index}]")
    return DerivedFile(path, name, tool, sources, builds, rules)


def merged_parse(parsers: dict[str, Any]) -> Any:
    """One parse function for tables of several files (a component's own and
    its derived one): each table parsed by its own file's parser."""

    def parse(table: Table, seen: set[str] | None) -> Any:
        return parsers[table.file](table, seen)

    return parse
