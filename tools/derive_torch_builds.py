"""Derive what each of torch's wheels on the package index is built for, by reading the wheels themselves.

``pip install torch`` takes the package index's wheel for the platform, and
what that wheel carries differs by platform and release: a CUDA build on
Linux x86_64, a CPU build on Windows, a CPU build on Linux aarch64 for some
releases and a CUDA one for others. A GPU outside the CUDA build's
architecture list gets "no kernel image is available for execution on the
device". This script reads, for every release the snapshot records and
every wheel the index serves for it (``data/metadata/torch.wheels.jsonl``:
file name, URL, sha256), three members of the wheel, over HTTP range
requests, never keeping the wheel on disk:

- the zip's central directory: whether the wheel carries torch's CUDA
  library (``torch/lib/libtorch_cuda.so``, ``torch/lib/torch_cuda.dll``) or
  its ROCm one (``libtorch_hip.so``); without either it is a CPU build;
- ``torch/version.py``, which the build writes: its ``cuda`` (and ``hip``)
  value is what ``torch.version.cuda`` reports, the CUDA the build targets;
- for a CUDA build, the Python extension library (``torch/lib/libtorch_python.so``,
  ``torch/lib/torch_python.dll``), streamed through ``zlib``: it holds the
  build's ``CUDA_ARCH_FLAGS`` as the text ``torch.cuda.get_arch_list()``
  returns (``sm_50 sm_60 ... sm_90``; ``compute_XX`` for PTX), which this
  script finds and reads (the only such list in the library; two different
  ones are an error, not a guess).

What it writes: ``data/derived/torch.builds.toml``, one ``[[build]]`` of the
index (``index = "pypi"``) per release and platform, from every wheel of the
platform (one per Python version). Each cites the ``[[source]]`` of the
newest Python's wheel (file name, URL, sha256), and its note names the
others, read alike; the wheels of one release and platform must agree on all
three facts, or the build is not written and the file says where they differ. Such a build is stated, not inferred: it is
the wheel the installer takes.

Run it (standard library, ``packaging`` and ``tomli_w``; it needs the network, the
package index's file host)::

    python tools/derive_torch_builds.py [--versions 2.5.1 2.6.0] \\
        [--measurements /tmp/torch-builds.jsonl] [--out data/derived/torch.builds.toml]

The measurements file (outside the repository) keeps what was read, so that
a second run reads only the wheels it lacks. For a new release: ``compat db
sync`` (the snapshot then lists its wheels), then run the script again; the
output is sorted and deterministic.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import time
from dataclasses import dataclass

from packaging.utils import parse_wheel_filename
from packaging.version import Version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from derive_wheel_archs import (  # noqa: E402  (the zip-over-HTTP reader and the writer, shared)
    HttpRange, Member, ZipError, artifact_source, central_directory, member_chunks, member_data_offset, render,
)
from derive_wheel_archs import Wheel as IndexWheel  # noqa: E402

TOOL = "tools/derive_torch_builds.py"
HEADER = ("# Written by tools/derive_torch_builds.py from the package index's own wheels of torch "
          "(their central directory, torch/version.py and the architecture list of the Python extension "
          "library); do not edit, run the script again.\n")

CUDA_LIBRARIES = ("torch/lib/libtorch_cuda.so", "torch/lib/torch_cuda.dll")
ROCM_LIBRARIES = ("torch/lib/libtorch_hip.so",)
PYTHON_LIBRARIES = ("torch/lib/libtorch_python.so", "torch/lib/torch_python.dll")
VERSION_FILE = "torch/version.py"
# the arch list as torch.cuda.get_arch_list() returns it, space separated
ARCH_LIST = re.compile(rb"(?<![A-Za-z0-9_])(?:sm|compute)_[0-9]{2,3}[a-z]?(?: (?:sm|compute)_[0-9]{2,3}[a-z]?)+(?![A-Za-z0-9_])")


def platform_of(filename: str) -> str | None:
    """The stack platform a torch wheel is for, or None (a platform no stack names).

    >>> platform_of("torch-2.5.1-cp312-cp312-manylinux1_x86_64.whl"), platform_of("torch-2.5.1-cp39-none-macosx_11_0_arm64.whl")
    ('linux-x86_64', 'macos-arm64')
    """
    _, _, _, tags = parse_wheel_filename(filename)
    found = set()
    for tag in tags:
        p = tag.platform
        if p.startswith(("manylinux", "linux")) and p.endswith("_x86_64"):
            found.add("linux-x86_64")
        elif p.startswith(("manylinux", "linux")) and p.endswith("_aarch64"):
            found.add("linux-aarch64")
        elif p == "win_amd64":
            found.add("windows-x86_64")
        elif p.startswith("macosx") and p.endswith("_arm64"):
            found.add("macos-arm64")
        elif p.startswith("macosx") and p.endswith("_x86_64"):
            found.add("macos-x86_64")
    return found.pop() if len(found) == 1 else None


def arch_text(token: str) -> tuple[str, str]:
    """("sass" or "ptx", "X.Y") of one entry of the list.

    >>> arch_text("sm_90"), arch_text("compute_120"), arch_text("sm_90a")
    (('sass', '9.0'), ('ptx', '12.0'), ('sass', '9.0a'))
    """
    kind, _, number = token.partition("_")
    suffix = number.lstrip("0123456789")
    digits = number[: len(number) - len(suffix)]
    return ("ptx" if kind == "compute" else "sass"), f"{int(digits[:-1])}.{digits[-1]}{suffix}"


def version_values(text: str) -> dict[str, str | None]:
    """The ``cuda`` and ``hip`` a ``torch/version.py`` assigns (a string, or None).

    >>> version_values("from typing import Optional\\ncuda: Optional[str] = '12.4'\\nhip = None\\n")
    {'cuda': '12.4', 'hip': None}
    """
    found: dict[str, str | None] = {}
    for node in ast.parse(text).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and target.id in ("cuda", "hip") and isinstance(value, ast.Constant) \
                and (value.value is None or isinstance(value.value, str)):
            found[target.id] = value.value
    return found


def read_member(remote: HttpRange, member: Member) -> bytes:
    start = member_data_offset(remote.fetch, member)
    raw = remote.fetch(start, member.compressed) if member.compressed else b""
    return b"".join(member_chunks([raw], member))


def scan_arch_lists(remote: HttpRange, member: Member) -> list[str]:
    """Every distinct arch list the member's decompressed bytes hold, in order found."""
    start = member_data_offset(remote.fetch, member)
    found: list[str] = []
    tail = b""
    for chunk in member_chunks(remote.stream(start, member.compressed), member):
        window = tail + chunk
        for match in ARCH_LIST.finditer(window):
            # a list cut by the chunk's end is found again, whole, with the next chunk
            if match.end() < len(window) - 1:
                text = match.group(0).decode()
                if not any(text in other for other in found):
                    found = [f for f in found if f not in text] + [text]
        tail = window[-512:]
    return found


