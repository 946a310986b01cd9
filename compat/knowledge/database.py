"""The constraint database: components, their releases, rules and sources.

Layout of a database folder (the bundled one is ``data/``)::

    gpus.toml                  the GPU catalog
    platforms.toml             the platforms a stack may name (the bundled one where a folder has none)
    models.toml                the model catalog (read only for a stack with [model])
    options/<name>.toml        an engine's command-line flags, release by release
    constraints/_sources.toml  every source a fact may cite, by ID
    constraints/<name>.toml    one component: options, curated releases, rules
    metadata/<name>.jsonl      the index metadata snapshot of one package

Nothing is read until it is asked for, so a check of a three-package stack
reads three components, however large the database grows.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from typing import TYPE_CHECKING, Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from .._record import Record
from .. import _toml
from .._names import normalize
from ..errors import DatabaseError
from .._strict import MAX_DIGITS
from .._versions import parse_version
from ._schema import Table, database_error, read_text
from .catalog import Gpu, GpuCatalog
from .graph import GRAPH_FILE, read_graph, relevant, requirers_first
from .conditions import Condition, ConditionError, parse_condition
from .model import (
    DEFAULT_SEVERITY,
    LOCKSTEP,
    RULE_KINDS,
    Build,
    SEVERITIES,
    Component,
    Dependency,
    OptionSpec,
    Release,
    Rule,
    Source,
    Unread,
)
from .paths import default_data_dir
from .platforms import PLATFORMS_FILE, PlatformTable, bundled_platforms, load_platforms
from .requires import parse_specifier
from .snapshot import (
    _release_version, line_reader, release_table, requirement_problem, snapshot_names,
    snapshot_release, wheel_records,
)

if TYPE_CHECKING:
    from .models import ModelCatalog, ModelEntry
    from .options import OptionCatalog

__all__ = ["Database", "Releases", "is_yanked", "meets"]

SCHEMA = 1
SOURCES_FILE = "_sources.toml"
SOURCE_KINDS = ("release", "pull-request", "commit", "code", "digest", "vendor-table", "index", "issue", "documentation")


class Database:
    """A constraint database on disk, read lazily.

    >>> db = Database.load()
    >>> "vllm" in db.names()
    True
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.constraints_dir = os.path.join(root, "constraints")
        self.metadata_dir = os.path.join(root, "metadata")
        self._components: dict[str, Component | None] = {}
        self._catalog: GpuCatalog | None = None
        self._models: ModelCatalog | None = None
        self._option_catalogs: dict[str, OptionCatalog | None] = {}
        self._sources: dict[str, Source] | None = None
        self._source_cache: dict[str, Source | None] = {}
        self._sources_file: dict[str, Any] | None = None  # _sources.toml's tables by ID, when a check first cites one
        self._names: set[str] | None = None
        self._curated: set[str] | None = None
        self._cuda: CudaFacts | None = None
        self._pythons: tuple[PythonRelease, ...] | None = None
        self._platforms: PlatformTable | None = None
        self._graph: dict[str, Any] | None = None
        self._relevant: dict[frozenset[str], frozenset[str] | None] = {}
        self._requirers_first: dict[str, int] | None = None
        self._derived_names: dict[str, list[str]] | None = None  # name -> the stems of its derived files
        self._derived: dict[str, list[Any]] = {}  # name -> its derived files, read (derived.DerivedFile)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> Database:
        """Open the database at `path` (default: the bundled one, with the user
        data folder's snapshots over it), with the chosen overlay (layers.py)."""
        root = os.fspath(path) if path is not None else default_data_dir()
        if not os.path.isdir(os.path.join(root, "constraints")):
            raise DatabaseError("not a compat database (no constraints/ folder)", file=root)
        from .layers import open_layers  # the user's snapshots and overlay over it, when there are any

        return open_layers(root, explicit=path is not None)

    @classmethod
    def shared(cls, path: str | os.PathLike[str] | None = None) -> Database:
        """The database at `path`, loaded once per process and reused while
        its files stay as they were (a deployment script or a matrix calls
        `compat.check` thousands of times: each call reloading the database
        costs about three times the check).

        Reuse is keyed on the folder and the modification times and sizes of
        its curated files, and of the metadata folder and its names graph,
        which `compat db sync` rewrites whenever a snapshot changes. A
        snapshot edited in place by hand is not noticed: use `load` then.
        """
        root = os.path.realpath(os.fspath(path) if path is not None else default_data_dir())
        from .layers import layers_signature  # the user's layers count too (layers.py)

        key = _signature(root) + layers_signature(explicit=path is not None)
        cached = _SHARED.get(root)
        if cached is not None and cached[0] == key:
            return cached[1]
        database = cls.load(root if path is not None else None)
        _SHARED[root] = (key, database)
        return database

    # -- what exists -------------------------------------------------------

    def names(self) -> set[str]:
        """Every tracked component: curated ones and those with a snapshot."""
        if self._names is None:
            names = set(Database.curated(self))
            graph = self.graph()
            if graph:
                names.update(graph["packages"])  # hundreds of snapshots: no need to list the folder
            elif os.path.isdir(self.metadata_dir):
                names.update(snapshot_names(os.listdir(self.metadata_dir)))
            self._names = names
        return self._names

    def curated(self) -> set[str]:
        """The components with a file of curated facts (their rules, builds
        and options live nowhere else), without reading the snapshots."""
        if self._curated is None:
            self._curated = {f[: -len(".toml")] for f in os.listdir(self.constraints_dir)
                             if f.endswith(".toml") and not f.startswith("_")}
        return self._curated

    def __contains__(self, name: str) -> bool:
        return normalize(name) in self.names()

    def gpu(self, name: str) -> Gpu | None:
        """One GPU of the catalog by forgiving name (without reading the rest)."""
        if self._catalog is not None:
            return self._catalog.find(name)
        return _first(GpuCatalog.find_in_file(path, name) for path in self.catalog_paths("gpus.toml"))

    def option_catalog(self, component: str) -> OptionCatalog | None:
        """The flags of `component` release by release (``options/<name>.toml``), or None."""
        component = normalize(component)
        if component not in self._option_catalogs:
            from .options import OptionCatalog, catalog_path

            path = catalog_path(self.root, component)
            self._option_catalogs[component] = OptionCatalog.load(path, component) if os.path.exists(path) else None
        return self._option_catalogs[component]

    def model(self, name: str) -> ModelEntry | None:
        """One model of ``models.toml`` by name, repo id or alias (reading only its table)."""
        from .models import MODELS_FILE, ModelCatalog

        if self._models is not None:
            return self._models.find(name)
        return _first(ModelCatalog.find_in_file(path, name) for path in self.catalog_paths(MODELS_FILE))

    @property
    def models(self) -> ModelCatalog:
        """The whole model catalog (for lint and listings; empty without ``models.toml``)."""
        if self._models is None:
            from .models import MODELS_FILE, ModelCatalog

            self._models = ModelCatalog([model for path in self.catalog_paths(MODELS_FILE) if os.path.exists(path)
                                         for model in ModelCatalog.load(path).models])
        return self._models

    @property
    def catalog(self) -> GpuCatalog:
        if self._catalog is None:
            self._catalog = GpuCatalog([gpu for path in self.catalog_paths("gpus.toml")
                                        for gpu in GpuCatalog.load(path).gpus])
        return self._catalog

    def catalog_paths(self, file: str) -> list[str]:
        """The files of the catalog `file` (``gpus.toml``, ``models.toml``),
        the bundled one first (an overlay adds its own: layers.py)."""
        return [os.path.join(self.root, file)]

    def relevant(self, named: Iterable[str]) -> frozenset[str] | None:
        """The packages a check of a stack naming `named` must resolve (see
        graph.py), or None when the database has no graph (then: all)."""
        key = frozenset(named)
        if key not in self._relevant:
            graph = self.graph()
            self._relevant[key] = frozenset(relevant(graph, key)) if graph else None
        return self._relevant[key]

    def requirers_first(self) -> dict[str, int]:
        """Each package's place in an order that puts whatever can require a
        package before it (graph.requirers_first); {} without a graph."""
        if self._requirers_first is None:
            graph = self.graph()
            self._requirers_first = requirers_first(graph) if graph else {}
        return self._requirers_first

    def graph(self) -> dict[str, Any]:
        """The snapshots' names graph (``metadata/_graph.json``), or {} without one."""
        if self._graph is None:
            self._graph = read_graph(self.metadata_dir) or {}
        return self._graph

    @property
    def cuda(self) -> CudaFacts:
        """What ``cuda.toml`` says: driver floors, runtime packages, build labels."""
        if self._cuda is None:
            self._cuda = _load_cuda(os.path.join(self.root, "cuda.toml"))
        return self._cuda

    @property
    def pythons(self) -> tuple[PythonRelease, ...]:
        """What ``python.toml`` says: CPython's feature releases, oldest first."""
        if self._pythons is None:
            self._pythons = _load_pythons(os.path.join(self.root, "python.toml"))
        return self._pythons

    @property
    def platforms(self) -> PlatformTable:
        """What ``platforms.toml`` says: the platforms a stack may name, their
        markers, wheel tags and hosts (the bundled file's where this folder has none)."""
        if self._platforms is None:
            path = os.path.join(self.root, PLATFORMS_FILE)
            self._platforms = load_platforms(path) if os.path.lexists(path) else bundled_platforms()
        return self._platforms

    def _platform_table(self) -> PlatformTable:
        """`platforms`, for a build's parser to ask when it meets a platform name."""
        return self.platforms

    def driver_floor(self, cuda: Version) -> tuple[Version, str] | None:
        """The oldest NVIDIA driver (Linux) CUDA `cuda` runs on, and the source ID."""
        return self.cuda.drivers.get(cuda.major)

    @property
    def sources(self) -> dict[str, Source]:
        if self._sources is None:
            self._sources = _with_derived(_load_sources(os.path.join(self.constraints_dir, SOURCES_FILE)), self)
        return self._sources

    def derived_names(self) -> set[str]:
        """The components with a file of derived facts (``derived/<name>.toml`` or
        ``derived/<name>.<topic>.toml``, see derived.py)."""
        return set(self.derived_stems())

    def derived_stems(self) -> dict[str, list[str]]:
        """Each component's derived files, by the stems of their names (a component's own first)."""
        if self._derived_names is None:
            from .derived import DERIVED_DIR, derived_name

            try:
                listed = os.listdir(os.path.join(self.root, DERIVED_DIR))
            except OSError:
                listed = []
            stems: dict[str, list[str]] = {}
            for file in sorted(listed):
                if file.endswith(".toml") and not file.startswith("_"):
                    stems.setdefault(derived_name(file[: -len(".toml")]), []).append(file[: -len(".toml")])
            self._derived_names = stems
        return self._derived_names

    def derived(self, name: str) -> list[Any]:
        """The derived files of component `name`, each read once (derived.DerivedFile), or []."""
        read = self._derived.get(name)
        if read is None:
            stems = self.derived_stems().get(name)
            if not stems:
                return []
            from .derived import derived_path, read_derived

            read = self._derived[name] = [read_derived(derived_path(self.root, stem), name) for stem in stems]
        return read

    def _every_derived(self) -> list[Any]:
        return [d for name in sorted(self.derived_names()) for d in self.derived(name)]

    def derived_source_file(self, source_id: str) -> str | None:
        """The derived file that defines `source_id`, or None."""
        return next((d.path for d in self._every_derived() if source_id in d.sources), None)

    def derived_sources(self) -> dict[str, Source]:
        """The sources of every derived file, by ID (an ID two files give is refused)."""
        out: dict[str, Source] = {}
        for derived in self._every_derived():
            for source_id, source in derived.sources.items():
                if source_id in out:
                    raise DatabaseError("a source ID another derived file gives", file=derived.path,
                                        key=f"source {source_id}")
                out[source_id] = source
        return out

    def source(self, source_id: str | None) -> Source | None:
        """One source by ID: _sources.toml is read once (its JSON rendering in
        a wheel; parsing the TOML costs a check about 20 ms), and only the
        table asked for is checked."""
        if source_id is None:
            return None
        if self._sources is not None:
            return self._sources.get(source_id)
        if source_id not in self._source_cache:
            found = self._read_source(source_id)
            if found is None and self.derived_names():  # a derived fact's: its file names the file it was read in
                # the derived files read already first (a fact's own file was read with its component): the
                # others are read only for an ID none of those holds
                found = next((d.sources[source_id] for files in self._derived.values() for d in files
                              if source_id in d.sources), None)
                if found is None:
                    found = self.derived_sources().get(source_id)
            self._source_cache[source_id] = found
        return self._source_cache[source_id]

    def _read_source(self, source_id: str) -> Source | None:
        path = os.path.join(self.constraints_dir, SOURCES_FILE)
        if self._sources_file is None:
            try:  # read as lint reads the catalogs: a byte that is not UTF-8 is an error naming its line
                text = read_text(path)
            except OSError:
                return None
            from .. import _compiled

            data = _compiled.read(path, text) or _toml.loads(text, file=path, error=DatabaseError)
            tables = data.get("source")
            self._sources_file = {t["id"]: t for t in tables if isinstance(t, dict) and isinstance(t.get("id"), str)} \
                if isinstance(tables, list) else {}
        table = self._sources_file.get(source_id)
        return None if table is None else _parse_sources({"source": [table]}, path).get(source_id)

    # -- components --------------------------------------------------------

    def component(self, name: str) -> Component | None:
        """The component called `name` (any spelling pip accepts), or None."""
        known = self._components.get(name, self)  # most callers pass a normalized name: no regex then
        if known is not self:
            return known  # type: ignore[return-value]
        name = normalize(name)
        if name not in self._components:
            self._components[name] = self._read_component(name) if name in self.names() else None
        return self._components[name]

    def may_list(self, name: str, version: str) -> bool:
        """Whether the snapshot of `name`, not read yet, may list release
        `version` (as ``db sync`` writes it): the text of its header holds
        it, quoted. No more than that first line is read: a pin on a package
        a check does not resolve is looked up so, and the component read only
        when the header lacks it (to say whether the release exists); False
        for a component read already, which answers as cheaply."""
        if self._components.get(name) is not None:
            return False  # read already: `Component.exists` answers as cheaply
        from .._files import MAX_SNAPSHOT_BYTES, open_regular

        try:  # a regular file of at most 64 MiB (a FIFO would block, /dev/zero never end a line): else the
            # component is read, and its reader refuses the file, naming it
            with open_regular(self.snapshot_path(name), MAX_SNAPSHOT_BYTES) as handle:
                header = json.loads(handle.readline(MAX_SNAPSHOT_BYTES + 1))
        except (OSError, ValueError):
            return False
        if not isinstance(header, dict):
            return False
        listed = header.get("versions")
        lines = header.get("lines")
        return (isinstance(listed, list) and version in listed) or (
            isinstance(lines, list) and any(isinstance(e, list) and e[:1] == [version] for e in lines))

    def snapshot_path(self, name: str) -> str:
        """The metadata snapshot of package `name` (layers.py picks the newest of several)."""
        return os.path.join(self.metadata_dir, f"{name}.jsonl")

    def components(self) -> list[Component]:
        """Every component, loaded (for lint, show and matrix work)."""
        return [c for c in (self.component(n) for n in sorted(self.names())) if c is not None]

    def metadata_source(self, release: Release, field: str = "Requires-Dist") -> Source:
        """The source of a fact read from a release's own package metadata."""
        component = self.component(release.package)
        index = component.snapshot_index if component is not None else None
        return Source(
            id=f"metadata:{release.package}=={release.version}",
            project=release.package,
            title=f"{release.package} {release.version} package metadata ({field})",
            kind="index",
            url=f"{index.rstrip('/')}/{release.package}/" if index else None,
            date=release.date,
        )

    def counts(self) -> dict[str, int]:
        """How much the database holds (loads everything)."""
        components = self.components()
        return {
            "components": len(components),
            "releases": sum(len(c.releases) for c in components),
            "rules": sum(len(c.rules) for c in components),
            "sources": len(self.sources),
            "gpus": len(self.catalog.gpus),
        }

    def _read_component(self, name: str) -> Component:
        curated_path = os.path.join(self.constraints_dir, f"{name}.toml")
        snapshot_path = self.snapshot_path(name)
        # this folder's own listing (an overlay's files are laid over by layers.py), listed
        # once: most components have no curated file, and a stat of each cost a check
        if name in Database.curated(self):
            component = _parse_component(curated_path, name, self._platform_table)
        else:
            component = Component(name=name, kind="package")
        component.flag_catalog = functools.partial(self.option_catalog, name)  # facts.py: the defaults of its flags
        if os.path.exists(snapshot_path):
            header, lines = release_table(snapshot_path)
            if normalize(header["name"]) != name:
                raise database_error(f"snapshot is of {header['name']!r}, not {name!r}", file=snapshot_path, key="name")
            component.snapshot_taken = _date_or_none(header["taken"])
            component.snapshot_index = header["index"]
            component.tracked = header.get("tracked", True) is not False
            listed = header.get("versions")
            if listed is not None:  # a list (the header says so); parsed, and checked, on first use
                component.index_listed = tuple(listed)
            component.releases = Releases(header["name"], snapshot_path, lines, component.releases)
        for derived in self.derived(name):
            _add_derived(component, derived, self._platform_table)
        return component


