"""Derive xformers' CUDA builds, release by release, from its own release workflow.

What it reads, at each release's tag ``v<version>`` of a git mirror of
facebookresearch/xformers (a bare git directory; ``git show TAG:path``):

- ``.github/workflows/wheels.yml``: the build matrix (which operating systems,
  which CUDA versions, which torch; the Windows runners skipped for some CUDA
  versions), the ``upload_pip`` job's artifact filter (which CUDA build goes
  to the package index, PyPI) and the ``upload_pt*`` jobs' S3 paths (which
  builds go to which PyTorch index variant, ``download.pytorch.org/whl/cuXYZ``).
- ``.github/workflows/wheels_build.yml``: the ``TORCH_CUDA_ARCH_LIST`` the
  wheels are compiled with (the ``env:`` value, and the steps that append to
  it for some CUDA versions), and the line that sets the wheel's version
  (``BUILD_VERSION``), which says whether a build's wheels carry a local label
  (``+cu118``).
- ``.github/actions/setup-build-cuda/action.yml`` (from 0.0.28) or the
  ``cuda_info`` step of ``wheels_build.yml`` (before): the CUDA build whose
  wheels carry no label (``TORCH_CUDA_DEFAULT``) and the CUDA toolkit each
  build installs (its nvcc).

Which releases: the ``versions`` of ``data/metadata/xformers.jsonl`` that the
snapshot holds a record of (the releases the database knows). A release without a tag in the mirror, or whose
workflow has a shape this script does not read, is skipped and named on
stderr; nothing is copied from a neighbour.

What it writes: ``data/derived/xformers.toml`` (``--out``), one ``[[build]]``
per release and index (the package index's own wheels, ``index = "pypi"``, and
each PyTorch index variant the workflow uploads to), with the CUDA version,
the platforms the workflow builds that CUDA for, the compute capabilities of
the ``TORCH_CUDA_ARCH_LIST`` (``9.0a``-style entries kept as they are; the
highest ``+PTX`` entry as ``ptx``), and a ``[[source]]`` per line a fact rests
on (tag, full commit, path, line, commit date). ROCm builds are not written.

It also reads ``xformers/ops/fmha/cutlass.py`` and ``common.py``: where the
CUTLASS forward operator sets ``CUDA_MAXIMUM_COMPUTE_CAPABILITY`` (0.0.33 on),
one ``[[rule]]`` per release quotes the reason xformers gives a GPU above it.
The refusal is of one operator (whether a call fails depends on its dtype and
on the other operators a build carries), so the rule is ``inferred``.

Run it (standard library and ``packaging`` only; no network)::

    git clone --mirror https://github.com/facebookresearch/xformers xformers.git
    python tools/derive_xformers.py --repo xformers.git \\
        [--out data/derived/xformers.toml] [--metadata data/metadata/xformers.jsonl]

For a new release: refresh the mirror (its tags) and the metadata snapshot (so
that its ``versions`` name the release), then run the script again; the
output is sorted and deterministic.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

PACKAGE = "xformers"
PROJECT = "xFormers"
REPOSITORY = "facebookresearch/xformers"
TOOL = "tools/derive_xformers.py"
WHEELS = ".github/workflows/wheels.yml"
WHEELS_BUILD = ".github/workflows/wheels_build.yml"
ACTION = ".github/actions/setup-build-cuda/action.yml"
CUTLASS = "xformers/ops/fmha/cutlass.py"
COMMON = "xformers/ops/fmha/common.py"

HEADER = ("# Written by tools/derive_xformers.py from facebookresearch/xformers at each release's tag; "
          "do not edit, run the script again.\n")

# one entry of TORCH_CUDA_ARCH_LIST: "8.0", "8.0+PTX", "9.0a", "12.1a"
ARCH_RE = re.compile(r"^(?P<major>[0-9]+)\.(?P<minor>[0-9])(?P<suffix>[a-z]?)(?P<ptx>\+PTX)?$")


class ShapeError(Exception):
    """The workflow at a tag has a shape this script does not read."""


# --------------------------------------------------------------------------
# small readers over the text of a file (each returns values and line numbers)
# --------------------------------------------------------------------------

def _lines(text: str) -> list[str]:
    return text.split("\n")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[str], start: int) -> range:
    """The lines (0-based indexes) nested under the key at index `start`."""
    base = _indent(lines[start])
    end = start + 1
    while end < len(lines):
        line = lines[end]
        if line.strip() and _indent(line) <= base:
            break
        end += 1
    return range(start + 1, end)


def _find_key(lines: list[str], key: str, within: range | None = None) -> int | None:
    pattern = re.compile(r"^\s*" + re.escape(key) + r":(\s|$)")
    for index in (within if within is not None else range(len(lines))):
        if pattern.match(lines[index]):
            return index
    return None


def _yaml_list(lines: list[str], index: int) -> list[tuple[str, int]]:
    """The `- "item"` entries under the key at `index`, with their 1-based lines."""
    out = []
    for i in _block(lines, index):
        m = re.match(r'^\s*-\s*["\']?([^"\'#\s]+)["\']?\s*(#.*)?$', lines[i])
        if m:
            out.append((m.group(1), i + 1))
    return out


def _job(lines: list[str], name: str) -> range | None:
    jobs = _find_key(lines, "jobs")
    if jobs is None:
        return None
    start = _find_key(lines, name, _block(lines, jobs))
    return _block(lines, start) if start is not None else None


def _py_list(text: str) -> list[str]:
    value = ast.literal_eval(text)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ShapeError(f"expected a list of strings, got {text!r}")
    return list(value)


# --------------------------------------------------------------------------
# wheels.yml: the matrix, the PyPI filter, the PyTorch index uploads
# --------------------------------------------------------------------------

@dataclass
class Matrix:
    oses: list[str]
    torch: str
    torch_line: int
    cudas: list[str]                 # short versions: "118", "121", ...
    cudas_line: int
    skips: list[tuple[str, str, int]] = field(default_factory=list)   # (op, value, line): windows skips

    def built(self, cushort: str) -> list[str]:
        """The runners (os names) that build CUDA `cushort`."""
        out = []
        for os_name in self.oses:
            skipped = any("windows" in os_name and _compare(cushort, op, value) for op, value, _ in self.skips)
            if not skipped:
                out.append(os_name)
        return out


@dataclass
class Upload:
    cushort: str          # the CUDA build uploaded ("121")
    torch: str            # the torch version in the artifact filter
    line: int             # the line that names it


@dataclass
class Wheels:
    matrix: Matrix
    pypi: Upload
    variants: dict[str, Upload]      # "cu118" -> upload


def _compare(left: str, op: str, right: str) -> bool:
    """Python's comparison of two strings, as the workflow's script makes it."""
    return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
            ">": left > right, ">=": left >= right}[op]


FILTER_RE = re.compile(r'filter:\s*"\*torch(?P<torch>[0-9][0-9.]*)\+(?P<suffix>[^"*]+)\*"')


def parse_wheels(text: str) -> Wheels:
    lines = _lines(text)
    matrix = _parse_matrix_python(lines) or _parse_matrix_yaml(lines)
    if matrix is None:
        raise ShapeError(f"{WHEELS}: no build matrix this script reads")

    pip_job = _job(lines, "upload_pip")
    if pip_job is None:
        raise ShapeError(f"{WHEELS}: no upload_pip job")
    pypi = None
    for i in pip_job:
        m = FILTER_RE.search(lines[i])
        if m:
            suffix = m.group("suffix")
            if not suffix.startswith("cu"):
                raise ShapeError(f"{WHEELS}:{i + 1}: upload_pip uploads {suffix!r}")
            pypi = Upload(suffix[2:], m.group("torch"), i + 1)
    if pypi is None:
        raise ShapeError(f"{WHEELS}: upload_pip names no filter")

    variants: dict[str, Upload] = {}
    jobs = _find_key(lines, "jobs")
    assert jobs is not None
    for i in _block(lines, jobs):
        m = re.match(r"^\s*(upload_pt\w*):\s*$", lines[i])
        if not m:
            continue
        body = _block(lines, i)
        s3 = next((j for j in body if "s3_path:" in lines[j]), None)
        filt = next((j for j in body if FILTER_RE.search(lines[j])), None)
        if s3 is None or filt is None:
            raise ShapeError(f"{WHEELS}:{i + 1}: {m.group(1)} has no s3_path or filter")
        fm = FILTER_RE.search(lines[filt])
        assert fm is not None
        torch_version = fm.group("torch")
        path = re.search(r"s3://pytorch/whl/(.+?)/\s*$", lines[s3])
        if path is None:
            raise ShapeError(f"{WHEELS}:{s3 + 1}: s3_path not read")
        if "matrix.suffix" in path.group(1):
            suffix_key = _find_key(lines, "suffix", body)
            if suffix_key is None:
                raise ShapeError(f"{WHEELS}:{i + 1}: {m.group(1)} uploads ${{{{ matrix.suffix }}}} with no suffix list")
            entries = _yaml_list(lines, suffix_key)
        else:
            entries = [(path.group(1), s3 + 1)]
        for suffix, line in entries:
            if suffix.startswith("cu"):
                variants[suffix] = Upload(suffix[2:], torch_version, line)
    return Wheels(matrix, pypi, variants)


def _parse_matrix_yaml(lines: list[str]) -> Matrix | None:
    """0.0.22 to 0.0.26: `matrix:` with `os:`, `torch_version:` and `cuda_short_version:` lists."""
    build = _job(lines, "build")
    if build is None:
        return None
    mx = _find_key(lines, "matrix", build)
    if mx is None:
        return None
    body = _block(lines, mx)
    keys = {k: _find_key(lines, k, body) for k in ("os", "torch_version", "cuda_short_version")}
    if any(v is None for v in keys.values()) or _find_key(lines, "include", body) is not None:
        return None
    oses = [v for v, _ in _yaml_list(lines, keys["os"])]  # type: ignore[arg-type]
    torches = _yaml_list(lines, keys["torch_version"])  # type: ignore[arg-type]
    cudas = _yaml_list(lines, keys["cuda_short_version"])  # type: ignore[arg-type]
    if len(torches) != 1 or not cudas or not oses:
        return None
    return Matrix(oses, torches[0][0], torches[0][1], [v for v, _ in cudas], cudas[0][1])


def _parse_matrix_python(lines: list[str]) -> Matrix | None:
    """0.0.27 on: the `target_determinator` job's Python that prints the matrix."""
    job = _job(lines, "target_determinator")
    if job is None:
        return None
    oses = torch = cudas = None
    torch_line = cudas_line = 0
    skips: list[tuple[str, str, int]] = []
    for i in job:
        line = lines[i]
        m = re.match(r"^\s*for os in (\[.*\]):", line)
        if m:
            oses = _py_list(m.group(1))
        m = re.match(r"^\s*for torch_version in (\[.*\]):", line)
        if m:
            values = _py_list(m.group(1))
            if len(values) != 1:
                raise ShapeError(f"{WHEELS}:{i + 1}: several torch versions {values}")
            torch, torch_line = values[0], i + 1
        m = re.match(r"^\s*(?:CU_VERSIONS\s*=\s*|for cuda_short_version in )(\[.*\])", line)
        if m:
            cudas, cudas_line = _py_list(m.group(1)), i + 1
        m = re.match(r'^\s*if cuda_short_version (==|!=|<=|>=|<|>) "([0-9]+)" and "windows" in os:', line)
        if m:
            following = [lines[j].strip() for j in range(i + 1, min(i + 4, len(lines)))]
            if "continue" not in following:
                raise ShapeError(f"{WHEELS}:{i + 1}: a Windows condition that does not skip")
            skips.append((m.group(1), m.group(2), i + 1))
    if oses is None or torch is None or cudas is None:
        return None
    return Matrix(oses, torch, torch_line, cudas, cudas_line, skips)


