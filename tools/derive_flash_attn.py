#!/usr/bin/env python3
"""Derive flash-attn's GPU facts from its own files at each release's tag.

flash-attn is an sdist on the package index. ``pip install flash-attn`` runs
its ``setup.py``, which either downloads a prebuilt wheel from the GitHub
release (``CachedWheelsCommand``: the wheel whose local label names the CUDA
major of the installed torch, the torch minor and the C++ ABI, e.g.
``+cu12torch2.6cxx11abiFALSE``) or, where the release has no such wheel,
compiles the CUDA code with the machine's nvcc. Either way the GPU
architectures come from the same ``cc_flag`` list in ``setup.py``: its
``-gencode arch=compute_XX,code=sm_XX`` lines, each under a CUDA threshold
(``bare_metal_version >= Version("11.8")``) and, from 2.7.4, the
``FLASH_ATTN_CUDA_ARCHS`` list (default ``80;90;100;120``).

For every release of the database's snapshot (``data/metadata/flash-attn.jsonl``,
first line, ``versions``) whose tag ``v<version>`` is in the mirror, it reads

- ``setup.py``: the ``cc_flag`` gencode lines and their conditions, the nvcc
  floor (``if bare_metal_version < Version(..): raise RuntimeError(..)``),
  ``FLASH_ATTN_CUDA_ARCHS``' default, and ``get_wheel_url``: which wheel CUDA
  each torch CUDA major asks for and how the label spells it;
- ``.github/workflows/publish.yml``: the wheel matrix (os, Python, torch,
  CUDA, its ``exclude`` pairs) and the label the job gives the wheels
  (``tmpname=cu${MATRIX_CUDA_VERSION}...`` or ``cu${WHEEL_CUDA_VERSION}...``);
- ``csrc/flash_attn/flash_api.cpp``: the ``TORCH_CHECK`` that refuses a GPU
  (``"FlashAttention only supports Ampere GPUs or newer."``, with the
  ``bool is_sm8x = ...`` definitions it tests) and the forward head-size limit
  (``"FlashAttention forward only supports head dimension at most 256"``).

It writes ``[[rule]]`` tables, not ``[[build]]`` tables: which kernels a
flash-attn install carries depends on the stack's torch, Python and CUDA
(prebuilt wheel or local compile), which a rule's ``when`` can state and a
build, chosen without regard to the stack's CUDA, cannot. Per release:

- ``capability``: the compute capabilities the code accepts (error);
- ``head-dim``: the forward head-dimension limit (model ``head_dim``);
- ``nvcc-floor``: setup.py refuses an older CUDA toolkit;
- ``wheel-archs.cuda-<major>``: the architectures of the prebuilt wheel
  setup.py downloads for a torch of that CUDA major, when the workflow built
  one for the stack's torch minor and Python on linux-x86_64;
- ``source-archs.cuda-<band>``: the architectures setup.py compiles with an
  nvcc of that band where no prebuilt wheel applies (FLASH_ATTN_CUDA_ARCHS unset).

Consecutive releases with the same fact share one rule, citing the newest
release's line. Every value comes from the files; nothing is per release here.

Run (a new release: update the snapshot, then run it again)::

    git clone --mirror https://github.com/Dao-AILab/flash-attention flash-attention.git
    python tools/derive_flash_attn.py --repo flash-attention.git \\
        [--out data/derived/flash-attn.toml] [--metadata data/metadata/flash-attn.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

PACKAGE = "flash-attn"
PROJECT = "FlashAttention"
TOOL = "tools/derive_flash_attn.py"
GITHUB = "https://github.com/Dao-AILab/flash-attention"
SETUP = "setup.py"
WORKFLOW = ".github/workflows/publish.yml"
API = "csrc/flash_attn/flash_api.cpp"
NO_KERNEL = "no kernel image is available for execution on the device"
MAJORS = (11, 12, 13)  # the torch CUDA majors get_wheel_url is asked about


class ParseError(ValueError):
    """A file at a tag does not have the shape this script reads."""


# -- parsing (pure functions over file text; the tests feed them fixtures) -------------------------


def _code(line: str) -> str:
    """The line without a trailing # comment ('' for a comment line)."""
    stripped = line.strip()
    return "" if stripped.startswith("#") else line


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@dataclass
class Gencode:
    arch: str  # "8.0"
    ptx: bool  # code=compute_XX: PTX, not SASS
    min_cuda: Version | None  # bare_metal_version >= this
    archs_key: str | None  # "90" in cuda_archs()
    line: int