class Releases(MutableMapping[Version, Release]):
    """A component's releases (version -> release), each made when first asked for.

    A snapshot lists every release of a package, hundreds for the large
    ones, and a check of a pinned stack looks at one release of each: a
    release is found by its version as the snapshot writes it (PEP 440's
    normal form, as `compat db sync` writes every version), and made then.
    Only what needs the whole list (iterating, counting, a version written
    otherwise, such as 2.13 for 2.13.0) parses every version, and refuses
    two lines of one release then (two lines of one version as written, at
    once). Curated releases come first, the snapshot's after them in file
    order; a curated release that the snapshot also lists is laid over its
    line (`_overlay`).
    """

    def __init__(self, package: str, path: str, lines: dict[str, tuple[int, bool, Any]],
                 curated: dict[Version, Release]) -> None:
        self._package, self._path, self._curated = package, path, curated
        self._wheels = wheel_records(path)
        self._lines = lines  # `snapshot.release_table`'s
        self._made: dict[Version, Release] = {}
        self._all: dict[Version, str | None] | None = None  # every version -> its text (None: curated alone)
        self._drawn: dict[Version, str] = {}  # the versions `newest_first` parsed -> their lines' text
        self._unyanked: Drawn | None = None  # `unyanked`, drawn as far as it was read

    def _every(self) -> dict[Version, str | None]:
        if self._all is None:
            texts = list(self._lines)
            try:
                listed = dict(zip(map(parse_version, texts), texts))
            except ValueError:  # InvalidVersion, or a number too long to convert
                listed = {}
            if len(listed) < len(texts):  # a version that does not parse, or two lines of one release: which
                seen: dict[Version, int] = {}
                for text, (number, _, _) in self._lines.items():
                    seen[_release_version(text, self._path, number, seen)] = number
            every: dict[Version, str | None] = dict.fromkeys(self._curated)
            every.update(listed)
            self._all = every
        return self._all

    def _text(self, version: Version) -> tuple[bool, str | None]:
        """Whether `version` is a release here, and its line's text (None: curated alone)."""
        every = self._all
        if every is None:
            text = self._drawn.get(version)
            if text is not None:  # parsed from its line by `newest_first`
                return True, text
            text = str(version)
            if text in self._lines:  # written as str() writes it: no need to parse the others
                return True, text
            every = self._every()
        if version in every:
            return True, every[version]
        return False, None

    def _make(self, version: Version, text: str | None) -> Release:
        release = self._made.get(version)
        if release is None:
            curated = self._curated.get(version)
            if text is None:
                assert curated is not None
                release = curated
            else:
                number, yanked, _ = entry = self._lines[text]
                release = snapshot_release(self._package, self._path, text, parse_version(text), yanked,
                                           line_reader(self._path, text, entry), self._wheels, number)
                if curated is not None:
                    release = _overlay(release, curated)
            self._made[version] = release
        return release

    def last_written(self) -> Version | None:
        """The version of the snapshot's last line (the newest release, as
        `compat db sync` writes them oldest first), parsed alone: a likely
        answer to try before listing every release (`meets`)."""
        if not self._lines:
            return None
        try:
            return parse_version(next(reversed(self._lines)))
        except ValueError:
            return None  # `_every` says what is wrong with it

    def is_yanked(self, version: Version) -> bool:
        """Whether the release is yanked, without making it (resolution lists
        the releases that are not)."""
        made = self._made.get(version)
        if made is not None:
            return made.is_yanked
        found, text = self._text(version)
        if not found:
            raise KeyError(version)
        curated = self._curated.get(version)
        if curated is not None and (text is None or curated.status != "release"):
            return curated.is_yanked  # its status wins (`_overlay`)
        return self._lines[text][1]  # type: ignore[index]

    def yanked(self) -> set[Version]:
        """Every yanked release, as `is_yanked` tells each (one pass over the
        list, for a resolution that lists every release: a release made and
        a curated status win over a line's mark)."""
        out = {_release_version(text, self._path, number, {})
               for text, (number, yanked, _) in self._lines.items() if yanked}  # as `_every` parses them
        for version, curated in self._curated.items():
            if self._text(version)[1] is None or curated.status != "release":
                (out.add if curated.is_yanked else out.discard)(version)
        for version, made in self._made.items():
            (out.add if made.is_yanked else out.discard)(version)
        return out

    def newest_first(self) -> Iterator[Version]:
        """Every version, newest first, parsed as the order reaches it.

        A resolution takes the first release that fits, and most of a large
        package's releases are never reached: the versions are grouped by
        their epoch and first two release numbers, read from the text
        without parsing it where it is plain (`_group`), and each group is
        parsed and sorted when reached. Groups come in the versions' own
        order (PEP 440 compares the epoch, then the release numbers from the
        left). A line never reached is never checked (two lines of one
        release are refused when their group is parsed; `db lint` reads
        them all). Measured (both example checks, 20 paired runs in fresh
        processes): sorting the whole parsed list instead costs about 1.7 ms
        of CPU on the passing example (0.6%) and nothing on the failing one.
        Kept for now: without it a duplicate line anywhere in a snapshot is
        refused at a check's first read of the list, not when its group is
        reached, which changes what a check of a damaged snapshot says."""
        if self._all is not None:
            yield from sorted(self._all, reverse=True)
            return
        groups: dict[tuple[int, int, int], list[Any]] = {}
        for version in self._curated:  # first: a line of the same release gives way to it, as in `_every`
            groups.setdefault(_version_group(version), []).append(version)
        for text, key in zip(self._lines, map(_group, self._lines)):
            if key is None:  # not plain: parsed now
                key = _version_group(_release_version(text, self._path, self._lines[text][0], {}))
            groups.setdefault(key, []).append(text)
        for key in sorted(groups, reverse=True):
            seen: dict[Version, int] = {}
            found: set[Version] = set()
            for member in groups[key]:
                if isinstance(member, str):
                    number = self._lines[member][0]
                    version = _release_version(member, self._path, number, seen)
                    seen[version] = number
                    self._drawn[version] = member
                else:
                    version = member
                found.add(version)
            yield from sorted(found, reverse=True)

    def __getitem__(self, version: Version) -> Release:
        made = self._made.get(version)  # asked for before: most calls, in a matrix or a suggestion search
        if made is not None:
            return made
        found, text = self._text(version)
        if not found:
            raise KeyError(version)
        return self._make(version, text)

    def get(self, version: Version, default: Any = None) -> Any:
        made = self._made.get(version)
        if made is not None:
            return made
        found, text = self._text(version)
        return self._make(version, text) if found else default

    def __contains__(self, version: object) -> bool:
        return isinstance(version, Version) and self._text(version)[0]

    def __iter__(self) -> Iterator[Version]:
        return iter(self._every())

    def __len__(self) -> int:
        return len(self._every())

    def __bool__(self) -> bool:
        return bool(self._lines or self._curated) if self._all is None else bool(self._all)

    def __setitem__(self, version: Version, release: Release) -> None:
        self._every().setdefault(version, None)
        self._made[version] = release
        self._unyanked = None

    def __delitem__(self, version: Version) -> None:
        del self._every()[version]
        self._made.pop(version, None)
        self._unyanked = None

    def unyanked(self) -> Drawn:
        """The releases that are not yanked, newest first, drawn as they are
        read: once for all the resolutions of a process (a deployment
        script's, a matrix's), not once per resolution; drawn again after a
        release is added or removed."""
        if self._unyanked is None:
            yanked = self.yanked()
            self._unyanked = Drawn(v for v in self.newest_first() if v not in yanked)
        return self._unyanked

    def __repr__(self) -> str:
        return f"Releases({self._package!r}, {len(self._lines)} in the snapshot, {len(self._made)} made)"