# --------------------------------------------------------------------------
# wheels_build.yml (+ the setup action): the arch list, the label, the toolkit
# --------------------------------------------------------------------------

@dataclass
class Append:
    text: str                        # what is appended (" 9.0", " 8.0 9.0a")
    line: int
    conditions: list[tuple[str, int]]   # (op, number) on the CUDA short version, all must hold
    not_in: list[str] = field(default_factory=list)   # the Python step's `not in [...]`

    def applies(self, cushort: str) -> bool:
        n = int(cushort)
        if self.not_in and cushort in self.not_in:
            return False
        return all(_compare_int(n, op, v) for op, v in self.conditions)


def _compare_int(left: int, op: str, right: int) -> bool:
    return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,
            ">": left > right, ">=": left >= right}[op]


@dataclass
class BuildRecipe:
    base: str                        # TORCH_CUDA_ARCH_LIST of a CUDA build, before any step appends
    base_line: int
    base_expression: str             # "literal", "contains", "join"
    appends: list[Append]
    labelled: bool                   # BUILD_VERSION takes the CUDA suffix of a step of this job
    version_line: int
    requirements_line: int | None = None   # the step that pins torch in requirements.txt, the same for every build


def parse_wheels_build(text: str) -> BuildRecipe:
    lines = _lines(text)
    base = None
    for i, line in enumerate(lines):
        m = re.match(r"^\s*TORCH_CUDA_ARCH_LIST:\s*(.+?)\s*$", line)
        if not m:
            continue
        value = m.group(1)
        literal = re.fullmatch(r'"([^"]*)"', value)
        contains = re.fullmatch(r"\$\{\{\s*contains\(inputs\.toolkit_type, 'cuda'\) && '([^']*)' \|\| '' \}\}", value)
        # GitHub's join(array, separator): given a string rather than an array, it returns the string;
        # the second argument is only a separator, so nothing is appended.
        join = re.fullmatch(r"\$\{\{\s*join\('([^']*)',.*\)\s*\}\}", value)
        if literal:
            base = (literal.group(1), i + 1, "literal")
        elif contains:
            base = (contains.group(1), i + 1, "contains")
        elif join:
            base = (join.group(1), i + 1, "join")
        else:
            raise ShapeError(f"{WHEELS_BUILD}:{i + 1}: TORCH_CUDA_ARCH_LIST expression not read: {value}")
        break
    if base is None:
        raise ShapeError(f"{WHEELS_BUILD}: no TORCH_CUDA_ARCH_LIST")

    appends: list[Append] = []
    for i, line in enumerate(lines):
        # 0.0.28 on: a step `- if: ... fromJSON(inputs.toolkit_short_version) >= 120 ...` that echoes
        # "TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST 9.0a" >> ${GITHUB_ENV}
        m = re.search(r'echo "TORCH_CUDA_ARCH_LIST=\$TORCH_CUDA_ARCH_LIST([^"]*)" >> \$\{GITHUB_ENV\}', line)
        if m:
            cond_line = next((j for j in range(i - 1, max(i - 4, -1), -1) if re.match(r"^\s*- if:", lines[j])), None)
            if cond_line is None:
                raise ShapeError(f"{WHEELS_BUILD}:{i + 1}: an append to TORCH_CUDA_ARCH_LIST with no condition")
            cond = lines[cond_line]
            if "contains(inputs.toolkit_type, 'cuda')" not in cond:
                raise ShapeError(f"{WHEELS_BUILD}:{cond_line + 1}: condition not read: {cond.strip()}")
            rest = cond.replace("contains(inputs.toolkit_type, 'cuda')", "")
            comparisons = re.findall(r"fromJSON\(inputs\.toolkit_short_version\)\s*(==|!=|<=|>=|<|>)\s*([0-9]+)", rest)
            leftover = re.sub(r"fromJSON\(inputs\.toolkit_short_version\)\s*(==|!=|<=|>=|<|>)\s*([0-9]+)", "", rest)
            if re.sub(r"[-\s:if&]", "", leftover):
                raise ShapeError(f"{WHEELS_BUILD}:{cond_line + 1}: condition not read: {cond.strip()}")
            appends.append(Append(m.group(1), i + 1, [(op, int(v)) for op, v in comparisons]))
            continue
        # 0.0.22 to 0.0.26: a Python step `if cuda_short_version not in ["116", "117"]: arch_list += " 9.0"`
        m = re.match(r'^\s*arch_list \+= "([^"]*)"\s*$', line)
        if m:
            cond = lines[i - 1] if i else ""
            c = re.match(r"^\s*if cuda_short_version not in (\[.*\]):\s*$", cond)
            if c is None:
                raise ShapeError(f"{WHEELS_BUILD}:{i + 1}: an append to the arch list whose condition is not read")
            appends.append(Append(m.group(1), i + 1, [], _py_list(c.group(1))))

    version_line = None
    labelled = False
    for i, line in enumerate(lines):
        if re.search(r'echo "BUILD_VERSION=\$version', line):
            version_line = i + 1
            # the suffix comes from `steps.cuda_info`: a step of this job only if this file has it
            uses_step = "steps.cuda_info.outputs.CUDA_VERSION_SUFFIX" in line
            has_step = any(re.match(r"^\s*- id: cuda_info\s*$", x) for x in lines)
            labelled = uses_step and has_step
            break
    if version_line is None:
        raise ShapeError(f"{WHEELS_BUILD}: no BUILD_VERSION line")
    requirements_line = next((i + 1 for i, line in enumerate(lines)
                              if re.search(r'echo "torch == \$\{\{ inputs\.torch_version \}\}" >> \./requirements\.txt', line)),
                             None)
    return BuildRecipe(base[0], base[1], base[2], appends, labelled, version_line, requirements_line)


