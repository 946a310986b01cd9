"""Derive the CUDA architectures of a kernel package's wheels by reading the wheels themselves.

What it reads: the Linux wheels (x86_64 and aarch64) the package index serves
for each release of a package (SGLang's ``sglang-kernel`` and ``sgl-kernel``),
as listed by ``data/metadata/<name>.wheels.jsonl`` (the wheel's file name, its
URL and the sha256 the index gives). It never keeps a wheel on disk: it reads
the zip's end-of-central-directory record and central directory with HTTP range
requests, then streams each shared library (``*.so``) member through ``zlib``
and scans the decompressed bytes for CUDA fat binaries (the ``.nv_fatbin``
section's containers, magic ``0xBA55ED50``). Each container holds entries,
each with a header that says its kind (an ELF cubin, that is SASS, or PTX)
and its ``sm`` number; for an uncompressed cubin the ELF header's ``e_flags``
says whether it is an architecture-specific (``sm_90a``-style) build. The
layout followed is the one public descriptions of the format give (NVIDIA's
``fatbinary`` header, LLVM's ``BinaryFormat/ELF.h`` for ``EF_CUDA_*``).

The CUDA version: a wheel's file name label (``+cu129``), else the
``nvidia-cuda-runtime*`` / ``cuda-toolkit`` pins of its metadata, else what its
cubins say of the toolkit that compiled them (ptxas writes ``Cuda compilation
tools, release 12.9, V12.9.86`` into each cubin's notes): the release named
by most cubins of the core libraries.

Which libraries make a build's ``archs``: SGLang's kernels load one core op
library, ``common_ops`` (from 0.3.x of sgl-kernel one per GPU family, in
``sgl_kernel/sm90/`` and ``sgl_kernel/sm100/``, picked by the GPU's compute
capability in ``load_utils.py``); a GPU without kernels there cannot run any
op. ``archs`` is the union of the SASS architectures of the ``common_ops``
libraries; ``ptx`` the highest PTX architecture they carry (if any). The
other libraries (FlashAttention 3 ``flash_ops``, FlashMLA, mscclpp...) carry
narrower sets, for some ops only; each is listed in the build's ``note``.

What it writes: ``data/derived/<name>.toml``, one ``[[build]]`` per release and
Linux platform (and per CUDA label, where the index serves several), each
citing a ``[[source]]`` of kind ``artifact``: the wheel's file name, URL and
sha256 (the index's), the members read in the title.

Run it (standard library, ``packaging`` and ``tomli_w``: compat's own; it needs the network, the
package index's file host)::

    python tools/derive_wheel_archs.py sglang-kernel [--versions 0.4.10 0.4.9] \\
        [--out data/derived/sglang-kernel.toml] [--measurements /tmp/sglang-kernel.jsonl] \\
        [--budget-minutes 60]

Releases are read newest first (uploads from 2025 on first), until the time
budget is spent; the measurements file (outside the repository) keeps what
was read, so a later run reads only the wheels it lacks. For a new release:
``compat db sync`` (so that the snapshot lists its wheels), then run the
script again; the output is sorted and deterministic.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import struct
import sys
import time
import urllib.request
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator

from packaging.utils import parse_wheel_filename
from packaging.version import Version
import tomli_w

TOOL = "tools/derive_wheel_archs.py"
PROJECTS = {"sglang-kernel": "SGLang kernel (sglang-kernel)", "sgl-kernel": "SGLang kernel (sgl-kernel)", "vllm": "vLLM"}
# where a package's derived file of architectures goes, when its <name>.toml is another script's
OUTPUT_STEMS = {"vllm": "vllm.archs"}
# packages whose wheels are read for their core libraries alone (the others are hundreds of MB more)
CORE_ONLY = {"vllm"}
HEADER = ("# Written by tools/derive_wheel_archs.py from the package index's own wheels of each release "
          "(their .so members' CUDA fat binaries); do not edit, run the script again.\n")

# -- the zip, over HTTP range requests --------------------------------------------------

EOCD = b"PK\x05\x06"
EOCD64_LOCATOR = b"PK\x06\x07"
CENTRAL = b"PK\x01\x02"
LOCAL = b"PK\x03\x04"


class ZipError(Exception):
    pass


@dataclass(frozen=True)
class Member:
    name: str
    method: int  # 0 stored, 8 deflated
    compressed: int
    size: int
    crc: int
    offset: int  # of its local header


Fetch = Callable[[int, int], bytes]  # (start, length) -> exactly those bytes


def _zip64_extra(extra: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    """The sizes and offset a ZIP64 extra field gives for the ones the central record marks 0xFFFFFFFF."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4:at + 4 + length]
        if tag == 0x0001:
            values = [v[0] for v in struct.iter_unpack("<Q", body[: len(body) // 8 * 8])]
            if size == 0xFFFFFFFF:
                size = values.pop(0)
            if compressed == 0xFFFFFFFF:
                compressed = values.pop(0)
            if offset == 0xFFFFFFFF:
                offset = values.pop(0)
        at += 4 + length
    return size, compressed, offset


def central_directory(fetch: Fetch, total: int) -> list[Member]:
    """The members of the zip of `total` bytes that `fetch` reads: its end record, then its central directory."""
    tail_len = min(total, 65536 + 22)
    tail = fetch(total - tail_len, tail_len)
    at = tail.rfind(EOCD)
    if at < 0 or at + 22 > len(tail):
        raise ZipError("no end-of-central-directory record")
    count, cd_size, cd_offset = struct.unpack_from("<HII", tail, at + 10)
    locator = at - 20
    if (count == 0xFFFF or cd_size == 0xFFFFFFFF or cd_offset == 0xFFFFFFFF) and locator >= 0 \
            and tail[locator:locator + 4] == EOCD64_LOCATOR:
        (eocd64_at,) = struct.unpack_from("<Q", tail, locator + 8)
        record = fetch(eocd64_at, 56)
        if record[:4] != b"PK\x06\x06":
            raise ZipError("no ZIP64 end-of-central-directory record")
        count, cd_size, cd_offset = struct.unpack_from("<QQQ", record, 32)
    directory = fetch(cd_offset, cd_size)
    members: list[Member] = []
    at = 0
    while at + 46 <= len(directory) and directory[at:at + 4] == CENTRAL:
        (method, _time, _date, crc, compressed, size, name_len, extra_len,
         comment_len) = struct.unpack_from("<HHHIIIHHH", directory, at + 10)
        (offset,) = struct.unpack_from("<I", directory, at + 42)
        name = directory[at + 46:at + 46 + name_len].decode("utf-8", "replace")
        extra = directory[at + 46 + name_len:at + 46 + name_len + extra_len]
        size, compressed, offset = _zip64_extra(extra, size, compressed, offset)
        members.append(Member(name, method, compressed, size, crc, offset))
        at += 46 + name_len + extra_len + comment_len
    if len(members) != count:
        raise ZipError(f"the central directory lists {len(members)} members, its end record {count}")
    return members


def member_data_offset(fetch: Fetch, member: Member) -> int:
    """Where `member`'s data starts: after its local header, whose name and extra lengths may differ from the central one's."""
    local = fetch(member.offset, 30)
    if local[:4] != LOCAL:
        raise ZipError(f"{member.name}: no local header at {member.offset}")
    name_len, extra_len = struct.unpack_from("<HH", local, 26)
    return member.offset + 30 + name_len + extra_len


def member_chunks(raw_chunks: Iterable[bytes], member: Member) -> Iterator[bytes]:
    """`member`'s content, decompressed chunk by chunk from its raw (stored or deflated) chunks; its CRC-32 checked."""
    crc = 0
    size = 0
    if member.method == 0:
        for chunk in raw_chunks:
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
            yield chunk
    elif member.method == 8:
        inflate = zlib.decompressobj(-15)
        for chunk in raw_chunks:
            out = inflate.decompress(chunk, 1 << 24)
            while out:
                crc = zlib.crc32(out, crc)
                size += len(out)
                yield out
                out = inflate.decompress(inflate.unconsumed_tail, 1 << 24) if inflate.unconsumed_tail else b""
        out = inflate.flush()
        if out:
            crc = zlib.crc32(out, crc)
            size += len(out)
            yield out
    else:
        raise ZipError(f"{member.name}: compression method {member.method} is not read here")
    if size != member.size or crc != member.crc:
        raise ZipError(f"{member.name}: read {size} bytes, CRC {crc:08x}; the zip says {member.size}, {member.crc:08x}")


class HttpRange:
    """A file on an HTTP server, read by ranges (the server must answer 206)."""

    def __init__(self, url: str, size: int | None = None, timeout: float = 120.0) -> None:
        self.url = url
        self.timeout = timeout
        self.transferred = 0
        if size is None:
            with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout) as response:
                size = int(response.headers["Content-Length"])
        self.size = size

    def _open(self, start: int, length: int):
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{start + length - 1}"})
        response = urllib.request.urlopen(request, timeout=self.timeout)
        if response.status != 206:
            response.close()
            raise ZipError(f"{self.url}: the server ignored the range request (HTTP {response.status})")
        return response

    def fetch(self, start: int, length: int) -> bytes:
        with self._open(start, length) as response:
            data = response.read()
        if len(data) != length:
            raise ZipError(f"{self.url}: asked {length} bytes at {start}, got {len(data)}")
        self.transferred += length
        return data

    def stream(self, start: int, length: int, chunk: int = 1 << 20) -> Iterator[bytes]:
        left = length
        with self._open(start, length) as response:
            while left:
                data = response.read(min(chunk, left))
                if not data:
                    raise ZipError(f"{self.url}: the stream ended {left} bytes early")
                left -= len(data)
                self.transferred += len(data)
                yield data


# -- fat binaries ---------------------------------------------------------------------------

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
FATBIN_HEADER = 16  # magic u32, version u16 (1), header size u16 (16), size of what follows u64
ENTRY_HEADER = 64  # the part of an entry's header read here (its own header size says how long it is)
KIND_PTX = 1
KIND_ELF = 2
ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
TOOLKIT_RE = re.compile(rb"Cuda compilation tools, release ([0-9]+\.[0-9]+), V([0-9.]+)")
TOOLKIT_NEEDLE = b"Cuda compilation tools, release "


@dataclass(frozen=True)
class Entry:
    """One entry of a fat binary: a cubin (SASS) or PTX, for one architecture."""

    kind: str  # "sass" or "ptx"
    arch: str  # "9.0", "9.0a"; "10.0?" when a cubin's variant could not be read (a compressed payload)


def arch_text(sm: int, variant: str | None) -> str:
    """The architecture as compat writes it: "9.0a" for sm_90a ("?": a suffix not read).

    >>> arch_text(90, "a"), arch_text(120, ""), arch_text(100, "f"), arch_text(100, None)
    ('9.0a', '12.0', '10.0f', '10.0?')
    """
    text = f"{sm // 10}.{sm % 10}"
    return text + ("?" if variant is None else variant)


# An entry header's flags (u64 at 40): 0x1 64-bit code, 0x10 Linux host, 0x2000 or 0x8000 a compressed payload,
# 0x100000 architecture-specific code (sm_90a, compute_100a), 0x200000 family-specific code (sm_100f).
FLAG_SPECIFIC = 0x100000
FLAG_FAMILY = 0x200000


def entry_variant(flags: int, elf_header: bytes | None) -> str:
    """The suffix of an entry's architecture: "a", "f" or "".

    The entry header's flags say it (0x100000 architecture-specific, 0x200000
    family-specific); an uncompressed cubin's ELF header says "a" too, in
    ``e_flags``: 0x800 (``EF_CUDA_ACCELERATORS_V1``) under CUDA's ELF ABI
    version 7 and below, 0x8 (``EF_CUDA_ACCELERATORS``) under ABI version 8 as
    CUDA 12.8-12.9's ptxas writes it (CUDA 13's no longer sets it: there only
    the entry's flags tell).

    >>> entry_variant(0x100011, None), entry_variant(0x1200011, None), entry_variant(0x11, None)
    ('a', 'f', '')
    """
    if flags & FLAG_SPECIFIC or cubin_specific(elf_header or b""):
        return "a"
    if flags & FLAG_FAMILY:
        return "f"
    return ""


def cubin_specific(elf_header: bytes) -> bool:
    """Whether a cubin's ELF header marks it architecture-specific (see `entry_variant`)."""
    if len(elf_header) < 52 or elf_header[:4] != ELF_MAGIC or elf_header[4] != 2:
        return False
    (machine,) = struct.unpack_from("<H", elf_header, 18)
    if machine != EM_CUDA:
        return False
    (flags,) = struct.unpack_from("<I", elf_header, 48)
    if elf_header[8] >= 8:
        return bool(flags & 0x8)
    return bool(flags & 0x800)


def _plausible_entry(header: bytes) -> bool:
    kind, _version, size, padded = struct.unpack_from("<HHIQ", header, 0)
    (sm,) = struct.unpack_from("<I", header, 28)
    return kind in (KIND_PTX, KIND_ELF) and ENTRY_HEADER <= size <= 4096 and padded < 1 << 40 and 10 <= sm <= 300


class FatbinScanner:
    """Finds the fat-binary containers in a byte stream fed chunk by chunk, and
    their entries, without holding more than a chunk (entry payloads are skipped).

    A container: a 16-byte header (magic 0xBA55ED50, version 1, header size 16,
    then the size of the entries that follow), then entries, each a header
    (kind u16 at 0: 1 PTX, 2 ELF; its own size u32 at 4; the payload's padded
    size u64 at 8; the compressed payload size u32 at 16, 0 when stored as is;
    the SM number u32 at 28) followed by its payload. Where the magic occurs by
    chance (in host code or data), the header or first entry does not hold up
    and scanning goes on after it.
    """

    def __init__(self) -> None:
        self.entries: Counter[Entry] = Counter()
        self.containers = 0
        self.coverage: Counter[Entry] = Counter()  # entry kind and arch -> the containers that carry it
        self.combos: Counter[frozenset[Entry]] = Counter()  # the set of entries of a container -> how many carry it
        self._current: set[Entry] = set()
        self._buf = bytearray()
        self._skip = 0  # bytes still to drop (an entry's payload)
        self._end = 0  # the stream offset where the current container ends, 0 when scanning
        self._at = 0  # the stream offset of _buf[0]

    def feed(self, data: bytes) -> None:
        if self._skip:
            drop = min(self._skip, len(data))
            self._skip -= drop
            self._at += drop
            data = data[drop:]
        self._buf += data
        self._run()

    def _close(self) -> None:
        """The current container ends: count the architectures it carried."""
        self.coverage.update(self._current)
        if self._current:
            self.combos[frozenset(self._current)] += 1
        self._current = set()
        self._end = 0

    def finish(self) -> None:
        """The stream ends (a container cut short is counted as far as it was read)."""
        if self._end:
            self._close()

    def _drop(self, count: int) -> None:
        del self._buf[:count]
        self._at += count

    def _run(self) -> None:
        buf = self._buf
        while True:
            if self._skip:
                drop = min(self._skip, len(buf))
                self._skip -= drop
                self._drop(drop)
                if self._skip:
                    return
            if self._end:
                if self._at >= self._end:
                    self._close()
                    continue
                if len(buf) < ENTRY_HEADER:
                    return
                header = bytes(buf[:ENTRY_HEADER])
                if not _plausible_entry(header):
                    self._close()  # not what it seemed: scan on from here
                    continue
                kind, _version, size, padded, compressed = struct.unpack_from("<HHIQI", header, 0)
                (sm,) = struct.unpack_from("<I", header, 28)
                (flags,) = struct.unpack_from("<Q", header, 40)
                if kind == KIND_ELF:
                    if compressed == 0 and len(buf) < size + 64 and self._at + size + 64 <= self._end:
                        return  # wait for the cubin's ELF header
                    elf = bytes(buf[size:size + 64]) if compressed == 0 else None
                    entry = Entry("sass", arch_text(sm, entry_variant(flags, elf)))
                else:
                    entry = Entry("ptx", arch_text(sm, entry_variant(flags, None)))
                self.entries[entry] += 1
                self._current.add(entry)
                self._skip = size + padded
                continue
            at = buf.find(FATBIN_MAGIC)
            if at < 0:
                self._drop(max(0, len(buf) - 3))
                return
            if len(buf) < at + FATBIN_HEADER + ENTRY_HEADER:
                self._drop(at)
                return
            _magic, version, header_size, fat_size = struct.unpack_from("<IHHQ", buf, at)
            if version == 1 and header_size == FATBIN_HEADER and 0 < fat_size < 1 << 40 \
                    and _plausible_entry(bytes(buf[at + FATBIN_HEADER:at + FATBIN_HEADER + ENTRY_HEADER])):
                self.containers += 1
                self._end = self._at + at + FATBIN_HEADER + fat_size
                self._drop(at + FATBIN_HEADER)
            else:
                self._drop(at + 1)


class NeedleScanner:
    """Counts the toolkit releases ptxas names in the stream (``Cuda compilation tools, release X.Y``)."""

    def __init__(self) -> None:
        self.found: Counter[str] = Counter()
        self._tail = b""

    def feed(self, data: bytes) -> None:
        window = self._tail + data
        start = 0
        while True:
            at = window.find(TOOLKIT_NEEDLE, start)
            if at < 0:
                break
            match = TOOLKIT_RE.match(window, at)
            if match is None and len(window) - at < 80:
                break  # cut by the chunk's end: read again with the next chunk
            if match is not None:
                self.found[match.group(1).decode()] += 1
            start = at + 1
        keep = max(len(window) - 80, start)
        self._tail = window[keep:]


# -- one wheel --------------------------------------------------------------------------------


@dataclass
class Library:
    """What one .so member of a wheel carries."""

    name: str
    sass: list[str] = field(default_factory=list)
    ptx: list[str] = field(default_factory=list)
    containers: int = 0
    coverage: dict[str, int] = field(default_factory=dict)  # "sass 8.0" -> the containers that carry it
    toolkits: dict[str, int] = field(default_factory=dict)
    cudart: list[str] = field(default_factory=list)  # libcudart.so.N it needs
    # each set of entries some fat binaries carry ("sass 8.0 sass 9.0 ptx 9.0") -> how many carry it
    combos: dict[str, int] = field(default_factory=dict)


CUDART_RE = re.compile(rb"libcudart\.so\.([0-9]+)(?=[^0-9])")  # not cut by a chunk's end


def _arch_key(arch: str) -> tuple[int, int, str]:
    major, _, rest = arch.partition(".")
    minor = "".join(c for c in rest if c.isdigit())
    return int(major), int(minor or 0), rest[len(minor):]


def scan_library(name: str, chunks: Iterable[bytes]) -> Library:
    """What the library whose decompressed bytes `chunks` yields carries: its fat binaries'
    SASS and PTX architectures, the toolkit releases its cubins name, the libcudart it needs."""
    fatbins = FatbinScanner()
    needles = NeedleScanner()
    cudart: set[str] = set()
    tail = b""
    for chunk in chunks:
        fatbins.feed(chunk)
        needles.feed(chunk)
        window = tail + chunk
        cudart.update(m.group(1).decode() for m in CUDART_RE.finditer(window))
        tail = window[-24:]
    fatbins.finish()
    sass = sorted({e.arch for e in fatbins.entries if e.kind == "sass"}, key=_arch_key)
    ptx = sorted({e.arch for e in fatbins.entries if e.kind == "ptx"}, key=_arch_key)
    coverage = {f"{e.kind} {e.arch}": n for e, n in sorted(fatbins.coverage.items(), key=lambda kv: (kv[0].kind, _arch_key(kv[0].arch)))}
    combos = {" ".join(f"{e.kind} {e.arch}" for e in sorted(combo, key=lambda e: (e.kind, _arch_key(e.arch)))): n
              for combo, n in fatbins.combos.most_common()}
    return Library(name, sass, ptx, fatbins.containers, coverage, dict(sorted(needles.found.items())), sorted(cudart),
                   combos)


def read_wheel(url: str, size: int | None = None, log: Callable[[str], None] = lambda s: None,
               remote: HttpRange | None = None, core_only: bool = False) -> dict:
    """Read the .so members of the wheel at `url` (or of `remote`, anything with HttpRange's
    size, fetch, stream and transferred), only its core libraries with `core_only`: a
    measurement (JSON-ready)."""
    remote = remote or HttpRange(url, size)
    members = central_directory(remote.fetch, remote.size)
    libraries = []
    texts: dict[str, str] = {}
    for member in members:
        if member.name.endswith(".dist-info/METADATA"):
            start = member_data_offset(remote.fetch, member)
            raw = remote.fetch(start, member.compressed) if member.compressed else b""
            texts[member.name] = b"".join(member_chunks([raw], member)).decode("utf-8", "replace")
    for member in sorted(members, key=lambda m: m.name):
        if not (member.name.endswith(".so") or ".so." in member.name.rsplit("/", 1)[-1]):
            continue
        if core_only and not is_core(member.name):
            continue
        started = time.monotonic()
        start = member_data_offset(remote.fetch, member)
        raw = remote.stream(start, member.compressed) if member.compressed else iter(())
        library = scan_library(member.name, member_chunks(raw, member))
        libraries.append(library.__dict__)
        log(f"    {member.name}: {member.compressed / 1e6:.0f} MB in {time.monotonic() - started:.0f} s: "
            f"{library.containers} containers, {library.coverage}, toolkits {library.toolkits}, cudart {library.cudart}")
    metadata = next((t for n, t in texts.items() if n.endswith("METADATA")), "")
    requires = [line.split(":", 1)[1].strip() for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    return {"libraries": libraries, "requires_dist": requires, "transferred": remote.transferred}


# -- what a wheel's measurement says of its build ---------------------------------------------

# SGLang's kernels: common_ops; vLLM's custom ops (RMS norm, rotary embedding, activations, cache ops, which
# every model runs): vllm/_C (vllm/_C_stable_libtorch from 0.24)
CORE = re.compile(r"(^|/)(common_ops[^/]*|vllm/_C(_stable_libtorch)?\.[^/]*)\.so$")


def is_core(name: str) -> bool:
    """Whether a member is a core op library (``common_ops``, vLLM's ``_C``), whose kernels every op needs.

    >>> is_core("sgl_kernel/sm100/common_ops.abi3.so"), is_core("sgl_kernel/flash_ops.abi3.so")
    (True, False)
    >>> is_core("vllm/_C.abi3.so"), is_core("vllm/_C_stable_libtorch.abi3.so"), is_core("vllm/_moe_C.abi3.so")
    (True, True, False)
    """
    return CORE.search(name) is not None


def platform_of(filename: str) -> str | None:
    """The compat platform of a Linux wheel (None for another).

    >>> platform_of("sgl_kernel-0.3.21-cp310-abi3-manylinux2014_aarch64.whl")
    'linux-aarch64'
    """
    _name, _version, _build, tags = parse_wheel_filename(filename)
    platforms = {t.platform for t in tags}
    for arch in ("x86_64", "aarch64"):
        if any(p.endswith(arch) and ("linux" in p) for p in platforms):
            return f"linux-{arch}"
    return None


CUDA_PIN = re.compile(r"^(?:nvidia-cuda-runtime(?:-cu[0-9]+)?|cuda-toolkit)\s*(?:\[[^]]*\])?\s*==\s*([0-9]+)\.([0-9]+)")


def cuda_of(filename: str, requires: list[str], libraries: list[dict]) -> tuple[str | None, str]:
    """The CUDA the wheel was built with, and what says so.

    >>> cuda_of("k-1.0+cu130-cp310-abi3-linux_x86_64.whl", [], [])
    ('13.0', 'its file name label +cu130')
    >>> cuda_of("k-1.0-cp310-abi3-linux_x86_64.whl", [], [{"name": "k/common_ops.so", "toolkits": {"12.9": 3, "12.8": 1}}])
    ('12.9', 'its cubins: ptxas names "Cuda compilation tools, release 12.9" in 3 of the core libraries\\' cubins')
    """
    _name, version, _build, _tags = parse_wheel_filename(filename)
    local = version.local or ""
    match = re.fullmatch(r"cu([0-9]+)([0-9])", local)
    if match:
        return f"{match.group(1)}.{match.group(2)}", f"its file name label +{local}"
    for line in requires:
        pin = CUDA_PIN.match(line)
        if pin:
            return f"{pin.group(1)}.{pin.group(2)}", f"its metadata pins {line.split(';')[0].strip()}"
    counted: Counter[str] = Counter()
    for library in libraries:
        if is_core(library["name"]):
            counted.update(library.get("toolkits", {}))
    if counted:
        release, count = max(counted.items(), key=lambda kv: (kv[1], Version(kv[0])))
        return release, (f"its cubins: ptxas names \"Cuda compilation tools, release {release}\" "
                         f"in {count} of the core libraries' cubins")
    majors = {m for library in libraries if is_core(library["name"]) for m in library.get("cudart", [])}
    if len(majors) == 1:
        major = majors.pop()
        return major, f"its core libraries linking libcudart.so.{major} (nothing in the wheel names the minor)"
    return None, "nothing in the wheel names its CUDA"


def _max_arch(archs: Iterable[str]) -> str | None:
    plain = sorted({a.rstrip("af?") for a in archs}, key=_arch_key)
    return plain[-1] if plain else None


@dataclass
class Wheel:
    version: str
    file: str
    url: str
    sha256: str
    size: int
    uploaded: str | None = None


def release_wheels(metadata_dir: str, package: str) -> tuple[list[str], dict[str, list[Wheel]]]:
    """The versions the snapshot knows (its first line's ``versions``) and each one's Linux CUDA wheels."""
    with open(os.path.join(metadata_dir, f"{package}.jsonl"), encoding="utf-8") as handle:
        head = json.loads(handle.readline())
        uploaded = {}
        for line in handle:
            record = json.loads(line)
            uploaded[record["version"]] = record.get("uploaded")
    versions = list(head.get("versions", []))
    wheels: dict[str, list[Wheel]] = {}
    with open(os.path.join(metadata_dir, f"{package}.wheels.jsonl"), encoding="utf-8") as handle:
        handle.readline()
        for line in handle:
            record = json.loads(line)
            for w in record.get("wheels", []):
                if platform_of(w["file"]) is not None:
                    wheels.setdefault(record["version"], []).append(
                        Wheel(record["version"], w["file"], w["url"], w["sha256"], w["size"],
                              uploaded.get(record["version"])))
    return versions, wheels


def source_of(package: str, wheel: Wheel, measured: dict) -> dict:
    core = [lib["name"] for lib in measured["libraries"] if is_core(lib["name"])]
    title = (f"{package} {wheel.version}, wheel {wheel.file}: the CUDA fat binaries (.nv_fatbin) of "
             f"{', '.join(core) if core else 'its .so members'}")
    return artifact_source(package, PROJECTS.get(package, package), title, wheel)


def artifact_source(package: str, project: str, title: str, wheel: Any) -> dict:
    """The [[source]] of a fact read in one wheel (anything with version, file, url, sha256 and uploaded)."""
    source = {
        "id": f"{package}@{wheel.version}:{wheel.file}",
        "project": project,
        "title": title,
        "kind": "artifact",
        "url": wheel.url,
        "ref": wheel.version,
        "path": wheel.file,
        "sha256": wheel.sha256,
    }
    if wheel.uploaded:
        source["date"] = wheel.uploaded
    return source


def _carried(lib: dict) -> str:
    """What one library carries: its SASS and PTX architectures, and how many of its fat binaries carry each.

    >>> _carried({"sass": ["8.0", "9.0a"], "ptx": [], "containers": 4, "coverage": {"sass 8.0": 4, "sass 9.0a": 1}})
    'SASS 8.0, 9.0a (9.0a in 1 of its 4 fat binaries, the others in each)'
    """
    text = f"SASS {', '.join(lib['sass']) or 'none'}"
    if lib["ptx"]:
        text += f", PTX {', '.join(lib['ptx'])}"
    total = lib.get("containers", 0)
    coverage = lib.get("coverage", {})
    partial = [f"{key.split(' ', 1)[1]}{' PTX' if key.startswith('ptx') else ''} in {n}"
               for key, n in coverage.items() if n < total]
    if partial:
        text += f" ({'; '.join(partial)} of its {total} fat binaries, the others in each)"
    elif total:
        text += f" (each in all {total} of its fat binaries)"
    return text


def _grouped(libraries: list[dict]) -> str:
    """Libraries that carry the same, said once: "a.so and b.so: SASS 8.0 (each in all 3 of its fat binaries)"."""
    groups: dict[str, list[str]] = {}
    for lib in libraries:
        groups.setdefault(_carried(lib), []).append(lib["name"])
    return "; ".join(f"{' and '.join(names) if len(names) < 3 else ', '.join(names)}: {text}"
                     for text, names in groups.items())


# packages whose core library holds kernels for many features, each built for its own architectures (vLLM's
# _C: the FP8 and FP4 GEMMs for sm_89+ or sm_100a alone): the build's list is the one most of its fat binaries
# carry (the list the general kernels are built for), not the union, which a GPU can be in and still lack
# kernels for nearly every op (PTX 5.2 in one fat binary of 47)
BY_MOST_KERNELS = {"vllm"}


def most_kernels(core: list[dict]) -> tuple[list[tuple[str, str]], int, int] | None:
    """The set of entries most fat binaries of the core libraries carry, among the sets for more than one
    architecture (an architecture-specific kernel, sm_90a alone, is not a list), how many carry it, and of how many.

    >>> most_kernels([{"combos": {"sass 9.0a": 17, "sass 7.0 sass 8.0 ptx 8.0": 30, "sass 8.0 sass 8.9": 2}}])
    ([('sass', '7.0'), ('sass', '8.0'), ('ptx', '8.0')], 30, 49)
    """
    counted: Counter[str] = Counter()
    for lib in core:
        counted.update(lib.get("combos", {}))
    total = sum(counted.values())
    lists = [(combo, n) for combo, n in counted.items() if len({e.split()[1].rstrip("af") for e in _pairs(combo)}) > 1]
    if not lists:
        return None
    combo, n = max(lists, key=lambda kv: (kv[1], kv[0]))
    return [tuple(e.split()) for e in _pairs(combo)], n, total  # type: ignore[misc]


def _pairs(combo: str) -> list[str]:
    words = combo.split()
    return [f"{words[i]} {words[i + 1]}" for i in range(0, len(words), 2)]


def build_of(package: str, wheel: Wheel, measured: dict, source_id: str) -> tuple[dict | None, str | None]:
    """One [[build]] of the wheel's measurement, or None and why not."""
    libraries = measured["libraries"]
    core = [lib for lib in libraries if is_core(lib["name"])]
    if not core:
        return None, "no common_ops library in the wheel"
    sass: set[str] = set()
    ptx: set[str] = set()
    general = None
    if package in BY_MOST_KERNELS:
        general = most_kernels(core)
        if general is None:
            return None, "its core libraries carry no fat binary with a kernel for more than one architecture"
        sass = {a for kind, a in general[0] if kind == "sass"}
        ptx = {a for kind, a in general[0] if kind == "ptx"}
    else:
        for lib in core:
            sass.update(lib["sass"])
            ptx.update(lib["ptx"])
    if not sass and not ptx:
        return None, "its common_ops libraries carry no fat binary"
    if any(a.endswith("?") for a in sass):
        return None, f"a cubin of its core libraries is compressed: its variant (sm_X or sm_Xa) is not read ({sorted(sass)})"
    cuda, cuda_basis = cuda_of(wheel.file, measured.get("requires_dist", []), libraries)
    if cuda is None:
        return None, cuda_basis
    _name, version, _b, _t = parse_wheel_filename(wheel.file)
    label = version.local
    platform = platform_of(wheel.file)
    build = {
        "id": f"{package}.derived.{wheel.version}.{'pypi' if not label else label}.{platform}",
        "releases": f"=={wheel.version}",
        "index": "pypi",
    }
    if label:
        build["label"] = label
    build["accelerator"] = "cuda"
    build["cuda"] = cuda
    build["platforms"] = [platform]
    build["archs"] = sorted(sass, key=_arch_key)
    top_ptx = _max_arch(a for a in ptx if not a.endswith("a"))  # PTX for sm_90a-style targets is JIT-compiled there alone
    if top_ptx:
        build["ptx"] = top_ptx
    build["source"] = source_id
    others = _grouped([lib for lib in libraries if not is_core(lib["name"]) and (lib["sass"] or lib["ptx"])])
    if general is not None:
        entries, carried, total = general
        every_sass = sorted({a for lib in core for a in lib["sass"]}, key=_arch_key)
        every_ptx = sorted({a for lib in core for a in lib["ptx"]}, key=_arch_key)
        note = (f"archs: the list {carried} of the {total} fat binaries of {', '.join(lib['name'] for lib in core)} "
                f"carry, the most of any ({' '.join(k + ' ' + a for k, a in entries)}); all of them together: SASS "
                f"{', '.join(every_sass)}{'; PTX ' + ', '.join(every_ptx) if every_ptx else ''}; CUDA {cuda} from "
                f"{cuda_basis}")
    else:
        note = f"archs: the SASS of the core op libraries ({_grouped(core)}); CUDA {cuda} from {cuda_basis}"
    majors = {m for lib in core for m in lib.get("cudart", [])}
    if majors and majors != {cuda.split(".")[0]}:
        note += f" (they link libcudart.so.{', '.join(sorted(majors))})"
    if others:
        note += f". Other libraries, for some ops only: {others}"
    build["note"] = note
    return build, None


# -- the TOML --------------------------------------------------------------------------------------


def render(package: str, sources: list[dict], builds: list[dict], comments: list[str],
           header: str = HEADER, tool: str = TOOL) -> str:
    """A derived file's text: the script's header, the comments, then the sources and the builds (written
    by tomli_w; a source's date is a TOML date)."""
    data: dict = {"schema": 1, "package": package, "tool": tool}
    if sources:
        data["source"] = [{**s, "date": _dt.date.fromisoformat(s["date"])} if isinstance(s.get("date"), str) else s
                          for s in sources]
    if builds:
        data["build"] = builds
    return header + "".join(f"# {line}\n" for line in comments) + tomli_w.dumps(data)


def installed_wheels(wheels: list[Wheel]) -> list[Wheel]:
    """The wheels an installer takes: of those that differ only in their build tag (a re-upload,
    ``vllm-0.20.1-1-cp38-...``), the one with the highest tag.

    >>> w = [Wheel("1", f, "", "", 0) for f in ("k-1-cp38-abi3-linux_x86_64.whl", "k-1-2-cp38-abi3-linux_x86_64.whl")]
    >>> [x.file for x in installed_wheels(w)]
    ['k-1-2-cp38-abi3-linux_x86_64.whl']
    """
    best: dict[tuple, Wheel] = {}
    for wheel in wheels:
        _name, _version, build, tags = parse_wheel_filename(wheel.file)
        key = tuple(sorted(str(t) for t in tags))
        if key not in best or build > parse_wheel_filename(best[key].file)[2]:
            best[key] = wheel
    return list(best.values())


def derive(package: str, measurements: dict[str, dict], versions: list[str],
           wheels: dict[str, list[Wheel]]) -> tuple[str, list[str]]:
    """The derived file's text from the measurements (by wheel file name), and what was left out and why."""
    sources, builds, skipped = [], [], []
    covered, unread, no_wheels = [], [], []
    for version in sorted(versions, key=Version):
        if not wheels.get(version):
            no_wheels.append(version)
            continue
        read_all = True
        made: dict[str, list[tuple[dict, dict]]] = {}  # build ID -> (build, source) of each wheel that makes it
        for wheel in sorted(installed_wheels(wheels[version]), key=lambda w: w.file):
            measured = measurements.get(wheel.file)
            if measured is None or measured.get("sha256") != wheel.sha256:
                read_all = False
                continue
            source = source_of(package, wheel, measured)
            build, why = build_of(package, wheel, measured, source["id"])
            if build is None:
                skipped.append(f"{wheel.file}: {why}")
                continue
            made.setdefault(build["id"], []).append((build, source))
        for build_id, found in made.items():
            # one wheel per Python (cp310, cp311...) of one platform: one build, citing each wheel; they must agree
            facts = {k: found[0][0].get(k) for k in ("accelerator", "cuda", "platforms", "archs", "ptx")}
            differing = [s["path"] for b, s in found if {k: b.get(k) for k in facts} != facts]
            if differing:
                skipped.append(f"{build_id}: {', '.join(differing)} differ from {found[0][1]['path']}")
                continue
            build = dict(found[0][0])
            if len(found) > 1:  # the first wheel is cited; the others, read alike, are named in the note
                build["note"] = f"{build['note']}; read alike in {', '.join(s['path'] for _, s in found[1:])}"
            sources.append(found[0][1])
            builds.append(build)
        (covered if read_all else unread).append(version)
    sources.sort(key=lambda s: s["id"])
    builds.sort(key=lambda b: (Version(b["releases"][2:]), b["id"]))
    comments = [f"Releases whose every Linux wheel was read: {', '.join(covered) or 'none'}."]
    if unread:
        comments.append(f"Releases whose wheels were not (all) read yet (no facts for the unread ones): {', '.join(unread)}.")
    if no_wheels:
        comments.append(f"Releases the snapshot names without a record of their wheels (not read): {', '.join(no_wheels)}.")
    comments.extend(f"Not written: {line}" for line in skipped)
    return render(package, sources, builds, comments), skipped


def load_measurements(path: str | None) -> dict[str, dict]:
    found: dict[str, dict] = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    record = json.loads(line)
                    found[record["file"]] = record
    return found


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("package", choices=sorted(PROJECTS))
    parser.add_argument("--versions", nargs="*", help="only these releases (default: every release the snapshot knows)")
    parser.add_argument("--metadata", default=os.path.join(here, "data", "metadata"))
    parser.add_argument("--out", help="default data/derived/<package>.toml")
    parser.add_argument("--measurements", help="a JSON-lines file outside the repository that keeps what was read")
    parser.add_argument("--budget-minutes", type=float, default=60.0, help="stop reading new wheels after this long")
    parser.add_argument("--no-read", action="store_true", help="write the file from the measurements alone")
    args = parser.parse_args(argv)
    out = args.out or os.path.join(here, "data", "derived", f"{OUTPUT_STEMS.get(args.package, args.package)}.toml")
    versions, wheels = release_wheels(args.metadata, args.package)
    wanted = [v for v in versions if not args.versions or v in args.versions]
    measurements = load_measurements(args.measurements)
    started = time.monotonic()

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    # newest uploads first: the releases from 2025 on before the older ones
    order = sorted((w for v in wanted for w in wheels.get(v, [])),
                   key=lambda w: (w.uploaded or "", Version(w.version), w.file), reverse=True)
    for wheel in order if not args.no_read else []:
        if wheel.file in measurements and measurements[wheel.file].get("sha256") == wheel.sha256:
            continue
        if time.monotonic() - started > args.budget_minutes * 60:
            log(f"time budget spent: {wheel.file} and older not read")
            break
        log(f"{wheel.file} ({wheel.size / 1e6:.0f} MB)")
        try:
            measured = read_wheel(wheel.url, wheel.size, log, core_only=args.package in CORE_ONLY)
        except (OSError, ZipError) as error:
            log(f"  not read: {error}")
            continue
        measured.update(file=wheel.file, sha256=wheel.sha256, version=wheel.version)
        measurements[wheel.file] = measured
        if args.measurements:
            with open(args.measurements, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(measured, sort_keys=True) + "\n")
    text, skipped = derive(args.package, measurements, wanted, wheels)
    with open(out, "w", encoding="utf-8") as handle:
        handle.write(text)
    for line in skipped:
        log(f"not written: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