@dataclass
class Setup:
    gencodes: list[Gencode]
    nvcc_floor: tuple[Version, str, int] | None  # version, message, line
    archs_default: tuple[list[str], int] | None  # FLASH_ATTN_CUDA_ARCHS default, line
    wheel_map: dict[object, tuple[Version, int]]  # 11 / 12 / "else" -> (wheel CUDA, line)
    label_minor: bool  # the label spells the CUDA major and minor (cu123), else the major (cu12)
    label_line: int

    def archs(self, cuda: Version) -> tuple[list[str], list[int], str | None]:
        """The SASS architectures setup.py compiles with nvcc `cuda` (default
        FLASH_ATTN_CUDA_ARCHS), the lines that say so, and the PTX arch."""
        default = self.archs_default[0] if self.archs_default else None
        out, lines, ptx = [], [], None
        for g in self.gencodes:
            if g.min_cuda is not None and cuda < g.min_cuda:
                continue
            if g.archs_key is not None and (default is None or g.archs_key not in default):
                continue
            lines.append(g.line)
            if g.ptx:
                ptx = g.arch
            elif g.arch not in out:
                out.append(g.arch)
        return sorted(out, key=Version), lines, ptx

    def wheel_cuda(self, major: int) -> tuple[Version, int] | None:
        return self.wheel_map.get(major) or self.wheel_map.get("else")


_GENCODE = re.compile(r'arch=compute_(\d+)a?,code=(sm|compute)_(\d+)a?"')
_GE = re.compile(r'bare_metal_version\s*>=\s*Version\("([\d.]+)"\)')
_KEY = re.compile(r'"(\d+)"\s+in\s+cuda_archs\(\)')
_FLOOR = re.compile(r'if\s+bare_metal_version\s*<\s*Version\("([\d.]+)"\)\s*:')
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _cap(digits: str) -> str:
    return f"{int(digits[:-1])}.{digits[-1]}"


def parse_setup(text: str) -> Setup:
    lines = text.splitlines()
    gencodes: list[Gencode] = []
    for number, raw in enumerate(lines, 1):
        line = _code(raw)
        match = _GENCODE.search(line)
        if not match:
            continue
        # the conditions of the if-lines that enclose it (less indented, above it)
        min_cuda, key, depth = None, None, _indent(raw)
        for back in range(number - 2, -1, -1):
            above = _code(lines[back])
            if not above.strip():
                continue
            if _indent(above) < depth:
                depth = _indent(above)
                if above.strip().startswith(("if ", "elif ")):
                    ge, k = _GE.search(above), _KEY.search(above)
                    if ge and min_cuda is None:
                        min_cuda = Version(ge.group(1))
                    if k and key is None:
                        key = k.group(1)
                if depth == 0:
                    break
        gencodes.append(Gencode(_cap(match.group(3)), match.group(2) == "compute", min_cuda, key, number))
    if not gencodes:
        raise ParseError("setup.py: no -gencode arch=compute_XX,code=sm_XX line")
    floor = None
    for number, raw in enumerate(lines, 1):
        match = _FLOOR.search(_code(raw))
        if match:
            window = "".join(lines[number:number + 4])
            if "raise RuntimeError" in window:
                message = "".join(_STRING.findall(window)).strip()
                floor = (Version(match.group(1)), message, number)
                break
    archs_default = None
    for number, raw in enumerate(lines, 1):
        match = re.search(r'os\.getenv\("FLASH_ATTN_CUDA_ARCHS",\s*"([^"]*)"\)', _code(raw))
        if match:
            archs_default = (match.group(1).split(";"), number)
            break
    wheel_map: dict[object, tuple[Version, int]] = {}
    label_minor, label_line = None, 0
    for number, raw in enumerate(lines, 1):
        line = _code(raw)
        one = re.search(r'torch_cuda_version\s*=\s*parse\("([\d.]+)"\)\s*if\s*torch_cuda_version\.major\s*==\s*(\d+)'
                        r'\s*else\s*parse\("([\d.]+)"\)', line)
        if one:
            wheel_map[int(one.group(2))] = (Version(one.group(1)), number)
            wheel_map.setdefault("else", (Version(one.group(3)), number))
            continue
        branch = re.search(r'^\s*(if|elif)\s+torch_cuda_version\.major\s*==\s*(\d+)\s*:', line)
        otherwise = re.search(r'^\s*else\s*:', line)
        if branch or (otherwise and wheel_map):
            for ahead in range(number, min(number + 3, len(lines))):
                value = re.search(r'torch_cuda_version\s*=\s*parse\("([\d.]+)"\)', _code(lines[ahead]))
                if value:
                    target = int(branch.group(2)) if branch else "else"
                    wheel_map.setdefault(target, (Version(value.group(1)), ahead + 1))
                    break
        label = re.search(r'^\s*cuda_version\s*=\s*f"\{torch_cuda_version\.major\}(\{torch_cuda_version\.minor\})?"',
                          line)
        if label:
            label_minor, label_line = bool(label.group(1)), number
    if not wheel_map or label_minor is None:
        raise ParseError("setup.py: no get_wheel_url CUDA mapping or label")
    return Setup(gencodes, floor, archs_default, wheel_map, label_minor, label_line)


