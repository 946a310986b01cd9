"""What a stack is: the plain types a deployment is described with.

A `Stack` is the machine (`System`, `Hardware`) and the software
(`PackageSpec` per package, options, `Model`, environment variables) of
one deployment, with `Place` for where an input gave a value and the
catalog entries a bound stack holds (`Gpu`, `ModelEntry`). Nothing here
reads a file or the database: the readers of sources/ fill these types from
their inputs, and knowledge/binding.py binds a stack's names to the catalogs
(`compat.load_stack`). What a platform name means (its PEP 508 markers, the
wheels that fit it) is the platform table's, ``data/platforms.toml``, which
knowledge reads and hands this floor (`set_platform_markers`).

The bottom floor of docs/architecture.md: it imports no floor above it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from packaging.markers import default_environment
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from ._names import model_key
from ._record import Fields, Record
from ._versions import parse_version

__all__ = ["Stack", "System", "Hardware", "PackageSpec", "Model", "Place", "Gpu", "ModelEntry", "ACCELERATORS",
           "parse_compute_capability", "set_platform_markers"]

ACCELERATORS = ("cuda", "rocm", "mps", "cpu")

# A platform name -> its PEP 508 marker values ((marker, value) pairs), or
# None for a name the platform table does not hold: knowledge's lookup
# (knowledge/platforms.py), in the table of the database a stack was last
# bound with. This floor reads no file.
MarkerLookup = Callable[[str], tuple[tuple[str, str], ...] | None]
_platform_markers: MarkerLookup | None = None


def set_platform_markers(lookup: MarkerLookup) -> None:
    """Say how a platform's marker values are found (knowledge/platforms.py does, when it is imported)."""
    global _platform_markers
    _platform_markers = lookup


_CC = r"(?i)^(?:sm_?)?(\d+)(?:\.(\d+))?$"


def parse_compute_capability(text: str) -> Version:
    """Parse ``"9.0"``, ``"sm_90"``, ``"sm90"`` or ``"sm_120"`` into a version.

    >>> parse_compute_capability("sm_90"), parse_compute_capability("12.0"), parse_compute_capability("sm120")
    (<Version('9.0')>, <Version('12.0')>, <Version('12.0')>)
    """
    match = re.match(_CC, text.strip())
    if not match:
        raise ValueError(f"not a compute capability: {text!r} (write it as \"9.0\" or \"sm_90\")")
    major, minor = match.groups()
    if minor is None:
        if not text.strip().lower().startswith("sm"):
            raise ValueError(f"not a compute capability: {text!r} (write it as \"9.0\" or \"sm_90\")")
        # sm_90 -> 9.0, sm_120 -> 12.0, sm_103 -> 10.3: the last digit is the minor.
        if len(major) < 2:
            raise ValueError(f"not a compute capability: {text!r}")
        major, minor = major[:-1], major[-1]
    return Version(f"{int(major)}.{int(minor)}")


class Gpu(Record):
    """One GPU model of the catalog."""

    name: str
    vendor: str
    architecture: str
    segment: str
    compute_capability: Version | None
    gfx_target: str | None
    memory_gb: int | None
    aliases: tuple[str, ...]
    source: str
    # The one platform its host CPU runs (a Grace superchip or a Jetson module:
    # "linux-aarch64"); None where the GPU goes into hosts of several kinds.
    host: str | None = None
    # The source of the compute capability, where `source` states other facts
    # (the host of a superchip) and another table states the compute capability.
    compute_capability_source: str | None = None
    # The vendor's tables do not state the compute capability: it is inferred
    # from `basis` (the chip it shares with a GPU they list).
    inferred: bool = False
    basis: str | None = None

    @property
    def accelerator(self) -> str:
        return {"nvidia": "cuda", "amd": "rocm", "apple": "mps"}[self.vendor]

    @property
    def sm(self) -> str | None:
        """``"sm_90"`` style name of the compute capability."""
        cc = self.compute_capability
        return None if cc is None else f"sm_{cc.major}{cc.minor}"


class ModelEntry(Record):
    """One model of the catalog. None: the catalog does not say."""

    name: str
    family: str
    source: str
    repo: str | None = None
    aliases: tuple[str, ...] = ()
    head_dim: int | None = None
    checkpoint_dtype: str | None = None
    moe: bool | None = None
    hybrid: bool | None = None
    multimodal: bool | None = None
    note: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """Every way to name it: name, repo, aliases."""
        return (self.name, *((self.repo,) if self.repo else ()), *self.aliases)

    def identities(self) -> frozenset[str]:
        return frozenset(model_key(n) for n in self.names)


class Place(Record):
    """Where an input gives a value: a file (or an interpreter) and its line, when it has lines.

    >>> str(Place("requirements.txt", 3)), str(Place("/usr/bin/python3"))
    ('requirements.txt:3', '/usr/bin/python3')
    """

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


class System(Record):
    python: Version
    platform: str = "linux-x86_64"
    cuda: Version | None = None
    rocm: Version | None = None
    driver: Version | None = None
    driver_written: str | None = None
    glibc: Version | None = None
    index: str = "pypi"  # where builds come from: the package index, or a PyTorch index variant (cu128, rocm6.4, cpu)

    def marker_environment(self, platform: tuple[tuple[str, str], ...] | None = None) -> dict[str, str]:
        """The PEP 508 environment that package markers are evaluated in (a new dict each call): the
        platform's marker values are `platform`'s, given by the caller from the platform table of the
        database it checks against (``data/platforms.toml``); without them, the table of the database
        the last stack was bound with. A name that table does not hold is a ValueError."""
        if platform is not None:
            return dict(_marker_environment(platform, self.python.release))
        if _platform_markers is None:
            raise ValueError("the platform table (data/platforms.toml) is read by compat.knowledge.platforms, "
                             "which is not imported")
        values = _platform_markers(self.platform)
        if values is None:
            raise ValueError(f"unknown platform {self.platform!r} (data/platforms.toml does not hold it)")
        return dict(_marker_environment(values, self.python.release))