def read_wheel(url: str, size: int) -> dict:
    """What one wheel is built for: a measurement (JSON-ready)."""
    remote = HttpRange(url, size)
    members = {m.name: m for m in central_directory(remote.fetch, remote.size)}
    measured: dict = {"cuda_library": next((n for n in CUDA_LIBRARIES if n in members), None),
                      "rocm_library": next((n for n in ROCM_LIBRARIES if n in members), None)}
    values: dict[str, str | None] = {}
    if VERSION_FILE in members:
        values = version_values(read_member(remote, members[VERSION_FILE]).decode("utf-8", "replace"))
    measured["version_py"] = values
    if measured["cuda_library"]:
        library = next((n for n in PYTHON_LIBRARIES if n in members), None)
        measured["python_library"] = library
        measured["arch_lists"] = scan_arch_lists(remote, members[library]) if library else []
    measured["transferred"] = remote.transferred
    return measured


@dataclass
class Wheel(IndexWheel):
    """A wheel of the snapshot's record, with the stack platform it is for."""

    platform: str = ""


def release_wheels(metadata_dir: str) -> dict[str, list[Wheel]]:
    """Each release line's wheels for the platforms a stack names (the snapshot's record)."""
    uploaded = {}
    with open(os.path.join(metadata_dir, "torch.jsonl"), encoding="utf-8") as handle:
        handle.readline()
        for line in handle:
            record = json.loads(line)
            uploaded[record["version"]] = record.get("uploaded")
    wheels: dict[str, list[Wheel]] = {}
    with open(os.path.join(metadata_dir, "torch.wheels.jsonl"), encoding="utf-8") as handle:
        handle.readline()
        for line in handle:
            record = json.loads(line)
            for w in record.get("wheels", []):
                platform = platform_of(w["file"])
                if platform is not None:
                    wheels.setdefault(record["version"], []).append(Wheel(
                        record["version"], w["file"], w["url"], w["sha256"], w["size"],
                        uploaded.get(record["version"]), platform=platform))
    return wheels


