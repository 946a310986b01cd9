"""The plain data the database is made of."""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Callable
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from .._record import Record
from .._text import dotted_numbers
from .conditions import Condition
from .requires import parse_requirement, parse_specifier, requirement_error

_NAME = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA = re.compile(r"""extra\s*==\s*['"]([^'"]+)['"]""")


__all__ = ["Source", "OptionSpec", "Dependency", "Release", "Rule", "Build", "Component", "SEVERITIES", "RULE_KINDS"]

SEVERITIES = ("error", "warning", "info")
RULE_KINDS = ("requirement", "lockstep", "known-issue", "behaviour-change", "note")
LOCKSTEP = ("version", "minor")
DEFAULT_SEVERITY = {
    "requirement": "error",
    "lockstep": "error",
    "known-issue": "warning",
    "behaviour-change": "warning",
    "note": "info",
}
LAYERS = ("metadata", "curated")


class Source(Record):
    """Where a fact comes from: a release, a pull request, a vendor table, an index."""

    id: str
    project: str
    title: str
    kind: str
    url: str | None = None
    ref: str | None = None
    commit: str | None = None
    date: _dt.date | None = None
    item: str | None = None
    # where a derived fact was read (knowledge/derived.py): the file at `commit`, or the wheel's file name
    path: str | None = None
    line: int | None = None
    sha256: str | None = None

    @classmethod
    def from_table(cls, table: Any, source_id: str, kinds: tuple[str, ...], default: str, *,
                   located: bool = False) -> Source:
        """One ``[[source]]`` table (a knowledge/_schema.py Table, its keys
        checked by the caller): ``_sources.toml``'s, or with `located` a
        derived file's, which also says where it was read (path, line, sha256)."""
        line = table.data.get("line") if located else None
        if line is not None and (not isinstance(line, int) or isinstance(line, bool)):
            raise table.error(f"expected a line number, got {line!r}"[:200], "line")
        return cls(
            id=source_id,
            project=table.text("project", required=True),
            title=table.text("title", required=True),
            kind=table.choice("kind", kinds, default),
            url=table.text("url"),
            ref=table.text("ref"),
            commit=table.text("commit"),
            date=table.date("date"),
            item=None if located else table.text("item"),
            path=table.text("path") if located else None,
            line=line,
            sha256=table.text("sha256") if located else None,
        )

    def cite(self) -> str:
        """One line for reports.

        >>> Source("x", "vLLM", "vLLM 0.32.0 release", "release", commit="5df63a7", date=_dt.date(2026, 10, 18)).cite()
        'vLLM 0.32.0 release (5df63a7, 2026-10-18)'
        """
        commit = self.commit[:12] if self.commit else None  # a derived fact's full commit, shortened to read
        extra = [p for p in (commit, self.date.isoformat() if self.date else None) if p]
        text = self.title
        if extra:
            text += f" ({', '.join(extra)})"
        return text

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "project": self.project, "title": self.title, "kind": self.kind}
        for key in ("url", "ref", "commit", "item", "path", "line", "sha256"):
            value = getattr(self, key)
            if value:
                data[key] = value
        if self.date:
            data["date"] = self.date.isoformat()
        return data


class OptionSpec(Record):
    """A runtime option of a component that rules may test, as its component
    file states it: a flag no engine catalog (``options/<name>.toml``) lists
    (LTX-2's, ComfyUI's, Transformers' TrainingArguments), a name of compat's
    own (`own`) for a choice its source describes without naming a flag, or,
    for a flag the catalog defines, only `unset`: what the engine's code uses
    when the flag is not given and its parser has no default. The catalog
    holds everything else of such a flag (one home for each fact)."""

    name: str
    summary: str
    values: tuple[str, ...] = ()
    default: Any = None
    source: str | None = None
    unset: Any = None  # the engine's code, not its parser: the value a flag left out takes
    own: bool = False  # compat's name for a choice, not a flag of the component