@functools.lru_cache(maxsize=64)
def _marker_environment(platform: tuple[tuple[str, str], ...], release: tuple[int, ...]) -> dict[str, str]:
    """The markers' environment of a platform's marker values and a Python,
    made once (reading the host's own takes several calls into the platform
    module)."""
    env = dict(default_environment())
    env.update(platform)
    full = ".".join(str(p) for p in (release + (0, 0))[:3])
    env.update(
        python_version=f"{release[0]}.{release[1]}",
        python_full_version=full,
        implementation_name="cpython",
        implementation_version=full,
        platform_python_implementation="CPython",
        platform_release="",
        platform_version="",
    )
    return env


class Hardware(Record):
    gpu: Gpu | None = None
    compute_capability: Version | None = None
    count: int = 1
    accelerator: str = "cpu"


def _pinned(text: str) -> Version | None:
    """The version a pin names (asked of each entry again and again: parsed once)."""
    try:
        return parse_version(text)
    except ValueError:  # InvalidVersion, or a number too long to convert
        return None


class PackageSpec(Record):
    """One entry of [packages]."""

    name: str
    specifier: SpecifierSet
    extras: frozenset[str] = frozenset()
    external: bool = False
    written: str = ""
    build: str | None = None  # a local version label (+cu128): selects that build

    @property
    def pinned(self) -> Version | None:
        """The version if the entry is a single ``==`` pin without wildcard."""
        specs = list(self.specifier)
        if len(specs) == 1 and specs[0].operator in ("==", "===") and not specs[0].version.endswith("*"):
            return _pinned(specs[0].version)
        return None


class Model(Record):
    """[model] as the stack writes it (the catalog fills the rest: engine/facts.py)."""

    name: str | None = None
    family: str | None = None
    head_dim: int | None = None
    checkpoint_dtype: str | None = None
    repo: str | None = None
    moe: bool | None = None
    hybrid: bool | None = None
    multimodal: bool | None = None


_STACK_FIELDS = ("system", "hardware", "packages", "options", "model", "env", "ignore", "strict", "require_known",
                 "name", "description", "path", "text", "untracked", "unknown_options", "catalog_model", "places",
                 "environment", "overlay", "locked", "only_binary")


class Stack(Fields):
    """A deployment: the machine it runs on and the software it runs.

    Its fields are what `compat.load_stack` read and bound to the
    database; `replace` returns a copy with some of them changed (see
    `Fields`). Two stacks are equal when every field but `text` is.
    """

    _fields = _STACK_FIELDS
    _unshown = frozenset({"text"})

    system: System
    hardware: Hardware
    packages: dict[str, PackageSpec]
    options: dict[str, dict[str, Any]]
    model: Model
    env: dict[str, str]
    ignore: tuple[str, ...]
    strict: bool
    require_known: bool
    name: str | None
    description: str | None
    path: str | None
    # the text the stack was read from: reports locate each finding on its line (compat.engine.findings.locate)
    text: str | None
    untracked: tuple[str, ...]
    unknown_options: tuple[tuple[str, str], ...]
    catalog_model: ModelEntry | None  # the model catalog's entry for [model] name / repo
    # a stack merged from several inputs (knowledge/inputs.py): where each package was given, and the
    # installed environment it was read from (compat check --env), whose own metadata is checked too
    # (a sources.environment.Environment: this module, below every floor, does not name the reader's type)
    places: dict[str, Place]
    environment: Any
    overlay: str | None  # [compat] overlay: the folder of the stack's own facts (knowledge/layers.py)
    # the packages are a complete install that no installer adds to (a lock, an installed environment):
    # an extra a requirement asks for is installed only where the pins show it
    locked: bool
    only_binary: bool  # [compat] only_binary (or --only-binary): a release that needs a build from source fails

    def __init__(
        self,
        system: System,
        hardware: Hardware | None = None,
        packages: dict[str, PackageSpec] | None = None,
        options: dict[str, dict[str, Any]] | None = None,
        model: Model | None = None,
        env: dict[str, str] | None = None,
        ignore: tuple[str, ...] = (),
        strict: bool = False,
        require_known: bool = False,
        name: str | None = None,
        description: str | None = None,
        path: str | None = None,
        text: str | None = None,
        untracked: tuple[str, ...] = (),
        unknown_options: tuple[tuple[str, str], ...] = (),
        catalog_model: ModelEntry | None = None,
        places: dict[str, Place] | None = None,
        environment: Any = None,
        overlay: str | None = None,
        locked: bool = False,
        only_binary: bool = False,
    ) -> None:
        self.system = system
        self.hardware = Hardware() if hardware is None else hardware
        self.packages = {} if packages is None else packages
        self.options = {} if options is None else options
        self.model = Model() if model is None else model
        self.env = {} if env is None else env
        self.ignore = ignore
        self.strict = strict
        self.require_known = require_known
        self.name = name
        self.description = description
        self.path = path
        self.text = text
        self.untracked = untracked
        self.unknown_options = unknown_options
        self.catalog_model = catalog_model
        self.places = {} if places is None else places
        self.environment = environment
        self.overlay = overlay
        self.locked = locked
        self.only_binary = only_binary