_DIGITS = "0123456789"


def _group(text: str) -> tuple[int, int, int] | None:
    """(epoch, first, second release number) of a version written plainly
    (ASCII, a digit first, no epoch: ``0.32.0``, ``2.10.0rc1``, ``1.2+cu128``),
    read without parsing it; None for any other text (parsed instead). A
    text of that form that is no version is refused when its group is.

    >>> _group("0.32.1"), _group("4rc1"), _group("1.post2"), _group("1!2.0"), _group("v1.0")
    ((0, 0, 32), (0, 4, 0), (0, 1, 0), None, None)
    """
    if not text.isascii() or "!" in text or len(text) > MAX_DIGITS:
        return None
    head, dot, rest = text.partition(".")
    if head.isdigit():  # 0.32.0: the common case
        if not dot:
            return 0, int(head), 0
        second = rest.partition(".")[0]
        if not second.isdigit():
            second = second[: len(second) - len(second.lstrip(_DIGITS))]  # 2rc1, post1
        return 0, int(head), int(second) if second else 0
    first = head[: len(head) - len(head.lstrip(_DIGITS))]  # 4rc1: one release number
    return (0, int(first), 0) if first else None


def _version_group(version: Version) -> tuple[int, int, int]:
    release = version.release
    return version.epoch, release[0], release[1] if len(release) > 1 else 0


