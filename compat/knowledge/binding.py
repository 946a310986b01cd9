"""A stack's names bound to what the database knows.

A stack file names things only the database can tell: a GPU (``H200``,
``NVIDIA GeForce RTX 4090``), its platform (``linux-aarch64``: the platform
table, ``data/platforms.toml``), its packages (``Flash_Infer.Python`` is the
tracked flashinfer-python; ``vlm`` is likely a typo of vllm), the flags of
their engines (``-tp`` is ``--tensor-parallel-size``), a model, a PyTorch
index label (``cu128``), and the folder of the user's own facts (``[compat]
overlay``) the others are looked up in. sources/stack.py reads the file
into a `RawStack`, every value checked and its place kept; `bind_stack`
binds its names to the catalogs, and a name no catalog holds is a
`StackError` with the file, key and line of the value, as a value the
reader refuses is.

`load_stack`, `loads_stack` and `stack_from_tables` do both: what
``compat.load_stack`` is.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from .._names import did_you_mean, import_names, nearest, normalize
from ..errors import StackError
from ..sources.stack import (
    INDEX_EXPECTED, MACHINE_KEYS, NotAVersion, RawStack, kind, read_stack, read_tables, reads_stack,
)
from ..stack import Hardware, ModelEntry, PackageSpec, Place, Stack, System
from .conditions import option_key
from .platforms import use_platforms

if TYPE_CHECKING:
    from .database import Database

__all__ = ["load_stack", "loads_stack", "stack_from_tables", "bind_stack", "bind_platform", "tracked_name"]

_VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD", "apple": "Apple", "cuda": "CUDA", "rocm": "ROCm"}


def load_stack(source: str | os.PathLike[str] | Mapping[str, Any], database: Database | None = None) -> Stack:
    """Read a stack from a stack.toml path or from an already-parsed mapping.

    The database resolves GPU names and tells tracked packages from unknown
    ones (a likely typo of a tracked name is an error). Without one, the
    bundled database is used.
    """
    db = _database(database)
    return bind_stack(_labelled(lambda: read_stack(source), db), db)


def loads_stack(text: str, database: Database | None = None) -> Stack:
    """Read a stack from the text of a stack.toml, as `load_stack` reads a
    file: an error names ``<string>`` as its file, with the key and line.

    >>> loads_stack('[system]\\npython = "3.12"\\n').system.python
    <Version('3.12')>
    """
    db = _database(database)
    return bind_stack(_labelled(lambda: reads_stack(text), db), db)


def stack_from_tables(data: Mapping[str, Any], database: Database, *, file: str, text: str | None = None,
                      path: str | None = None, places: Mapping[tuple[str, str], Place] | None = None) -> Stack:
    """A stack from tables that several inputs were merged into (knowledge/inputs.py),
    validated as a stack file is: an error about a value that another input
    gave names that input's file and line (`places`: (table, key) -> Place);
    any other names `file` and the line of `text`, the stack file's."""
    raw = _labelled(lambda: read_tables(data, file=file, text=text, path=path, places=places), database)
    return bind_stack(raw, database)


def _database(database: Database | None) -> Database:
    if database is not None:
        return database
    from .database import Database

    return Database.load()


def _labelled(read: Callable[[], RawStack], db: Database) -> RawStack:
    """`read()`, where a PyTorch index label (``cu128``) given as [system]
    cuda or rocm is refused as such, saying where each goes."""
    try:
        raw = read()
    except NotAVersion as error:
        for key, label in error.words.items():
            said = db.cuda.label(label)
            if said is None:
                continue
            what, version = said
            if what == "cpu":
                advice = f"a stack without {'CUDA' if key == 'cuda' else 'ROCm'} leaves {key} out"
            else:
                advice = f"{what} takes the version, {what} = \"{version}\""
            raise error.at(key, f"{label!r} is the label of a PyTorch index, not a version: {advice}; the label "
                                f"goes in [system] index = \"{label}\" (the index the builds come from)") from None
        # any other word: the plain error the reader made (the subclass only carries the words here)
        raise StackError(error.message, file=error.file, key=error.key, line=error.line) from None
    return raw


