"""The database as layers: the bundled one, the user's synced snapshots, and
an overlay of the user's own facts.

An installed compat carries its database inside the package, a folder that
may be read-only and that the next upgrade replaces. So what a user adds
lives beside it, in two layers read over it:

- **user data**: the folder ``compat db sync`` writes its snapshots into
  (``metadata/``, as in ``data/``): ``$COMPAT_DATA`` if set, else the
  platform's convention (`user_data_dir`). For each package, the snapshot
  with the latest ``taken`` date of its header wins, whichever layer holds
  it; on the same date, the upper layer's (the user's, then the overlay's).
- **overlay**: a folder of the user's own facts in the database's own
  schema (``constraints/*.toml`` with their ``_sources.toml``, ``metadata/``
  snapshots of private packages, ``options/``, ``gpus.toml``,
  ``models.toml``), named by ``--db-overlay``, ``COMPAT_DB_OVERLAY`` or a
  stack's ``[compat] overlay``. Its components add to the bundled ones (a
  component of the same name gains its rules, builds, options and releases);
  a rule, build, option, curated release or source it shares with the
  bundled database is an error naming both files: a fact has one home.

``--db PATH`` is a whole database: no user data layer is read over it (an
overlay still is), and ``db sync --db PATH`` rewrites it in place.

With neither a user data folder nor an overlay, opening the database costs
one ``stat`` more than before, and a check reads the plain `Database`.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .._record import Record
from .. import _files, _toml
from ..errors import DatabaseError
from .database import SOURCES_FILE, Database, _load_sources, _overlay, _parse_component, _signature, _with_derived
from .model import Component, Source

if TYPE_CHECKING:
    from .models import ModelCatalog
    from .options import OptionCatalog

__all__ = [
    "DATA_ENV", "CACHE_ENV", "OVERLAY_ENV", "STALE_DAYS", "Layer", "LayeredDatabase", "user_data_dir", "user_cache_dir",
    "sync_folder",
    "overlay_chosen", "open_layers", "layers_signature", "with_overlay", "layers_of", "layer_name", "is_local",
    "cites_local", "snapshot_taken", "stale_snapshot", "describe_layers", "render_layers",
]

DATA_ENV = "COMPAT_DATA"
CACHE_ENV = "COMPAT_CACHE"
OVERLAY_ENV = "COMPAT_DB_OVERLAY"
STALE_DAYS = 30  # a check on snapshots older than this says so, once
METADATA = "metadata"
# what an overlay may hold: these folders, and these files
_OVERLAY_FOLDERS = ("constraints", METADATA, "options")
_OVERLAY_FILES = ("gpus.toml", "models.toml")

# --db-overlay, for the duration of one command (cli/__init__.py's _db_option)
_chosen: str | None = None


class Layer(Record):
    """One layer of the database: ``bundled`` (or ``database`` for ``--db``),
    ``user`` or ``overlay``, and its folder."""

    name: str
    folder: str


# -- where the layers are ----------------------------------------------------------


def user_data_dir(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> str:
    """The user data folder ``compat db sync`` writes into: ``$COMPAT_DATA``,
    else the platform's convention for per-user application data.

    >>> user_data_dir({"COMPAT_DATA": "/srv/compat"}, "linux")
    '/srv/compat'
    >>> user_data_dir({"XDG_DATA_HOME": "/x", "HOME": "/h"}, "linux")
    '/x/compat'
    >>> user_data_dir({"XDG_DATA_HOME": "relative", "HOME": "/h"}, "linux")  # the XDG spec ignores it
    '/h/.local/share/compat'
    >>> user_data_dir({"HOME": "/Users/me"}, "darwin")
    '/Users/me/Library/Application Support/compat'
    """
    return _per_user(environ, platform, DATA_ENV, ("compat",), ("Application Support", "compat"),
                     "XDG_DATA_HOME", (".local", "share"))


def user_cache_dir(environ: Mapping[str, str] = os.environ, platform: str = sys.platform) -> str:
    """The folder of what compat may lose without harm (a sync's journal):
    ``$COMPAT_CACHE``, else the platform's convention for per-user caches.

    >>> user_cache_dir({"COMPAT_CACHE": "/srv/cache"}, "linux")
    '/srv/cache'
    >>> user_cache_dir({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, "linux")
    '/x/compat'
    >>> user_cache_dir({"HOME": "/h"}, "linux")
    '/h/.cache/compat'
    >>> user_cache_dir({"HOME": "/Users/me"}, "darwin")
    '/Users/me/Library/Caches/compat'
    """
    return _per_user(environ, platform, CACHE_ENV, ("compat", "Cache"), ("Caches", "compat"),
                     "XDG_CACHE_HOME", (".cache",))


def _per_user(environ: Mapping[str, str], platform: str, variable: str, windows: tuple[str, ...],
              darwin: tuple[str, ...], xdg_variable: str, xdg_default: tuple[str, ...]) -> str:
    """`variable` when set, else the folder the platform's convention gives
    (under %LOCALAPPDATA%, ~/Library, or the XDG folder, whose variable is
    ignored when it is not absolute, as the XDG specification says)."""
    explicit = environ.get(variable)
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    home = environ.get("HOME") or os.path.expanduser("~")
    if platform == "win32":
        local = environ.get("LOCALAPPDATA") or os.path.join(environ.get("USERPROFILE") or home, "AppData", "Local")
        return os.path.join(local, *windows)
    if platform == "darwin":
        return os.path.join(home, "Library", *darwin)
    xdg = environ.get(xdg_variable, "")
    return os.path.join(xdg if os.path.isabs(xdg) else os.path.join(home, *xdg_default), "compat")


def sync_folder() -> str:
    """Where ``compat db sync`` writes when no ``--db`` is given: the user data
    folder's ``metadata/`` (created by the sync)."""
    return os.path.join(user_data_dir(), METADATA)


@contextlib.contextmanager
def overlay_chosen(folder: str | None) -> Iterator[None]:
    """Use `folder` as the overlay while the block runs (``--db-overlay``); None
    leaves the choice to ``COMPAT_DB_OVERLAY``."""
    global _chosen
    before, _chosen = _chosen, (os.path.normpath(folder) if folder else None)
    try:
        yield
    finally:
        _chosen = before


def _overlay_folder() -> str | None:
    """The overlay ``--db-overlay`` or ``COMPAT_DB_OVERLAY`` names, checked to be a folder."""
    if _chosen is not None:
        return _chosen
    named = os.environ.get(OVERLAY_ENV)
    if not named:
        return None
    folder = os.path.normpath(os.path.expanduser(named))  # as given: problems name its files so
    if not os.path.isdir(folder):
        raise DatabaseError(f"{OVERLAY_ENV} names no folder ({os.path.abspath(folder)})", key=OVERLAY_ENV)
    return folder


def _user_folder(explicit: bool) -> str | None:
    """The user data folder when it holds snapshots and no ``--db`` was given (one ``stat``)."""
    if explicit:
        return None
    folder = user_data_dir()
    return folder if os.path.isdir(os.path.join(folder, METADATA)) else None


def open_layers(root: str, *, explicit: bool) -> Database:
    """The database at `root` with the layers that apply over it: the user
    data folder (unless `explicit`, a ``--db``) and the chosen overlay. A
    plain `Database` when there are none."""
    user, overlay = _user_folder(explicit), _overlay_folder()
    if user is None and overlay is None:
        return Database(root)
    return LayeredDatabase(root, user=user, overlay=overlay)


def layers_signature(*, explicit: bool) -> tuple[Any, ...]:
    """What `Database.shared` adds to its key: the user data folder's
    snapshots (its metadata folder and names graph, which ``db sync``
    rewrites) and the overlay's files. One ``stat`` when there are none."""
    out: list[Any] = []
    if not explicit:
        metadata = os.path.join(user_data_dir(), METADATA)
        for path in (metadata, os.path.join(metadata, "_graph.json")):
            try:
                info = os.stat(path)
            except OSError:
                out.append((path, None))
                break
            out.append((path, info.st_mtime_ns, info.st_size))
    overlay = _overlay_folder()
    if overlay is not None:
        out.extend(_signature(overlay))
    return tuple(out)


_OVERLAID: dict[tuple[str, str | None, str], tuple[tuple[Any, ...], Database]] = {}


def with_overlay(db: Database, folder: str) -> Database:
    """`db` with the overlay `folder` (a stack's ``[compat] overlay``) over it,
    in place of any other overlay. Kept per process while the overlay's files
    stay as they were, so that reading a stack many times reads it once."""
    folder = os.path.abspath(folder)
    user = db.user if isinstance(db, LayeredDatabase) else None
    if isinstance(db, LayeredDatabase) and db.overlay == folder:
        return db
    key = (os.path.realpath(db.root), user, os.path.realpath(folder))
    signature = _signature(folder)
    cached = _OVERLAID.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1]
    layered = LayeredDatabase(db.root, user=user, overlay=folder)
    _OVERLAID[key] = (signature, layered)
    return layered


# -- the layered database ------------------------------------------------------------


class LayeredDatabase(Database):
    """The bundled database (or a ``--db``) with the user data folder's
    snapshots and an overlay of the user's own facts over it.

    Every lookup the checks make goes through the layers: which packages
    exist, each package's newest snapshot, its component with the overlay's
    rules added, the names graph, GPUs, models, option files and sources.
    """

    def __init__(self, root: str, *, user: str | None = None, overlay: str | None = None) -> None:
        super().__init__(root)
        self.user = user
        self.overlay = overlay
        if overlay is not None:
            _check_folders(overlay)
        self.local = Database(overlay) if overlay is not None else None  # the overlay's own files, read alone
        # the metadata folders, lowest first: a snapshot of a package may be in any of them
        self.folders = [self.metadata_dir, *(os.path.join(f, METADATA) for f in (user, overlay) if f is not None)]
        self._held: dict[str, frozenset[str]] = {}
        self._chosen: dict[str, str] = {}
        self._merged_graph: dict[str, Any] | None = None
        self._bundled_ids: dict[str, str] | None = None

    def held(self, folder: str) -> frozenset[str]:
        """The packages with a snapshot in `folder` (listed once)."""
        if folder not in self._held:
            self._held[folder] = _held(folder)
        return self._held[folder]

    # -- what exists -----------------------------------------------------------

    def names(self) -> set[str]:
        if self._names is None:
            names = set(super().names())
            for folder in self.folders[1:]:
                names |= self.held(folder)
            names |= self._local_components()
            self._names = names
        return self._names

    def curated(self) -> set[str]:
        return super().curated() | self._local_components()

    def _local_components(self) -> set[str]:
        if self.local is None:
            return set()
        try:
            files = os.listdir(self.local.constraints_dir)
        except OSError:
            return set()
        return {f[: -len(".toml")] for f in files if f.endswith(".toml") and not f.startswith("_")}

    def graph(self) -> dict[str, Any]:
        """The names graphs of the layers, merged (a superset of the edges of the
        snapshots in use is safe: it only keeps a package in). Empty, so that
        nothing is pruned, when the bundled layer has none."""
        if self._merged_graph is None:
            from .graph import build_graph, read_graph

            graphs = []
            for number, folder in enumerate(self.folders):
                graph = read_graph(folder)
                if graph is None and number and self.held(folder):
                    graph = build_graph(folder)  # an overlay's few private snapshots, without a graph file
                if graph is None and not number:
                    self._merged_graph = {}
                    return self._merged_graph
                if graph is not None:
                    graphs.append(graph)
            self._merged_graph = _merge_graphs(graphs)
        return self._merged_graph

    def snapshot_path(self, name: str) -> str:
        """The newest snapshot of `name` among the layers (the upper layer's on the same date)."""
        chosen = self._chosen.get(name)
        if chosen is None:
            file = f"{name}.jsonl"
            candidates = [os.path.join(folder, file) for folder in self.folders[1:] if name in self.held(folder)]
            bundled = os.path.join(self.metadata_dir, file)
            if not candidates:
                chosen = bundled
            else:
                if os.path.exists(bundled):
                    candidates.insert(0, bundled)
                # A snapshot that is not a regular file (a link to /dev/zero, a
                # FIFO) is chosen, so that its reader refuses it, naming it,
                # rather than a check going on without it.
                ranked = [(_dt.date.max if not _files.is_regular(path) else snapshot_taken(path) or _dt.date.min,
                           number, path) for number, path in enumerate(candidates)]
                chosen = max(ranked)[2]
            self._chosen[name] = chosen
        return chosen

    # -- components ------------------------------------------------------------

    def _read_component(self, name: str) -> Component:
        component = super()._read_component(name)  # the bundled file, over the newest snapshot
        if self.local is not None:
            path = os.path.join(self.local.constraints_dir, f"{name}.toml")
            if os.path.exists(path):
                self._add_local(component, _parse_component(path, name, self._platform_table))
        return component

    def _add_local(self, component: Component, local: Component) -> None:
        """Lay the overlay's component file over the bundled one: its facts are
        added, and one the bundled database already states is an error."""
        file = local.file
        if component.file is None:
            component.kind, component.summary, component.homepage = local.kind, local.summary, local.homepage
            component.file = file
        elif local.kind != component.kind:
            raise DatabaseError(f"says kind {local.kind!r}; {component.file} says {component.kind!r}",
                                file=file, key="component.kind")
        for key, option in local.options.items():
            if key in component.options:
                raise _twice(file, f"options.{key}", f"option {key!r}", component.file)
            component.options[key] = option
        for version, release in local.releases.items():
            held = component.releases.get(version)
            if held is None:
                component.releases[version] = release
            elif held.layer == "curated" or held.source is not None:  # the bundled file curates it already
                raise _twice(file, f"release {version}", f"release {version}", component.file)
            else:
                component.releases[version] = _overlay(held, release)
        ids = self.bundled_ids()
        for kind, facts in (("rule", local.rules), ("build", local.builds)):
            for fact in facts:
                if fact.id in ids:
                    raise _twice(file, f"{kind} {fact.id}", f"{kind} ID {fact.id!r}", ids[fact.id])
        component.rules.extend(local.rules)
        component.builds.extend(local.builds)

    def bundled_ids(self) -> dict[str, str]:
        """Every rule and build ID of the bundled component files -> its file
        (a line scan: an overlay's fact may not reuse one)."""
        if self._bundled_ids is None:
            ids: dict[str, str] = {}
            try:
                files = sorted(os.listdir(self.constraints_dir))
            except OSError:
                files = []
            for file in files:
                if not file.endswith(".toml") or file.startswith("_"):
                    continue
                path = os.path.join(self.constraints_dir, file)
                text = _files.read_text(path, _files.MAX_TEXT_BYTES) or ""  # (one that cannot be read is the reader's error)
                for header in ("rule", "build"):
                    for _, block in _toml.blocks(text, header):
                        match = re.search(_ID, block, re.MULTILINE)
                        if match:
                            ids.setdefault(match.group(1), path)
            self._bundled_ids = ids
        return self._bundled_ids

    def option_catalog(self, component: str) -> OptionCatalog | None:
        from .._names import normalize
        from .options import catalog_path

        component = normalize(component)
        if self.local is not None and component not in self._option_catalogs:
            local = self.local.option_catalog(component)
            if local is not None:
                bundled = catalog_path(self.root, component)
                if os.path.exists(bundled):
                    raise _twice(local.file, None, f"the options of {component}", bundled)
                self._option_catalogs[component] = local
        return super().option_catalog(component)

    # -- catalogs and sources --------------------------------------------------

    def local_file(self, name: str) -> str | None:
        """The overlay's `name` (``gpus.toml``, ``models.toml``), when it has one."""
        if self.overlay is None:
            return None
        path = os.path.join(self.overlay, name)
        return path if os.path.exists(path) else None

    def catalog_paths(self, file: str) -> list[str]:
        local = self.local_file(file)
        return super().catalog_paths(file) + ([local] if local is not None else [])

    @property
    def sources(self) -> dict[str, Source]:
        if self._sources is None:
            merged = dict(self.local_sources())
            merged.update(_with_derived(_load_sources(os.path.join(self.constraints_dir, SOURCES_FILE)), self))
            self._sources = merged  # (the bundled ones win)
        return self._sources

    def local_sources(self) -> dict[str, Source]:
        """The sources of the overlay's ``_sources.toml`` ({} without one)."""
        if self.local is None or not os.path.exists(os.path.join(self.local.constraints_dir, SOURCES_FILE)):
            return {}
        return self.local.sources

    def source(self, source_id: str | None) -> Source | None:
        found = super().source(source_id)
        if found is None and self.local is not None and self._sources is None:
            found = self.local.source(source_id)
        return found


def _check_folders(overlay: str) -> None:
    """Refuse an overlay whose constraints/, metadata/ or options/ is not a
    folder: a file there (or a link to a device) would be read as no folder
    at all, and the overlay's facts lost without a word."""
    for part in _OVERLAY_FOLDERS:
        path = os.path.join(overlay, part)
        if os.path.lexists(path) and not os.path.isdir(path):
            raise DatabaseError(f"not a folder (an overlay's {', '.join(f'{p}/' for p in _OVERLAY_FOLDERS)} are "
                                "folders)", file=path)


_ID = r'^id\s*=\s*"([^"]+)"'  # (patterns compile on first use: most runs need none)


def _twice(file: str | None, key: str | None, what: str, other: str | None) -> DatabaseError:
    return DatabaseError(f"{what} is also in {other}: a fact has one home (an overlay adds facts; it does not "
                         "restate the database's)", file=file, key=key)


def _merge_graphs(graphs: list[dict[str, Any]]) -> dict[str, Any]:
    """The union of names graphs (graph.py's form)."""
    from .graph import requirers

    # a graph without extra nodes (schema 1) puts an extra's edges on its package:
    # merged with one that has them, edges would be lost, so the merge has none
    flat = any(graph.get("schema", 1) < 2 for graph in graphs)

    def node(name: str) -> str:
        return name.split("[", 1)[0] if flat else name

    packages: set[str] = set()
    tracked: set[str] = set()
    required_by: dict[str, set[str]] = {}
    for graph in graphs:
        packages.update(graph["packages"])
        tracked.update(graph["tracked"])
        for name in graph["required_by"]:
            required_by.setdefault(node(name), set()).update(node(r) for r in requirers(graph, name))
    for name, found in required_by.items():
        found.discard(name)
    return {"schema": 1 if flat else max((g.get("schema", 1) for g in graphs), default=1), "packages": sorted(packages),
            "tracked": sorted(tracked),
            "required_by": {k: " ".join(sorted(v)) for k, v in sorted(required_by.items())}}


# -- which layer a fact is of ----------------------------------------------------------


def layers_of(db: Database) -> list[Layer]:
    """The layers of `db`, lowest first."""
    from .paths import default_data_dir

    base = "bundled" if os.path.realpath(db.root) == os.path.realpath(default_data_dir()) else "database"
    out = [Layer(base, db.root)]
    if isinstance(db, LayeredDatabase):
        if db.user is not None:
            out.append(Layer("user", db.user))
        if db.overlay is not None:
            out.append(Layer("overlay", db.overlay))
    return out


def layer_name(db: Database, file: str | None) -> str | None:
    """The layer `file` belongs to, for a database of several layers (None for one)."""
    if not isinstance(db, LayeredDatabase):
        return None
    layers = layers_of(db)
    if file:
        path = os.path.abspath(file)
        for layer in reversed(layers):
            if _inside(path, layer.folder):
                return layer.name
    return layers[0].name


def is_local(db: Database, file: str | None) -> bool:
    """Whether `file` (a rule's, a source's) is of the user's overlay."""
    return isinstance(db, LayeredDatabase) and db.overlay is not None and bool(file) and \
        _inside(os.path.abspath(file), db.overlay)  # type: ignore[arg-type]


def cites_local(db: Database, source: Source | str | None) -> bool:
    """Whether `source` is one of the overlay's own sources."""
    if not isinstance(db, LayeredDatabase) or db.local is None or source is None:
        return False
    return (source.id if isinstance(source, Source) else source) in db.local_sources()


def _inside(path: str, folder: str) -> bool:
    folder = os.path.abspath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# -- lint ---------------------------------------------------------------------------------


def sources_file(db: Database, source_id: str) -> str:
    """The ``_sources.toml`` (or derived file) that defines `source_id`."""
    if isinstance(db, LayeredDatabase) and db.local is not None and source_id in db.local_sources():
        return os.path.join(db.local.constraints_dir, SOURCES_FILE)
    return db.derived_source_file(source_id) or os.path.join(db.constraints_dir, SOURCES_FILE)


def catalog_files(db: Database, file: str, names: Iterable[str]) -> dict[str, str]:
    """name -> the file (``gpus.toml``, ``models.toml``) of the layer that defines it."""
    bundled = os.path.join(db.root, file)
    local = db.local_file(file) if isinstance(db, LayeredDatabase) else None
    if local is None:
        return {name: bundled for name in names}
    defined = set(re.findall(_NAME_LINE, _files.read_text(local, _files.MAX_TEXT_BYTES) or "", re.MULTILINE))
    return {name: local if name in defined else bundled for name in names}


def model_catalogs(db: Database) -> list[tuple[str, ModelCatalog]]:
    """(file, catalog) of each layer's ``models.toml``: lint checks each
    file's line scans against its own entries."""
    from .models import MODELS_FILE, ModelCatalog

    bundled = os.path.join(db.root, MODELS_FILE)
    local = db.local_file(MODELS_FILE) if isinstance(db, LayeredDatabase) else None
    if local is None:
        return [(bundled, db.models)]
    own = ModelCatalog.load(bundled) if os.path.exists(bundled) else ModelCatalog([])
    return [(bundled, own), (local, ModelCatalog.load(local))]


_NAME_LINE = r'^name\s*=\s*"([^"]+)"'


def layer_problems(db: Database) -> list[DatabaseError]:
    """What lint checks of the layers over the bundled database, beyond what
    it checks of the database they make together: every snapshot a layer
    holds that another layer's newer one hides, each layer's names graph, a
    source the overlay restates, and files an overlay holds but nothing reads."""
    if not isinstance(db, LayeredDatabase):
        return []
    from .graph import GRAPH_FILE, build_graph, read_graph
    from .options import OPTIONS_DIR
    from .snapshot import snapshot_problems

    problems: list[DatabaseError] = []
    for number, folder in enumerate(db.folders):
        broken = False
        for name in sorted(db.held(folder)):
            path = os.path.join(folder, f"{name}.jsonl")
            if db.snapshot_path(name) == path:
                continue  # the one in use: linted with its component
            found = snapshot_problems(path)
            broken = broken or bool(found)
            problems.extend(found)
        if not number:
            continue  # the bundled layer's graph is lint's own check
        try:
            graph = read_graph(folder)
            if graph is not None and not broken and graph != build_graph(folder):
                problems.append(DatabaseError("does not match the snapshots (compat db sync writes it)",
                                              file=os.path.join(folder, GRAPH_FILE)))
        except DatabaseError as exc:
            problems.append(exc)
    if db.local is not None and db.overlay is not None:
        bundled_sources = os.path.join(db.constraints_dir, SOURCES_FILE)
        try:
            local_sources = db.local_sources()
            bundled = _load_sources(bundled_sources)
        except DatabaseError:
            local_sources, bundled = {}, {}  # reported with the sources
        for source_id in sorted(set(local_sources) & set(bundled)):
            problems.append(_twice(os.path.join(db.local.constraints_dir, SOURCES_FILE), f"source {source_id}",
                                   f"source {source_id!r}", bundled_sources))
        options = os.path.join(db.overlay, OPTIONS_DIR)
        names = db.names()
        for entry in sorted(os.listdir(options)) if os.path.isdir(options) else ():
            if entry.endswith(".toml") and entry[: -len(".toml")] not in names:
                problems.append(DatabaseError("names no component of the database", file=os.path.join(options, entry)))
        for entry in sorted(os.listdir(db.overlay)):
            if entry.endswith(".toml") and entry not in _OVERLAY_FILES:
                problems.append(DatabaseError(f"is not read from an overlay (it holds constraints/, metadata/, "
                                              f"options/, {', '.join(_OVERLAY_FILES)})",
                                              file=os.path.join(db.overlay, entry)))
    return problems


# -- how old the snapshots are --------------------------------------------------------------


_TAKEN = rb'"taken"\s*:\s*"([0-9]{4}-[0-9]{2}-[0-9]{2})'


def snapshot_taken(path: str) -> _dt.date | None:
    """The date a snapshot was taken (its header's ``taken``), read from its
    first bytes; None when it cannot be read (the reader says why)."""
    try:
        with _files.open_regular(path) as handle:
            head = handle.read(4096)
    except OSError:
        return None
    match = re.search(_TAKEN, head.split(b"\n", 1)[0])
    text = match.group(1).decode() if match else None
    if text is None and b"\n" not in head:  # a header longer than the bytes read: read it whole
        from .snapshot import read_header

        try:
            taken = read_header(path).get("taken")
        except DatabaseError:
            return None
        text = taken[:10] if isinstance(taken, str) else None
    try:
        return _dt.date.fromisoformat(text) if text else None
    except ValueError:
        return None


def current_date() -> _dt.date:
    """The date snapshot ages are counted to: today, or the UTC date of
    ``SOURCE_DATE_EPOCH`` when it is set (the reproducible-builds convention),
    so that a report can be reproduced byte for byte later on."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "")
    if epoch.isascii() and epoch.isdigit() and len(epoch) <= 12:
        return _dt.datetime.fromtimestamp(int(epoch), _dt.timezone.utc).date()
    return _dt.date.today()


def stale_snapshot(db: Database, names: Iterable[str], today: _dt.date | None = None) -> tuple[_dt.date, int] | None:
    """(date, age in days) of the newest snapshot among those of `names`, when
    it is older than `STALE_DAYS`; None when it is not (or none has one)."""
    dates = [c.snapshot_taken for c in (db.component(n) for n in names) if c is not None and c.snapshot_taken]
    if not dates:
        return None
    newest = max(dates)
    age = ((today or current_date()) - newest).days
    return (newest, age) if age > STALE_DAYS else None


def describe_layers(db: Database, today: _dt.date | None = None) -> dict[str, Any]:
    """The layers of `db` (those not in use too), their folders and every
    snapshot each holds, with its date, age and whether a check reads it
    (`compat db path`)."""
    today = today or current_date()
    present = {layer.name: layer.folder for layer in layers_of(db)}
    base = layers_of(db)[0]
    rows = [(base.name, base.folder, None)]
    if base.name == "database":
        rows.append(("user", None, "not read over --db, a whole database"))
    else:
        rows.append(("user", present.get("user", user_data_dir()),
                     None if "user" in present else "no snapshots yet: compat db sync writes them here"))
    unset = f"none: --db-overlay DIR, {OVERLAY_ENV} or a stack's [compat] overlay"
    rows.append(("overlay", present.get("overlay"), None if "overlay" in present else unset))
    layers = []
    for name, folder, note in rows:
        snapshots = []
        if note is None and folder is not None:
            metadata = os.path.join(folder, METADATA)
            for package in sorted(db.held(metadata) if isinstance(db, LayeredDatabase) else _held(metadata)):
                path = os.path.join(metadata, f"{package}.jsonl")
                taken = snapshot_taken(path)
                snapshots.append({"name": package, "taken": taken.isoformat() if taken else None,
                                  "age_days": (today - taken).days if taken else None,
                                  "in_use": db.snapshot_path(package) == path})
        layers.append({"layer": name, "folder": folder, "read": note is None, "note": note, "snapshots": snapshots})
    used = [s for layer in layers for s in layer["snapshots"] if s["in_use"] and s["taken"]]
    newest = max(used, key=lambda s: (s["taken"], s["name"])) if used else None
    return {"today": today.isoformat(), "stale_after_days": STALE_DAYS, "layers": layers, "newest_in_use": newest}


def _held(folder: str) -> frozenset[str]:
    """The packages with a snapshot in `folder`."""
    from .snapshot import snapshot_names

    try:
        return frozenset(snapshot_names(os.listdir(folder)))
    except OSError:
        return frozenset()


def render_layers(data: dict[str, Any]) -> str:
    """`describe_layers` for people: a block a layer, its snapshots summed up
    by the oldest and the newest (``--format json`` lists each)."""
    lines = []
    width = max(len(layer["layer"]) for layer in data["layers"])
    pad = " " * width
    for layer in data["layers"]:
        lines.append(f"{layer['layer'].ljust(width)}  {layer['folder'] or '-'}")
        if layer["note"] is not None:
            lines.append(f"{pad}  {layer['note']}")
            continue
        snapshots = layer["snapshots"]
        dated = sorted((s for s in snapshots if s["taken"]), key=lambda s: (s["taken"], s["name"]))
        if not dated:
            lines.append(f"{pad}  no snapshots")
            continue
        used = sum(1 for s in snapshots if s["in_use"])
        count = f"{len(snapshots)} snapshot{'s' if len(snapshots) != 1 else ''}"
        lines.append(f"{pad}  {count}, {used} in use; oldest {_age(dated[0])}, newest {_age(dated[-1])}")
    newest = data["newest_in_use"]
    if newest is not None:
        limit = data["stale_after_days"]
        verdict = f"older than {limit} days: compat db sync refreshes them" if newest["age_days"] > limit else \
            f"a check notes it once it is older than {limit} days"
        lines.append(f"newest snapshot in use: {_age(newest)}; {verdict}")
    return "\n".join(lines) + "\n"


def _age(snapshot: dict[str, Any]) -> str:
    age = snapshot["age_days"]
    when = "today" if age == 0 else f"{age} day{'s' if abs(age) != 1 else ''} ago"
    return f"{snapshot['name']} {snapshot['taken']} ({when})"