class Dependency(Record):
    """A requirement of a release, and the layer it comes from."""

    requirement: Requirement
    layer: str  # "metadata" (the release's own Requires-Dist) or "curated"
    source: str | None = None
    reason: str | None = None


class Release:
    """One release of a component, with the requirements it declares.

    A release read from a snapshot keeps its snapshot line and decodes it on
    first use: a check of a three-package stack looks at a handful of the
    hundreds of releases it loads. Requirement lines are parsed only when
    asked for, and only those that can matter (see `dependencies_for`).
    """

    __slots__ = (
        "package", "version", "status", "curated", "relaxed", "extras", "commit", "source", "layer", "file",
        "_raw", "_date", "_requires_python", "_requires_dist", "_wheels", "_parsed", "_cache", "_tags",
        "_metadata_known", "line", "_sdist", "_build_system", "_lines",
    )

    def __init__(
        self,
        package: str,
        version: Version,
        *,
        date: _dt.date | None = None,
        status: str = "release",
        requires_python: SpecifierSet | None = None,
        requires_dist: tuple[str, ...] = (),
        curated: tuple[Dependency, ...] = (),
        relaxed: frozenset[str] = frozenset(),
        extras: tuple[str, ...] = (),
        commit: str | None = None,
        source: str | None = None,
        layer: str = "metadata",
        file: str | None = None,
        raw: Callable[[], dict[str, Any]] | None = None,
        wheels: Callable[[], list[dict[str, Any]]] | None = None,
        line: int | None = None,
    ) -> None:
        self.package = package
        self.version = version
        self.status = status
        self.curated = curated
        self.relaxed = relaxed
        self.extras = extras
        self.commit = commit
        self.source = source
        self.layer = layer
        self.file = file
        self._raw = raw
        self._date = date
        self._requires_python = requires_python
        self._requires_dist = requires_dist
        self._wheels: tuple[dict[str, Any], ...] | Callable[[], list[dict[str, Any]]] = wheels or ()
        self._parsed: tuple[Dependency, ...] | None = None
        self._cache: dict[str, Requirement] = {}
        self._tags: tuple[str, ...] = ()
        self._metadata_known = True
        self._sdist: str | bool | None = None
        self._build_system: dict[str, Any] | str | None = None
        self._lines: tuple[tuple[int, str, frozenset[str] | None, str | None], ...] | None = None
        self.line = line  # the snapshot line it was read from (`file`'s), for errors

    def __repr__(self) -> str:
        return f"Release({self.package!r}, {str(self.version)!r}, status={self.status!r}, layer={self.layer!r})"

    def _decode(self) -> None:
        if self._raw is None:
            return
        decode, self._raw = self._raw, None
        entry = decode()
        self._requires_dist = tuple(entry.get("requires_dist", ()))
        text = entry.get("requires_python")
        self._requires_python = parse_specifier(text) if text else None
        if self._date is None and entry.get("uploaded"):
            self._date = _dt.date.fromisoformat(entry["uploaded"][:10])
        self._tags = tuple(entry.get("tags", ()))
        self._metadata_known = entry.get("metadata") != "unknown"
        sdist = entry.get("sdist")
        if sdist is None and not self._tags and str(entry.get("file", "")).endswith((".tar.gz", ".zip")):
            sdist = entry["file"]  # a release whose metadata was read from its sdist has one, whatever the snapshot's age
        self._sdist = sdist
        self._build_system = entry.get("build_system")

    @property
    def date(self) -> _dt.date | None:
        self._decode()
        return self._date

    @date.setter
    def date(self, value: _dt.date | None) -> None:
        self._decode()
        self._date = value

    @property
    def requires_python(self) -> SpecifierSet | None:
        self._decode()
        return self._requires_python

    @property
    def requires_dist(self) -> tuple[str, ...]:
        self._decode()
        return self._requires_dist

    @property
    def tags(self) -> tuple[str, ...]:
        """The wheel tags of the release on the index (``cp312-cp312-manylinux_2_28_x86_64``),
        as the snapshot records them; empty when unknown (a curated release)."""
        self._decode()
        return self._tags

    @property
    def sdist(self) -> str | bool | None:
        """The sdist an installer builds when no wheel fits: its file name;
        False when the release has none; None when the snapshot does not
        record it (an older snapshot, a curated release)."""
        self._decode()
        return self._sdist

    @property
    def build_system(self) -> dict[str, Any] | str | None:
        """How its sdist is built, as the snapshot records it
        (snapshot.build_system_problem): ``{"backend", "requires"}`` and
        perhaps ``index_url`` and ``unmet``; "unknown" when the sdist's
        pyproject.toml could not be read; None when not recorded."""
        self._decode()
        return self._build_system

    def build_requirement(self, index: int) -> Requirement:
        """Line `index` of the build system's ``requires``, parsed; a line
        that cannot be used is a DatabaseError naming the line and the key."""
        build_system = self.build_system
        assert isinstance(build_system, dict)
        text = build_system["requires"][index]
        try:
            return parse_requirement(text)
        except ValueError as exc:
            raise requirement_error(text, str(exc), self.file, self.line, index,
                                    key="build_system.requires") from None

    @property
    def metadata_known(self) -> bool:
        """False for a release whose requirements the index does not state
        (an sdist with dynamic or pre-2.2 metadata): its empty Requires-Dist
        means "unknown", never "no requirements"."""
        self._decode()
        return self._metadata_known

    @property
    def wheels(self) -> tuple[dict[str, Any], ...]:
        """The release's wheels on the index (file, url, sha256, size), where the snapshot has them."""
        if callable(self._wheels):
            self._wheels = tuple(self._wheels())
        return self._wheels

    @property
    def is_prerelease(self) -> bool:
        return self.status == "pre-release" or self.version.is_prerelease

    @property
    def is_yanked(self) -> bool:
        return self.status == "yanked"

    def requirement(self, index: int) -> Requirement:
        """Requires-Dist line `index`, parsed (and kept). The snapshot reader
        leaves the lines of a check's releases unparsed: a line that cannot
        be used is refused here, when it is first read, with the error the
        reader would give (a DatabaseError naming the line and the key)."""
        text = self.requires_dist[index]
        requirement = self._cache.get(text)
        if requirement is None:
            try:
                requirement = self._cache[text] = parse_requirement(text)
            except ValueError as exc:
                raise requirement_error(text, str(exc), self.file, self.line, index) from None
        return requirement

    @property
    def dependencies(self) -> tuple[Dependency, ...]:
        """Every requirement: declared (metadata) ones first, then curated ones."""
        if self._parsed is None:
            declared = tuple(Dependency(self.requirement(i), "metadata") for i in range(len(self.requires_dist)))
            declared = tuple(d for d in declared if canonicalize_name(d.requirement.name) not in self.relaxed)
            self._parsed = declared + self.curated
        return self._parsed

    def extra_requirements(self, extra: str) -> list[Any]:
        """The Requires-Dist lines that `extra` (normalized) brings: those
        whose marker names it, each parsed once (`requirement`)."""
        return [self.requirement(index) for index, text in enumerate(self.requires_dist)
                if "extra" in text and extra in {canonicalize_name(e) for e in _EXTRA.findall(text)}]

    def dependencies_for(
        self, extras: frozenset[str] = frozenset(), wanted: Callable[[str], bool] | None = None,
        pins: Callable[[str, str], bool] | None = None,
    ) -> list[Dependency]:
        """The requirements that can apply when `extras` are requested.

        Most Requires-Dist lines of a large package belong to extras nobody
        asked for, or name packages nobody tracks; those are skipped before
        they are parsed (`wanted` sees the normalized name), except a line
        that pins one release (``name==1.0``) `pins` asks for, given the name
        and the version as written. Parsed lines are kept for the next call.
        """
        out = []
        for index, name, named, pinned in self._line_index():
            if named is not None and (not extras or not (named & extras)):
                continue
            if wanted is not None and name and not wanted(name):
                if pinned is None or pins is None or not pins(name, pinned):
                    continue
            out.append(Dependency(self.requirement(index), "metadata"))
        out.extend(self.curated)
        return out

    def _line_index(self) -> tuple[tuple[int, str, frozenset[str] | None, str | None], ...]:
        """Each Requires-Dist line not relaxed, as `dependencies_for` sifts it, read once per release: its
        index, its project's normalized name ("" where none is read), the extras its marker names (None: no
        extra), and the version it pins alone (`_pin_text`). Measured (both example checks, 20 paired runs in
        fresh processes): parsing every line of the releases a check reads instead costs 20 to 30 ms of CPU a
        check, 6 to 9% of it."""
        if self._lines is None:
            lines = []
            for index, text in enumerate(self.requires_dist):
                named = frozenset(canonicalize_name(e) for e in _EXTRA.findall(text)) if "extra" in text else None
                head = _NAME.match(text)
                name = canonicalize_name(head.group(0).strip()) if head is not None else ""
                if name in self.relaxed:
                    continue
                pinned = _pin_text(text, head.end()) if head is not None else None
                lines.append((index, name, named or None, pinned))
            self._lines = tuple(lines)
        return self._lines


