"""The command-line options of the serving engines, release by release.

``data/options/<component>.toml`` lists, for the releases it ``covers``, the
flags of one engine (``vllm serve``, SGLang's server, vLLM-Omni) as that
release's own argument definitions give them: each flag's type, its closed
set of values where there is one, the releases that have it with that
definition, and what it was renamed to when it went away. A flag whose
values changed is listed once per range of releases.

A stack's ``[options.<package>]`` is judged against the definition of the
release the stack installs: a value outside a closed set is an error that
lists the allowed values; a flag the release does not have (removed,
renamed, or not yet added) is an error on that release; a flag no release
has is a warning, since the file lists the common flags, not every flag.

The file's ``[gpus]`` table says which of these flags give the GPUs one
server starts on a node (tensor x pipeline parallel, data-parallel
replicas, nodes), as the engine's own documentation states it: the data a
check compares with ``[hardware] count``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from .._record import Record
from .. import _toml
from .._versions import overlap
from ..errors import DatabaseError
from ._schema import Table, read_text
from .conditions import option_key

__all__ = ["GPU_KEYS", "OPTIONS_DIR", "GpuPlan", "OptionCatalog", "OptionDef", "TYPES", "range_text", "value_problem"]

OPTIONS_DIR = "options"
TYPES = ("int", "float", "bool", "string", "choice")


class OptionDef(Record):
    """One flag, as the releases in `releases` define it."""

    name: str
    type: str
    releases: SpecifierSet
    summary: str = ""
    aliases: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    default: Any = None
    renamed_to: str | None = None
    source: str | None = None
    key: str = ""
    ignore_case: bool = False  # a choice the engine compares without regard to case  # where it is in its file, for errors: option[3]

    def has(self, version: Version | None) -> bool:
        return version is None or self.releases.contains(version, prereleases=True)


GPU_KEYS = ("multiply", "replicas", "replicas_here", "replicas_shared", "nodes", "count", "elsewhere",
            "source", "sources", "inferred", "basis")


class GpuPlan(Record):
    """How one engine's flags give the GPUs a server starts on a node: the
    ``[gpus]`` table of its option file, with the source that states it.

    GPUs on this node = (product of `multiply`) x replicas / nodes, where
    replicas is `replicas_here` when the stack gives it, else `replicas`,
    and 1 when `replicas_shared` is on (the replicas run inside those GPUs);
    `count`, when given, is the GPU count itself. Under a flag value of
    `elsewhere` the engine places its workers over a cluster the stack does
    not describe, and nothing is judged.
    """

    multiply: tuple[str, ...]
    source: str
    replicas: str | None = None
    replicas_here: str | None = None
    replicas_shared: str | None = None
    nodes: str | None = None
    count: str | None = None
    elsewhere: tuple[tuple[str, str], ...] = ()
    sources: tuple[tuple[str, str], ...] = ()  # (flag, source): a flag whose role another source states
    inferred: tuple[str, ...] = ()  # flags whose role no source states: a finding resting on one is a warning
    basis: str | None = None  # what the inferred part rests on

    def roles(self) -> tuple[str, ...]:
        """The flags the table gives a role (all but `sources` and `inferred`), once each."""
        named = (*self.multiply, self.replicas, self.replicas_here, self.replicas_shared, self.nodes, self.count,
                 *(flag for flag, _ in self.elsewhere))
        return tuple(dict.fromkeys(f for f in named if f is not None))

    def flags(self) -> tuple[str, ...]:
        """Every flag the table names, in the table's order, once each."""
        return tuple(dict.fromkeys((*self.roles(), *(flag for flag, _ in self.sources), *self.inferred)))

    def source_of(self, used: Iterable[str]) -> str:
        """The source of a judgement resting on the flags `used`: the last of
        them whose role its own source states, else the table's source."""
        own = dict(self.sources)
        return next((own[f] for f in reversed(list(used)) if f in own), self.source)


