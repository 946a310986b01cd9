#!/usr/bin/env python3
"""Derive bitsandbytes' builds from its release wheels: which platforms its native libraries serve, and the
GPU architectures their kernels are built for.

A bitsandbytes wheel carries its native code as libraries, one per CUDA
version (``bitsandbytes/libbitsandbytes_cuda124.so``, ``..._cuda128.so``, …;
the one loaded follows torch's CUDA) beside a CPU one. The wheel's tags do not
always say where that code runs: the releases up to 0.42.0 ship one
``py3-none-any`` wheel, which installs anywhere, with Linux x86-64 libraries
only.

For every release of the snapshot (``data/metadata/bitsandbytes.jsonl``) since
``--since`` it reads each wheel by HTTP range requests (the zip's central
directory, then the libraries' members, streamed; nothing is kept on disk):

- each library's ELF machine or PE machine (x86-64, AArch64), from its first
  bytes;
- each CUDA library's fat binaries: the SASS and PTX architectures (the
  scanner of ``tools/derive_wheel_archs.py``).

It writes ``data/derived/bitsandbytes.toml``:

- per release and platform wheel (Linux x86-64 and AArch64, Windows x86-64;
  a ``py3-none-any`` wheel's for the one platform its libraries are for), a
  ``[[build]]`` whose ``archs`` are the architectures at least one of its
  CUDA libraries carries SASS for and whose ``ptx`` is the lowest PTX any of
  them carries: a GPU outside that is served by none of them, whatever CUDA
  torch brings ("no kernel image is available"); a GPU inside may still miss
  the library of torch's CUDA, which the build does not claim. Its ``cudas``
  are the runtimes its libraries are built for, and ``cuda`` the lowest (the
  library loaded follows torch's CUDA, so the driver need is torch's). The build runs on the CPU too
  (``needs_gpu = false``: the CPU library). A wheel with the CPU library
  alone (macOS) is a CPU build;
- per run of releases whose ``py3-none-any`` wheel carries libraries for some
  platforms only, an error rule requiring those platforms.

Run (a new release: ``compat db sync`` the snapshot, then run it again)::

    python tools/derive_bitsandbytes.py [--out data/derived/bitsandbytes.toml] [--since 2024-01-01] \\
        [--measurements bnb-wheels.json]
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
import zlib

from packaging.utils import parse_wheel_filename
from packaging.version import Version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from derive_engine_caps import releases_text, runs, span_text  # noqa: E402
from derive_wheel_archs import (  # noqa: E402
    HttpRange, Wheel, artifact_source, central_directory, member_chunks, member_data_offset, render, scan_library,
)

PACKAGE = "bitsandbytes"
TOOL = "tools/derive_bitsandbytes.py"
HEADER = ("# Written by tools/derive_bitsandbytes.py from the package index's own wheels of each release (their\n"
          "# native libraries, read by HTTP range requests: machine and fat binaries); do not edit, run the script\n"
          "# again.\n")
MACHINES = {62: "x86_64", 183: "aarch64", 0x8664: "x86_64", 0xAA64: "aarch64"}  # ELF e_machine, PE Machine
PLATFORM_OF_TAG = {"manylinux_2_24_x86_64": "linux-x86_64", "manylinux_2_24_aarch64": "linux-aarch64",
                   "win_amd64": "windows-x86_64", "macosx_14_0_arm64": "macos-arm64"}


def is_library(name: str) -> bool:
    """
    >>> is_library("bitsandbytes/libbitsandbytes_cuda124.so"), is_library("bitsandbytes/libbitsandbytes_cpu.dll")
    (True, True)
    >>> is_library("bitsandbytes/__init__.py")
    False
    """
    base = name.rsplit("/", 1)[-1]
    return base.startswith("libbitsandbytes") and base.endswith((".so", ".dll", ".dylib"))


def machine(head: bytes) -> str | None:
    """The CPU a library's first bytes say it is for (ELF or PE).

    >>> machine(b"\\x7fELF" + bytes(14) + struct.pack("<H", 183))
    'aarch64'
    >>> machine(b"MZ" + bytes(58) + struct.pack("<I", 64) + b"PE\\0\\0" + struct.pack("<H", 0x8664))
    'x86_64'
    """
    if head[:4] == b"\x7fELF" and len(head) >= 20:
        return MACHINES.get(struct.unpack_from("<H", head, 18)[0])
    if head[:2] == b"MZ" and len(head) >= 64:
        offset = struct.unpack_from("<I", head, 60)[0]
        if head[offset:offset + 4] == b"PE\0\0" and len(head) >= offset + 6:
            return MACHINES.get(struct.unpack_from("<H", head, offset + 4)[0])
    return None


def read_wheel(wheel: Wheel) -> list[dict]:
    """Each library of the wheel: its name, machine, and the SASS and PTX its fat binaries carry."""
    remote = HttpRange(wheel.url, wheel.size)
    libraries = []
    for member in sorted(central_directory(remote.fetch, remote.size), key=lambda m: m.name):
        if not is_library(member.name):
            continue
        start = member_data_offset(remote.fetch, member)
        raw = remote.fetch(start, min(member.compressed, 65536))
        head = zlib.decompressobj(-15).decompress(raw, 4096) if member.method == 8 else raw[:4096]
        library = {"name": member.name, "machine": machine(head), "sass": [], "ptx": []}
        if "cuda" in member.name.rsplit("/", 1)[-1]:
            scanned = scan_library(member.name, member_chunks(remote.stream(start, member.compressed), member))
            library["sass"], library["ptx"] = scanned.sass, scanned.ptx
        libraries.append(library)
    return libraries


def _key(arch: str) -> tuple[int, int]:
    major, minor = arch.rstrip("af").split(".")
    return int(major), int(minor)


def cuda_of(name: str) -> str | None:
    """The CUDA a library is built for, from its name.

    >>> cuda_of("bitsandbytes/libbitsandbytes_cuda118.so"), cuda_of("x/libbitsandbytes_cuda121_nocublaslt.so")
    ('11.8', '12.1')
    >>> cuda_of("bitsandbytes/libbitsandbytes_cpu.so") is None
    True
    """
    base = name.rsplit("/", 1)[-1]
    digits = base.split("cuda", 1)[1][:3] if "cuda" in base else ""
    return f"{digits[:2]}.{digits[2]}" if len(digits) == 3 and digits.isdigit() else None


def build_of(wheel: Wheel, platform: str, libraries: list[dict], source: str) -> dict | None:
    """The build of one wheel: a CUDA build where it has CUDA libraries, a CPU build where it has only the
    CPU one (macOS), None without libraries."""
    cuda_libraries = [lib for lib in libraries if lib["sass"] or lib["ptx"]]
    if not cuda_libraries:
        if not libraries:
            return None
        return {"id": f"{PACKAGE}.derived.{wheel.version}.pypi.{platform}", "releases": f"=={wheel.version}",
                "index": "pypi", "accelerator": "cpu", "platforms": [platform], "source": source,
                "note": "its only native library: " + ", ".join(lib["name"].rsplit("/", 1)[-1] for lib in libraries)}
    archs = sorted({a for lib in cuda_libraries for a in lib["sass"]}, key=_key)
    cudas = [cuda_of(lib["name"]) for lib in cuda_libraries]
    if None in cudas:
        return None
    ptxs = [a for lib in cuda_libraries for a in lib["ptx"]]
    build = {
        "id": f"{PACKAGE}.derived.{wheel.version}.pypi.{platform}",
        "releases": f"=={wheel.version}",
        "index": "pypi",
        "accelerator": "cuda",
        "cuda": min(cudas, key=_key),  # the lowest: the library loaded follows torch's CUDA
        "cudas": sorted(set(cudas), key=_key),
        "needs_gpu": False,
        "platforms": [platform],
        "archs": archs,
    }
    if ptxs:
        build["ptx"] = min(ptxs, key=_key)
    build["source"] = source
    build["note"] = ("archs: the SASS some CUDA library carries, ptx the lowest PTX; per library: " + "; ".join(
        f"{lib['name'].rsplit('/', 1)[-1]}: SASS {', '.join(lib['sass']) or 'none'}"
        f"{', PTX ' + ', '.join(lib['ptx']) if lib['ptx'] else ''}" for lib in cuda_libraries))
    return build


def derive(read: list[tuple[Wheel, str, list[dict]]]) -> tuple[list[dict], list[dict], list[dict]]:
    """Sources, builds and rules from (wheel, its platform or "any", its libraries)."""
    sources, builds, rules = {}, [], []
    by_version: dict[str, list[tuple[Wheel, str, list[dict]]]] = {}
    for wheel, platform, libraries in read:
        by_version.setdefault(wheel.version, []).append((wheel, platform, libraries))
        source = artifact_source(PACKAGE, "bitsandbytes", f"bitsandbytes {wheel.version}, wheel {wheel.file}: its "
                                 "native libraries (machine, and the fat binaries' SASS and PTX)", wheel)
        if platform == "any":  # the wheel's libraries say where it runs: one platform, or none known
            machines = {lib["machine"] for lib in libraries}
            linux = len(machines) == 1 and None not in machines and all(lib["name"].endswith(".so")
                                                                         for lib in libraries)
            platform = f"linux-{machines.pop()}" if linux else "any"
        if platform != "any":
            build = build_of(wheel, platform, libraries, source["id"])
            if build is not None:
                sources[source["id"]] = source
                builds.append(build)

    def served(version: str):
        """For a release whose one wheel is py3-none-any: the Linux platforms its libraries are for."""
        entries = by_version[version]
        if len(entries) != 1 or entries[0][1] != "any" or not entries[0][2]:
            return None
        found = {lib["machine"] for lib in entries[0][2]}
        if None in found or not all(lib["name"].endswith(".so") for lib in entries[0][2]):
            return None
        return tuple(sorted(f"linux-{m}" for m in found))

    versions = sorted(by_version, key=Version)
    for platforms, run in runs(versions, served):
        newest = by_version[run[-1]][0]
        source = artifact_source(PACKAGE, "bitsandbytes", f"bitsandbytes {newest[0].version}, wheel "
                                 f"{newest[0].file}: its native libraries, each an ELF library for "
                                 f"{' and '.join(platforms)}", newest[0])
        sources[source["id"]] = source
        names = [lib["name"].rsplit("/", 1)[-1] for lib in newest[2]]
        libraries = f"{len(names)} libraries, " + ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
        rules.append({
            "id": f"{PACKAGE}.derived.{run[-1]}.native-libraries.platforms",
            "kind": "requirement",
            "releases": releases_text(run),
            "require": {"platform": list(platforms)},
            "message": (f"bitsandbytes {span_text(run)} ships one wheel for every platform (py3-none-any), whose "
                        f"native libraries are built for {' and '.join(platforms)} only ({libraries}): elsewhere "
                        "it installs, and no library of it loads, so its 8-bit and 4-bit operations cannot run"),
            "source": source["id"],
        })
    return sorted(sources.values(), key=lambda s: s["id"]), builds, rules


def wheels(metadata_dir: str, since: str) -> list[tuple[Wheel, str]]:
    with open(os.path.join(metadata_dir, f"{PACKAGE}.jsonl"), encoding="utf-8") as handle:
        handle.readline()
        uploaded = {r["version"]: r.get("uploaded") for r in map(json.loads, handle) if "version" in r}
    out = []
    with open(os.path.join(metadata_dir, f"{PACKAGE}.wheels.jsonl"), encoding="utf-8") as handle:
        handle.readline()
        for record in map(json.loads, handle):
            if (uploaded.get(record["version"]) or "") < since:
                continue
            for w in record.get("wheels", []):
                if not w["file"].endswith(".whl"):
                    continue
                tags = {t.platform for t in parse_wheel_filename(w["file"])[3]}
                platform = "any" if tags == {"any"} else next((PLATFORM_OF_TAG[t] for t in tags
                                                               if t in PLATFORM_OF_TAG), None)
                if platform is not None:
                    out.append((Wheel(record["version"], w["file"], w["url"], w["sha256"], w["size"],
                                      uploaded.get(record["version"])), platform))
    return sorted(out, key=lambda x: (Version(x[0].version), x[1]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metadata", default="data/metadata")
    parser.add_argument("--out", default=f"data/derived/{PACKAGE}.toml")
    parser.add_argument("--since", default="2024-01-01", help="the first upload date read")
    parser.add_argument("--measurements", help="a JSON file of what each wheel's libraries carry: read from it "
                        "where it has the wheel, and written back with what was read")
    args = parser.parse_args(argv)
    measured: dict[str, list[dict]] = {}
    if args.measurements and os.path.exists(args.measurements):
        with open(args.measurements, encoding="utf-8") as handle:
            measured = json.load(handle)
    read = []
    for wheel, platform in wheels(args.metadata, args.since):
        if wheel.sha256 not in measured:
            measured[wheel.sha256] = read_wheel(wheel)
        libraries = measured[wheel.sha256]
        print(f"{wheel.file}: {[(lib['name'].rsplit('/', 1)[-1], lib['machine'], lib['sass']) for lib in libraries]}",
              file=sys.stderr)
        read.append((wheel, platform, libraries))
    if args.measurements:
        with open(args.measurements, "w", encoding="utf-8") as handle:
            json.dump(measured, handle)
    sources, builds, rules = derive(read)
    text = render(PACKAGE, sources, builds, [], header=HEADER, tool=TOOL)
    if rules:
        import tomli_w

        text += "\n" + tomli_w.dumps({"rule": rules})
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"{len(read)} wheels read; {len(builds)} builds, {len(rules)} rules -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