def _pin_text(text: str, start: int) -> str | None:
    """The version a Requires-Dist line pins alone (``==1.0``, after the
    name that ends at `start`, its extras, and in parentheses or not), as
    written; None for any other line (which its parse would read the same).

    >>> _pin_text("numba==0.65.0; python_version < '3.14'", 5), _pin_text("x[a] (== 1.2)", 1)
    ('0.65.0', '1.2')
    >>> _pin_text("x>=1,==1.2", 1), _pin_text("x===1.2", 1), _pin_text("x==1.*", 1)
    (None, None, None)
    """
    spec = text[start:].split(";", 1)[0].strip()
    if spec.startswith("["):
        spec = spec[spec.find("]") + 1:].strip() if "]" in spec else ""
    if spec.startswith("(") and spec.endswith(")"):
        spec = spec[1:-1].strip()
    if not spec.startswith("==") or spec.startswith("===") or "," in spec or spec.endswith(".*"):
        return None
    return spec[2:].strip() or None


class Rule(Record):
    """A curated fact about some releases of a component.

    kind "requirement": when `when` holds, `require` must hold too, or the
    stack fails at `severity`. The other kinds are notes shown (at their
    severity) to the stacks that meet `when`: a known issue of the affected
    releases (`fixed_in` says where it is fixed), a behaviour change of the
    releases since it came, a measured note with the conditions it was
    measured under.
    """

    id: str
    package: str
    kind: str
    releases: SpecifierSet
    when: Condition
    require: Condition | None
    severity: str
    message: str
    source: str
    fixed_in: Version | None = None
    file: str | None = None
    # further sources the fact rests on, with `source`: the code that refuses, where `source` is the code
    # that calls it (LTX-2's FP8 layer, which calls torch._scaled_mm; PyTorch's check of the GPU)
    also: tuple[str, ...] = ()
    partners: tuple[str, ...] = ()  # lockstep rules: the packages that move with this one
    same: str | None = None  # lockstep rules: "version" or "minor"
    inferred: bool = False  # the source does not state the fact: it is inferred from `basis`
    basis: str | None = None  # what an inferred fact rests on
    introduced: Version | None = None  # notes and behaviour changes: the release whose notes state it

    def shown_for(self, version: Version | None) -> bool:
        """Whether a note of the release that `introduced` it speaks of `version`.

        >>> rule = Rule("r", "a", "note", SpecifierSet(">=0.32.0"), Condition(), None, "info", "", "s",
        ...             introduced=Version("0.32.0"))
        >>> rule.shown_for(Version("0.32.0")), rule.shown_for(Version("0.33.0"))
        (True, False)
        """
        if self.introduced is None or version is None:
            return True
        return Version(version.public) == self.introduced

    def covers(self, version: Version | None) -> bool:
        if version is None:
            return False
        return self.releases.contains(version, prereleases=True)

    def partner_specifier(self, mine: Version) -> SpecifierSet:
        """What a lockstep partner's version must meet beside release `mine`.

        >>> rule = Rule("r", "a", "lockstep", SpecifierSet(), Condition(), None, "error", "", "s", same="minor")
        >>> str(rule.partner_specifier(Version("0.32.1")))
        '==0.32.*'
        """
        if self.same == "minor":
            major, minor = (*mine.release, 0)[:2]
            return SpecifierSet(f"=={major}.{minor}.*")
        return SpecifierSet(f"=={mine.public}")

    def in_step(self, mine: Version, theirs: Version) -> bool:
        """Whether a partner's version moves in step with this component's (lockstep rules).

        >>> rule = Rule("r", "a", "lockstep", SpecifierSet(), Condition(), None, "error", "", "s", same="minor")
        >>> rule.in_step(Version("0.32.1"), Version("0.32.0")), rule.in_step(Version("0.32.1"), Version("0.33.0"))
        (True, False)
        """
        return self.partner_specifier(mine).contains(theirs, prereleases=True)