class OptionCatalog:
    """The flags of one component, looked up by name or alias.

    A catalog lists every flag of every release, hundreds of definitions; a
    check looks up a few. Each definition is read (and checked) when its
    flag is first looked up; `options` reads them all (lint does).
    """

    def __init__(self, component: str, covers: SpecifierSet, options: list[OptionDef] | list[Table], file: str,
                 gpus: GpuPlan | None = None, abbreviations: str | None = None) -> None:
        self.component = component
        self.covers = covers
        self.file = file
        self.gpus = gpus
        # The source that says the engine's parser takes an unambiguous prefix
        # of a flag for the flag (argparse's default), or None: exact names only.
        self.abbreviations = abbreviations
        self._index(list(options))
        # `scan`'s lookup mode: the file's text as UTF-8 (None once every block is indexed), its
        # bytes lower-cased with "_" as "-" (what option_key makes of a spelling), the flags found
        self._raw: bytes | None = None
        self._folded: bytes | None = None
        self._found: dict[str, list[OptionDef]] = {}

    def _index(self, entries: list[Any]) -> None:
        # a definition (OptionDef), one not yet checked (Table), or a scanned block not yet parsed
        self._entries: list[Any] = entries
        self._by_key: dict[str, list[int]] = {}  # a spelling -> the positions of its definitions, in file order
        by_key = self._by_key
        for position, entry in enumerate(entries):
            if type(entry) is tuple:  # a scanned block (hundreds of them: the common case, inline)
                name, aliases = entry[0].group(1, 2)
                keys = {option_key(name)} if aliases is None else {option_key(a) for a in (name, *_QUOTED.findall(aliases))}
            else:
                name, more = _spellings(entry)
                keys = {option_key(a) for a in (name, *more)}
            for key in keys:
                by_key.setdefault(key, []).append(position)

    @property
    def options(self) -> list[OptionDef]:
        """Every definition, in file order (each read now if it was not yet)."""
        self._every_block()
        return [self._entry(position) for position in range(len(self._entries))]

    def _entry(self, position: int) -> OptionDef:
        entry = self._entries[position]
        if isinstance(entry, OptionDef):
            return entry
        if isinstance(entry, tuple):  # a scanned block
            _, text, start, end, number = entry
            line = text.count("\n", 0, start) + 1
            entry = self._table(text[start:end], line, number)
            if entry is None:
                raise DatabaseError("expected one [[option]] table, and no other table after it", file=self.file,
                                    line=line)
        if isinstance(entry, Table):
            entry = self._entries[position] = _parse_option(entry, self.covers)
        return entry

    @classmethod
    def load(cls, path: str, component: str) -> OptionCatalog:
        """The whole file, parsed (lint; `scan` for a check)."""
        data, text = _toml.load(path, error=DatabaseError)
        return cls._from(data, path, component, text=text)

    @classmethod
    def scan(cls, path: str, component: str) -> OptionCatalog:
        """The catalog, each [[option]] table read when its flag is looked
        up, so that a check that asks for the default of one flag does not
        read hundreds of definitions: the head of the file (up to its first
        ``[[option]]``) is parsed, and a flag's tables are found by
        searching the text for the flag (`_look_up`). What needs every flag
        (a prefix, a did-you-mean, lint) indexes them all with a line scan
        (`_scanned`, which ``compat db lint`` holds to a full parse)."""
        text = read_text(path)
        if "\\u" in text or "\\U" in text or (
                not text.isascii() and text.lower().encode("utf-8") != text.encode("utf-8").lower()):
            # an escape could spell a flag the text does not show; a letter str.lower changes that the
            # search (ASCII letters lowered) would not
            return cls._scanned(text, path, component)
        first = 0 if text.startswith("[[option]]\n") else text.find("\n[[option]]\n") + 1
        head = text[:first] if first else text
        if first and _OTHER_TABLE.search(text, first):
            return cls._scanned(text, path, component)  # a table after the options: the line scan reads it whole
        data = _toml.loads(head, file=path, error=DatabaseError)
        if "option" in data:  # an [[option]] written otherwise before the first one written plainly
            return cls._scanned(text, path, component)
        catalog = cls._from(data, path, component, scanned=True, text=head)
        catalog._raw = text.encode("utf-8")
        return catalog

    @classmethod
    def _scanned(cls, text: str, path: str, component: str) -> OptionCatalog:
        """The catalog with every [[option]] table indexed by a line scan of
        its name and aliases lines, each parsed when its flag is looked up. A
        table the scan cannot index is read with the whole file instead."""
        # each head at the start of a line: the pattern takes the newline before it
        starts = list(_BLOCK_HEAD.finditer(text))
        begins = [m.start() + 1 for m in starts]
        if len(starts) != text.count("[[option]]") or sum(1 for m in starts if m.group(2) is not None) != \
                text.count("\naliases") or (starts and _OTHER_TABLE.search(text, begins[0])):
            # written otherwise than one name line and its aliases after it (or first in the
            # file, with no line before it), or with a table after the options
            return cls.load(path, component)
        head = text[: begins[0]] if starts else text
        catalog = cls._from(_toml.loads(head, file=path, error=DatabaseError), path, component, scanned=True, text=head)
        ends = begins[1:] + [len(text)]
        entries: list[Any] = [
            (m, text, begin, end, position) for position, (m, begin, end) in enumerate(zip(starts, begins, ends))
        ]
        catalog._index(entries)
        return catalog

    @classmethod
    def _from(cls, data: dict[str, Any], path: str, component: str, *, scanned: bool = False,
              text: str | None = None) -> OptionCatalog:
        root = Table(data, path, "", text=text)
        root.only(["schema", "component", "covers", "gpus", "parser", "option"])
        if root.data.get("schema", 1) != 1:
            raise root.error(f"unsupported schema {root.data.get('schema')!r} (expected 1)", "schema")
        named = root.text("component", required=True)
        if named != component:
            raise root.error(f"this file is {component}.toml but names component {named!r}", "component")
        covers = _specifier(root, "covers", required=True)
        gpus = root.table("gpus")
        parser = root.table("parser")
        abbreviations = None
        if parser is not None:
            parser.only(["abbreviations", "source"])
            if parser.boolean("abbreviations"):
                abbreviations = parser.text("source", required=True)
        return cls(component, covers, [] if scanned else root.tables("option"), path,
                   _parse_gpus(gpus) if gpus is not None else None, abbreviations)

    def _every_block(self) -> None:
        """Leave the lookup mode: index every block (the line scan)."""
        if self._raw is not None:
            raw, self._raw, self._folded, self._found = self._raw, None, None, {}
            indexed = OptionCatalog._scanned(raw.decode("utf-8"), self.file, self.component)
            self._entries, self._by_key = indexed._entries, indexed._by_key

    def _look_up(self, key: str) -> list[list[Any]] | None:
        """The [[option]] tables that spell the flag `key` (option_key's
        form), in file order, each as [begin, end, its definition once read]:
        found where the text holds `key` once lower-cased with "_" as "-"
        (each spelling of the flag does), a table's spellings read from its
        name and aliases lines where they are written plainly (as the line
        scan reads them), else from the table parsed. None where a table
        cannot be cut out so (a header written otherwise): the line scan
        decides."""
        raw = self._raw
        assert raw is not None
        if not key:
            return None  # found everywhere in the text: the line scan's index answers at once
        if self._folded is None:
            self._folded = raw.lower().replace(b"_", b"-")
        folded, needle, head = self._folded, key.encode("utf-8"), b"\n[[option]]\n"
        found: list[list[Any]] = []
        seen = -1
        at = folded.find(needle)
        while at != -1:
            line = raw[raw.rfind(b"\n", 0, at) + 1:at].lstrip()
            key_written, equals, _ = line.partition(b"=")
            if line[:1] in (b"[", b"#") or (
                    equals and key_written.strip() not in (b"name", b"aliases") and _BARE_KEY.issuperset(key_written.strip())):
                at = folded.find(needle, at + 1)  # a header, a comment, the value of another key (a summary): no spelling
                continue
            begin = raw.rfind(head, 0, at) + 1
            if begin or raw.startswith(head[1:]):  # else in the file's head, before any [[option]]
                end = raw.find(b"\n[", begin + 1)
                end = len(raw) if end == -1 else end + 1
                if end <= at:
                    return None  # a table header this search does not know
                if begin != seen:
                    seen = begin
                    entry: list[Any] = [begin, end, None]
                    spelled = _head_spellings(raw, begin, end)
                    if spelled is None:  # not written plainly: read it
                        option = entry[2] = self._read_block(begin, end)
                        if option is None:
                            return None
                        spelled = (option.name, *option.aliases)
                    if key in {option_key(spelling) for spelling in spelled}:
                        found.append(entry)
            at = folded.find(needle, at + 1)
        return found

    def _table(self, block: str, line: int, number: int) -> Table | None:
        """The one [[option]] table of `block` (the file's text from line
        `line`, the file's table `number`), or None when `block` holds other
        tables too; a syntax error is the file's DatabaseError."""
        data = _toml.loads(block, file=self.file, error=DatabaseError, first_line=line)
        tables = data.get("option")
        if set(data) != {"option"} or not isinstance(tables, list) or len(tables) != 1:
            return None
        table = Table(tables[0], self.file, f"option[{number}]")
        table.refuse_long_numbers(block)  # what a full parse (`load`) checks at the root, for this table alone
        return table

    def _read_block(self, begin: int, end: int) -> OptionDef | None:
        """The [[option]] table at raw[begin:end], read; None if it does not parse as one table alone."""
        raw = self._raw
        assert raw is not None
        number = raw.count(b"\n[[option]]\n", 0, begin) + (1 if begin and raw.startswith(b"[[option]]\n") else 0)
        try:
            table = self._table(raw[begin:end].decode("utf-8"), raw.count(b"\n", 0, begin) + 1, number)
        except DatabaseError:
            return None
        return _parse_option(table, self.covers) if table is not None else None

    def _blocks(self, key: str) -> list[list[Any]]:
        """`_look_up`'s tables of `key`, once per key (none once the line
        scan has taken over, where `_look_up` cannot cut them out)."""
        found = self._found.get(key)
        if found is None:
            looked = self._look_up(key)
            if looked is None:
                self._every_block()
                return []
            found = self._found[key] = looked
        return found

    def _definition(self, entry: list[Any]) -> OptionDef:
        """The definition of a table `_look_up` found, read now if it was not
        yet; _Uncut when it cannot be read alone (an ``[[option]]`` line in
        a multi-line string cut it): the line scan decides then."""
        if entry[2] is None:
            option = self._read_block(entry[0], entry[1])
            if option is None:
                raise _Uncut
            entry[2] = option
        return entry[2]

    def _definitions(self, key: str) -> list[OptionDef]:
        if self._raw is not None:
            try:
                found = self._blocks(key)
                if self._raw is not None:
                    return [self._definition(entry) for entry in found]
            except _Uncut:
                self._every_block()
        return [self._entry(position) for position in self._by_key.get(key, ())]

    def spellings(self) -> dict[str, list[int]]:
        """Each spelling a flag is looked up by, and the positions of its definitions."""
        self._every_block()
        return {k: list(v) for k, v in sorted(self._by_key.items())}

    def definitions(self, flag: str) -> list[OptionDef]:
        """Every definition of `flag` (a name or alias, any spelling), oldest range first."""
        return list(self._definitions(option_key(flag)))

    def knows(self, flag: str) -> bool:
        key = option_key(flag)
        if self._raw is not None:
            found = self._blocks(key)
            if self._raw is not None:
                return bool(found)
        return bool(self._by_key.get(key))

    def canonical(self, flag: str) -> str | None:
        """The flag's own name for an alias (``tp-size`` -> ``tensor-parallel-size``),
        and, where the parser takes abbreviations, for a prefix of one flag's
        spellings alone (``tp``): a prefix of several flags' is none (argparse:
        "ambiguous option")."""
        found = self.definitions(flag)
        if found:
            return found[0].name
        if self.abbreviations is None:
            return None
        self._every_block()
        key = option_key(flag)
        names = {_spellings(self._entries[p])[0] for k, ps in self._by_key.items() if k.startswith(key) for p in ps}
        return names.pop() if len(names) == 1 else None

    def at(self, flag: str, version: Version | None) -> OptionDef | None:
        """The definition of `flag` in release `version` (None: no such flag
        there). A flag is defined anew for each range of releases whose
        parser changed it: only the definition that holds is read."""
        if self._raw is not None:
            found = self._blocks(option_key(flag))
            try:
                for entry in found if self._raw is not None else ():
                    if entry[2] is None and version is not None and \
                            _releases_exclude(self._raw[entry[0]:entry[1]].decode("utf-8"), version):
                        continue
                    option = self._definition(entry)
                    if option.has(version):
                        return option
                if self._raw is not None:
                    return None
            except _Uncut:
                self._every_block()
        for position in self._by_key.get(option_key(flag), ()):
            if not self._may_hold(position, version):
                continue
            option = self._entry(position)
            if option.has(version):
                return option
        return None

    def _may_hold(self, position: int, version: Version | None) -> bool:
        """Whether the definition at `position` may hold for `version`, told
        for a block not yet read by its ``releases`` line alone: only where
        the block has one such line and no multi-line string (in which a
        line could look like one); otherwise it is read."""
        entry = self._entries[position]
        if version is None or isinstance(entry, OptionDef) or not isinstance(entry, tuple):  # read already, or a table
            return True
        match, text, _, end, _ = entry
        return not _releases_exclude(text[match.end():end], version)

    def suggest(self, flag: str) -> str | None:
        """The flag (or alias) spelled closest to `flag`, for a did-you-mean."""
        from .._names import nearest

        self._every_block()
        return nearest(option_key(flag), self._by_key, cutoff=0.75)

    def covers_release(self, version: Version | None) -> bool:
        return version is not None and self.covers.contains(version, prereleases=True)

    def problems(self) -> Iterable[tuple[str, str]]:
        """(key, message) for what lint reports: overlapping definitions of one flag,
        an alias that is another flag's name, a rename to a flag the file lacks."""
        names = {option_key(o.name) for o in self.options}
        by_name: dict[str, list[OptionDef]] = {}
        for option in self.options:
            by_name.setdefault(option_key(option.name), []).append(option)
        for name, found in sorted(by_name.items()):
            for i, first in enumerate(found):
                for second in found[i + 1:]:
                    if overlap(first.releases, second.releases):
                        yield second.key, f"{name} is defined twice for some release ({first.releases} and {second.releases})"
        for option in self.options:
            for alias in option.aliases:
                key = option_key(alias)
                if key == option_key(option.name):
                    continue
                if any(overlap(option.releases, other.releases) for other in by_name.get(key, ())):
                    yield option.key, f"alias {alias!r} is the name of another flag in the same releases"
            if option.renamed_to is not None and option_key(option.renamed_to) not in names:
                yield option.key, f"renamed_to {option.renamed_to!r} names a flag the file does not list"
            if option.renamed_to is not None and option.releases.contains(Version("999999"), prereleases=True):
                yield option.key, "a renamed flag needs an upper bound on its releases (the release that renamed it)"
        yield from self._gpu_problems()

    def _gpu_problems(self) -> Iterable[tuple[str, str]]:
        """A flag of [gpus] this file does not define, or names by an alias."""
        if self.gpus is None:
            return
        for flag in self.gpus.flags():
            name = self.canonical(flag)
            if name is None:
                yield "gpus", f"names --{flag}, which this file does not define"
            elif name != flag:
                yield "gpus", f"names --{flag}, an alias: write the flag's name --{name}"