@dataclass
class Workflow:
    os: tuple[list[str], int]
    python: tuple[list[str], int]
    torch: tuple[list[str], int]
    cuda: tuple[list[str], int]
    exclude: list[dict[str, str]]
    label_var: str  # MATRIX_CUDA_VERSION (cu122) or WHEEL_CUDA_VERSION (cu12)
    label_line: int
    archs_env: str | None = None  # FLASH_ATTN_CUDA_ARCHS set by the build step

    def wheel_label(self, cuda: Version) -> str:
        return f"cu{cuda.major}{cuda.minor}" if self.label_var == "MATRIX_CUDA_VERSION" else f"cu{cuda.major}"

    def builds(self, cuda_text: str) -> dict[str, list[str]]:
        """torch version -> the Python versions the matrix builds with CUDA `cuda_text`."""
        out: dict[str, list[str]] = {}
        for torch in self.torch[0]:
            if any(e.get("torch-version") == torch and e.get("cuda-version") == cuda_text
                   and "python-version" not in e for e in self.exclude):
                continue
            if any(e.get("cuda-version") == cuda_text and set(e) == {"cuda-version"} for e in self.exclude):
                continue
            pythons = [p for p in self.python[0]
                       if not any(e.get("python-version") == p and e.get("torch-version", torch) == torch
                                  and e.get("cuda-version", cuda_text) == cuda_text for e in self.exclude)]
            if pythons:
                out[torch] = pythons
        return out


def _list(value: str) -> list[str]:
    return [v.strip().strip("'\"") for v in value.strip().strip("[]").split(",") if v.strip()]


def parse_workflow(text: str) -> Workflow:
    lines = text.splitlines()
    found: dict[str, tuple[list[str], int]] = {}
    exclude: list[dict[str, str]] = []
    label_var, label_line, archs_env = None, 0, None
    in_exclude = None
    for number, raw in enumerate(lines, 1):
        line = _code(raw)
        if not line.strip():
            continue
        if in_exclude is not None:
            if _indent(line) <= in_exclude:
                in_exclude = None
            else:
                item = re.match(r'^\s*(-\s*)?([\w-]+):\s*(.+?)\s*$', line)
                if item:
                    if item.group(1) or not exclude:
                        exclude.append({})
                    exclude[-1][item.group(2)] = item.group(3).strip("'\"")
                continue
        match = re.match(r'^\s*(os|python-version|torch-version|cuda-version):\s*(\[.*\])\s*$', line)
        if match and match.group(1) not in found:
            found[match.group(1)] = (_list(match.group(2)), number)
            continue
        if re.match(r'^\s*exclude:\s*$', line) and exclude == []:
            in_exclude = _indent(line)
            continue
        tmp = re.search(r'tmpname=cu\$\{(\w+)\}torch', line)
        if tmp:
            label_var, label_line = tmp.group(1), number
        env = re.search(r'FLASH_ATTN_CUDA_ARCHS=["\']?([\d;]+)', line)
        if env:
            archs_env = env.group(1)
    missing = [k for k in ("os", "python-version", "torch-version", "cuda-version") if k not in found]
    if missing or label_var is None:
        raise ParseError(f"publish.yml: no {', '.join(missing) or 'tmpname label'} in the matrix")
    return Workflow(found["os"], found["python-version"], found["torch-version"], found["cuda-version"],
                    exclude, label_var, label_line, archs_env)