class Drawn(Sequence[Any]):
    """A sequence drawn from an iterator as far as it is read (by one thread
    at a time: a database's release lists are shared by the checks of a
    process, which may run in threads)."""

    def __init__(self, source: Iterable[Any]) -> None:
        self._items: list[Any] = []
        self._source: Iterator[Any] | None = iter(source)
        self._error: Exception | None = None  # what ended the iterator, raised again past its last item
        self._lock = threading.Lock()

    def _fill(self, index: int | None) -> None:
        """Draw items until there are more than `index` (None: all)."""
        if self._source is None and self._error is None:
            return  # drawn whole
        if index is not None and index < len(self._items):
            return
        with self._lock:
            self._fill_locked(index)

    def _fill_locked(self, index: int | None) -> None:
        items, source = self._items, self._source
        if source is None and self._error is not None and (index is None or len(items) <= index):
            raise self._error
        while source is not None and (index is None or len(items) <= index):
            try:
                items.append(next(source))
            except StopIteration:
                self._source = source = None
            except Exception as exc:  # a line that does not parse: the same error on every read past it
                self._source, self._error = None, exc
                raise

    def __getitem__(self, index: Any) -> Any:
        self._fill(None if isinstance(index, slice) or index < 0 else index)
        return self._items[index]

    def __len__(self) -> int:
        self._fill(None)
        return len(self._items)

    def __iter__(self) -> Iterator[Any]:
        items = self._items
        index = 0
        while True:
            if self._source is None and self._error is None:  # drawn whole: the rest as it is
                yield from items[index:]
                return
            self._fill(index)
            if index >= len(items):
                return
            yield items[index]
            index += 1

    def __bool__(self) -> bool:
        self._fill(0)
        return bool(self._items)