def range_text(releases: SpecifierSet) -> str:
    """A release range as people read it, lower bound first.

    >>> range_text(SpecifierSet("<0.28.0,>=0.20.0"))
    '>=0.20.0,<0.28.0'
    """
    order = {">=": 0, ">": 0, "==": 1, "~=": 1, "===": 1, "!=": 2, "<=": 3, "<": 3}
    return ",".join(str(s) for s in sorted(releases, key=lambda s: (order.get(s.operator, 1), str(s))))


def _specifier(table: Table, name: str, *, required: bool = False) -> SpecifierSet:
    text = table.text(name, required=required)
    if text is None:
        return SpecifierSet()
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise table.error(f"not a version specifier: {text!r}", name) from None


# how the catalogs write each table: [[option]], its name line, then its aliases line if it has one;
# with the newline before it (a pattern that starts with text, not with ^, is searched for at C speed)
_BLOCK_HEAD = re.compile(r'\n\[\[option\]\]\nname = "([^"\\\n]*)"\n(?:aliases = \[([^\]\n]*)\]\n)?')
_BLOCK_HEAD_BYTES = re.compile(_BLOCK_HEAD.pattern.encode("ascii"))
_QUOTED = re.compile(r'"([^"\\]*)"')
_BARE_KEY = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_OTHER_TABLE = re.compile(r"\n\s*\[(?!\[option\]\])")  # a line that opens another table (after the first option)
_RELEASES_LINE = re.compile(r'^releases = "([^"\\\n]*)"$', re.MULTILINE)