def _arch(text: str) -> tuple[str, str, str] | None:
    r"""(major, minor, suffix) of ``[0-9]+\.[0-9]+[af]?``, `text` stripped, or None."""
    text = text.strip()
    suffix = text[-1:] if text[-1:] in ("a", "f") else ""
    parts = dotted_numbers(text[: len(text) - len(suffix)])
    return (parts[0], parts[1], suffix) if parts is not None and len(parts) == 2 else None


def parse_arch(text: str) -> tuple[Version, str]:
    """``"9.0a"`` -> (9.0, "a"): a compute capability and its suffix
    (``a``: architecture-specific, runs only there; ``f``: family-specific).

    >>> parse_arch("12.0f")
    (<Version('12.0')>, 'f')
    """
    found = _arch(text)
    if found is None:
        raise ValueError(arch_problem(text) or text)
    return Version(f"{found[0]}.{found[1]}"), found[2]


def arch_problem(text: str) -> str | None:
    """Why `text` is not an architecture `parse_arch` reads, or None (without
    making the Version: a build file lists hundreds).

    >>> arch_problem("9.0a") is None, arch_problem("sm_90") is None, arch_problem("\u0669.0") is None
    (True, False, False)
    """
    if _arch(text) is not None:
        return None
    return f"not an architecture: {text!r} (write it as \"9.0\", \"9.0a\" or \"12.0f\")"