def newest_unyanked(component: Component) -> Sequence[Version]:
    """The component's releases, newest first, without the yanked ones: a
    snapshot's drawn as they are read (`Releases.newest_first`)."""
    releases = component.releases
    if isinstance(releases, Releases):
        return releases.unyanked()
    return [v for v in component.newest_first() if not releases[v].is_yanked]


def is_yanked(component: Component, version: Version) -> bool:
    """Whether a release of `component` is yanked, without making the
    release where the database can tell."""
    releases = component.releases
    return releases.is_yanked(version) if isinstance(releases, Releases) else releases[version].is_yanked


def meets(component: Component, specifier: SpecifierSet, likely: Iterable[Version | None] = ()) -> bool:
    """Whether some release of `component` meets `specifier`. The versions
    in `likely` (the one a resolution chose) are tried first, then the
    version a lone ``==`` names and the newest release, before every release
    is listed: a check of a pinned stack then never lists the releases of
    the packages it pins, nor of those a range on the newest release admits."""
    known = component.met.get(specifier)
    if known is not None:
        return known
    releases = component.releases
    newest = releases.last_written() if isinstance(releases, Releases) else None
    for version in (*likely, pinned_version(specifier), newest):
        if version is not None and version in releases and specifier.contains(version, prereleases=True):
            component.met[specifier] = True
            return True
    found = component.met[specifier] = any(specifier.contains(v, prereleases=True) for v in component.newest_first())
    return found


def pinned_version(specifier: SpecifierSet) -> Version | None:
    """The version of a specifier that is one ``==X`` (no wildcard), else None."""
    if len(specifier) != 1:
        return None
    (only,) = specifier
    if only.operator != "==" or only.version.endswith(".*"):
        return None
    try:
        return Version(only.version)
    except InvalidVersion:
        return None


_SHARED: dict[str, tuple[tuple[Any, ...], Database]] = {}


def _signature(root: str) -> tuple[Any, ...]:
    """What `Database.shared` compares: (name, mtime, size) of the curated files."""
    out: list[Any] = []
    for folder in (root, os.path.join(root, "constraints"), os.path.join(root, "options"), os.path.join(root, "derived")):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            out.append((folder, None))
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.endswith(".toml") or entry.name.endswith(".json"):
                try:
                    info = entry.stat()
                except OSError:
                    continue
                out.append((entry.path, info.st_mtime_ns, info.st_size))
    for path in (os.path.join(root, "metadata"), os.path.join(root, "metadata", GRAPH_FILE)):
        try:
            info = os.stat(path)
        except OSError:
            out.append((path, None))
        else:
            out.append((path, info.st_mtime_ns, info.st_size))
    return tuple(out)


class CudaFacts(Record):
    """``cuda.toml``: facts about CUDA that no one package owns."""

    drivers: dict[int, tuple[Version, str]]  # CUDA major -> (oldest Linux driver, source ID)
    runtimes: tuple[str, ...] = ()  # packages whose pin is the CUDA runtime a build loads
    runtime_source: str | None = None
    labels: dict[str, str] = {}  # accelerator -> the prefix of PyTorch's local labels (cuda: "cu")
    label_source: str | None = None
    label_index: str | None = None  # the URL under which each label names PyTorch's index of its builds
    # labels that name the torch a build was made for (+cu12torch2.6cxx11abiFALSE): the sources that say
    # what they mean and that another torch fails to load the build (None: such labels are not read)
    torch_label_sources: tuple[str, ...] = ()
    # ([[sass]]) GPU families whose kernels (SASS) a CUDA toolkit compiles only from some release on:
    # (compute capabilities, the first CUDA that compiles them, source ID); a build made with an older CUDA
    # runs on such a GPU only through PTX
    sass_floors: tuple[tuple[SpecifierSet, Version, str], ...] = ()

    def sass_floor(self, capability: Version) -> tuple[Version, str] | None:
        """The first CUDA whose compiler emits kernels for `capability`, and its source, where cuda.toml says.

        >>> facts = CudaFacts({}, sass_floors=((SpecifierSet(">=10.0"), Version("12.8"), "s"),))
        >>> facts.sass_floor(Version("12.0")), facts.sass_floor(Version("9.0"))
        ((<Version('12.8')>, 's'), None)
        """
        for capabilities, cuda, source in self.sass_floors:
            if capabilities.contains(capability, prereleases=True):
                return cuda, source
        return None

    def label(self, text: str) -> tuple[str, Version | None] | None:
        """What a label of PyTorch's form says (``cu128``: ("cuda", 12.8),
        ``rocm6.4``: ("rocm", 6.4), ``cpu``: ("cpu", None)), or None for any
        other text.

        >>> facts = CudaFacts({}, labels={"cuda": "cu", "rocm": "rocm", "cpu": "cpu"})
        >>> facts.label("cu128"), facts.label("cu92"), facts.label("rocm6.4"), facts.label("cpu"), facts.label("cu1")
        (('cuda', <Version('12.8')>), ('cuda', <Version('9.2')>), ('rocm', <Version('6.4')>), ('cpu', None), None)
        >>> facts.label("cu00"), facts.label("cu08")
        (None, None)
        """
        labels = self.labels
        if len(text) > 64:
            return None
        cuda, rocm = labels.get("cuda"), labels.get("rocm")
        if cuda and text.startswith(cuda):
            digits = text[len(cuda):]
            if digits.isascii() and digits.isdigit() and len(digits) >= 2 and int(digits[:-1]) >= 1:
                return "cuda", Version(f"{int(digits[:-1])}.{digits[-1]}")  # the last digit is the minor
        if rocm and text.startswith(rocm):
            rest = text[len(rocm):]
            parts = rest.split(".")
            if all(p.isascii() and p.isdigit() for p in parts):
                return "rocm", Version(rest)
        if text == labels.get("cpu"):
            return "cpu", None
        return None

    def index_label(self, url: str) -> str | None:
        """The label of the PyTorch index `url` is (``.../whl/cu128``: ``cu128``), or None.

        >>> facts = CudaFacts({}, labels={"cuda": "cu"}, label_index="https://download.pytorch.org/whl/")
        >>> facts.index_label("https://download.pytorch.org/whl/cu128/"), facts.index_label("https://pypi.org/simple")
        ('cu128', None)
        >>> facts.index_label("http://download.pytorch.org/whl/cu128"), facts.index_label("https://download.pytorch.org/whl/cu128//")
        ('cu128', None)
        """
        if not self.label_index:
            return None
        prefix, url = _without_scheme(self.label_index), _without_scheme(url.strip())  # http:// is the same index
        if prefix is None or url is None or not url.startswith(prefix):
            return None
        label = url[len(prefix):]
        label = label[:-1] if label.endswith("/") else label
        return label if self.label(label) is not None else None


