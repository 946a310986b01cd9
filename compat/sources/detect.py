"""The machine compat runs on, read for `compat detect` (formats/detected.py
writes it as a stack).

Everything is asked of programs, never guessed: the Python interpreter
(its version, platform, glibc and installed distributions, read inside it),
``nvidia-smi`` (or ``rocm-smi``) for the GPUs and the driver, and torch, in
a process of its own, for the CUDA or ROCm version its build targets. Each
program runs with a time limit; one that is missing, fails, hangs or prints
what cannot be read leaves a note, never a crash, and the stack says only
what was found.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from packaging.version import Version

from .._names import normalize
from ..errors import CompatError
from .._strict import MAX_DIGITS, has_long_number
from ..stack import parse_compute_capability

__all__ = ["Machine", "GpuReading", "Platforms", "detect", "detect_gpus", "parse_nvidia_smi", "parse_rocm_smi",
           "clean", "leading_version", "DEFAULT_TIMEOUT"]

DEFAULT_TIMEOUT = 60.0  # seconds for each program (importing torch can take a while on a cold disk)
MAX_OUTPUT = 1024 * 1024  # bytes of a program's output that are read: one that prints more is stopped
NVIDIA_QUERY = ("--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader")
# Drivers before 510 do not know the compute_cap field: the name then gives it, through the catalog.
NVIDIA_QUERY_OLD = ("--query-gpu=name,driver_version", "--format=csv,noheader")
ROCM_QUERY = ("--showproductname", "--json")
_DOTTED = re.compile(r"[0-9]+(\.[0-9]+)*", re.ASCII)
_NOT_AVAILABLE = ("[n/a]", "n/a", "[not supported]", "")
MAX_FIELD = 200  # characters of a GPU's name, driver or GFX target: a tool that prints more is not read
MAX_DEPTH = 50  # how deep rocm-smi's JSON may nest (it nests two deep): deeper is not read, nor a RecursionError
_BRACKET = re.compile(r'[\[\]{}"]')
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.S)  # the rest of a JSON string, after its opening quote
# Imports torch, which may fail in any way (a missing libcuda, a broken
# wheel): the failure is reported, not raised.
_PROBE_TORCH = """
import json, os, sys
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]  # the current folder: a torch/ folder there is not the installed torch
try:
    import torch
    v = getattr(torch, "version", None)
    out = {"version": str(getattr(torch, "__version__", "")), "cuda": getattr(v, "cuda", None),
           "hip": getattr(v, "hip", None)}
except BaseException as exc:
    out = {"error": (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:300]}
print(json.dumps(out))
"""


class DetectError(CompatError):
    """The machine cannot be described as a stack (exit 2)."""


class HostPlatform(Protocol):
    """A platform of the table, as detection asks it."""

    @property
    def name(self) -> str: ...

    @property
    def glibc(self) -> bool: ...  # whether a stack gives [system] glibc for it


class Platforms(Protocol):
    """What detection asks of the platform table (knowledge/platforms.py's
    `PlatformTable`), which its caller hands it: sources read no database."""

    def names(self) -> Sequence[str]: ...

    def for_host(self, sys_platform: str, machine: str) -> HostPlatform | None: ...


@dataclass(frozen=True)
class GpuReading:
    """One GPU as its vendor's tool prints it."""

    vendor: str  # "nvidia" or "amd"
    name: str
    compute_capability: Version | None = None
    driver: str | None = None
    gfx_target: str | None = None


@dataclass
class Tool:
    """What running one program gave: its output, or why there is none."""

    output: str | None
    problem: str | None = None


@dataclass
class Machine:
    """What detection found; `notes` say what it could not find, and why."""

    python: str | None = None
    platform: str | None = None
    glibc: str | None = None
    distributions: dict[str, str] = field(default_factory=dict)
    gpus: list[GpuReading] = field(default_factory=list)
    gpu_tool: str | None = None  # "nvidia-smi" or "rocm-smi", whichever found the GPUs
    torch: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)