class _Uncut(Exception):
    """A table found by `OptionCatalog._look_up` that does not parse alone."""


def _releases_exclude(block: str, version: Version) -> bool:
    """Whether a table not yet read surely does not hold for `version`, told
    by its ``releases`` line alone: only where it has one such line and no
    multi-line string (in which a line could look like one)."""
    found = _RELEASES_LINE.findall(block)
    if len(found) != 1 or '"""' in block or "'''" in block:
        return False
    try:
        return not SpecifierSet(found[0]).contains(version, prereleases=True)
    except ValueError:  # InvalidSpecifier, or a number too long to convert: reading it reports what is wrong
        return False


def _head_spellings(raw: bytes, begin: int, end: int) -> tuple[str, ...] | None:
    """The name and aliases of the [[option]] table at raw[begin:end] where
    they are written as the line scan reads them (its name line, then its
    aliases line, and no other such key in the table), else None."""
    match = _BLOCK_HEAD_BYTES.match(raw, begin - 1) if begin else None
    if match is None or match.end() > end or b"\naliases" in raw[match.end():end] or b"\nname" in raw[match.end():end]:
        return None
    name, aliases = match.group(1).decode("utf-8"), match.group(2)
    return (name, *_QUOTED.findall(aliases.decode("utf-8"))) if aliases is not None else (name,)