def bind_stack(raw: RawStack, db: Database) -> Stack:
    """The `Stack` of `raw`, its names bound to the catalogs of `db` (with
    the stack's own overlay over it)."""
    if raw.overlay is not None:  # its GPUs, models and packages are known to the rest of the stack
        from .layers import with_overlay

        db = with_overlay(db, raw.overlay)
    system = _system(raw, db)
    hardware = _hardware(raw, db, system)
    packages, untracked = _packages(raw, db)
    options, unknown_options = _options(raw, db, packages)
    catalog_model = _model(raw, db)
    return Stack(
        system=system,
        hardware=hardware,
        packages=packages,
        options=options,
        model=raw.model,
        env=raw.env,
        ignore=raw.ignore,
        strict=raw.strict,
        require_known=raw.require_known,
        name=raw.name,
        description=raw.description,
        path=raw.path,
        text=raw.text,
        untracked=untracked,
        unknown_options=unknown_options,
        catalog_model=catalog_model,
        overlay=raw.overlay,
        only_binary=raw.only_binary,
    )


def _system(raw: RawStack, db: Database) -> System:
    """[system] platform: one of the platform table's, and glibc only for one whose wheels name a glibc;
    [system] index: ``pypi``, or a PyTorch index named by the label of its builds (cuda.toml's [labels])."""
    system = raw.system
    table = db.platforms
    platform = table.get(system.platform)
    if platform is None:
        raise raw.error(_unknown_platform(system.platform, table.names()), ("system",), "platform")
    if system.glibc is not None and not platform.glibc:
        raise raw.error(f"glibc is for Linux platforms; the platform is {platform.name}", ("system",), "glibc")
    use_platforms(table)  # what System.marker_environment and the wheel tests read (knowledge/platforms.py)
    index = system.index
    said = db.cuda.label(index) if index != "pypi" else None
    if index != "pypi" and said is None:
        raise raw.error(INDEX_EXPECTED + kind(index), ("system",), "index")
    cuda, rocm = system.cuda, system.rocm
    if said is not None and (said[0] == "cuda" and rocm is not None or said[0] == "rocm" and cuda is not None):
        raise raw.error(f"index {index!r} contradicts the stack's {'ROCm' if rocm is not None else 'CUDA'}",
                        ("system",), "index")
    return system


def bind_platform(stack: Stack, db: Database) -> None:
    """Check the platform of a `Stack` made in Python against the platform
    table of `db`, and make that table the one its platform name means (as
    binding a stack read from a file does)."""
    table = db.platforms
    entry = table.get(stack.system.platform)
    where = stack.path or "<stack>"
    if entry is None:
        raise StackError(_unknown_platform(stack.system.platform, table.names()), file=where, key="[system] platform")
    if stack.system.glibc is not None and not entry.glibc:
        raise StackError(f"glibc is for Linux platforms; the platform is {entry.name}", file=where,
                         key="[system] glibc")
    use_platforms(table)


def _unknown_platform(name: str, names: tuple[str, ...]) -> str:
    return f"unknown platform {name!r}{did_you_mean(name[:64], names)} (one of {', '.join(names)})"