@dataclass
class Toolkits:
    default: str                     # TORCH_CUDA_DEFAULT: the build without a suffix
    default_line: int
    full: dict[str, tuple[str, int]]   # cushort -> (installed toolkit version, line)
    path: str


def parse_toolkits(text: str, path: str) -> Toolkits:
    lines = _lines(text)
    default = None
    full: dict[str, tuple[str, int]] = {}
    for i, line in enumerate(lines):
        m = re.match(r'^\s*TORCH_CUDA_DEFAULT\s*=\s*"([0-9]+)"', line)
        if m:
            default = (m.group(1), i + 1)
        m = re.match(r'^\s*"([0-9]+)":\s*\("([0-9.]+)",', line)
        if m:
            full[m.group(1)] = (m.group(2), i + 1)
    if default is None:
        raise ShapeError(f"{path}: no TORCH_CUDA_DEFAULT")
    return Toolkits(default[0], default[1], full, path)


# --------------------------------------------------------------------------
# the arch list itself
# --------------------------------------------------------------------------

def _arch_key(arch: str) -> tuple[int, int, str]:
    m = re.match(r"([0-9]+)\.([0-9])([a-z]?)", arch)
    assert m is not None
    return int(m.group(1)), int(m.group(2)), m.group(3)


def parse_arch_list(value: str) -> tuple[list[str], str | None]:
    """The compute capabilities of a TORCH_CUDA_ARCH_LIST and its highest +PTX one.

    >>> parse_arch_list("7.5 8.0+PTX 8.0 9.0a")
    (['7.5', '8.0', '9.0a'], '8.0')
    """
    archs: set[str] = set()
    ptx: list[str] = []
    for token in re.split(r"[\s;]+", value.strip()):
        if not token:
            continue
        m = ARCH_RE.match(token)
        if m is None:
            raise ShapeError(f"arch {token!r} not read")
        arch = f"{m.group('major')}.{m.group('minor')}{m.group('suffix')}"
        archs.add(arch)
        if m.group("ptx"):
            ptx.append(arch)
    ordered = sorted(archs, key=_arch_key)
    return ordered, (max(ptx, key=_arch_key) if ptx else None)