@dataclass
class Api:
    capability: str  # a specifier over compute capabilities
    capability_message: str
    capability_line: int
    head_max: int | None
    head_message: str | None
    head_line: int | None


_CAP_CHECK = re.compile(r'TORCH_CHECK\((.+?),\s*"([^"]*Ampere GPUs or newer[^"]*)"\);')
_DEF = re.compile(r'bool\s+(\w+)\s*=\s*(.+?);')
_TERM = re.compile(r'(?:dprops->|cc_)(major|minor)\s*(==|>=)\s*(\d+)')


def _accepts(expr: str, defs: dict[str, str], major: int, minor: int) -> bool:
    """Evaluate an `a || b` of `bool` names, each an `&&` of major/minor comparisons."""
    for name in (n.strip() for n in expr.split("||")):
        body = defs.get(name)
        if body is None:
            raise ParseError(f"flash_api.cpp: {name} is not defined above its TORCH_CHECK")
        terms = _TERM.findall(body)
        if not terms or len(terms) != body.count("&&") + 1:
            raise ParseError(f"flash_api.cpp: cannot read {name} = {body}")
        if all((major if what == "major" else minor) == int(n) if op == "==" else
               (major if what == "major" else minor) >= int(n) for what, op, n in terms):
            return True
    return False


def capability_spec(accepted: list[tuple[int, int]], grid: list[tuple[int, int]]) -> str:
    """A specifier for the accepted (major, minor) points of `grid`, which must be one run."""
    flags = [p in accepted for p in grid]
    if not any(flags):
        raise ParseError("the check accepts no compute capability")
    first, last = flags.index(True), len(flags) - 1 - flags[::-1].index(True)
    if not all(flags[first:last + 1]):
        raise ParseError("the accepted compute capabilities are not one range")
    low = grid[first]
    if last == len(flags) - 1:
        return f">={low[0]}.{low[1]}"
    high = grid[last]
    return f">={low[0]}.{low[1]},<={high[0]}.{high[1]}"


GRID = [(major, minor) for major in range(3, 16) for minor in range(10)]


def parse_api(text: str) -> Api:
    lines = text.splitlines()
    for number, raw in enumerate(lines, 1):
        line = _code(raw)
        match = _CAP_CHECK.search(line) if not line.strip().startswith("//") else None
        if not match:
            continue
        defs = {}
        for above in lines[max(0, number - 15):number - 1]:
            if above.strip().startswith("//"):
                continue
            d = _DEF.search(above)
            if d:
                defs[d.group(1)] = d.group(2)
        accepted = [p for p in GRID if _accepts(match.group(1), defs, *p)]
        spec = capability_spec(accepted, GRID)
        head = None
        for hn, hraw in enumerate(lines[number:], number + 1):
            h = re.search(r'TORCH_CHECK\(head_size(?:_og)?\s*<=\s*(\d+),\s*"([^"]+)"\);', hraw)
            if h and "forward" in h.group(2) and not hraw.strip().startswith("//"):
                head = (int(h.group(1)), h.group(2), hn)
                break
        return Api(spec, match.group(2), number, *(head or (None, None, None)))
    raise ParseError("flash_api.cpp: no TORCH_CHECK(..., \"...Ampere GPUs or newer...\")")


# -- derived facts -----------------------------------------------------------------------------