class Build(Record):
    """One build of some releases of a package: the wheels one index serves
    for them, what they were built with, and the GPUs they carry kernels for."""

    id: str
    package: str
    releases: SpecifierSet
    index: str  # "pypi", or a PyTorch index variant (cu128, rocm6.4, cpu)
    accelerator: str  # cuda, rocm, cpu
    source: str
    also: tuple[str, ...] = ()  # further sources that state the same (the build's other wheels, read alike)
    label: str | None = None  # the local version label of its wheels (+cu128)
    cuda: Version | None = None
    # a build that carries a library per CUDA runtime, the one loaded following torch's (bitsandbytes): each
    # runtime; `cuda` is then the lowest
    cudas: tuple[Version, ...] = ()
    rocm: Version | None = None
    platforms: tuple[str, ...] = ()
    archs: tuple[str, ...] = ()
    ptx: Version | None = None
    archs_source: str | None = None  # the source of `archs`, where it is not the build's own
    archs_basis: str | None = None  # set when `archs` is inferred for these releases: what it rests on
    exact: bool = False
    needs_gpu: bool = True  # False for a build that also runs on the CPU (torch's CUDA builds)
    # How its wheels' Requires-Dist differ from those of the package index's build (the snapshot's):
    # the projects whose lines they do not carry (`drops`, a trailing * matches a prefix), the lines
    # they carry instead (`adds`), the source of both, and what of them no source here gives.
    drops: tuple[str, ...] = ()
    adds: tuple[str, ...] = ()
    requires_source: str | None = None
    requires_unknown: str | None = None
    note: str | None = None
    file: str | None = None
    layer: str = "curated"  # or "metadata": inferred from the release's own pins

    def covers(self, version: Version) -> bool:
        public = version if version.local is None else Version(version.public)
        return self.releases.contains(public, prereleases=True)

    @property
    def requires_declared(self) -> bool:
        """Whether the database says how this build's requirements differ from
        the package index's build (the snapshot's): true of the index's own."""
        return self.index == "pypi" or bool(self.drops or self.adds or self.requires_source)

    def drops_line(self, project: str) -> bool:
        """Whether the build's wheels do not carry the index build's line on `project` (normalized).

        >>> b = Build("b", "torch", SpecifierSet(), "cpu", "cpu", "s", drops=("nvidia-*", "triton"))
        >>> b.drops_line("nvidia-cublas"), b.drops_line("triton"), b.drops_line("sympy")
        (True, True, False)
        """
        return any(project.startswith(p[:-1]) if p.endswith("*") else project == p for p in self.drops)

    def serves(self, capability: Version) -> bool:
        """Whether the build has kernels a GPU of this compute capability can run.

        Kernels (SASS) for sm_XY run on sm_XZ with Z >= Y (binary compatibility
        within a major), unless the build selects kernels by exact architecture
        or the kernel is architecture-specific (``9.0a``); PTX runs on any newer GPU.

        >>> b = Build("b", "p", SpecifierSet(), "pypi", "cuda", "s", archs=("8.0", "9.0a"))
        >>> b.serves(Version("8.6")), b.serves(Version("9.0")), b.serves(Version("10.0"))
        (True, True, False)
        """
        if not self.archs:
            return True
        for text in self.archs:
            arch, suffix = parse_arch(text)
            if arch == capability:
                return True
            if not self.exact and suffix != "a" and arch.major == capability.major and arch.minor <= capability.minor:
                return True
        return self.ptx is not None and capability >= self.ptx

    def describe(self) -> str:
        """``the package index's CUDA 13.0 build``, ``the cu128 build (CUDA 12.8)``"""
        what = f"CUDA {self.cuda}" if self.cuda else (f"ROCm {self.rocm}" if self.rocm else "CPU")
        if self.index == "pypi":
            return f"the package index's {what} build"
        return f"the {self.index} build ({what})"

    def arch_text(self) -> str:
        parts = ["sm_" + a.replace(".", "") for a in self.archs]
        if self.ptx is not None:
            parts.append(f"PTX {self.ptx}")
        return ", ".join(parts)