def effective_arch_list(recipe: BuildRecipe, cushort: str) -> tuple[str, list[Append]]:
    value = recipe.base
    used = []
    for append in recipe.appends:
        if append.applies(cushort):
            value += append.text
            used.append(append)
    return value, used


# --------------------------------------------------------------------------
# one release
# --------------------------------------------------------------------------

def platform_of(os_name: str) -> str:
    if "ubuntu" in os_name:
        return "linux-x86_64"
    if "windows" in os_name:
        return "windows-x86_64"
    raise ShapeError(f"runner {os_name!r}: platform not known")


def cuda_of(cushort: str) -> str:
    return f"{cushort[:-1]}.{cushort[-1]}"


@dataclass
class Release:
    version: str
    tag: str
    commit: str
    date: str
    wheels: Wheels
    recipe: BuildRecipe
    toolkits: Toolkits
    install_requires_line: int | None = None   # setup.py: install_requires=fetch_requirements()


class Git:
    def __init__(self, repo: str) -> None:
        self.repo = repo

    def run(self, *args: str) -> str:
        return subprocess.run(["git", "-C", self.repo, *args], check=True, capture_output=True, text=True).stdout

    def tags(self) -> set[str]:
        return set(self.run("tag").split())

    def show(self, tag: str, path: str) -> str | None:
        try:
            return self.run("show", f"{tag}:{path}")
        except subprocess.CalledProcessError:
            return None

    def commit(self, tag: str) -> tuple[str, str]:
        sha, date = self.run("log", "-1", "--format=%H %cs", f"{tag}^{{commit}}").split()
        return sha, date