class PythonRelease(Record):
    """A CPython feature release (``python.toml``)."""

    version: Version  # 3.12
    released: _dt.date  # its first release, 3.12.0
    end_of_life: tuple[int, int]  # (year, month) its support ends in
    source: str

    def supported_on(self, day: _dt.date) -> bool:
        """Whether it is still supported on `day` (through its end-of-life month).

        >>> PythonRelease(Version("3.10"), _dt.date(2021, 10, 4), (2026, 10), "s").supported_on(_dt.date(2026, 11, 1))
        False
        """
        return self.released <= day and (day.year, day.month) <= self.end_of_life


def _without_scheme(url: str) -> str | None:
    for scheme in ("https://", "http://"):
        if url.lower().startswith(scheme):
            return url[len(scheme):]
    return None


def _load_pythons(path: str) -> tuple[PythonRelease, ...]:
    if not os.path.exists(path):
        return ()
    data, text = _toml.load(path, error=DatabaseError)
    root = Table(data, path, "", text=text)
    root.only(["schema", "python"])
    out: list[PythonRelease] = []
    for table in root.tables("python"):
        table.only(["version", "released", "end_of_life", "source"])
        version = _version(table, "version", required=True)
        assert version is not None
        if str(version) != ".".join(map(str, version.release[:2])) or len(version.release) != 2:
            raise table.error(f"expected a feature release such as \"3.12\", got {table.data['version']!r}", "version")
        released = table.date("released")
        if released is None:
            raise table.error("missing (the date of its first release, such as 2023-10-02)", "released")
        ends = table.text("end_of_life", required=True) or ""
        year, _, month = ends.partition("-")
        if not (len(year) == 4 and year.isascii() and year.isdigit() and month.isascii() and month.isdigit()
                and len(month) == 2 and 1 <= int(month) <= 12):
            raise table.error(f"expected a month such as \"2028-10\", got {ends[:40]!r}", "end_of_life")
        if any(p.version == version for p in out):
            raise table.error(f"Python {version} is listed twice", "version")
        out.append(PythonRelease(version, released, (int(year), int(month)), table.text("source", required=True) or ""))
    return tuple(sorted(out, key=lambda p: p.version))


def _load_cuda(path: str) -> CudaFacts:
    if not os.path.exists(path):
        return CudaFacts({})
    data, text = _toml.load(path, error=DatabaseError)
    root = Table(data, path, "", text=text)
    root.only(["schema", "driver", "runtime", "labels", "torch_labels", "sass"])
    drivers: dict[int, tuple[Version, str]] = {}
    for table in root.tables("driver"):
        table.only(["cuda", "linux", "source"])
        major = table.text("cuda", required=True)
        if not major or not (major.isascii() and major.isdigit()):  # "²".isdigit(), but int() refuses it
            raise table.error(f"expected a CUDA major release such as \"13\", got {major!r}", "cuda")
        if int(major) in drivers:
            raise table.error(f"CUDA {major} is listed twice", "cuda")
        floor = _version(table, "linux", required=True)
        assert floor is not None
        drivers[int(major)] = (floor, table.text("source", required=True))  # type: ignore[assignment]
    runtimes: tuple[str, ...] = ()
    runtime_source = None
    runtime = root.table("runtime")
    if runtime is not None:
        runtime.only(["packages", "source"])
        runtimes = tuple(normalize(p) for p in runtime.strings("packages"))
        runtime_source = runtime.text("source", required=True)
    labels: dict[str, str] = {}
    label_source = label_index = None
    table = root.table("labels")
    if table is not None:
        table.only(["cuda", "rocm", "cpu", "index", "source"])
        labels = {k: v for k in ("cuda", "rocm", "cpu") if (v := table.text(k)) is not None}
        label_source = table.text("source", required=True)
        label_index = table.text("index")
        if label_index is not None and not (label_index.startswith(("https://", "http://")) and label_index.endswith("/")):
            raise table.error(f"expected the URL the labels are appended to, ending in /, got {label_index[:80]!r}",
                              "index")
    torch_label_sources: tuple[str, ...] = ()
    table = root.table("torch_labels")
    if table is not None:
        table.only(["source", "also"])
        torch_label_sources = (table.text("source", required=True), *table.strings("also"))  # type: ignore[assignment]
    sass_floors = []
    for table in root.tables("sass"):
        table.only(["compute_capability", "cuda", "source"])
        capabilities = _specifier(table, "compute_capability", "")
        if capabilities is None or not str(capabilities):
            raise table.error("expected the compute capabilities, such as \">=10.0\"", "compute_capability")
        cuda = _version(table, "cuda", required=True)
        sass_floors.append((capabilities, cuda, table.text("source", required=True)))
    return CudaFacts(drivers, runtimes, runtime_source, labels, label_source, label_index, torch_label_sources,
                     tuple(sass_floors))  # type: ignore[arg-type]


def _date_or_none(text: str) -> _dt.date | None:
    try:
        return _dt.date.fromisoformat(text[:10])
    except ValueError:
        return None


def _overlay(metadata: Release, curated: Release) -> Release:
    """A curated entry over a release the index describes: the index's
    requirements stay, the curated ones are added (and say so), and the
    curated status, date and commit win."""
    metadata.curated = curated.curated
    metadata.relaxed = curated.relaxed
    metadata.commit = curated.commit or metadata.commit
    metadata.source = curated.source
    if curated.status != "release":
        metadata.status = curated.status
    if curated.date:
        # Set without decoding the line (the date setter decodes it first): a
        # release only listed is never read. Decoding keeps a date once set.
        metadata._date = curated.date
    return metadata


def _is_label(text: str) -> bool:
    """Whether `text` is a local version label compat reads: ``[a-z0-9]+(?:[.][a-z0-9]+)*``."""
    return text.isascii() and all(part.isalnum() and (part.islower() or part.isdigit()) for part in text.split("."))


def _load_sources(path: str) -> dict[str, Source]:
    data, _ = _toml.load(path, error=DatabaseError)
    return _parse_sources(data, path)


def _with_derived(sources: dict[str, Source], db: Database) -> dict[str, Source]:
    """The sources of ``_sources.toml`` and of the derived files: an ID in both is refused (one home)."""
    merged = dict(sources)
    for source_id, source in db.derived_sources().items():
        if source_id in sources:
            raise DatabaseError(f"a source ID {SOURCES_FILE} gives too", file=db.derived_source_file(source_id),
                                key=f"source {source_id}")
        merged[source_id] = source
    return merged