def _spellings(entry: Any) -> tuple[str, tuple[str, ...]]:
    """The name and aliases of a definition, read or not (what is not text is
    refused when the definition is read)."""
    if isinstance(entry, OptionDef):
        return entry.name, entry.aliases
    if isinstance(entry, tuple):  # a scanned block: its name line and the aliases line after it
        match = entry[0]
        aliases = match.group(2)
        return match.group(1), tuple(_QUOTED.findall(aliases)) if aliases else ()
    name, aliases = entry.data.get("name"), entry.data.get("aliases", ())
    return (name if isinstance(name, str) else "",
            tuple(a for a in aliases if isinstance(a, str)) if isinstance(aliases, list) else ())


def _parse_option(table: Table, covers: SpecifierSet) -> OptionDef:
    table.only(["name", "aliases", "summary", "type", "values", "releases", "default", "renamed_to", "source", "ignore_case"])
    name = table.text("name", required=True)
    assert name is not None
    if name.startswith("-") or option_key(name) != name:
        raise table.error(f"write the flag as its long name without dashes, lower case: {option_key(name)!r}", "name")
    kind = table.choice("type", TYPES, "string")
    values = table.strings("values")
    if kind == "choice" and not values:
        raise table.error("a choice lists its values", "values")
    if kind != "choice" and values:
        raise table.error(f"only a choice lists values (this is {kind})", "values")
    releases = _specifier(table, "releases") if "releases" in table.data else covers
    default = table.data.get("default")
    if default is not None and value_problem(kind, values, default) is not None:
        raise table.error(f"the default {default!r} is not a valid {kind}", "default")
    return OptionDef(
        name=name,
        type=kind,
        releases=releases,
        summary=_summary(table),
        aliases=tuple(option_key(a) for a in table.strings("aliases")),
        values=values,
        default=default,
        renamed_to=table.text("renamed_to"),
        source=table.text("source", required=True),
        key=table.key,
        ignore_case=table.boolean("ignore_case"),
    )