def read_release(git: Git, version: str, tag: str) -> Release:
    wheels_text = git.show(tag, WHEELS)
    build_text = git.show(tag, WHEELS_BUILD)
    if wheels_text is None or build_text is None:
        raise ShapeError("no release workflow at the tag")
    wheels = parse_wheels(wheels_text)
    recipe = parse_wheels_build(build_text)
    if "TORCH_CUDA_DEFAULT" in build_text:
        toolkits = parse_toolkits(build_text, WHEELS_BUILD)
    else:
        action = git.show(tag, ACTION)
        if action is None:
            raise ShapeError(f"no TORCH_CUDA_DEFAULT in {WHEELS_BUILD} and no {ACTION}")
        toolkits = parse_toolkits(action, ACTION)
    commit, date = git.commit(tag)
    setup = git.show(tag, "setup.py") or ""
    install = next((i + 1 for i, line in enumerate(_lines(setup))
                    if re.match(r"^\s*install_requires=fetch_requirements\(\),", line)), None)
    return Release(version, tag, commit, date, wheels, recipe, toolkits, install)


# --------------------------------------------------------------------------
# facts: sources and builds
# --------------------------------------------------------------------------

def source_id(release: Release, path: str, line: int) -> str:
    return f"xformers@{release.tag}:{path}#L{line}"


def make_source(release: Release, path: str, line: int, what: str) -> dict:
    return {
        "id": source_id(release, path, line),
        "project": PROJECT,
        "title": f"{PROJECT} {release.tag}, {path} line {line} ({what})",
        "kind": "code",
        "url": f"https://github.com/{REPOSITORY}/blob/{release.commit}/{path}#L{line}",
        "ref": release.tag,
        "commit": release.commit,
        "path": path,
        "line": line,
        "date": release.date,
    }