def _add_derived(component: Component, derived: Any, platforms: Callable[[], PlatformTable]) -> None:
    """Lay a derived file's builds and rules beside the component file's
    (an ID in both is refused when the whole list is parsed: Unread.every)."""
    from .derived import merged_parse
    from .model import Unread

    name = component.name
    for attribute, tables, parse, public in (
        ("unread_builds", derived.builds, functools.partial(_parse_build, name=name, platforms=platforms), True),
        ("unread_rules", derived.rules, functools.partial(_parse_rule, name=name, file=derived.path), False),
    ):
        if not tables:
            continue
        own = getattr(component, attribute)
        if own is None or not len(own):
            setattr(component, attribute, Unread(list(tables), parse, public=public))
            continue
        parsers = {table.file: own._parse for table in own._tables}
        parsers[derived.path] = parse
        setattr(component, attribute, Unread([*own._tables, *tables], merged_parse(parsers), public=public))


def _parse_sources(data: dict, path: str) -> dict[str, Source]:  # type: ignore[type-arg]
    root = Table(data, path, "")
    root.only(["schema", "source"])
    sources: dict[str, Source] = {}
    for table in root.tables("source"):
        table.only(["id", "project", "title", "kind", "url", "ref", "commit", "date", "item"])
        source_id = table.identifier(sources, "source")
        sources[source_id] = Source.from_table(table, source_id, SOURCE_KINDS, "release")
    return sources


def _specifier(table: Table, name: str, default: str | None = None) -> SpecifierSet | None:
    text = table.text(name, default)
    if text is None:
        return None
    try:
        return parse_specifier(text)  # builds repeat their ranges (==2.8.*): parsed once
    except InvalidSpecifier:
        raise table.error(f"invalid version specifier {text!r}", name) from None


def _version(table: Table, name: str, *, required: bool = False) -> Version | None:
    text = table.text(name, required=required)
    if text is None:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        raise table.error(f"invalid version {text!r}", name) from None


def _condition(table: Table, name: str) -> Condition | None:
    value = table.data.get(name)
    if value is None:
        return None
    try:
        return parse_condition(value)
    except ConditionError as exc:
        raise database_error(str(exc), file=table.file, key=f"{table.where(name)}.{exc.key}") from None


def _option_spec(table: Table, key: str) -> OptionSpec:
    """One ``[options.<flag>]`` of a component file. A table with `unset`
    states what the engine's code does with the flag left out, a fact its
    parser (the catalog, which holds the rest of the flag) does not give:
    nothing else of the flag belongs beside it, and its source says it."""
    table.only(["summary", "values", "default", "source", "unset", "own"])
    unset = table.data.get("unset")
    if unset is not None:
        beside = sorted(k for k in ("summary", "values", "default", "own") if k in table.data)
        if beside:
            raise table.error(f"a table with unset gives only unset and source (the engine's option file holds "
                              f"the rest of the flag), not {', '.join(beside)}", beside[0])
        if not isinstance(unset, (str, int, float, bool)):
            raise table.error(f"expected a string, number or boolean, got {unset!r}", "unset")
        if table.text("source") is None:
            raise table.error("unset needs the source (the engine's code) that states it", "source")
    return OptionSpec(
        name=key,
        summary=table.text("summary", "") or "",
        values=table.strings("values"),
        default=table.data.get("default"),
        source=table.text("source"),
        unset=unset,
        own=table.boolean("own"),
    )


def _parse_component(path: str, name: str, platforms: Callable[[], PlatformTable]) -> Component:
    """The component file at `path`; `platforms` gives the platform table its builds' platforms are
    checked against, read when a build names one."""
    file = path
    data, text = _toml.load(path, error=DatabaseError)
    root = Table(data, file, "", text=text)
    root.only(["schema", "component", "options", "release", "rule", "build"])
    if data.get("schema", SCHEMA) != SCHEMA:
        raise root.error(f"unsupported schema {data.get('schema')!r} (expected {SCHEMA})", "schema")
    head = root.table("component")
    if head is None:
        raise root.error("missing the [component] table")
    head.only(["name", "kind", "summary", "homepage"])
    declared = head.text("name", required=True)
    assert declared is not None
    if normalize(declared) != name:
        raise head.error(f"names {declared!r}, but the file is {os.path.basename(path)}", "name")
    component = Component(
        name=name,
        kind=head.choice("kind", ("package", "application"), "package"),
        summary=head.text("summary", "") or "",
        homepage=head.text("homepage"),
        file=file,
    )

    options = root.table("options")
    if options is not None:
        for option_name in options.data:
            table = options.table(option_name)
            assert table is not None
            from .conditions import option_key

            key = option_key(option_name)
            if key in component.options:
                raise options.error("listed twice (dashes and underscores are the same)", option_name)
            component.options[key] = _option_spec(table, key)

    for table in root.tables("release"):
        table.only(["version", "date", "status", "requires_python", "requires", "relax", "extras", "commit", "source", "reason"])
        version = _version(table, "version", required=True)
        assert version is not None
        if version in component.releases:
            raise table.error(f"release {version} is listed twice", "version")
        source = table.text("source", required=True)
        reason = table.text("reason")
        curated = []
        for index, text in enumerate(table.strings("requires")):
            try:
                requirement = Requirement(text)
            except InvalidRequirement as exc:
                raise table.error(f"invalid requirement {text!r}: {exc}", f"requires[{index}]") from None
            curated.append(Dependency(requirement, "curated", source=source, reason=reason))
        relaxed = frozenset(normalize(n) for n in table.strings("relax"))
        if (curated or relaxed) and reason is None:
            raise table.error("a curated change to a release's requirements needs a reason", "reason")
        default_status = "pre-release" if version.is_prerelease else "release"
        component.releases[version] = Release(
            package=name,
            version=version,
            date=table.date("date"),
            status=table.choice("status", ("release", "pre-release", "yanked"), default_status),
            requires_python=_specifier(table, "requires_python"),
            curated=tuple(curated),
            relaxed=relaxed,
            extras=table.strings("extras"),
            commit=table.text("commit"),
            source=source,
            layer="curated",
            file=file,
        )

    component.unread_rules = Unread(root.tables("rule"), functools.partial(_parse_rule, name=name, file=file))
    component.unread_builds = Unread(root.tables("build"),
                                     functools.partial(_parse_build, name=name, platforms=platforms), public=True)
    return component