class Disagreement(Exception):
    pass


def facts_of(measured: dict) -> dict:
    """The build facts one wheel's measurement gives."""
    values = measured["version_py"]
    if measured["cuda_library"]:
        lists = measured.get("arch_lists", [])
        if len(lists) != 1:
            raise Disagreement(f"{len(lists)} architecture lists in {measured.get('python_library')}: {lists}")
        entries = [arch_text(t) for t in lists[0].split()]
        sass = [a for k, a in entries if k == "sass"]
        ptx = [a for k, a in entries if k == "ptx"]
        cuda = values.get("cuda")
        if not cuda:
            raise Disagreement(f"a CUDA library ({measured['cuda_library']}) but torch/version.py gives no cuda")
        return {"accelerator": "cuda", "cuda": ".".join(cuda.split(".")[:2]), "archs": sass,
                "ptx": max(ptx, key=Version) if ptx else None, "list": lists[0],
                "evidence": [measured["cuda_library"], measured["python_library"]]}
    if measured["rocm_library"]:
        return {"accelerator": "rocm", "rocm": ".".join((values.get("hip") or "").split(".")[:2]) or None,
                "evidence": [measured["rocm_library"]]}
    if values.get("cuda"):
        raise Disagreement(f"torch/version.py gives cuda {values['cuda']!r} but the wheel carries no CUDA library")
    return {"accelerator": "cpu", "evidence": []}


def source_of(wheel: Wheel, facts: dict) -> dict:
    if facts["accelerator"] == "cuda":
        read = f"{facts['evidence'][0].rsplit('/', 1)[-1]}, torch/version.py, the arch list in {facts['evidence'][1].rsplit('/', 1)[-1]}"
    elif facts["accelerator"] == "rocm":
        read = f"{facts['evidence'][0].rsplit('/', 1)[-1]}, torch/version.py"
    else:
        read = "no CUDA or ROCm library; torch/version.py"
    return artifact_source("torch", "PyTorch", f"torch {wheel.version} wheel {wheel.file} ({read})", wheel)


def _python_tag(wheel: Wheel) -> str:
    """The wheel's interpreter and ABI tags, with its build tag (``cp314t``, ``cp313 (build 3)``)."""
    _, _, build, tags = parse_wheel_filename(wheel.file)
    tag = min(tags, key=str)
    text = tag.abi if tag.abi.startswith("cp") else tag.interpreter
    return f"{text} (build {build[0]})" if build else text


def _python_of(wheel: Wheel) -> tuple[int, ...]:
    tags = parse_wheel_filename(wheel.file)[3]
    interpreter = min(t.interpreter for t in tags)
    digits = interpreter[2:]
    return (int(digits[0]), int(digits[1:] or 0)) if digits.isdigit() else (0,)