def builds_of(release: Release, pins: dict[str, str | None]) -> tuple[list[dict], list[dict], list[str]]:
    """The [[build]] and [[source]] tables of one release, and warnings."""
    sources: dict[str, dict] = {}
    builds: list[dict] = []
    warnings: list[str] = []
    w = release.wheels
    recipe = release.recipe

    def cite(path: str, line: int, what: str) -> str:
        src = make_source(release, path, line, what)
        sources.setdefault(src["id"], src)
        return src["id"]

    targets = [("pypi", w.pypi)] + sorted(w.variants.items(), key=lambda kv: int(kv[1].cushort))
    for index, upload in targets:
        cushort = upload.cushort
        if cushort not in w.matrix.cudas:
            warnings.append(f"{release.tag}: {index} uploads cu{cushort}, which the matrix does not build")
            continue
        runners = w.matrix.built(cushort)
        if not runners:
            warnings.append(f"{release.tag}: {index} uploads cu{cushort}, which no runner builds")
            continue
        platforms = sorted({platform_of(r) for r in runners})
        arch_value, used = effective_arch_list(recipe, cushort)
        archs, ptx = parse_arch_list(arch_value)
        labelled = recipe.labelled and cushort != release.toolkits.default
        where = ("the package index (upload_pip)" if index == "pypi"
                 else f"PyTorch's {index} index (s3://pytorch/whl/{index}/)")
        build: dict = {
            "id": f"xformers.derived.{release.version}.{index}",
            "releases": f"=={release.version}",
            "index": index,
        }
        if labelled:
            build["label"] = f"cu{cushort}"
        build["accelerator"] = "cuda"
        build["cuda"] = cuda_of(cushort)
        build["platforms"] = platforms
        build["archs"] = archs
        if ptx is not None:
            build["ptx"] = ptx
        build["source"] = cite(WHEELS, upload.line, f"CUDA {cuda_of(cushort)} wheels to {where}")
        build["archs_source"] = cite(WHEELS_BUILD, recipe.base_line, "TORCH_CUDA_ARCH_LIST")
        if index != "pypi":
            # every CUDA build of a release takes its Requires-Dist from the same requirements.txt:
            # the package index's build's lines, no drops, no adds
            if recipe.requirements_line is not None:
                build["requires_source"] = cite(WHEELS_BUILD, recipe.requirements_line,
                                                "the torch pin every build writes into requirements.txt")
            elif release.install_requires_line is not None:
                build["requires_source"] = cite("setup.py", release.install_requires_line,
                                                "install_requires from requirements.txt, the same for every build")
        notes = [f"the CUDA {cuda_of(cushort)} wheels the release workflow builds on "
                 + " and ".join(platforms)
                 + f" (matrix at {WHEELS} line {w.matrix.cudas_line}) and uploads to {where}"]
        notes.append(f"TORCH_CUDA_ARCH_LIST \"{arch_value.strip()}\" ({WHEELS_BUILD} line {recipe.base_line}"
                     + "".join(f", with \"{a.text.strip()}\" appended at line {a.line}" for a in used) + ")")
        if recipe.base_expression == "join":
            notes.append("the env value is join('<list>', <suffix>): GitHub's join() of a string returns the "
                         "string, so the suffix is not appended")
        if recipe.labelled:
            notes.append(f"wheels without a local label for CUDA {cuda_of(release.toolkits.default)} "
                         f"(TORCH_CUDA_DEFAULT, {release.toolkits.path} line {release.toolkits.default_line}), "
                         f"+cuXYZ for the others ({WHEELS_BUILD} line {recipe.version_line})")
        else:
            notes.append(f"no local label: BUILD_VERSION ({WHEELS_BUILD} line {recipe.version_line}) takes its "
                         "suffix from steps.cuda_info, a step of the setup action, not of this job, so it is empty")
        installed = release.toolkits.full.get(cushort)
        if installed is not None and not installed[0].startswith(cuda_of(cushort) + "."):
            notes.append(f"compiled with the CUDA {installed[0]} toolkit ({release.toolkits.path} line {installed[1]})")
        pin = pins.get(release.version)
        if pin != f"=={w.matrix.torch}":
            notes.append(f"built against torch {w.matrix.torch} ({WHEELS} line {w.matrix.torch_line})"
                         + (f"; the wheel's metadata requires torch{pin}" if pin else ""))
        build["note"] = "; ".join(notes)
        builds.append(build)
    return builds, list(sources.values()), warnings


# --------------------------------------------------------------------------
# the code that refuses a GPU: the CUTLASS attention operator's maximum capability
# --------------------------------------------------------------------------