def arch_spec(archs: list[str], ptx: str | None) -> str:
    """The compute capabilities SASS for `archs` (and PTX for `ptx`) runs on, as a
    specifier: sm_XY runs on X.Z for Z >= Y; PTX on anything newer.

    >>> arch_spec(["8.0", "9.0"], None), arch_spec(["8.0", "9.0", "10.0", "12.0"], None)
    ('>=8.0,<10', '>=8.0,!=11.*,<13')
    """
    versions = sorted(Version(a) for a in archs)
    low = versions[0]
    parts = [f">={low.major}.{low.minor}"]
    majors = {v.major: min(w.minor for w in versions if w.major == v.major) for v in versions}
    top = max(majors)
    for major in range(low.major, top + 1):
        if major not in majors:
            parts.append(f"!={major}.*")
        elif major != low.major:
            parts.extend(f"!={major}.{m}" for m in range(majors[major]))
    if ptx is None or Version(ptx) > versions[-1]:
        parts.append(f"<{top + 1}")
    return ",".join(parts)


def sm_text(archs: list[str]) -> str:
    return ", ".join("sm_" + a.replace(".", "") for a in archs)


def python_condition(pythons: list[str]) -> dict:
    minors = sorted(Version(p) for p in pythons)
    run = [minors[0].minor + i for i in range(len(minors))]
    if [m.minor for m in minors] == run and len({m.major for m in minors}) == 1:
        return {"python": f">={minors[0]},<{minors[0].major}.{minors[-1].minor + 1}"}
    return {"any": [{"python": f"=={p}.*"} for p in pythons]}


def torch_minor(text: str) -> str:
    v = Version(text)
    return f"{v.major}.{v.minor}"


@dataclass
class Release:
    version: str
    tag: str
    commit: str
    date: str
    setup: Setup
    workflow: Workflow
    api: Api
    facts: list[dict] = field(default_factory=list)


def source_id(release: Release, path: str, line: int) -> str:
    return f"{PACKAGE}@{release.tag}:{path}#L{line}"