def _parse_gpus(table: Table) -> GpuPlan:
    """The [gpus] table: flag names in the form [[option]] writes them, and
    an inferred part only with what it rests on."""
    table.only(GPU_KEYS)
    multiply = tuple(_flag(table, "multiply", flag) for flag in table.strings("multiply"))
    if not multiply:
        raise table.error("list the flags whose values multiply into the GPUs of one replica", "multiply")
    single = {name: _flag(table, name, table.text(name)) for name in
              ("replicas", "replicas_here", "replicas_shared", "nodes", "count")}
    elsewhere = _flag_table(table, "elsewhere")
    sources = _flag_table(table, "sources")
    inferred = tuple(_flag(table, "inferred", flag) for flag in table.strings("inferred"))
    basis = table.text("basis")
    if inferred and basis is None:
        raise table.error("an inferred part says what it is inferred from (basis = \"...\")", "basis")
    if basis is not None and not inferred:
        raise table.error("basis is for inferred flags (inferred = [\"...\"])", "basis")
    plan = GpuPlan(multiply=multiply, source=table.text("source", required=True) or "", elsewhere=elsewhere,
                   sources=sources, inferred=inferred, basis=basis, **single)
    named = set(plan.roles())
    for name, flags in (("sources", [f for f, _ in sources]), ("inferred", inferred)):
        for flag in flags:
            if flag not in named:
                raise table.error(f"names --{flag}, which no other key of [gpus] names", name)
    return plan