def derive(measurements: dict[str, dict], wheels: dict[str, list[Wheel]], versions: list[str]) -> tuple[str, list[str]]:
    sources, builds, comments, problems = [], [], [], []
    covered, unread = [], []
    for version in sorted(versions, key=Version):
        by_platform: dict[str, list[Wheel]] = {}
        for wheel in wheels.get(version, []):
            by_platform.setdefault(wheel.platform, []).append(wheel)
        complete = True
        for platform, group in sorted(by_platform.items()):
            group.sort(key=_python_of, reverse=True)  # the newest Python's wheel is the one cited first
            if not all(w.file in measurements and measurements[w.file]["sha256"] == w.sha256 for w in group):
                complete = False
                continue
            try:
                facts = [facts_of(measurements[w.file]) for w in group]
            except Disagreement as exc:
                problems.append(f"{version} {platform}: {exc}")
                continue
            keys = ("accelerator", "cuda", "rocm", "archs", "ptx")
            first = {k: facts[0].get(k) for k in keys}
            differing = [w.file for w, f in zip(group, facts) if {k: f.get(k) for k in keys} != first]
            if differing:
                problems.append(f"{version} {platform}: {', '.join(differing)} differ from {group[0].file}")
                continue
            # the newest Python's wheel is cited; the others, read alike, are named in the note (a source
            # table each would double the file, which a check of torch reads whole)
            group_sources = [source_of(group[0], facts[0])]
            sources.extend(group_sources)
            build: dict = {"id": f"torch.derived.{version}.pypi.{platform}", "releases": f"=={version}",
                           "index": "pypi", "accelerator": first["accelerator"]}
            if first["accelerator"] != "cpu":
                build["needs_gpu"] = False  # a CUDA or ROCm build of torch imports and runs on the CPU too
            if first.get("cuda"):
                build["cuda"] = first["cuda"]
            if first.get("rocm"):
                build["rocm"] = first["rocm"]
            build["platforms"] = [platform]
            if first.get("archs"):
                build["archs"] = first["archs"]
            if first.get("ptx"):
                build["ptx"] = first["ptx"]
            build["source"] = group_sources[0]["id"]
            others = [_python_tag(w) for w in group[1:]]
            alike = f"; read alike in its {', '.join(others)} wheels" if others else ""
            if first["accelerator"] == "cuda":
                build["note"] = f"torch.cuda.get_arch_list(): {facts[0]['list']}{alike}"
            elif first["accelerator"] == "rocm":
                build["note"] = f"a ROCm build{alike}"
            else:
                build["note"] = f"no CUDA or ROCm library: a CPU build, whatever GPU the machine has{alike}"
            builds.append(build)
        (covered if complete else unread).append(version)
    sources.sort(key=lambda s: s["id"])
    builds.sort(key=lambda b: (Version(b["releases"][2:]), b["id"]))
    comments.append(f"Releases whose every wheel was read: {', '.join(covered) or 'none'}.")
    if unread:
        comments.append(f"Releases with wheels not read yet (no build written for those platforms): {', '.join(unread)}.")
    comments.extend(f"Not written: {p}" for p in problems)
    return render("torch", sources, builds, comments, header=HEADER, tool=TOOL), problems


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--versions", nargs="*", help="only these releases (default: every release line of the snapshot)")
    parser.add_argument("--metadata", default=os.path.join(here, "data", "metadata"))
    parser.add_argument("--out", default=os.path.join(here, "data", "derived", "torch.builds.toml"))
    parser.add_argument("--measurements", help="a JSON-lines file outside the repository that keeps what was read")
    parser.add_argument("--no-read", action="store_true", help="write the file from the measurements alone")
    args = parser.parse_args(argv)
    wheels = release_wheels(args.metadata)
    versions = [v for v in wheels if not args.versions or v in args.versions]
    measurements: dict[str, dict] = {}
    if args.measurements and os.path.exists(args.measurements):
        with open(args.measurements, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    measurements[record["file"]] = record
    for version in [] if args.no_read else sorted(versions, key=Version, reverse=True):
        for wheel in wheels[version]:
            if wheel.file in measurements and measurements[wheel.file]["sha256"] == wheel.sha256:
                continue
            started = time.monotonic()
            try:
                measured = read_wheel(wheel.url, wheel.size)
            except (OSError, ZipError) as error:
                print(f"{wheel.file}: not read: {error}", file=sys.stderr, flush=True)
                continue
            measured.update(file=wheel.file, sha256=wheel.sha256, version=wheel.version)
            measurements[wheel.file] = measured
            print(f"{wheel.file}: {measured['version_py']} {measured.get('arch_lists', '')} "
                  f"({measured['transferred'] / 1e6:.0f} MB, {time.monotonic() - started:.1f} s)", file=sys.stderr, flush=True)
            if args.measurements:
                with open(args.measurements, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(measured, sort_keys=True) + "\n")
    text, problems = derive(measurements, wheels, versions)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(text)
    for line in problems:
        print(f"not written: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
