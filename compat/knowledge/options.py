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
from collections.abc import Iterable
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from .._record import Record
from .. import _toml
from .._versions import overlap
from ..errors import DatabaseError
from ._schema import Table
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

    def _index(self, entries: list[Any]) -> None:
        # a definition (OptionDef), or one not yet checked (Table)
        self._entries: list[Any] = entries
        self._by_key: dict[str, list[int]] = {}  # a spelling -> the positions of its definitions, in file order
        by_key = self._by_key
        for position, entry in enumerate(entries):
            name, more = _spellings(entry)
            for key in {option_key(a) for a in (name, *more)}:
                by_key.setdefault(key, []).append(position)

    @property
    def options(self) -> list[OptionDef]:
        """Every definition, in file order (each read now if it was not yet)."""
        return [self._entry(position) for position in range(len(self._entries))]

    def _entry(self, position: int) -> OptionDef:
        entry = self._entries[position]
        if isinstance(entry, OptionDef):
            return entry
        if isinstance(entry, Table):
            entry = self._entries[position] = _parse_option(entry, self.covers)
        return entry

    @classmethod
    def load(cls, path: str, component: str) -> OptionCatalog:
        """The catalog of the file at `path` (its JSON rendering, in a wheel),
        each definition checked when its flag is first looked up. (A check
        once searched the file's text for the one flag it asked about
        instead; measured, that saved under half a millisecond.)"""
        data, text = _toml.load(path, error=DatabaseError)
        return cls._from(data, path, component, text=text)

    @classmethod
    def _from(cls, data: dict[str, Any], path: str, component: str, *, text: str | None = None) -> OptionCatalog:
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
        return cls(component, covers, root.tables("option"), path,
                   _parse_gpus(gpus) if gpus is not None else None, abbreviations)

    def spellings(self) -> dict[str, list[int]]:
        """Each spelling a flag is looked up by, and the positions of its definitions."""
        return {k: list(v) for k, v in sorted(self._by_key.items())}

    def definitions(self, flag: str) -> list[OptionDef]:
        """Every definition of `flag` (a name or alias, any spelling), oldest range first."""
        return [self._entry(position) for position in self._by_key.get(option_key(flag), ())]

    def knows(self, flag: str) -> bool:
        return bool(self._by_key.get(option_key(flag)))

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
        key = option_key(flag)
        names = {_spellings(self._entries[p])[0] for k, ps in self._by_key.items() if k.startswith(key) for p in ps}
        return names.pop() if len(names) == 1 else None

    def at(self, flag: str, version: Version | None) -> OptionDef | None:
        """The definition of `flag` in release `version` (None: no such flag
        there). A flag is defined anew for each range of releases whose
        parser changed it: only the definition that holds is read."""
        for position in self._by_key.get(option_key(flag), ()):
            option = self._entry(position)
            if option.has(version):
                return option
        return None

    def suggest(self, flag: str) -> str | None:
        """The flag (or alias) spelled closest to `flag`, for a did-you-mean."""
        from .._names import nearest

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


def _spellings(entry: Any) -> tuple[str, tuple[str, ...]]:
    """The name and aliases of a definition, read or not (what is not text is
    refused when the definition is read)."""
    if isinstance(entry, OptionDef):
        return entry.name, entry.aliases
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