def facts_of(r: Release) -> list[dict]:
    """The facts of one release: dicts with key (what merges across releases),
    the rule body, and the (path, line, what) its sources are."""
    out = []
    api, setup, wf = r.api, r.setup, r.workflow
    if api.capability.startswith(">=8.0,<="):
        accepts = f"compute capability 8.x and {api.capability.split('<=')[1]} only (Ampere, Ada, Hopper)"
    else:
        accepts = f"compute capability {api.capability[2:]} and newer"
    out.append({
        "what": "capability",
        "when": {"accelerator": "cuda"},
        "require": {"compute_capability": api.capability},
        "message": f"flash-attn's CUDA code accepts GPUs of {accepts} and refuses others: \"{api.capability_message}\"",
        "sources": [(API, api.capability_line, "TORCH_CHECK on the GPU's compute capability")],
    })
    if api.head_max is not None:
        out.append({
            "what": "head-dim",
            "when": {"accelerator": "cuda"},
            "require": {"model": {"head_dim": {"max": api.head_max}}},
            "message": f"flash-attn's forward kernels take a head dimension of at most {api.head_max}: "
                       f"\"{api.head_message}\"",
            "sources": [(API, api.head_line, "TORCH_CHECK on the head size")],
        })
    if setup.nvcc_floor is not None:
        floor, message, line = setup.nvcc_floor
        out.append({
            "what": "nvcc-floor",
            "when": {"accelerator": "cuda"},
            "require": {"cuda": f">={floor}"},
            "message": f"flash-attn's setup.py stops the install with a CUDA toolkit older than {floor}, before it "
                       f"downloads or builds anything: \"{message}\"",
            "sources": [(SETUP, line, "RuntimeError on the nvcc version")],
        })
    archs_env = {"FLASH_ATTN_CUDA_ARCHS": False} if setup.archs_default else {}
    prebuilt_conditions = []
    nightly: dict[str, list[dict]] = {}  # a torch of the matrix that is a pre-release -> when its wheel is taken
    for major in MAJORS:
        wanted = setup.wheel_cuda(major)
        if wanted is None or wanted[0].major != major:
            continue
        label = f"cu{wanted[0].major}{wanted[0].minor}" if setup.label_minor else f"cu{wanted[0].major}"
        for cuda_text in wf.cuda[0]:
            try:
                cuda = Version(cuda_text)
            except InvalidVersion:
                continue
            if cuda.major != major or wf.wheel_label(cuda) != label:
                continue
            built = wf.builds(cuda_text)
            if not built:
                continue
            build_cuda = Version(f"{cuda.major}.{cuda.minor}")
            if wf.archs_env:
                raise ParseError("publish.yml sets FLASH_ATTN_CUDA_ARCHS: not read here")
            archs, lines, ptx = setup.archs(build_cuda)
            pairs: dict[tuple[str, ...], list[str]] = {}
            for torch, pythons in built.items():
                pairs.setdefault(tuple(pythons), []).append(torch_minor(torch))
                if Version(torch).is_prerelease:
                    nightly.setdefault(torch, []).append({
                        "platform": "linux-x86_64", "cuda": f"=={major}.*",
                        "env": {"FLASH_ATTENTION_FORCE_BUILD": False},
                        "packages": {"torch": f"=={torch_minor(torch)}.*"}, **python_condition(pythons)})
            alternatives = []
            for pythons, torches in sorted(pairs.items(), key=lambda kv: Version(kv[1][0])):
                for torch in sorted(set(torches), key=Version):
                    alternatives.append({"packages": {"torch": f"=={torch}.*"}, **python_condition(list(pythons))})
            condition = {"platform": "linux-x86_64", "cuda": f"=={major}.*",
                         "env": {"FLASH_ATTENTION_FORCE_BUILD": False}, "any": alternatives}
            prebuilt_conditions.append(condition)
            torches = sorted({torch_minor(t) for t in built}, key=Version)
            out.append({
                "what": f"wheel-archs.cuda-{major}",
                "when": {"accelerator": "cuda", **condition},
                "require": {"compute_capability": arch_spec(archs, ptx)},
                "message": f"with a CUDA {major} torch ({', '.join(torches)}) on linux-x86_64, flash-attn's setup.py "
                           f"downloads the release's prebuilt +{label}torch<minor> wheel, which the release workflow "
                           f"builds with CUDA {build_cuda}: it carries kernels for {sm_text(archs)}"
                           f"{' and PTX for sm_' + ptx.replace('.', '') if ptx else ''} only; any other GPU fails "
                           f"with \"{NO_KERNEL}\"",
                "sources": [(WORKFLOW, wf.cuda[1], "the wheel matrix's CUDA"),
                            (WORKFLOW, wf.torch[1], "the wheel matrix's torch"),
                            (WORKFLOW, wf.label_line, "the wheel's local label"),
                            (SETUP, wanted[1], "the wheel CUDA setup.py asks for"),
                            *((SETUP, n, "a -gencode of the wheel's CUDA") for n in lines)],
            })
    # a wheel built against a pre-release of torch, which setup.py takes for the released torch of that minor
    for torch, conditions in sorted(nightly.items(), key=lambda kv: Version(kv[0])):
        minor = torch_minor(torch)
        when = conditions[0] if len(conditions) == 1 else {"any": conditions}
        out.append({
            "what": f"nightly-wheel.torch-{minor}",
            "kind": "known-issue",
            "when": when,
            "message": f"with torch {minor}, flash-attn's setup.py downloads the release's prebuilt torch{minor} "
                       f"wheel, which the release workflow builds against the pre-release torch {torch}: beside a "
                       f"released torch {minor} its extension may not load (\"undefined symbol\" at import); a later "
                       "flash-attn built against the release, or FLASH_ATTENTION_FORCE_BUILD=TRUE, avoids it",
            "inferred": True,
            "basis": f"publish.yml builds the torch {minor} wheel against the nightly {torch}, whose C++ symbols a "
                     f"release of {minor} need not keep; the failure is reported for flash-attn 2.5.7 with torch 2.3.0 "
                     "(Dao-AILab/flash-attention#931), not for every release built so",
            "sources": [(WORKFLOW, wf.torch[1], "the wheel matrix's torch"),
                        (WORKFLOW, wf.label_line, "the wheel's local label")],
        })
    # a local compile: bands of the nvcc version between setup.py's thresholds
    floor = setup.nvcc_floor[0] if setup.nvcc_floor else None
    cuts = sorted({g.min_cuda for g in setup.gencodes if g.min_cuda is not None} | ({floor} if floor else set()))
    bands = [(cuts[i], cuts[i + 1] if i + 1 < len(cuts) else None) for i in range(len(cuts))]
    if floor is None:
        bands.insert(0, (None, cuts[0] if cuts else None))
    for low, high in bands:
        archs, lines, ptx = setup.archs(low if low is not None else Version("0"))
        if not archs:
            continue
        spec = ",".join(p for p in (f">={low}" if low else "", f"<{high}" if high else "") if p)
        band = f"{low or 'any'}-{high}" if high else f"{low}-plus"
        when: dict = {"accelerator": "cuda", "cuda": spec}
        if archs_env:
            when["env"] = dict(archs_env)
        if prebuilt_conditions:
            when["not"] = {"any": prebuilt_conditions} if len(prebuilt_conditions) > 1 else prebuilt_conditions[0]
        cuda_words = f"CUDA {low} or newer" if high is None else f"CUDA {low} to {high} (excluded)"
        out.append({
            "what": f"source-archs.cuda-{band}",
            "when": when,
            "require": {"compute_capability": arch_spec(archs, ptx)},
            "message": f"where no prebuilt wheel fits (another torch, Python, CUDA major or platform), flash-attn's "
                       f"setup.py compiles with the machine's nvcc; with {cuda_words}"
                       f"{' and FLASH_ATTN_CUDA_ARCHS unset' if archs_env else ''} it builds kernels for "
                       f"{sm_text(archs)} only; any other GPU fails with \"{NO_KERNEL}\"",
            "sources": [(SETUP, n, "a -gencode setup.py compiles") for n in lines]
                       + ([(SETUP, setup.archs_default[1], "FLASH_ATTN_CUDA_ARCHS' default")]
                          if setup.archs_default else []),
        })
    return out