@dataclass
class Refusal:
    name: str                        # the operator's NAME ("cutlassF-pt")
    maximum: tuple[int, int]
    maximum_line: int                # cutlass.py: CUDA_MAXIMUM_COMPUTE_CAPABILITY = (9, 0)
    message: str                     # the reason xformers prints, rendered
    message_line: int                # common.py: the f-string of that reason


def _class_body(lines: list[str], name: str) -> range | None:
    for i, line in enumerate(lines):
        if re.match(r"^class " + re.escape(name) + r"\b", line):
            end = i + 1
            while end < len(lines) and (not lines[end].strip() or lines[end].startswith((" ", "\t"))):
                end += 1
            return range(i + 1, end)
    return None


def _tuple(text: str) -> tuple[int, int]:
    value = ast.literal_eval(text)
    if not (isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value)):
        raise ShapeError(f"expected a capability (major, minor), got {text!r}")
    return value


def parse_refusal(cutlass: str, common: str) -> Refusal | None:
    """The forward CUTLASS operator's CUDA_MAXIMUM_COMPUTE_CAPABILITY and the reason
    common.py gives a GPU above it; None where the code sets no maximum."""
    c_lines, m_lines = _lines(cutlass), _lines(common)
    body = _class_body(c_lines, "FwOp")
    if body is None:
        return None
    maximum = name = minimum = None
    for i in body:
        m = re.match(r"^    CUDA_MAXIMUM_COMPUTE_CAPABILITY\s*=\s*(\(.*\))\s*$", c_lines[i])
        if m:
            maximum = (_tuple(m.group(1)), i + 1)
        m = re.match(r"^    CUDA_MINIMUM_COMPUTE_CAPABILITY\s*=\s*(\(.*\))\s*$", c_lines[i])
        if m:
            minimum = _tuple(m.group(1))
        m = re.match(r'^    NAME\s*=\s*"([^"]+)"', c_lines[i])
        if m:
            name = m.group(1)
    if maximum is None or name is None:
        return None
    if minimum is None:
        for line in m_lines:
            m = re.match(r"^\s*CUDA_MINIMUM_COMPUTE_CAPABILITY:\s*Tuple\[int, int\]\s*=\s*(\(.*\))\s*$", line)
            if m:
                minimum = _tuple(m.group(1))
                break
    check = next((i for i, line in enumerate(m_lines)
                  if "device_capability > cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY" in line), None)
    if check is None or minimum is None:
        raise ShapeError(f"{COMMON}: no check of CUDA_MAXIMUM_COMPUTE_CAPABILITY")
    parts: list[str] = []
    first = None
    for i in range(check + 1, min(check + 8, len(m_lines))):
        m = re.match(r'^\s*f"(.*)"\s*$', m_lines[i])
        if m:
            first = first if first is not None else i + 1
            parts.append(m.group(1))
        elif parts:
            break
    if not parts or first is None:
        raise ShapeError(f"{COMMON}:{check + 1}: the reason for a GPU above the maximum is not read")
    values = {"cls.CUDA_MINIMUM_COMPUTE_CAPABILITY": str(minimum),
              "cls.CUDA_MAXIMUM_COMPUTE_CAPABILITY": str(maximum[0]),
              "device_capability": "(<major>, <minor>)"}
    message = re.sub(r"\{([^}]+)\}", lambda m: values.get(m.group(1), m.group(0)), "".join(parts)).strip()
    return Refusal(name, maximum[0], maximum[1], message, first)


def rules_of(release: Release, refusal: Refusal) -> tuple[list[dict], list[dict]]:
    cap = f"{refusal.maximum[0]}.{refusal.maximum[1]}"
    src = make_source(release, CUTLASS, refusal.maximum_line, f"{refusal.name}: CUDA_MAXIMUM_COMPUTE_CAPABILITY")
    msg_src = make_source(release, COMMON, refusal.message_line, "the reason given for a GPU above the maximum")
    rule = {
        "id": f"xformers.derived.{release.version}.cutlass-max-sm{refusal.maximum[0]}{refusal.maximum[1]}",
        "kind": "requirement",
        "releases": f"=={release.version}",
        "when": {"accelerator": "cuda"},
        "require": {"compute_capability": f"<={cap}"},
        "severity": "warning",          # inferred: a warning at most
        "message": (f"xformers {release.version}'s CUTLASS attention operator ({refusal.name}, the one that takes "
                    f"float32 inputs) refuses GPUs above compute capability {cap}: "
                    f"\"`{refusal.name}` is not supported because: {refusal.message}\"; "
                    "memory_efficient_attention on such a GPU works only where a flash operator takes the call "
                    "(float16/bfloat16, and built for it)"),
        "source": src["id"],
        "also": [msg_src["id"]],
        "inferred": True,
        "basis": (f"{CUTLASS} sets CUDA_MAXIMUM_COMPUTE_CAPABILITY = {refusal.maximum} on {refusal.name}, and "
                  f"{COMMON} refuses the operator above it; the refusal is of one operator, so whether a call "
                  "fails depends on its dtype and on which other operators the build carries, which the stack "
                  "does not say"),
    }
    return [rule], [src, msg_src]