class Unread:
    """The rules (or builds) of a component file, each parsed when first
    needed. A check of one release needs those whose ``releases`` cover it:
    torch's file lists dozens of builds, and a check of one torch release
    reads a few. `covering` parses those alone (a range that does not parse
    counts as covering, so that parsing it says what is wrong);
    `every` parses all of them, and checks what only the whole list can
    (that no ID is given twice): `compat db lint` and `db show` ask it.
    """

    def __init__(self, tables: list[Any], parse: Callable[[Any, set[str] | None], Any],
                 public: bool = False) -> None:
        self._tables = tables
        self._parse = parse  # (table, the IDs seen so far, or None) -> the fact
        self._public = public  # coverage of the public version (builds: a +cu128 build is of its release)
        self._made: dict[int, Any] = {}
        self._ranges: dict[int, SpecifierSet | None] = {}

    def _range(self, index: int) -> SpecifierSet | None:
        if index not in self._ranges:
            written = self._tables[index].data.get("releases", "")
            try:
                self._ranges[index] = parse_specifier(written) if isinstance(written, str) else None
            except ValueError:  # InvalidSpecifier: the parse says so
                self._ranges[index] = None
        return self._ranges[index]

    def _one(self, index: int) -> Any:
        if index not in self._made:
            self._made[index] = self._parse(self._tables[index], None)
        return self._made[index]

    def covering(self, version: Version | None, keep: Callable[[Any], bool] | None = None) -> list[Any]:
        """The facts whose releases cover `version` (among the tables `keep` keeps)."""
        if version is None:
            return []
        if self._public and version.local is not None:
            version = Version(version.public)
        out = []
        for index in range(len(self._tables)):
            if keep is not None and index not in self._made and not keep(self._tables[index]):
                continue
            releases = self._range(index)
            if releases is None or releases.contains(version, prereleases=True):
                fact = self._one(index)
                if fact.covers(version):
                    out.append(fact)
        return out

    def every(self) -> list[Any]:
        seen: set[str] = set()
        out = []
        for table in self._tables:  # each parsed again, with the IDs before it: one given twice is refused
            out.append(self._parse(table, seen))
            seen.add(out[-1].id)
        return out

    def __len__(self) -> int:
        return len(self._tables)