# -- the repository ---------------------------------------------------------------------------


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True).stdout


def read_release(repo: str, version: str, tags: set[str]) -> Release | str:
    """The release read at its tag, or why it is skipped."""
    tag = f"v{version}"
    if tag not in tags:
        return f"no tag {tag} in the mirror"
    commit, date = git(repo, "log", "-1", "--format=%H %cs", tag).split()
    try:
        setup = parse_setup(git(repo, "show", f"{tag}:{SETUP}"))
        workflow = parse_workflow(git(repo, "show", f"{tag}:{WORKFLOW}"))
        api = parse_api(git(repo, "show", f"{tag}:{API}"))
    except subprocess.CalledProcessError as exc:
        return f"a file is missing at {tag}: {exc.stderr.strip().splitlines()[-1] if exc.stderr else exc}"
    except ParseError as exc:
        return f"{tag}: {exc}"
    return Release(version, tag, commit, date, setup, workflow, api)


def _key(fact: dict) -> str:
    return json.dumps({k: fact.get(k) for k in ("what", "when", "require", "message")}, sort_keys=True)


def derive(repo: str, versions: list[str], since: str) -> tuple[list[dict], list[dict], list[tuple[str, str]]]:
    tags = set(git(repo, "tag").split())
    wanted = sorted((v for v in versions if Version(v) >= Version(since)), key=Version)
    skipped, rows = [], []
    for version in wanted:
        got = read_release(repo, version, tags)
        if isinstance(got, str):
            skipped.append((version, got))
            rows.append(None)
        else:
            got.facts = facts_of(got)
            rows.append(got)
    # runs of consecutive releases (a skipped one breaks the run) with the same fact
    runs: dict[str, list[list[Release]]] = {}
    open_runs: dict[str, list[Release]] = {}
    for row in rows:
        present = set()
        if row is not None:
            for fact in row.facts:
                key = _key(fact)
                present.add(key)
                if key in open_runs:
                    open_runs[key].append(row)
                else:
                    open_runs[key] = [row]
                    runs.setdefault(key, []).append(open_runs[key])
        for key in [k for k in open_runs if k not in present]:
            del open_runs[key]
    sources: dict[str, dict] = {}
    rules = []
    for key, spans in runs.items():
        for span in spans:
            newest = span[-1]
            fact = next(f for f in newest.facts if _key(f) == key)
            ids = []
            for path, line, what in fact["sources"]:
                sid = source_id(newest, path, line)
                ids.append(sid)
                sources[sid] = {
                    "id": sid, "project": PROJECT,
                    "title": f"FlashAttention {newest.tag}, {path} line {line} ({what})",
                    "kind": "code", "url": f"{GITHUB}/blob/{newest.commit}/{path}#L{line}",
                    "ref": newest.tag, "commit": newest.commit, "path": path, "line": line, "date": newest.date,
                }
            first, last = span[0].version, newest.version
            rule = {
                "id": f"{PACKAGE}.derived.{last}.{fact['what']}",
                "kind": fact.get("kind", "requirement"),
                "releases": f"=={first}" if first == last else f">={first},<={last}",
                "when": fact["when"],
                **({"require": fact["require"]} if "require" in fact else {}),
                "message": fact["message"] + (f" (flash-attn {first})" if first == last else
                                              f" (flash-attn {first} to {last})"),
                "source": ids[0],
                **({"inferred": True, "basis": fact["basis"]} if fact.get("inferred") else {}),
            }
            also = list(dict.fromkeys(i for i in ids[1:] if i != ids[0]))
            if also:
                rule["also"] = also
            rules.append(rule)
    rules.sort(key=lambda r: (_rule_version(r["id"]), r["id"]))
    return sorted(sources.values(), key=lambda s: s["id"]), rules, skipped