def clean(text: str, limit: int = 200) -> str:
    """A program's text as one printable line (for a note or a TOML comment)."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def run(argv: Sequence[str], timeout: float) -> Tool:
    """Run `argv` for at most `timeout` seconds and `MAX_OUTPUT` bytes of
    output; a program that hangs or prints without end is stopped, with
    every process it started (sources/environment.py `start`)."""
    from .environment import TooMuchOutput, collect, start

    name = os.path.basename(argv[0])
    try:
        process = start(list(argv))
    except FileNotFoundError:
        return Tool(None, f"{name} is not installed (not on PATH)")
    except OSError as exc:
        return Tool(None, f"{name} could not be started: {exc.strerror or exc}")
    try:
        out, err = collect(process, timeout, MAX_OUTPUT)
    except subprocess.TimeoutExpired:
        return Tool(None, f"{name} did not answer within {timeout:g} s (stopped)")
    except TooMuchOutput:
        return Tool(None, f"{name} printed more than {MAX_OUTPUT // 1024} KiB (stopped)")
    stdout = out.decode("utf-8", "replace")
    if process.returncode != 0:
        said = clean(stdout.strip().splitlines()[0] if stdout.strip() else err.decode("utf-8", "replace"))
        return Tool(stdout, f"{name} failed (exit {process.returncode})" + (f": {said}" if said else ""))
    return Tool(stdout)


def parse_nvidia_smi(text: str, with_compute_capability: bool = True) -> list[GpuReading]:
    """The GPUs of ``nvidia-smi --query-gpu=name,compute_cap,driver_version
    --format=csv,noheader``: one line each, ``name, 9.0, 580.95.05``. A line
    that is not of that shape is a ValueError (the output is not trusted).

    >>> parse_nvidia_smi("NVIDIA H100 80GB HBM3, 9.0, 580.95.05\\n")[0].compute_capability
    <Version('9.0')>
    """
    fields = 3 if with_compute_capability else 2
    gpus = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.rsplit(",", fields - 1)]
        if len(parts) != fields or not parts[0] or not parts[0].isprintable():
            raise ValueError(f"line {number} is not 'name, {'compute capability, ' * with_compute_capability}driver': "
                             f"{clean(line, 80)!r}")
        name, driver = parts[0], parts[-1]
        if not any(c.isalnum() for c in name):  # `,,,,`: empty fields are no GPU, and not an NVIDIA one
            raise ValueError(f"line {number} names no GPU: {clean(line, 80)!r}")
        for part in parts:
            if _too_long(part):
                raise ValueError(f"line {number}: {_too_long(part)}: {clean(part, 40)!r}")
        capability = None
        if with_compute_capability and parts[1].lower() not in _NOT_AVAILABLE:
            try:
                capability = parse_compute_capability(parts[1])
            except ValueError:
                raise ValueError(f"line {number}: {clean(parts[1], 40)!r} is not a compute capability") from None
        if driver.lower() in _NOT_AVAILABLE:
            driver = None
        elif not _DOTTED.fullmatch(driver):
            raise ValueError(f"line {number}: {clean(driver, 40)!r} is not a driver version")
        gpus.append(GpuReading("nvidia", name, capability, driver))
    return gpus


def parse_rocm_smi(text: str) -> list[GpuReading]:
    """The GPUs of ``rocm-smi --showproductname --json``: an object with a
    ``cardN`` member per GPU, whose ``Card series`` (``Card Series`` in some
    releases) is the product name and ``GFX Version`` its target. rocm-smi
    may print warnings before the object, and exits 0 when it fails: no
    object is a ValueError.

    >>> [g.name for g in parse_rocm_smi('{"card0": {"Card series": "AMD Instinct MI300X"}}')]
    ['AMD Instinct MI300X']
    """
    start = text.find("{")
    if start < 0:
        first = text.strip().splitlines()[0] if text.strip() else "nothing"
        raise ValueError(f"no GPU list in its output (it printed {clean(first, 120)!r})")
    if _depth_exceeds(text, start, MAX_DEPTH):
        raise ValueError(f"its JSON nests more than {MAX_DEPTH} deep (rocm-smi's nests two)")
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except (ValueError, RecursionError):  # RecursionError: nesting the check above did not see (in a string's escape)
        raise ValueError("its output is not the JSON it prints with --json") from None
    if not isinstance(data, dict):
        raise ValueError("its output is not a JSON object")
    cards = sorted((k for k in data if re.fullmatch(r"card[0-9]+", k)), key=lambda k: int(k[4:]))
    gpus = []
    for card in cards:
        fields = {str(k).lower(): v for k, v in data[card].items()} if isinstance(data[card], dict) else {}
        name = next((str(fields[k]) for k in ("card series", "card model")
                     if isinstance(fields.get(k), str) and fields[k].strip()
                     and not fields[k].lower().startswith("0x") and fields[k].lower() not in _NOT_AVAILABLE), None)
        if name is None or not name.isprintable() or not any(c.isalnum() for c in name):
            raise ValueError(f"{card} has no product name")
        gfx = fields.get("gfx version")
        for value in (name, gfx if isinstance(gfx, str) else ""):
            if _too_long(value):
                raise ValueError(f"{card}: {_too_long(value)}: {clean(value, 40)!r}")
        gpus.append(GpuReading("amd", name.strip(), gfx_target=gfx if isinstance(gfx, str) and gfx else None))
    return gpus


def _too_long(field: str) -> str | None:
    """Why a field of a tool's output is too long to read (a driver version
    of 5,000 digits cannot be compared), or None."""
    if has_long_number(field):
        return f"a number of more than {MAX_DIGITS} digits"
    if len(field) > MAX_FIELD:
        return f"a field of more than {MAX_FIELD} characters"
    return None


def _depth_exceeds(text: str, start: int, limit: int) -> bool:
    """Whether the JSON at `start` opens more than `limit` arrays or objects
    at once (brackets inside strings are not counted): json's decoder
    recurses once a level, and a deep enough one is a RecursionError.
    Only brackets and strings are visited (regular expressions, in C), not
    each character."""
    depth, at, size = 0, start, len(text)
    while at < size:
        found = _BRACKET.search(text, at)
        if found is None:
            return False
        c, at = found.group(), found.end()
        if c == '"':  # skip the string, escapes and all
            end = _STRING_REST.match(text, at)
            if end is None:
                return False  # an unterminated string: the decoder refuses it
            at = end.end()
        elif c in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
            if depth <= 0:
                return False  # the value ended
    return False


def _query_nvidia(path: str, timeout: float) -> tuple[Tool, Callable[[str], list[GpuReading]]]:
    """nvidia-smi's answer and its reader: a driver too old for the
    compute_cap field is asked again without it."""
    tool = run([path, *NVIDIA_QUERY], timeout)
    if tool.problem is not None and "compute_cap" in (tool.output or "") + tool.problem:
        return run([path, *NVIDIA_QUERY_OLD], timeout), partial(parse_nvidia_smi, with_compute_capability=False)
    return tool, parse_nvidia_smi


def _query_amd(path: str, timeout: float) -> tuple[Tool, Callable[[str], list[GpuReading]]]:
    return run([path, *ROCM_QUERY], timeout), parse_rocm_smi


def _ask(name: str, vendor: str, query: Callable[[str, float], tuple[Tool, Callable[[str], list[GpuReading]]]],
         timeout: float, notes: list[str]) -> list[GpuReading]:
    """The GPUs the tool `name` lists; what failed is a note, and no GPU."""
    path = shutil.which(name)
    if path is None:
        notes.append(f"{name} is not on PATH: no {vendor} GPU detected")
        return []
    tool, parse = query(path, timeout)
    if tool.problem is not None:
        notes.append(f"{tool.problem}: no {vendor} GPU detected")
        return []
    try:
        gpus = parse(tool.output or "")
    except ValueError as exc:
        notes.append(f"{name} printed what compat cannot read ({exc}): no {vendor} GPU detected")
        return []
    if not gpus:
        notes.append(f"{name} lists no GPU")
    return gpus


def _probe(python: str, code: str, timeout: float) -> tuple[dict[str, Any] | None, str | None]:
    """Run `code` in `python`; its last line of output, as JSON, or why not."""
    tool = run([python, "-c", code], timeout)
    if tool.problem is not None:
        return None, tool.problem
    lines = (tool.output or "").strip().splitlines()
    try:
        data = json.loads(lines[-1]) if lines else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        return None, f"{os.path.basename(python)} printed no answer compat can read"
    return data, None


def _environment(python: str | None, machine: Machine, timeout: float, platforms: Platforms) -> None:
    """Python, platform, glibc and distributions, as the interpreter itself
    lists them (sources/environment.py, which `compat check --env` reads too);
    the platform is the one of `platforms` whose host the interpreter is."""
    from .environment import read_environment

    environment = read_environment(python, timeout)
    release = (leading_version(environment.python, 3) or "").split(".")
    if len(release) < 2 or release[0] != "3":
        raise DetectError(f"the interpreter says it is Python {clean(environment.python, 40)}: not a CPython 3 "
                          "version a stack can give", file=environment.interpreter)
    machine.python = ".".join((*release, "0")[:3])
    if environment.python != machine.python:  # 3.14.0rc1, a development build
        machine.notes.append(f"Python {clean(environment.python, 40)} is written as {machine.python}")
    implementation = environment.markers.get("implementation_name")
    if implementation != "cpython":
        machine.notes.append(f"the interpreter is {clean(str(implementation), 40)}, not CPython: "
                             "a stack describes CPython, whose wheels may differ")
    platform = platforms.for_host(*environment.host)
    if platform is None:
        raise DetectError(f"this machine ({clean(environment.markers.get('sys_platform', '?'), 40)} "
                          f"{clean(environment.markers.get('platform_machine', '?'), 40)}) is not a platform a "
                          f"stack can describe ({', '.join(platforms.names())})", file=environment.interpreter)
    machine.platform = platform.name
    if environment.glibc and re.fullmatch(r"2\.[0-9]+", environment.glibc):
        machine.glibc = environment.glibc
    elif platform.glibc:
        machine.notes.append("the C library is not glibc (or did not say its version): [system] glibc is left out")
    for distribution in environment.distributions:
        if distribution.error is None:
            machine.distributions.setdefault(normalize(distribution.name), distribution.version)


def detect_gpus(timeout: float = DEFAULT_TIMEOUT) -> tuple[list[GpuReading], str | None, list[str]]:
    """The GPUs nvidia-smi lists, else those rocm-smi lists (a stack targets
    one vendor); the tool that found them; and notes on what failed."""
    notes: list[str] = []
    gpus, tool = _ask("nvidia-smi", "NVIDIA", _query_nvidia, timeout, notes), "nvidia-smi"
    if not gpus:
        gpus, tool = _ask("rocm-smi", "AMD", _query_amd, timeout, notes), "rocm-smi"
    if not gpus:
        return [], None, notes
    # the other vendor's tool, missing or failing, is no news once these were found
    return gpus, tool, [n for n in notes if n.startswith(tool)]


def detect(python: str | None = None, timeout: float = DEFAULT_TIMEOUT, *, platforms: Platforms) -> Machine:
    """Ask the interpreter (`python`, by default this one), the GPU tools and
    torch; `platforms` (the database's platform table) names the interpreter's platform."""
    machine = Machine()
    interpreter = python or sys.executable
    _environment(interpreter, machine, timeout, platforms)
    machine.gpus, machine.gpu_tool, notes = detect_gpus(timeout)
    machine.notes += notes
    if "torch" in machine.distributions:
        data, problem = _probe(interpreter, _PROBE_TORCH, timeout)
        if data is None or "error" in data:
            why = problem if data is None else data["error"]
            machine.notes.append(f"torch is installed but could not be imported ({clean(str(why), 200)}): "
                                 "the CUDA version its build targets is unknown")
        else:
            machine.torch = data
    else:
        machine.notes.append("torch is not installed: the CUDA version the installed wheels target is unknown")
    return machine


def leading_version(text: str | None, parts: int = 2) -> str | None:
    """``"13.0"`` of torch's ``"13.0"``, ``"6.4"`` of ``"6.4.43482-0f2d60242"``."""
    match = re.match(r"([0-9]+(?:\.[0-9]+)*)", text or "")
    if not match:
        return None
    return ".".join(match.group(1).split(".")[:parts])