class Component:
    """A tracked component: a Python package on the index, or an application.

    (A plain class: a dataclass's generated methods cost more to make at
    import than the rest of this module, and nothing compares or copies
    components.)
    """

    def __init__(
        self,
        name: str,
        kind: str,  # "package" or "application"
        summary: str = "",
        homepage: str | None = None,
        *,
        file: str | None = None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.summary = summary
        self.homepage = homepage
        self.options: dict[str, OptionSpec] = {}
        self.releases: dict[Version, Release] = {}
        # The file's rules and builds, each parsed when first needed (see `Unread`);
        # those added once parsed (an overlay's) come after them.
        self._rules: list[Rule] = []
        self._builds: list[Build] = []
        self.unread_rules: Unread | None = None
        self.unread_builds: Unread | None = None
        self.file = file
        self.snapshot_taken: _dt.date | None = None
        self.snapshot_index: str | None = None
        # Every version the index listed when the snapshot was taken, as written (None: not recorded).
        self.index_listed: tuple[str, ...] | None = None
        self.tracked = True
        # The engine's flags release by release (an OptionCatalog, or None), read
        # when first asked for: set by the database that read the component.
        self.flag_catalog: Callable[[], Any] | None = None
        self._index_versions: frozenset[Version] | None = None
        self._newest_first: list[Version] | None = None
        self._newest_final: tuple[Version | None] | None = None
        self._builds_for: dict[tuple[Version, str | None], tuple[Unread | None, int, list[Build]]] = {}
        self._rules_for: dict[Version | None, tuple[Unread | None, int, list[Rule]]] = {}
        self.met: dict[SpecifierSet, bool] = {}  # knowledge.database.meets, per specifier

    def __repr__(self) -> str:
        return f"Component({self.name!r}, {self.kind!r})"

    @property
    def rules(self) -> list[Rule]:
        """Every rule, in file order (each parsed now, if it was not yet)."""
        if self.unread_rules is not None:
            self._rules[:0] = self.unread_rules.every()
            self.unread_rules = None
        return self._rules

    @property
    def builds(self) -> list[Build]:
        """Every build, in file order (each parsed now, if it was not yet)."""
        if self.unread_builds is not None:
            self._builds[:0] = self.unread_builds.every()
            self.unread_builds = None
        return self._builds

    @property
    def has_builds(self) -> bool:
        """Whether the database lists any build of the component (without parsing them)."""
        return bool(self._builds) or bool(self.unread_builds)

    def rules_for(self, version: Version | None) -> list[Rule]:
        """The rules that cover `version`, in file order: a check parses only
        these. Found once per version while the component's rules stay as
        they are (as `builds_for`): a resolution asks for each release it
        judges, and a matrix or a search for fixes for the same ones again."""
        if not self._rules and self.unread_rules is None:
            return []
        unread, parsed = self.unread_rules, len(self._rules)
        cached = self._rules_for.get(version)
        if cached is not None and cached[0] is unread and cached[1] == parsed:
            return list(cached[2])
        found = [*(unread.covering(version) if unread is not None else []),
                 *(r for r in self._rules if r.covers(version))]
        self._rules_for[version] = (unread, parsed, found)
        return list(found)

    def builds_for(self, version: Version, index: str | None = None) -> list[Build]:
        """The builds of `version`, in file order: a check parses only these
        (with `index`, only that index's: what a table says it is served
        by is read before it is parsed). Found once per version and index
        while the component's builds stay as they are (torch has a hundred)."""
        unread, parsed = self.unread_builds, len(self._builds)
        key = (version, index)
        cached = self._builds_for.get(key)
        if cached is not None and cached[0] is unread and cached[1] == parsed:  # the same builds as then
            return list(cached[2])
        found = self._find_builds(version, index)
        self._builds_for[key] = (unread, parsed, found)
        return list(found)

    def _find_builds(self, version: Version, index: str | None) -> list[Build]:
        keep = None if index is None else (lambda table: (table.data.get("index") or "pypi") == index)
        unread = self.unread_builds.covering(version, keep) if self.unread_builds is not None else []
        return [b for b in (*unread, *(b for b in self._builds if b.covers(version))) if index is None or b.index == index]

    @property
    def index_versions(self) -> frozenset[Version] | None:
        """The index's whole release list, parsed on first use (most checks never ask)."""
        if self.index_listed is None:
            return None
        if self._index_versions is None:
            parsed = set()
            for text in self.index_listed:
                try:
                    parsed.add(Version(text))
                except InvalidVersion:
                    continue  # listed, but no installer can ask for it by a PEP 440 specifier
            self._index_versions = frozenset(parsed)
        return self._index_versions
    def release(self, version: Version) -> Release | None:
        return self.releases.get(version)

    def versions(self) -> list[Version]:
        return sorted(self.releases)

    def exists(self, version: Version) -> bool | None:
        """Whether the index has this version (local labels aside); None when
        the snapshot does not record the index's whole list, or the version
        may have been released since the snapshot was taken.

        A version the list lacks is "newer than the snapshot" when it sorts
        above the newest *final* release the list holds, whatever
        pre-releases it also holds: a project that has a 3.0.0b2 out still
        ships 2.76.0 after 2.75.0. Below that final release the list is
        complete, and a version it lacks does not exist."""
        public = Version(version.public)
        if public in self.releases:
            return True
        if self.index_versions is None:
            return None
        if public in self.index_versions:
            return True
        ceiling = self.newest_final
        if ceiling is None or public > ceiling:
            return None
        return False

    def beyond_snapshot(self, specifier: SpecifierSet) -> bool:
        """Whether every release `specifier` admits sorts above the newest
        final release the snapshot's list holds (its lower bound is above
        it: ``>=0.19.1,<0.20`` of a list that stops at 0.17.2): such a
        release may have come out since the snapshot was taken, as `exists`
        says of a version.

        >>> c = Component("k", "package")
        >>> c.index_listed = ("0.17.2", "0.18.0rc1")
        >>> c.beyond_snapshot(SpecifierSet(">=0.19.1,<0.20")), c.beyond_snapshot(SpecifierSet("==0.19.*"))
        (True, True)
        >>> c.beyond_snapshot(SpecifierSet(">=0.16,<0.17")), c.beyond_snapshot(SpecifierSet("<0.20"))
        (False, False)
        """
        ceiling = self.newest_final
        if ceiling is None:
            return False
        floors = []
        for one in specifier:
            if one.operator in ("==", "===", ">=", ">", "~="):
                try:
                    floors.append(Version(one.version.removesuffix(".*")))
                except InvalidVersion:
                    continue
        floor = max(floors, default=None)
        return floor is not None and Version(floor.public) > ceiling

    @property
    def newest_final(self) -> Version | None:
        """The newest final (not pre- or dev-) release the index listed when
        the snapshot was taken; None without a recorded list or a final release."""
        if self.index_versions is None:
            return None
        if self._newest_final is None:
            finals = [v for v in self.index_versions if not v.is_prerelease]
            self._newest_final = (max(finals),) if finals else (None,)
        return self._newest_final[0]

    def newest_first(self) -> list[Version]:
        """Release versions, newest first (cached: releases do not change once loaded)."""
        if self._newest_first is None or len(self._newest_first) != len(self.releases):
            self._newest_first = sorted(self.releases, reverse=True)
        return self._newest_first