def _flag(table: Table, key: str, flag: str | None) -> str | None:
    """A flag as [gpus] names it: its long name without dashes, lower case."""
    if flag is not None and (flag.startswith("-") or option_key(flag) != flag):
        raise table.error(f"write the flag as its long name without dashes, lower case: {option_key(flag)!r}", key)
    return flag


def _flag_table(table: Table, key: str) -> tuple[tuple[str, str], ...]:
    """An inline table of flag = string, sorted by flag."""
    sub = table.table(key)
    if sub is None:
        return ()
    pairs = []
    for flag in sub.data:
        _flag(sub, flag, flag)
        pairs.append((flag, sub.text(flag, required=True) or ""))
    return tuple(sorted(pairs))


def _summary(table: Table) -> str:
    value = table.data.get("summary", "")
    if not isinstance(value, str):
        raise table.error(f"expected a string, got {value!r}", "summary")
    return value


def value_problem(kind: str, values: tuple[str, ...], value: Any, *, ignore_case: bool = False) -> str | None:
    """Why `value` is not a valid value of a flag of this type, or None.

    >>> value_problem("choice", ("auto", "fp8"), "fp9")
    "'fp9' is not one of: auto, fp8"
    >>> value_problem("int", (), 8) is None, value_problem("int", (), "8") is None, value_problem("bool", (), True) is None
    (True, True, True)
    >>> value_problem("int", (), "eight")
    "expected an integer, got 'eight'"
    """
    if kind == "choice":
        text = str(value).lower() if isinstance(value, bool) else str(value)
        if text in values or (ignore_case and text.casefold() in {v.casefold() for v in values}):
            return None
        return f"{value!r} is not one of: {', '.join(values)}"
    if kind == "bool":
        if isinstance(value, bool) or (isinstance(value, str) and value.lower() in ("true", "false")):
            return None
        return f"expected true or false, got {value!r}"
    if kind == "int":
        if isinstance(value, bool):
            return f"expected an integer, got {value!r}"
        if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("-").isascii() and value.strip().lstrip("-").isdigit()):
            return None
        return f"expected an integer, got {value!r}"
    if kind == "float":
        if isinstance(value, bool):
            return f"expected a number, got {value!r}"
        if isinstance(value, (int, float)):
            return None
        try:
            float(value)
        except (TypeError, ValueError):
            return f"expected a number, got {value!r}"
        return None
    return None


def catalog_path(root: str, component: str) -> str:
    return os.path.join(root, OPTIONS_DIR, f"{component}.toml")