def _parse_rule(table: Table, seen: set[str] | None, *, name: str, file: str) -> Rule:
    """One [[rule]] table; `seen`: the IDs of the rules before it in its file
    (None: not known, for a rule read alone; see model.Unread)."""
    table.only(["id", "kind", "releases", "when", "require", "severity", "message", "source", "also", "fixed_in", "with",
                "same", "inferred", "basis", "introduced"])
    rule_id = table.identifier(seen or set(), "rule")
    kind = table.choice("kind", RULE_KINDS, "requirement")
    require = _condition(table, "require")
    if kind == "requirement" and (require is None or require.is_empty):
        raise table.error("a requirement rule needs a non-empty require table", "require")
    if kind != "requirement" and require is not None:
        raise table.error(f"only requirement rules have require (this is a {kind})", "require")
    partners = tuple(normalize(p) for p in table.strings("with"))
    same = table.choice("same", LOCKSTEP, "version") if kind == "lockstep" else None
    if kind == "lockstep" and not partners:
        raise table.error("a lockstep rule names the packages that move with this one", "with")
    if kind != "lockstep" and ("with" in table.data or "same" in table.data):
        raise table.error(f"only lockstep rules have with and same (this is a {kind})", "with" if "with" in table.data else "same")
    # An inferred fact says what it rests on; a note of one release says which.
    inferred = table.boolean("inferred")
    basis = table.text("basis")
    if inferred and not basis:
        raise table.error("an inferred rule says what it is inferred from (basis = \"...\")", "basis")
    if basis is not None and not inferred:
        raise table.error("basis is for inferred rules (inferred = true)", "basis")
    # a refusal the source implies but does not state is a warning at most (docs/database.md)
    default = "warning" if inferred and DEFAULT_SEVERITY[kind] == "error" else DEFAULT_SEVERITY[kind]
    severity = table.choice("severity", SEVERITIES, default)
    if inferred and severity == "error":
        raise table.error("an inferred rule is a warning at most: its source implies the refusal but does not "
                          "state it", "severity")
    releases = _specifier(table, "releases", "") or SpecifierSet()
    introduced = _version(table, "introduced")
    if introduced is not None:
        if kind not in ("note", "behaviour-change"):
            raise table.error(f"only notes and behaviour changes have introduced (this is a {kind})", "introduced")
        if not releases.contains(introduced, prereleases=True):
            raise table.error(f"introduced {introduced} is not one of the rule's releases ({releases})", "introduced")
    return Rule(
        id=rule_id,
        package=name,
        kind=kind,
        releases=releases,
        when=_condition(table, "when") or Condition(),
        require=require,
        severity=severity,
        message=table.text("message", required=True),  # type: ignore[arg-type]
        source=table.text("source", required=True),  # type: ignore[arg-type]
        also=tuple(table.strings("also")),
        fixed_in=_version(table, "fixed_in"),
        file=file,
        partners=partners,
        same=same,
        inferred=inferred,
        basis=basis,
        introduced=introduced,
    )


ACCELERATOR_KINDS = ("cuda", "rocm", "cpu")


def _parse_build(table: Table, seen: set[str] | None, *, name: str, platforms: Callable[[], PlatformTable]) -> Build:
    from .model import arch_problem

    table.only(["id", "releases", "index", "label", "accelerator", "cuda", "cudas", "rocm", "platforms", "archs", "ptx",
                "exact", "needs_gpu", "source", "note", "archs_source", "archs_basis", "drops", "adds",
                "requires_source", "requires_unknown", "also"])
    build_id = table.identifier(seen or set(), "build")
    accelerator = table.choice("accelerator", ACCELERATOR_KINDS, "cuda")
    cuda = _version(table, "cuda")
    rocm = _version(table, "rocm")
    if accelerator == "cuda" and cuda is None:
        raise table.error("a CUDA build needs cuda = \"12.8\" (the CUDA it was built with)", "cuda")
    if accelerator == "rocm" and rocm is None:
        raise table.error("a ROCm build needs rocm = \"6.4\"", "rocm")
    if accelerator != "cuda" and cuda is not None:
        raise table.error(f"cuda is for CUDA builds, this is a {accelerator} build", "cuda")
    if accelerator != "rocm" and rocm is not None:
        raise table.error(f"rocm is for ROCm builds, this is a {accelerator} build", "rocm")
    cudas = []
    for index, text in enumerate(table.strings("cudas")):
        try:
            cudas.append(Version(text))
        except InvalidVersion:
            raise table.error(f"invalid version {text!r}", f"cudas[{index}]") from None
    if cudas and (cuda is None or cuda != min(cudas)):
        raise table.error("a build with a library per CUDA runtime gives cuda = the lowest of cudas", "cuda")
    on = table.strings("platforms")  # the platform table is read for a build that names platforms
    known = platforms() if on else None
    for index, platform in enumerate(on):
        if known is not None and platform not in known:
            raise table.error(f"unknown platform {platform!r} (one of {', '.join(known.names())})",
                              f"platforms[{index}]")
    archs = table.strings("archs")
    for index, arch in enumerate(archs):
        problem = arch_problem(arch)
        if problem is not None:
            raise table.error(problem, f"archs[{index}]")
    if archs and accelerator != "cuda":
        raise table.error("archs are CUDA compute capabilities: only CUDA builds have them", "archs")
    for key in ("archs_source", "archs_basis"):
        if key in table.data and not archs:
            raise table.error("says where archs come from: give archs too", key)
    ptx = table.text("ptx")
    label = table.text("label")
    if label is not None and not _is_label(label):
        raise table.error(f"invalid local version label {label!r} (such as \"cu128\" or \"rocm6.4\")", "label")
    note = table.text("note")
    drops = table.strings("drops")
    for index, pattern in enumerate(drops):
        stem = pattern[:-1] if pattern.endswith("*") else pattern
        if not stem or normalize(stem.rstrip("-")) != stem.rstrip("-") or "*" in stem:
            raise table.error(f"expected a normalized project name, or a prefix of one ending in *, got {pattern!r}",
                              f"drops[{index}]")
    adds = table.strings("adds")
    for index, line in enumerate(adds):
        problem = requirement_problem(line)
        if problem is not None:
            raise table.error(f"invalid requirement {line!r}: {problem}", f"adds[{index}]")
    requires_source = table.text("requires_source")
    if (drops or adds) and requires_source is None:
        raise table.error("drops and adds state what a source says of the build's wheels: give requires_source",
                          "requires_source")
    return Build(
        id=build_id,
        package=name,
        releases=_specifier(table, "releases", "") or SpecifierSet(),
        index=table.text("index", "pypi") or "pypi",
        accelerator=accelerator,
        source=table.text("source", required=True),  # type: ignore[arg-type]
        also=tuple(table.strings("also")),
        label=label,
        cuda=cuda,
        cudas=tuple(sorted(cudas)),
        rocm=rocm,
        platforms=on,
        archs=archs,
        ptx=_version(table, "ptx") if ptx is not None else None,
        exact=table.boolean("exact"),
        needs_gpu=table.boolean("needs_gpu", accelerator != "cpu"),
        note=note,
        file=table.file,
        archs_source=table.text("archs_source"),
        archs_basis=table.text("archs_basis"),
        drops=drops,
        adds=adds,
        requires_source=requires_source,
        requires_unknown=table.text("requires_unknown"),
    )


def _first(found: Iterable[Any]) -> Any:
    """The first of `found` that is not None (lazily: later files stay unread)."""
    return next((item for item in found if item is not None), None)