def _rule_version(rule_id: str) -> Version:
    rest = rule_id[len(f"{PACKAGE}.derived."):]
    parts = rest.split(".")
    for n in range(len(parts), 0, -1):
        try:
            return Version(".".join(parts[:n]))
        except InvalidVersion:
            continue
    return Version("0")


# -- TOML ------------------------------------------------------------------------------------


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_bare(k)} = {_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def _bare(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def render(sources: list[dict], rules: list[dict], repo_name: str) -> str:
    out = [f"# Written by {TOOL} from {repo_name} at each release's tag; do not edit, run the script again.",
           "schema = 1", f'package = "{PACKAGE}"', f'tool = "{TOOL}"', ""]
    for s in sources:
        out.append("[[source]]")
        for k in ("id", "project", "title", "kind", "url", "ref", "commit", "path", "line"):
            out.append(f"{k} = {_value(s[k])}")
        out.append(f"date = {s['date']}")
        out.append("")
    for r in rules:
        out.append("[[rule]]")
        for k in ("id", "kind", "releases", "when", "require", "message", "source", "also", "inferred", "basis"):
            if k in r:
                out.append(f"{k} = {_value(r[k])}")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", required=True, help="the flash-attention git directory (bare is fine)")
    parser.add_argument("--out", default=os.path.join(here, "data", "derived", "flash-attn.toml"))
    parser.add_argument("--metadata", default=os.path.join(here, "data", "metadata", "flash-attn.jsonl"))
    parser.add_argument("--since", default="2.0.0", help="the oldest release to read (default 2.0.0)")
    args = parser.parse_args(argv)
    with open(args.metadata, encoding="utf-8") as handle:
        header = json.loads(handle.readline())
    versions = header["versions"]
    sources, rules, skipped = derive(args.repo, versions, args.since)
    # a rule of releases the snapshot holds none of (only listed) says nothing a check can reach
    held = [Version(line[0]) for line in header.get("lines", [])]
    if held:
        rules = [r for r in rules if any(SpecifierSet(r["releases"]).contains(v, prereleases=True) for v in held)]
        cited = {i for r in rules for i in (r["source"], *r.get("also", ()))}
        sources = [s for s in sources if s["id"] in cited]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(render(sources, rules, "Dao-AILab/flash-attention"))
    covered = len({v for v in versions if Version(v) >= Version(args.since)}) - len(skipped)
    print(f"{args.out}: {len(rules)} rules, {len(sources)} sources from {covered} releases", file=sys.stderr)
    for version, why in skipped:
        print(f"skipped {version}: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