def _hardware(raw: RawStack, db: Database, system: System) -> Hardware:
    where = ("hardware",)
    table = raw.hardware
    gpu = None
    if table.gpu is not None:
        gpu = db.gpu(table.gpu)
        if gpu is None:
            raise raw.error(_gpu_not_found(table.gpu, db), where, "gpu")
    compute_capability = table.compute_capability
    if compute_capability is not None:
        if gpu is not None and gpu.compute_capability != compute_capability:
            have = gpu.compute_capability or gpu.gfx_target
            raise raw.error(
                f"{table.compute_capability_written!r} disagrees with the {gpu.name}, whose compute capability is {have}",
                where,
                "compute_capability",
            )
    elif gpu is not None:
        compute_capability = gpu.compute_capability
    accelerator = table.accelerator
    if accelerator is not None:
        if gpu is not None and gpu.accelerator != accelerator:
            raise raw.error(f"the {gpu.name} is a {gpu.accelerator} device, not {accelerator}", where, "accelerator")
        if compute_capability is not None and accelerator != "cuda":
            raise raw.error(f"compute_capability is for CUDA devices, but accelerator is {accelerator}", where,
                            "accelerator")
    elif gpu is not None:
        accelerator = gpu.accelerator
    elif compute_capability is not None or system.cuda is not None:
        accelerator = "cuda"
    elif system.rocm is not None:
        accelerator = "rocm"
    else:
        accelerator = "cpu"
    # A CUDA toolkit on an AMD card (or ROCm on an NVIDIA one) is no stack at all.
    platform_stack = "cuda" if system.cuda is not None else ("rocm" if system.rocm is not None else None)
    if platform_stack is not None and accelerator in ("cuda", "rocm", "mps") and accelerator != platform_stack:
        device = f"the {gpu.name} is an {_VENDOR_NAMES[gpu.vendor]} GPU" if gpu is not None else f"the accelerator is {accelerator}"
        raise raw.error(
            f"{device}, but [system] {platform_stack} says the stack runs on {_VENDOR_NAMES[platform_stack]}",
            where,
            "gpu" if gpu is not None else "accelerator",
        )
    return Hardware(gpu=gpu, compute_capability=compute_capability, count=table.count, accelerator=accelerator)


def _gpu_not_found(name: str, db: Database) -> str:
    """Why `[hardware] gpu` names no GPU of the catalog, and what to write instead
    (the whole catalog is read: this is the error path)."""
    catalog = db.catalog
    found = catalog.match(name)
    if found.vendor_only:
        return (f"{name!r} names a vendor or a product line, not a GPU: give the model, "
                "as nvidia-smi --query-gpu=name or rocm-smi --showproductname prints it")
    if found.ambiguous:
        shown = [f"{g.name} ({g.sm or g.gfx_target})" for g in found.candidates[:8]]
        more = f" and {len(found.candidates) - 8} more" if len(found.candidates) > 8 else ""
        return f"{name!r} is ambiguous: it could be {', '.join(shown)}{more}; write the full name"
    inferred = catalog.infer(name)
    guess = catalog.suggest(name, inferred)
    message = f"unknown GPU {name!r}" + (f" (did you mean {guess!r}?)" if guess else "")
    if inferred is not None and inferred.compute_capability is not None:
        cc = inferred.compute_capability
        examples = ", ".join(g.name for g in inferred.members[:3]) + (", …" if len(inferred.members) > 3 else "")
        return (f"{message}; for a GPU the catalog lacks, give [hardware] compute_capability: "
                f"the catalog's {inferred.family} GPUs ({examples}) are all {inferred.architecture}, "
                f"compute capability {cc}, so compute_capability = \"{cc}\" is likely "
                "(inferred from the name; nvidia-smi --query-gpu=compute_cap tells)")
    if inferred is not None:
        return (f"{message}; for a GPU the catalog lacks, give [hardware] accelerator = "
                f"\"{inferred.members[0].accelerator}\" (the catalog's {inferred.family} GPUs are all "
                f"{inferred.gfx_target}; inferred from the name)")
    return (f"{message}; for a GPU the catalog lacks, give [hardware] compute_capability as "
            "nvidia-smi --query-gpu=compute_cap prints it (NVIDIA), or accelerator = \"rocm\" (AMD)")


def squashed_names(known: Collection[str]) -> dict[str, str]:
    """The tracked names without their "-", each to its name: what `tracked_name` looks a spelling up in."""
    return {n.replace("-", ""): n for n in known}


def tracked_name(key: str, known: Collection[str], squashed: Mapping[str, str]) -> str:
    """`key` as [packages] reads it: PEP 503 normalized, and a name that differs
    from a tracked one only by its separators is that one (`squashed`: the
    tracked names without their "-").

    >>> tracked_name("Flash_Infer.Python", {"flashinfer-python"}, {"flashinferpython": "flashinfer-python"})
    'flashinfer-python'
    """
    name = normalize(key)
    return name if name in known else squashed.get(name.replace("-", ""), name)