# --------------------------------------------------------------------------
# the metadata snapshot: which releases, and their torch pins
# --------------------------------------------------------------------------

def read_metadata(path: str) -> tuple[list[str], dict[str, str | None]]:
    versions: list[str] = []
    pins: dict[str, str | None] = {}
    with open(path, encoding="utf-8") as f:
        first = json.loads(f.readline())
        versions = list(first["versions"])
        for line in f:
            if not line.strip():
                continue
            record = json.loads(line)
            pin = None
            for req in record.get("requires_dist") or []:
                m = re.match(r"^torch\s*([<>=!~][^;]*)", req)
                if m:
                    pin = re.sub(r"\s+", "", m.group(1))
            pins[record["version"]] = pin
    return versions, pins


# --------------------------------------------------------------------------
# TOML output (the few value types these tables hold)
# --------------------------------------------------------------------------

def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, str):
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value):
            return value
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(value)


def render(sources: list[dict], builds: list[dict], rules: list[dict] | None = None) -> str:
    out = [HEADER, "schema = 1\n", f'package = "{PACKAGE}"\n', f'tool = "{TOOL}"\n']
    for table, rows in (("source", sources), ("build", builds), ("rule", rules or [])):
        for row in rows:
            out.append(f"\n[[{table}]]\n")
            for key, value in row.items():
                out.append(f"{key} = {_toml_value(value)}\n")
    return "".join(out)


def _version_key(version: str) -> Version:
    return Version(version)


def derive(repo: str, metadata: str) -> tuple[str, list[str], list[str]]:
    """The derived file's text, the releases covered and the skipped ones (with why)."""
    git = Git(repo)
    tags = git.tags()
    versions, pins = read_metadata(metadata)
    all_sources: dict[str, dict] = {}
    all_builds: list[dict] = []
    all_rules: list[dict] = []
    covered: list[str] = []
    skipped: list[str] = []
    for version in sorted(versions, key=_version_key):
        tag = f"v{version}"
        if version not in pins:
            skipped.append(f"{version}: the snapshot holds no record of it (the database does not know the release)")
            continue
        if tag not in tags:
            skipped.append(f"{version}: no tag {tag} in the mirror")
            continue
        try:
            release = read_release(git, version, tag)
        except ShapeError as e:
            skipped.append(f"{version}: {e}")
            continue
        builds, sources, warnings = builds_of(release, pins)
        skipped.extend(warnings)
        if not builds:
            skipped.append(f"{version}: no CUDA build read")
            continue
        covered.append(version)
        all_builds.extend(builds)
        cutlass, common = git.show(tag, CUTLASS), git.show(tag, COMMON)
        if cutlass is not None and common is not None:
            try:
                refusal = parse_refusal(cutlass, common)
            except ShapeError as e:
                skipped.append(f"{version}: rule not read: {e}")
                refusal = None
            if refusal is not None:
                rules, rule_sources = rules_of(release, refusal)
                all_rules.extend(rules)
                sources = sources + rule_sources
        for src in sources:
            all_sources.setdefault(src["id"], src)

    def source_key(src: dict) -> tuple:
        return (Version(src["ref"].lstrip("v")), src["path"], src["line"])

    def build_key(b: dict) -> tuple:
        index = b["index"]
        return (Version(b["releases"].lstrip("=")), index != "pypi", index)

    text = render(sorted(all_sources.values(), key=source_key), sorted(all_builds, key=build_key),
                  sorted(all_rules, key=lambda r: Version(r["releases"].lstrip("="))))
    return text, covered, skipped


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", required=True, help="a git directory of facebookresearch/xformers (bare is fine)")
    parser.add_argument("--out", default=os.path.join(here, "data", "derived", "xformers.toml"))
    parser.add_argument("--metadata", default=os.path.join(here, "data", "metadata", "xformers.jsonl"))
    args = parser.parse_args(argv)
    try:
        text, covered, skipped = derive(args.repo, args.metadata)
    except (OSError, subprocess.CalledProcessError, InvalidVersion, ValueError, KeyError) as e:
        print(f"derive_xformers: {e}", file=sys.stderr)
        return 2
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"derive_xformers: {len(covered)} releases written to {args.out}: {', '.join(covered)}", file=sys.stderr)
    for line in skipped:
        print(f"derive_xformers: skipped {line}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
