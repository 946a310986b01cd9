"""The machine `compat detect` found, written as a stack.toml.

Every fact says where it came from (a comment on its line); the GPU is
named as the catalog names it, or, when the catalog cannot tell which GPU
the tool printed, by its compute capability (or accelerator); the packages
are the installed ones the database tracks; and the notes (what could not
be found, and why) are comments at the top. The reading of the machine is
sources/detect.py's.

Several GPUs of different models: a stack names one GPU (docs/stack-toml.md,
``[hardware]``), so it names the one of the lowest compute capability, on
which every feature the stack turns on must run, and ``count`` is every GPU
of the machine; a comment lists them all.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

from packaging.version import InvalidVersion, Version

from ..sources.detect import GpuReading, Machine, clean, leading_version

if TYPE_CHECKING:
    from ..knowledge.database import Database
    from ..stack import Gpu

__all__ = ["render", "notes_of"]

def _string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value)


def _tracked(db: Database) -> set[str]:
    """The packages a detected stack lists: the database's curated components
    and the packages `compat db sync` tracks (not every dependency it holds)."""
    curated = db.curated()
    graph = db.graph()
    if graph:
        return curated | set(graph.get("tracked", ()))
    return curated | {n for n in db.names() if (c := db.component(n)) is not None and c.tracked}


def _choose(gpus: list[GpuReading]) -> GpuReading:
    """The GPU a stack names: the one of the lowest compute capability (the
    first listed when none is known, or all are alike)."""
    known = [g for g in gpus if g.compute_capability is not None]
    return min(known, key=lambda g: g.compute_capability) if known else gpus[0]  # type: ignore[arg-type,return-value]


def _hardware(machine: Machine, db: Database, notes: list[str]) -> tuple[list[str], str | None]:
    """The [hardware] lines, and the accelerator the GPUs are (cuda, rocm or None)."""
    if not machine.gpus:
        return [], None
    tool = machine.gpu_tool or "nvidia-smi"
    chosen = _choose(machine.gpus)
    accelerator = "cuda" if chosen.vendor == "nvidia" else "rocm"
    lines = []
    counts = Counter(g.name for g in machine.gpus)
    if len(counts) > 1:
        listed = ", ".join(f"{n} x {clean(name, 80)}" for name, n in sorted(counts.items()))
        notes.append(f"{tool} lists different GPUs ({listed}): the stack names {clean(chosen.name, 80)}, the one of "
                     "the lowest compute capability, which every feature must run on, and counts them all; "
                     "edit it if the deployment uses only some of them")
    match = db.catalog.match(chosen.name)
    gpu: Gpu | None = match.gpu
    said = f"{tool}: {clean(chosen.name, 80)}"
    if chosen.compute_capability is not None:
        said += f", compute capability {chosen.compute_capability}"
    if gpu is not None and chosen.compute_capability is not None and gpu.compute_capability != chosen.compute_capability:
        notes.append(f"{tool} names {clean(chosen.name, 80)} with compute capability {chosen.compute_capability}, "
                     f"but the catalog's {gpu.name} has {gpu.compute_capability}: the compute capability is written, "
                     "not the name")
        gpu = None
    if gpu is not None:
        lines.append(f"gpu = {_string(gpu.name)}  # {said}")
    else:
        if match.ambiguous:
            candidates = ", ".join(g.name for g in match.candidates[:6])
            notes.append(f"the GPU catalog cannot tell which GPU {clean(chosen.name, 80)} is ({candidates})")
        elif not match.candidates:
            notes.append(f"the GPU catalog does not know {clean(chosen.name, 80)}")
        if chosen.compute_capability is not None:
            lines.append(f"compute_capability = {_string(str(chosen.compute_capability))}  # {said}")
        else:
            lines.append(f"accelerator = {_string(accelerator)}  # {said}")
    lines.append(f"count = {len(machine.gpus)}")
    return lines, accelerator


def _system(machine: Machine, accelerator: str | None, notes: list[str]) -> list[str]:
    lines = [f"python = {_string(machine.python or '')}", f"platform = {_string(machine.platform or '')}"]
    if machine.glibc:
        lines.append(f"glibc = {_string(machine.glibc)}")
    torch = machine.torch or {}
    build = f"torch {torch.get('version')}"
    cuda, rocm = leading_version(torch.get("cuda")), leading_version(torch.get("hip"))
    if cuda and accelerator == "rocm":
        notes.append(f"{build} is built for CUDA {cuda}, but the GPUs are AMD's: [system] cuda is left out")
    elif cuda:
        lines.append(f"cuda = {_string(cuda)}  # the CUDA {build} was built with")
    if rocm and accelerator == "cuda":
        notes.append(f"{build} is built for ROCm {rocm}, but the GPUs are NVIDIA's: [system] rocm is left out")
    elif rocm:
        lines.append(f"rocm = {_string(rocm)}  # the ROCm {build} was built with")
    if machine.torch is not None and not cuda and not rocm:
        notes.append(f"{build} is a CPU build: no CUDA or ROCm version to write")
    drivers = sorted({g.driver for g in machine.gpus if g.driver}, key=Version)
    if drivers and accelerator == "cuda":
        lines.append(f"driver = {_string(drivers[0])}  # nvidia-smi")
        if len(drivers) > 1:
            notes.append(f"nvidia-smi lists several drivers ({', '.join(drivers)}): the oldest is written")
    elif accelerator == "cuda":
        notes.append("nvidia-smi did not give the driver version: [system] driver is left out")
    return lines


def _packages(machine: Machine, db: Database, notes: list[str]) -> list[str]:
    tracked = _tracked(db)
    lines = []
    for name in sorted(n for n in machine.distributions if n in tracked):
        version = machine.distributions[name]
        try:
            Version(version)
        except InvalidVersion:
            notes.append(f"{name} {clean(version, 40)} is installed, but that is not a PEP 440 version: left out")
            continue
        lines.append(f"{name} = {_string(version)}")
    if not lines:
        notes.append("none of the packages the database tracks is installed in this environment")
    return lines


def render(machine: Machine, db: Database) -> str:
    """The stack.toml of `machine`: every fact with where it came from, and
    the notes (what could not be found, and why) as comments at the top."""
    notes = list(machine.notes)
    hardware, accelerator = _hardware(machine, db, notes)
    system = _system(machine, accelerator, notes)
    packages = _packages(machine, db, notes)
    head = ["# This machine's stack, as `compat detect` found it. Check it with `compat check FILE`."]
    if notes:
        head.append("#")
        head += [f"# note: {clean(note, 400)}" for note in notes]
    body = ["", "[stack]", f"description = {_string('detected by compat detect')}", "", "[system]", *system]
    if hardware:
        body += ["", "[hardware]", *hardware]
    body += ["", "[packages]", *packages]
    return "\n".join(head + body) + "\n"


def notes_of(text: str) -> list[str]:
    """The notes a rendered stack carries (what `compat detect` also prints on standard error)."""
    return [line[len("# note: "):] for line in text.splitlines() if line.startswith("# note: ")]