def _packages(raw: RawStack, db: Database) -> tuple[dict[str, PackageSpec], tuple[str, ...]]:
    where = ("packages",)
    known = db.names()
    # The contract reads `Flash_Infer.Python` as `flashinfer-python`: a name
    # that differs from a tracked one only by separators means that one.
    squashed = squashed_names(known)
    packages: dict[str, PackageSpec] = {}
    untracked: list[str] = []
    imported: dict[str, str] | None = None  # import name -> distribution: made for the first name not tracked
    for entry in raw.packages:
        key = entry.key
        name = tracked_name(key, known, squashed)
        if name in packages:
            raise raw.error(f"names {name!r} a second time (names are compared as PEP 503 normalizes them)", where, key)
        if name not in known and not entry.external:
            if name in MACHINE_KEYS:  # cuda = "12.8" one table too low
                home = MACHINE_KEYS[name]
                raise raw.error(f"{key} is not a package but a key of [{home}]: write it under [{home}] "
                                f"(or {key} = {{ version = \"...\", external = true }} for a package of that name)",
                                where, key)
            if imported is None:
                imported = import_names(known)
            # an import name (cpuinfo) may be a project of its own (multipart, dotenv): not a near name, but
            # untracked, and the check's warning says which distribution it may mean
            guess = nearest(name, known, cutoff=0.8) if name not in imported else None
            if guess is not None:
                raise raw.error(
                    f"unknown package {key!r}; did you mean {guess!r}? (write {key} = {{ version = \"...\", external = true }} if it is right)",
                    where,
                    key,
                )
            untracked.append(name)
        packages[name] = PackageSpec(name=name, specifier=entry.specifier, extras=entry.extras,
                                     external=entry.external, written=entry.written, build=entry.build)
    return packages, tuple(untracked)


def _options(
    raw: RawStack, db: Database, packages: dict[str, PackageSpec]
) -> tuple[dict[str, dict[str, Any]], tuple[tuple[str, str], ...]]:
    options: dict[str, dict[str, Any]] = {}
    spelled: dict[str, str] = {}  # package -> how the stack spelled its [options] table first
    unknown: list[tuple[str, str]] = []
    for key, values in raw.options.items():
        name = normalize(key)
        if name in spelled:
            raise raw.error(f"options for {name!r} are given twice, as [options.{spelled[name]}] and as "
                            f"[options.{key}]", ("options",), key)
        spelled[name] = key
        if name not in packages:
            guess = nearest(name, packages, cutoff=0.6)
            hint = f"; did you mean {guess!r}?" if guess else ""
            raise raw.error(f"options for {key!r}, which [packages] does not list{hint}", ("options",), key)
        component = db.component(name)
        known = component.options if component is not None else {}
        catalog = db.option_catalog(name) if component is not None else None
        parsed: dict[str, Any] = {}
        written: dict[str, str] = {}  # flag -> how the stack spelled it first
        for flag, value in values.items():
            option = option_key(flag)
            if catalog is not None:
                option = catalog.canonical(option) or option  # -tp is --tensor-parallel-size
            if option in parsed:
                raise raw.error(f"--{option} is given twice, as {written[option]!r} and as {flag!r}", ("options", key), flag)
            written[option] = flag
            parsed[option] = value
            if option not in known and (catalog is None or not catalog.knows(option)):
                unknown.append((name, option))
        options[name] = parsed
    return options, tuple(unknown)


def _model(raw: RawStack, db: Database) -> ModelEntry | None:
    """The model catalog's entry for [model] name and repo (read only for a stack that names its model)."""
    where = ("model",)
    model = raw.model
    entry = None
    for key in ("name", "repo"):
        written = getattr(model, key)
        found = db.model(written) if written else None
        if found is None:
            continue
        if entry is not None and found.name != entry.name:
            raise raw.error(f"{written!r} is {found.name} in the model catalog, but [model] name is {entry.name}", where, key)
        entry = found
    if entry is not None and model.family and entry.family and model.family != entry.family:
        raise raw.error(
            f"{model.family!r} contradicts the model catalog: {entry.name} is of family {entry.family!r}", where, "family"
        )
    return entry
