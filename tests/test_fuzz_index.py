"""Fuzzing what a package index sends: whatever a project page (PEP 691
JSON, or a PEP 503 HTML page where JSON was asked for), a METADATA or
PKG-INFO file, a wheel, an sdist or a reply's status and headers hold, the
only outcomes of `db sync` are a result or a `CompatError`
(`PackageIndexError`: exit 2, one line); never another exception, a hang, a
write outside the staged database, or a partial write (docs/reliability.md,
"Fuzzing").

The index lives in memory (tests/index_server.py, `MemoryIndex`), spoken to
through the client's opener, so that thousands of indexes cost seconds; a
bounded few replies whose status line and headers are mutated bytes go
through http.client on 127.0.0.1. COMPAT_FUZZ_INPUTS sets the number of
mutated indexes (default 1,000; it sets the stack fuzzer's count too); the
seed is fixed, so a failure repeats.
"""

from __future__ import annotations

import copy
import datetime
import functools
import hashlib
import json
import os
import random
import shutil
import sys
import tarfile
import time
import warnings
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from compat.errors import CompatError
from compat.knowledge import index as index_module
from compat.knowledge.index import IndexClient, Page, ReleaseMetadata
from compat.knowledge.graph import read_graph
from compat.knowledge.snapshot import read_snapshot
from compat.knowledge.sync import SyncPlan, SyncResult, _releases, sync

from .index_server import (HostileIndex, MemoryIndex, Reply, _sdist, deflate, entry, memory_file, metadata, raw_zip,
                           tar_gz, wheel, zip_archive)

INPUTS = int(os.environ.get("COMPAT_FUZZ_INPUTS", "1000"))  # mutated indexes
FULL_SYNC_EVERY = 20  # one input in this many is synced whole, into a database on disk; the others read by the client
SOCKET_INPUTS = max(20, INPUTS // 50)  # raw replies through http.client on 127.0.0.1
SEED = 20261204
SLOW_INPUT = 5.0  # seconds: an input that takes longer is a hang
SETTINGS = settings(deadline=None, derandomize=True, max_examples=50, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

PROJECT = "alpha"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def one_line_error(exc: CompatError) -> None:
    text = f"compat: error: {exc}"
    assert text.splitlines() == [text] and len(text) < 5000, text[:300]


def outcome(run):
    """Run; return the result, or the CompatError; any other exception fails the test."""
    try:
        return run()
    except CompatError as exc:
        one_line_error(exc)
        return exc


# -- what is stored parses --------------------------------------------------------------


def assert_stored_fields_parse(meta: ReleaseMetadata) -> None:
    """Nothing that does not parse is ever kept: Requires-Python and every
    Requires-Dist line of a release parse, and a refused release keeps none."""
    assert isinstance(meta, ReleaseMetadata)
    if meta.requires_python is not None:
        SpecifierSet(meta.requires_python)
    for line in meta.requires_dist:
        Requirement(line)
    if meta.refused is not None:
        assert not meta.known and not meta.requires_dist and meta.requires_python is None
        assert "\n" not in meta.refused


# -- writes -------------------------------------------------------------------------------
#
# An audit hook sees every file the process opens for writing, creates,
# renames, links or removes; while a `Writes` is recording, each such path
# must lie under one of its roots.

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
# event -> (how many of its first arguments are paths, the index of its dir_fd argument or None)
_PATH_EVENTS = {"os.mkdir": (1, 2), "os.remove": (1, 1), "os.rmdir": (1, 1), "os.rename": (2, 2), "os.link": (2, 2),
                "os.symlink": (2, 2), "os.truncate": (1, None), "os.chmod": (1, 2), "shutil.copyfile": (2, None),
                "shutil.rmtree": (1, None), "tempfile.mkstemp": (1, None), "tempfile.mkdtemp": (1, None)}


class Writes:
    active: Writes | None = None
    hooked = False

    def __init__(self) -> None:
        self.paths: list[tuple[str, str]] = []
        if not Writes.hooked:
            sys.addaudithook(_audit)
            Writes.hooked = True

    def __enter__(self) -> Writes:
        self.paths.clear()
        Writes.active = self
        return self

    def __exit__(self, *exc: object) -> None:
        Writes.active = None

    def outside(self, *roots: Path) -> list[tuple[str, str]]:
        allowed = tuple(os.path.realpath(r) + os.sep for r in roots)
        return [(event, path) for event, path in self.paths if not (os.path.realpath(path) + os.sep).startswith(allowed)]


def _audit(event: str, args: tuple) -> None:
    recorder = Writes.active
    if recorder is None:
        return
    if event == "open":
        path, _, flags = args
        if isinstance(flags, int) and flags & _WRITE_FLAGS and isinstance(path, (str, bytes)):
            recorder.paths.append((event, os.fsdecode(path)))
    elif event in _PATH_EVENTS:
        count, dir_fd = _PATH_EVENTS[event]
        relative = dir_fd is not None and len(args) > dir_fd and args[dir_fd] not in (None, -1)
        for path in args[:count]:
            # a path relative to a folder's descriptor is inside a tree whose root was recorded (shutil.rmtree)
            if isinstance(path, (str, bytes, os.PathLike)) and not (relative and not os.path.isabs(path)):
                recorder.paths.append((event, os.fsdecode(path)))


def state(root: Path) -> dict[str, bytes]:
    """Every file under `root` with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# -- the index before mutation ------------------------------------------------------------

# (filename, kind, METADATA lines beyond Name and Version, upload time, yanked)
FILES = [
    ("alpha-1.0-py3-none-any.whl", "wheel", ["Requires-Python: >=3.9", "Requires-Dist: beta>=0.5"], "2025-06-01", False),
    ("alpha-2.0-py3-none-any.whl", "metadata-file",
     ["Requires-Python: >=3.10", "Requires-Dist: beta<2", 'Requires-Dist: gamma; extra == "x"'], "2026-02-01", False),
    ("alpha-2.0-1-cp312-cp312-manylinux_2_28_x86_64.whl", "wheel", ["Requires-Dist: beta<2"], "2026-02-01", False),
    ("alpha-2.1.tar.gz", "sdist", ["Metadata-Version: 2.2", "Requires-Dist: beta"], "2026-03-01", False),
    ("alpha-2.2.zip", "sdist", ["Metadata-Version: 2.4", "Requires-Python: >=3.11"], "2026-03-02", False),
    ("alpha-3.0rc1-py3-none-any.whl", "wheel", ["Requires-Dist: beta>=1.0"], "2026-04-01", True),
    ("alpha-0.5-py2.7.egg", "other", [], "2024-01-01", False),
    ("beta-1.0-py3-none-any.whl", "wheel", [], "2026-02-01", False),  # another project's file on alpha's page
]
BETA = "beta-1.0-py3-none-any.whl"


def base_metadata(filename: str, lines: list[str]) -> bytes:
    project, version = filename.split("-")[:2]
    for suffix in (".tar.gz", ".zip"):
        version = version.removesuffix(suffix)
    head = [line for line in lines if line.startswith("Metadata-Version")]
    text = metadata(project, version, *[line for line in lines if not line.startswith("Metadata-Version")]).decode()
    if head:
        text = text.replace("Metadata-Version: 2.4", head[0], 1)
    return text.encode()


@functools.lru_cache(maxsize=64)
def archive(name: str, kind: str, meta: bytes) -> bytes:
    """The bytes of file `name` holding `meta` (remembered: most inputs leave most files as they were)."""
    if kind == "sdist":
        release = {"project": PROJECT, "version": name[len("alpha-"):].removesuffix(".tar.gz").removesuffix(".zip")}
        return _sdist(release, meta, "zip" if name.endswith(".zip") else "tar.gz")
    if kind == "other":
        return b"an egg"
    project, version = name.split("-")[:2]
    return wheel(project, version, meta)


class World:
    """One index, as a mutation leaves it: each file's metadata and bytes,
    the page's entries and bytes, and the twists put on replies."""

    def __init__(self) -> None:
        self.metadata = {name: base_metadata(name, lines) for name, kind, lines, _, _ in FILES if kind != "other"}
        self.bodies: dict[str, bytes] = {}
        self.entries: list[dict] = []
        self.page: bytes = b""
        self.page_type = JSON_TYPE
        self.stale_hashes = False
        self.ranges = True
        self.twists: list[tuple[str, object]] = []  # (path, function of a Reply giving the Reply served)

    def build_files(self) -> None:
        for name, kind, _, _, _ in FILES:
            self.bodies[name] = archive(name, kind, self.metadata.get(name, b""))

    def build_entries(self) -> None:
        for name, kind, _, uploaded, yanked in FILES:
            extra = {"core-metadata": {"sha256": hashlib.sha256(self.metadata[name]).hexdigest()}} if kind == "metadata-file" else {}
            data = entry(name, f"../../files/{name}", self.bodies[name], yanked=yanked, size=len(self.bodies[name]), **extra)
            data["upload-time"] = f"{uploaded}T10:00:00.000000Z"
            if self.stale_hashes:
                data["hashes"] = {"sha256": hashlib.sha256(name.encode()).hexdigest()}
            self.entries.append(data)

    def touched(self) -> frozenset[str] | None:
        """The files whose reading differs from the unmutated index's (BASE);
        None when the mutations reach every file (the page, ranges, hashes)."""
        names = [e.get("filename") if isinstance(e, dict) else None for e in self.entries]
        if (self.stale_hashes or not self.ranges or names != [e["filename"] for e in BASE.entries]
                or any(path == "/simple/alpha/" for path, _ in self.twists)):
            return None
        touched = {name for name, meta in self.metadata.items() if meta != BASE.metadata[name]}
        touched |= {name for name, body in self.bodies.items() if body != BASE.bodies[name]}
        touched |= {e["filename"] for e, base in zip(self.entries, BASE.entries) if e != base}
        touched |= {path.rsplit("/", 1)[-1].removesuffix(".metadata") for path, _ in self.twists}
        return frozenset(touched)

    def serve(self) -> MemoryIndex:
        served = MemoryIndex()
        for name, body in self.bodies.items():
            served.routes[f"/files/{name}"] = memory_file(body, self.ranges)
        for name, kind, _, _, _ in FILES:
            if kind == "metadata-file":
                served.routes[f"/files/{name}.metadata"] = memory_file(self.metadata[name])
        page, kind = self.page, self.page_type
        served.routes["/simple/alpha/"] = lambda method, headers: Reply(200, [("Content-Type", kind), ("Content-Length", str(len(page)))], page)
        beta_wheel = archive(BETA, "wheel", base_metadata(BETA, []))
        served.routes[f"/files/{BETA}"] = memory_file(beta_wheel)
        beta_page = json.dumps({"name": "beta", "files": [entry(BETA, f"../../files/{BETA}", beta_wheel)]}).encode()
        served.routes["/simple/beta/"] = lambda method, headers: Reply(200, [("Content-Type", JSON_TYPE)], beta_page)
        for path, twist in self.twists:
            inner = served.routes.get(path, lambda method, headers: Reply(404, [], b"not found"))
            served.routes[path] = lambda method, headers, inner=inner, twist=twist: twist(inner(method, headers), method, headers)
        return served


# -- mutations ----------------------------------------------------------------------------
#
# Five stages, in the order an index is built: the metadata, the archives
# holding it, the page's entries (hashed from the archives), the page's bytes,
# and the replies. An input picks one to three mutations of any stage.

NAMES = ["beta", "ALPHA", "Alpha_", "al pha", "", "alpha\x00", "../alpha", "a" * 300, "alpha.", "ａｌｐｈａ"]
VERSIONS = ["2.0.0", "9.9", "", "v1.0", "1.0+local", "٢.٠", "1" * 5000, "2.0.dev-1", "1.0\t", "1.0.post1.dev2"]
REQUIRES_PYTHON = ["3.10", ">=3.10,", ">=3.99", "", ">=3.١٠", "~=3", "=== 3.10", ">=3.10; os_name == 'nt'", ">" * 3000]
REQUIRES_DIST = ["torch>>2", "", "beta @ file:///etc/passwd", "beta @ https://evil.test/beta.whl", "beta[", "beta; extra ==",
                 "beta (>=1)", "Beta.Thing[a,b]>=1; python_version < '3.9' or extra == 'x'", "x" * 10000, "alpha[x]",
                 "gamma; extra == 'x'", 'beta>=0.5; platform_system == "Windows" and extra == "gpu"', "../../etc",
                 "beta>=1" + ",<2" * 500, "beta; (" * 200]
HEADER_LINES = ["Metadata-Version: 9.9", "Metadata-Version: 2.1", "Dynamic: Requires-Dist", "Dynamic: Name", "Dynamic: x",
                "Description-Content-Type: text/x", " continued", "Requires-Dist:", "Name:", "Version:", ": x", "no colon",
                "Requires-Dist: beta\n gamma", "Provides-Extra: x", "Requires-External: c", "Version: 2.0\x00"]
NASTY_BYTES = [b"\xff", b"\x00", b"\r", b"\n\n", b":", b"\xc3", b"\xef\xbb\xbf", b"\n ", b"\\", b"\x85", "\u2028".encode()]


def _pick_metadata(world: World, rng: random.Random) -> str:
    return rng.choice(sorted(world.metadata))


def _field(name: str, pool: list[str]):
    def mutate(world: World, rng: random.Random) -> None:
        file = _pick_metadata(world, rng)
        lines = world.metadata[file].decode("utf-8", "surrogateescape").split("\n")
        value = rng.choice(pool)
        at = [i for i, line in enumerate(lines) if line.startswith(f"{name}:")]
        if at and rng.random() < 0.6:
            lines[rng.choice(at)] = f"{name}: {value}"
        else:
            lines.insert(rng.randrange(1, max(2, len(lines) - 2)), f"{name}: {value}")
        world.metadata[file] = "\n".join(lines).encode("utf-8", "surrogateescape")

    mutate.__name__ = f"field {name}"
    return mutate


def _metadata_lines(world: World, rng: random.Random) -> None:
    file = _pick_metadata(world, rng)
    lines = world.metadata[file].split(b"\n")
    at = rng.randrange(len(lines))
    choice = rng.randrange(4)
    if choice == 0:
        del lines[at]
    elif choice == 1:
        lines.insert(at, lines[rng.randrange(len(lines))])
    elif choice == 2:
        lines.insert(at, rng.choice(HEADER_LINES).encode())
    else:
        rng.shuffle(lines)
    world.metadata[file] = b"\n".join(lines)


def _metadata_bytes(world: World, rng: random.Random) -> None:
    file = _pick_metadata(world, rng)
    world.metadata[file] = _bytes(world.metadata[file], rng)


def _metadata_encoding(world: World, rng: random.Random) -> None:
    file = _pick_metadata(world, rng)
    text = world.metadata[file].decode("utf-8", "replace")
    world.metadata[file] = text.encode(rng.choice(["utf-16", "utf-8-sig", "latin-1"]), "replace")


def _bytes(data: bytes, rng: random.Random, tokens: list[bytes] = NASTY_BYTES) -> bytes:
    """One of: a bit flip, a cut, a nasty token inserted, a span deleted or repeated, a huge line."""
    data = data or b"x"
    at = rng.randrange(len(data))
    kind = rng.randrange(6)
    if kind == 0:
        raw = bytearray(data)
        raw[at] ^= 1 << rng.randrange(8)
        return bytes(raw)
    if kind == 1:
        return data[:at]
    if kind == 2:
        return data[:at] + rng.choice(tokens) + data[at:]
    if kind == 3:
        return data[:at] + data[at + rng.randint(1, 64):]
    if kind == 4:
        return data[:at] + data[at: at + 64] * rng.choice([2, 100, 5000]) + data[at:]
    return data[:at] + b"x" * rng.choice([1000, 70000]) + data[at:]


def _archive(world: World, rng: random.Random) -> str:
    return rng.choice([name for name, kind, _, _, _ in FILES if kind != "other"])


def _archive_bytes(world: World, rng: random.Random) -> None:
    """Mutated bytes of a wheel or sdist, often near its end (a zip's central directory)."""
    name = _archive(world, rng)
    body = world.bodies[name]
    if body and rng.random() < 0.5:  # the tail: the end-of-central-directory record and the directory
        tail = rng.randint(1, min(400, len(body)))
        world.bodies[name] = body[:-tail] + _bytes(body[-tail:], rng)
    else:
        world.bodies[name] = _bytes(body, rng)


def _raw_wheel(world: World, rng: random.Random) -> None:
    """A wheel written by hand: METADATA members of any method, flags, size, name and data."""
    name = rng.choice([n for n, kind, _, _, _ in FILES if kind in ("wheel", "metadata-file")])
    project, version = name.split("-")[:2]
    good = metadata(project, version)
    members = []
    for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
        data = rng.choice([good, good[:20], b"\xff\xfe" * 10, b"", deflate(good), deflate(good)[:10], deflate(b"\0" * 100000)])
        member = {"name": rng.choice([f"{project}-{version}.dist-info/METADATA".encode(), f"{project}-{version}.dist-info/\xff".encode("latin-1"),
                                      b"METADATA", f"x/{project}-{version}.dist-info/METADATA".encode(), b"other-1.0.dist-info/METADATA",
                                      b"../" * 5 + b"METADATA"]),
                  "data": data, "method": rng.choice([0, 0, 8, 8, 12, 14, 99]), "flags": rng.choice([0, 0, 1, 0x800, 0x8])}
        if rng.random() < 0.4:
            member["size"] = rng.choice([0, 1, len(good), 100000, 2**31, 2**32 - 1])
        if rng.random() < 0.3:
            member["crc"] = rng.randrange(2**32)
        members.append(member)
    world.bodies[name] = raw_zip(members)


def _raw_sdist(world: World, rng: random.Random) -> None:
    """An sdist whose PKG-INFO is a link, a folder, missing, doubled, huge or misplaced, or whose gzip is cut."""
    name = rng.choice([n for n, kind, _, _, _ in FILES if kind == "sdist"])
    stem = name.removesuffix(".tar.gz").removesuffix(".zip")
    good = world.metadata[name]
    if name.endswith(".zip"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a name twice is the point
            world.bodies[name] = zip_archive([(rng.choice([f"{stem}/PKG-INFO", "other/PKG-INFO", "PKG-INFO", f"{stem}/x/PKG-INFO"]),
                                               rng.choice([good, b"\xff" * 10, b""])) for _ in range(rng.randint(0, 3))])
        return
    members: list = []
    for _ in range(rng.randint(0, 3)):
        path = rng.choice([f"{stem}/PKG-INFO", "other/PKG-INFO", "PKG-INFO", f"{stem}/PKG-INFO/"])
        kind = rng.choice([tarfile.REGTYPE, tarfile.REGTYPE, tarfile.SYMTYPE, tarfile.DIRTYPE, tarfile.LNKTYPE])
        if kind == tarfile.REGTYPE:
            members.append((path, rng.choice([good, b"\xff" * 10, b""])))
        else:
            info = tarfile.TarInfo(path)
            info.type = kind
            info.linkname = rng.choice(["/etc/passwd", "../../x", f"{stem}/setup.py"]) if kind != tarfile.DIRTYPE else ""
            members.append(info)
    body = tar_gz(members)
    world.bodies[name] = body[: rng.randint(0, len(body))] if rng.random() < 0.3 else body


def _swap_archives(world: World, rng: random.Random) -> None:
    first, second = rng.sample([n for n, kind, _, _, _ in FILES if kind != "other"], 2)
    world.bodies[first], world.bodies[second] = world.bodies[second], world.bodies[first]


def _stale_hashes(world: World, rng: random.Random) -> None:
    world.stale_hashes = True


def _no_ranges(world: World, rng: random.Random) -> None:
    world.ranges = False


VALUES = [None, 0, -1, 2**70, 1.5, True, False, "", " ", "x" * 3000, [], {}, [[[[[]]]]], {"sha256": 5}, "\x00", "\ud800",
          "2026-13-45T99:99:99Z", "2026-01-01", "0" * 64, "Z" * 64, "file:///etc/passwd", "https://evil.test/x.whl", "yes"]
FILENAMES = ["alpha-2.0.whl", "alpha-2.0-py3-none-any.whl", "../alpha-2.0-py3-none-any.whl", "alpha-2.0-py3-none-any.whl\x00",
             "ALPHA-2.0-py3-none-any.whl", "alpha-2.0-py3-none-any.WHL", "alpha_-2.0.tar.gz", "alpha-٢.٠.tar.gz",
             "alpha-2.0-x-py3-none-any.whl", "alpha-9.9-py3-none-any.whl", "evil-6.6-py3-none-any.whl", "alpha-2.0.tar.bz2",
             "alpha-1!2.0+local-py3-none-any.whl", "a" * 300 + ".whl", "alpha-2.0-py3-none-any.whl/..", "alpha-2.0.zip"]
URLS = ["file:///etc/passwd", "file:///dev/zero", "ftp://index.test/x.whl", "data:,Name: alpha", "https://evil.test/x.whl",
        "http://index.test/files/alpha-1.0-py3-none-any.whl", "//evil.test/files/x.whl", "https://user:pw@index.test/files/x",
        "https://index.test:99999/x", "https://index.test:0/x", "https://[::1]/x", "https://[::1/x", "", " ", "\x00",
        "../../../../etc/passwd", "../../files/alpha-2.0-py3-none-any.whl#frag", "https://INDEX.TEST./files/alpha-1.0-py3-none-any.whl",
        "javascript:alert(1)", "https://index.test/files/%2e%2e/x", "https://índex.test/x"]
KEYS = ["filename", "url", "hashes", "upload-time", "yanked", "size", "core-metadata", "dist-info-metadata", "requires-python"]


def _entry_value(world: World, rng: random.Random) -> None:
    objects = [e for e in world.entries if isinstance(e, dict)]
    if not objects:
        return
    data = rng.choice(objects)
    key = rng.choice(KEYS)
    if rng.random() < 0.2:
        data.pop(key, None)
    elif key == "filename":
        data[key] = rng.choice(FILENAMES + VALUES)
    elif key == "url":
        data[key] = rng.choice(URLS + VALUES)
    elif key in ("hashes", "core-metadata") and rng.random() < 0.5:
        data[key] = {rng.choice(["sha256", "md5", "SHA256", ""]): rng.choice(VALUES)}
    else:
        data[key] = rng.choice(VALUES)


def _entries(world: World, rng: random.Random) -> None:
    """Entries dropped, repeated, shuffled or added; the entries replaced by a value."""
    choice = rng.randrange(5)
    if choice == 0 and world.entries:
        world.entries.pop(rng.randrange(len(world.entries)))
    elif choice == 1 and world.entries:
        world.entries.append(copy.deepcopy(rng.choice(world.entries)))
    elif choice == 2:
        rng.shuffle(world.entries)
    elif choice == 3:
        world.entries.append(entry(rng.choice(FILENAMES), rng.choice(URLS)))
    else:
        world.entries.insert(rng.randrange(len(world.entries) + 1), rng.choice(VALUES))


TOKENS = [b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\u0000", b"\\ud800", b"NaN", b"1e999", b"-", b"null", b"\xff",
          b'"files": [], ', b'"name": "beta", ', b"\x00", b"\xef\xbb\xbf"]


def _page_bytes(world: World, rng: random.Random) -> None:
    world.page = _bytes(world.page, rng, TOKENS)


def _page_shape(world: World, rng: random.Random) -> None:
    """Another document: deep nesting, a list, another project's name, UTF-16, a PEP 503 HTML page, nothing."""
    choice = rng.randrange(7)
    if choice == 0:
        depth = rng.choice([50, 5000, 200000])
        world.page = b"[" * depth + b"]" * depth
    elif choice == 1:
        world.page = json.dumps(rng.choice(VALUES + [{"files": v} for v in VALUES])).encode()
    elif choice == 2:
        world.page = json.dumps({"name": rng.choice(NAMES), "files": world.entries}, ensure_ascii=False).encode("utf-8", "surrogatepass")
    elif choice == 3:
        world.page = world.page.decode("utf-8", "replace").encode("utf-16")
    elif choice == 4:
        links = "".join(f'<a href="{e.get("url")}" data-requires-python="&gt;=3.9">{e.get("filename")}</a><br/>'
                        for e in world.entries if isinstance(e, dict))
        world.page = f"<!DOCTYPE html><html><body><h1>Links for alpha</h1>{links}</body></html>".encode("utf-8", "replace")
        world.page_type = rng.choice(["text/html", "application/vnd.pypi.simple.v1+html", JSON_TYPE])
    elif choice == 5:
        world.page = b""
    else:
        world.page = json.dumps({"name": PROJECT, "files": world.entries, "meta": {"api-version": "99.0"}, "versions": VALUES[:5]}).encode()


STATUSES = [200, 201, 203, 204, 206, 300, 301, 304, 400, 401, 403, 404, 410, 416, 429, 500, 503, 999]
CONTENT_TYPES = ["text/html", "application/json", "application/vnd.pypi.simple.v1+html", f"{JSON_TYPE}; charset=latin-1", "",
                 "x" * 1000, "application/octet-stream"]
LENGTHS = ["abc", "-1", "", " 12 ", "1e3", "٣", str(2**64), "0", "+5", "0x10", "9" * 30, "1,2"]
RANGES = ["bytes 0-0/1", "bytes 5-14/10", "bytes */*", "bytes 0-99999999/100", "items 0-10/10", "bytes -1-5/10", "", "bytes 0-1/x"]


def _reply(world: World, rng: random.Random) -> None:
    """A twist on the replies of one path: the status, a header, the body."""
    path = rng.choice(["/simple/alpha/", "/simple/alpha/", "/files/alpha-1.0-py3-none-any.whl",
                       "/files/alpha-2.0-py3-none-any.whl.metadata", "/files/alpha-2.1.tar.gz",
                       "/files/alpha-2.0-1-cp312-cp312-manylinux_2_28_x86_64.whl", "/files/alpha-3.0rc1-py3-none-any.whl"])
    choice = rng.randrange(7)
    only = rng.choice(["HEAD", "GET", None])  # the HEAD of a range read, its GETs, or both
    rng = random.Random(rng.random())  # its own: the replies draw from it as requests come

    def twist(reply: Reply, method: str, headers: dict) -> Reply:
        if only is not None and method != only:
            return reply
        if choice == 0:
            return Reply(rng.choice(STATUSES), reply.headers, reply.body)
        if choice == 1:
            return Reply(reply.status, [h for h in reply.headers if h[0] != "Content-Type"] + [("Content-Type", rng.choice(CONTENT_TYPES))], reply.body)
        if choice == 2:
            kept = [h for h in reply.headers if h[0] != "Content-Length" or rng.random() < 0.3]
            return Reply(reply.status, kept + [("Content-Length", rng.choice(LENGTHS + [str(len(reply.body) + rng.choice([-1, 1, 1000]))]))], reply.body)
        if choice == 3:
            return Reply(reply.status, [h for h in reply.headers if h[0] != "Content-Range"] + [("Content-Range", rng.choice(RANGES))], reply.body)
        if choice == 4:
            return Reply(reply.status, [h for h in reply.headers if h[0] != "Accept-Ranges"] + [("Accept-Ranges", rng.choice(["none", "", "items"]))], reply.body)
        if choice == 5:  # a body that disagrees with its Content-Length
            body = rng.choice([b"", reply.body[: len(reply.body) // 2], reply.body + b"x" * rng.choice([1, 2000, 100000])])
            return Reply(reply.status, [h for h in reply.headers if h[0] != "Content-Length"], body)
        if "Range" in headers:  # a server that ignores Range, or answers another range
            return Reply(rng.choice([200, 206]), reply.headers, reply.body * rng.choice([1, 3]))
        return reply

    world.twists.append((path, twist))


MUTATIONS = {
    "metadata": [_field("Name", NAMES), _field("Version", VERSIONS), _field("Requires-Python", REQUIRES_PYTHON),
                 _field("Requires-Dist", REQUIRES_DIST), _metadata_lines, _metadata_bytes, _metadata_encoding],
    "archives": [_archive_bytes, _raw_wheel, _raw_sdist, _swap_archives, _no_ranges],
    "entries": [_entry_value, _entry_value, _entries, _stale_hashes],
    "page": [_page_bytes, _page_shape],
    "replies": [_reply, _reply],
}
STAGES = list(MUTATIONS)


class Mutated(NamedTuple):
    served: MemoryIndex
    made: list[str]  # the mutations, by stage and name
    touched: frozenset[str] | None  # the files whose reading they may change (None: any)


def mutated_index(rng: random.Random | None) -> Mutated:
    """A mutated index (`rng` None: the index as it is before mutation)."""
    world = World()
    picks: dict[str, list] = {stage: [] for stage in STAGES}
    if rng is not None:
        for stage in [rng.choice(STAGES) for _ in range(rng.randint(1, 3))]:
            picks[stage].append(rng.choice(MUTATIONS[stage]))

    def run(stage: str) -> None:
        for mutation in picks[stage]:
            mutation(world, rng)

    run("metadata")
    world.build_files()
    run("archives")
    world.stale_hashes = _stale_hashes in picks["entries"]
    world.build_entries()
    picks["entries"] = [m for m in picks["entries"] if m is not _stale_hashes]
    run("entries")
    world.page = json.dumps({"meta": {"api-version": "1.1"}, "name": PROJECT, "files": world.entries},
                            ensure_ascii=rng is None or rng.random() < 0.5).encode("utf-8", "surrogatepass")
    listed = world.page
    run("page")
    run("replies")
    made = [f"{stage}:{getattr(m, '__name__', m)}" for stage in STAGES for m in picks[stage]]
    return Mutated(world.serve(), made, None if world.page != listed else world.touched())


BASE = World()
BASE.build_files()
BASE.build_entries()


# -- the fuzzer --------------------------------------------------------------------------------


def client_of(served: MemoryIndex) -> IndexClient:
    return IndexClient(served.url, retries=0, use_netrc=False, opener=served.opener)


def read_everything(mutated: Mutated, counts: dict[str, int]) -> None:
    """The client's path: the page, then each release the mutations may have changed."""
    client = client_of(mutated.served)
    page = outcome(lambda: client.page(PROJECT))
    if isinstance(page, CompatError):
        counts["page refused"] += 1
        return
    assert isinstance(page, Page)
    for version, files in sorted(_releases(page.files).items()):
        assert all(f.project == PROJECT and f.version == version for f in files)
        assert all(client._url_problem(f.url) is None for f in files)
        if mutated.touched is not None and not mutated.touched & {f.filename for f in files}:
            continue  # read as every input reads it: nothing new
        meta = outcome(lambda: client.release(files))
        if isinstance(meta, CompatError):
            counts["release failed"] += 1
            continue
        assert_stored_fields_parse(meta)
        counts["release refused" if meta.refused is not None else "release read"] += 1


BASE_PLAN = SyncPlan(packages=[PROJECT], since=datetime.date(2026, 1, 1), tracked=frozenset([PROJECT]))


@pytest.fixture(scope="module")
def base_snapshot(tmp_path_factory) -> dict[str, bytes]:
    """The metadata folder an unmutated index syncs to: where every whole sync starts."""
    folder = tmp_path_factory.mktemp("base") / "metadata"
    folder.mkdir()
    result = sync(BASE_PLAN, str(folder), client_of(mutated_index(None).served), workers=1)
    assert result.written == ["alpha", "beta"] and result.releases >= 5
    return state(folder)


def sync_whole(served: MemoryIndex, folder: Path, base: dict[str, bytes], writes: Writes, spool: Path) -> str:
    """Sync into `folder` (holding the base snapshots): a result whose files
    are whole and parse, or an error that left the folder byte for byte."""
    folder.mkdir()
    for name, data in base.items():
        (folder / name).write_bytes(data)
    cache = Path(os.environ["COMPAT_CACHE"])  # the sync's journal, which the next sync resumes from
    with writes:
        result = outcome(lambda: sync(BASE_PLAN, str(folder), client_of(served), workers=1))
    assert not writes.outside(folder, spool, cache), writes.outside(folder, spool, cache)[:5]
    assert not [p for p in os.listdir(folder) if p.startswith(".")]  # no staging folder left
    if isinstance(result, CompatError):
        assert state(folder) == base
        return "error"
    assert isinstance(result, SyncResult)
    assert read_graph(str(folder)) is not None
    for name in os.listdir(folder):  # every file whole, and read back by the database's own reader
        if name.endswith(".jsonl") and not name.endswith(".wheels.jsonl"):
            for release in read_snapshot(str(folder / name)).releases:
                if release.requires_python is not None:
                    SpecifierSet(release.requires_python)
                for line in release.requires_dist:
                    Requirement(line)
    return "refused" if result.refused else "written"


def test_mutated_indexes_never_crash(base_snapshot, tmp_path, monkeypatch):
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(spool))  # where a wheel read whole is spooled
    # durability is test_hostile_index's to test; here an fsync would only cost time
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    writes = Writes()
    rng = random.Random(SEED)
    counts = dict.fromkeys(["page refused", "release read", "release refused", "release failed",
                            "sync error", "sync written", "sync refused"], 0)
    started, cpu = time.perf_counter(), time.process_time()
    slowest, replies = 0.0, 0
    for i in range(INPUTS):
        mutated = mutated_index(rng)
        made = mutated.made
        began = time.perf_counter()
        try:
            if i % FULL_SYNC_EVERY == 0:
                counts["sync " + sync_whole(mutated.served, tmp_path / "db", base_snapshot, writes, spool)] += 1
                shutil.rmtree(tmp_path / "db")
            else:
                with writes:
                    read_everything(mutated, counts)
                assert not writes.outside(spool), writes.outside(spool)[:5]
                replies += len(mutated.served.requests)  # (a failing sync's count depends on its threads' timing)
        except AssertionError as exc:
            raise AssertionError(f"input {i} ({', '.join(made)}): {exc}") from None
        assert not os.listdir(spool), f"input {i} ({', '.join(made)}) left {os.listdir(spool)}"
        slowest = max(slowest, time.perf_counter() - began)
        assert slowest < SLOW_INPUT, f"input {i} ({', '.join(made)}) took {slowest:.1f} s"
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"\n{INPUTS} mutated indexes ({replies} replies read by the client alone) in {elapsed:.1f} s, {cpu:.1f} s CPU "
          f"(slowest {slowest * 1000:.0f} ms): {counts}")
    assert all(n for outcome, n in counts.items() if outcome != "sync refused"), counts  # every outcome reached
    # (a listing that drops releases, "sync refused", is rarer: test_hostile_index makes one)


# -- through http.client, on 127.0.0.1 ---------------------------------------------------------

HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: " + JSON_TYPE.encode() + b"\r\nContent-Length: {length}\r\n"
        b"Transfer-Encoding: chunked\r\nX-Padding: x\r\n\r\n")


def _raw_reply(rng: random.Random) -> bytes:
    """A whole reply as bytes, its status line, headers or chunked framing mutated."""
    body = json.dumps({"name": PROJECT, "files": []}).encode()
    chunked = rng.random() < 0.5
    head = HEAD.replace(b"{length}", str(len(body)).encode())
    if not chunked:
        head = head.replace(b"Transfer-Encoding: chunked\r\n", b"")
    else:
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    tokens = [b"\r\n", b"\n", b"\r\n\r\n", b" ", b":", b"\x00", b"HTTP/0.9", b"x" * 70000, b"X-A: b\r\n" * 200, b"-", b"\xff"]
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.7:
            head = _bytes(head, rng, tokens)
        else:
            body = _bytes(body, rng, tokens)
    return head + body


def test_mutated_replies_through_http_client_never_crash():
    rng = random.Random(SEED)
    with HostileIndex() as served:
        for i in range(SOCKET_INPUTS):
            raw = _raw_reply(rng)
            served.routes["/simple/alpha/"] = lambda handler, raw=raw: handler.wfile.write(raw)
            client = IndexClient(served.url, retries=0, timeout=2.0, use_netrc=False)
            began = time.monotonic()
            result = outcome(lambda: client.page(PROJECT))
            assert isinstance(result, (Page, CompatError)), (i, raw[:200])
            assert time.monotonic() - began < 3.0, (i, raw[:200])


# -- properties (Hypothesis) -------------------------------------------------------------------

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20),
                    st.sampled_from(FILENAMES + URLS + VALUES[5:]))
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(KEYS + ["name", "files", "meta"]) | st.text(max_size=6), inner, max_size=4)),
    max_leaves=10,
)
ENTRIES = st.fixed_dictionaries(
    {"filename": st.sampled_from(FILENAMES) | st.text(max_size=30), "url": st.sampled_from(URLS) | st.text(max_size=30)},
    optional={key: SCALARS | st.dictionaries(st.sampled_from(["sha256", "md5"]), SCALARS, max_size=2) for key in KEYS[2:]},
)


def serve_page(body: bytes, content_type: str = JSON_TYPE) -> MemoryIndex:
    served = MemoryIndex()
    served.routes["/simple/alpha/"] = lambda method, headers: Reply(200, [("Content-Type", content_type)], body)
    return served


@SETTINGS
@given(st.one_of(JSON_VALUES, st.fixed_dictionaries({"files": st.lists(JSON_VALUES, max_size=4)}, optional={"name": JSON_VALUES})))
def test_any_json_page_is_a_page_or_an_index_error(page):
    served = serve_page(json.dumps(page).encode())
    outcome(lambda: client_of(served).page(PROJECT))


@SETTINGS
@given(st.lists(ENTRIES, max_size=3))
def test_every_file_kept_from_a_page_is_fetchable_and_alpha_s(entries):
    served = serve_page(json.dumps({"name": PROJECT, "files": entries}).encode())
    client = client_of(served)
    page = outcome(lambda: client.page(PROJECT))
    if isinstance(page, Page):
        for file in page.files:
            assert file.project == PROJECT and client._url_problem(file.url) is None
            assert file.sha256 is None or len(file.sha256) == 64
            assert file.size is None or file.size >= 0


METADATA_LINES = st.lists(
    st.tuples(st.sampled_from(["Name", "Version", "Requires-Python", "Requires-Dist", "Metadata-Version", "Dynamic", "Summary", "X"]),
              st.one_of(st.sampled_from(NAMES + VERSIONS + REQUIRES_PYTHON + REQUIRES_DIST), st.text(max_size=30))),
    max_size=8,
)


@SETTINGS
@given(METADATA_LINES, st.booleans())
def test_any_metadata_file_is_stored_only_when_it_parses(lines, named):
    head = ["Name: alpha", "Version: 2.0"] if named else []
    text = "\n".join(head + [f"{key}: {value}" for key, value in lines]) + "\n\nbody\n"
    name = "alpha-2.0-py3-none-any.whl"
    served = serve_page(json.dumps({"files": [entry(name, f"../../files/{name}", **{"core-metadata": True})]}).encode())
    served.routes[f"/files/{name}.metadata"] = memory_file(text.encode("utf-8", "surrogatepass"))
    client = client_of(served)
    meta = outcome(lambda: client.release(client.page(PROJECT).files))
    if isinstance(meta, ReleaseMetadata):
        assert_stored_fields_parse(meta)
        if meta.known:  # kept only when it names the project and version
            assert named or {"Name", "Version"} <= {key for key, _ in lines}


@SETTINGS
@given(st.text(max_size=24) | st.sampled_from(LENGTHS))
def test_any_content_length_is_a_number_or_refused(value):
    parsed = index_module._content_length_text(value)
    assert parsed is None or parsed is False or (isinstance(parsed, int) and parsed >= 0)
    served = serve_page(b'{"files": []}')
    inner = served.routes["/simple/alpha/"]
    served.routes["/simple/alpha/"] = lambda m, h: Reply(200, inner(m, h).headers + [("Content-Length", value)], b'{"files": []}')
    result = outcome(lambda: client_of(served).page(PROJECT))
    assert isinstance(result, (Page, CompatError))


# -- what the fuzzer found -----------------------------------------------------------------------


def one_release(meta: bytes, filename: str = "alpha-2.0-py3-none-any.whl", **fields) -> MemoryIndex:
    """An index whose alpha has one wheel, its METADATA served as a PEP 658 file."""
    served = serve_page(json.dumps({"files": [entry(filename, f"../../files/{filename}", **{"core-metadata": True}, **fields)]}).encode())
    served.routes[f"/files/{filename}.metadata"] = memory_file(meta)
    return served


@pytest.mark.parametrize(
    ("line", "reason"),
    [("Version: 2." + "0" * 5000, "Version '2.000"),
     ("Requires-Python: >=3." + "9" * 5000, "Requires-Python '>=3.999"),
     ("Requires-Dist: beta>=1." + "9" * 5000, "Requires-Dist 'beta>=1.999"),
     ("Requires-Dist: beta; python_version >= '3." + "9" * 5000 + "'", "Requires-Dist \"beta; python_version >= '3.999"),
     ("Requires-Dist: beta; python_version ~= '3'", "Requires-Dist \"beta; python_version ~= '3'\" cannot be evaluated")],
)
def test_versions_too_long_to_compare_refuse_the_release(line, reason):
    """packaging parses a version of 5,000 digits, then raises ValueError on
    comparing it: the release is refused (by the client, or by the snapshot
    reader's rules it applies), never stored."""
    lines = [line] if line.startswith("Requires") else []
    text = metadata("alpha", "2.0", *lines) if lines else metadata("alpha", "2.0").replace(b"Version: 2.0", line.encode())
    client = client_of(one_release(text))
    meta = client.release(client.page(PROJECT).files)
    assert meta.refused is not None and reason in meta.refused and len(meta.refused) < 400
    assert_stored_fields_parse(meta)


def test_a_file_name_with_a_version_too_long_is_ignored():
    name = "alpha-" + "9" * 5000 + "-py3-none-any.whl"
    page = client_of(serve_page(json.dumps({"files": [entry(name, f"../../files/{name}")]}).encode())).page(PROJECT)
    assert page.files == [] and "not a valid file name" in page.ignored[0] and len(page.ignored[0]) < 400


def test_a_url_that_is_not_one_is_a_one_line_error():
    served = serve_page(json.dumps({"files": [entry("alpha-2.0-py3-none-any.whl", "https://[::1/x")]}).encode())
    with pytest.raises(CompatError, match=r"url 'https://\[::1/x' is not a valid URL") as caught:
        client_of(served).page(PROJECT)
    one_line_error(caught.value)


def test_a_long_url_is_cut_in_messages():
    name = "alpha-2.0-py" + "x" * 70000 + "-none-any.whl"
    served = serve_page(json.dumps({"files": [entry(name, f"../../files/{name}", b"x")]}).encode())
    client = client_of(served)
    with pytest.raises(CompatError, match="not found on the index") as caught:
        client.release(client.page(PROJECT).files)
    assert len(str(caught.value)) < 600 and str(caught.value).endswith("-none-any.whl: not found on the index (HTTP 404)")


def test_a_wheel_without_hash_or_size_is_not_recorded_for_locks():
    """The snapshot reader refuses a wheel record without SHA-256 and size: the sync never writes one."""
    body = wheel("alpha", "2.0")
    whole = one_release(metadata("alpha", "2.0"), hashes={"sha256": hashlib.sha256(body).hexdigest()}, size=len(body))
    for served, records in ((whole, 1), (one_release(metadata("alpha", "2.0"), size=len(body)), 0),
                            (one_release(metadata("alpha", "2.0"), hashes={"sha256": "0" * 64}), 0)):
        client = client_of(served)
        assert len(client.release(client.page(PROJECT).files).wheels) == records


def test_an_upload_time_that_is_not_a_date_is_a_malformed_entry():
    name = "alpha-2.0-py3-none-any.whl"
    served = serve_page(json.dumps({"files": [entry(name, f"../../files/{name}", **{"upload-time": "2026-13-45T99:99:99Z"})]}).encode())
    with pytest.raises(CompatError, match="upload-time '2026-13-45T99:99:99Z' is not an ISO 8601 time"):
        client_of(served).page(PROJECT)


def test_a_snapshot_its_reader_refuses_is_never_written(tmp_path, monkeypatch):
    """The last guard: each snapshot is read back before anything is renamed into place."""
    monkeypatch.setattr(index_module, "_is_time", lambda value: True)  # as if the client let a bad date through
    served = mutated_index(None).served
    page = json.loads(served.routes["/simple/alpha/"]("GET", {}).body)
    page["files"][0]["upload-time"] = "2026-13-45T10:00:00Z"
    served.routes["/simple/alpha/"] = lambda method, headers: Reply(200, [("Content-Type", JSON_TYPE)], json.dumps(page).encode())
    folder = tmp_path / "metadata"
    folder.mkdir()
    (folder / "alpha.jsonl").write_text("old\n")
    with pytest.raises(CompatError, match=r"alpha: the index's data makes a snapshot its reader refuses \(alpha.jsonl:2: uploaded: ") as caught:
        sync(BASE_PLAN, str(folder), client_of(served), workers=1)
    one_line_error(caught.value)
    assert state(folder) == {"alpha.jsonl": b"old\n"}


def test_a_wheel_whose_tags_a_snapshot_cannot_hold_is_ignored():
    name = "alpha-2.0-py3-none-any+x.whl"  # packaging reads it
    page = client_of(serve_page(json.dumps({"files": [entry(name, f"../../files/{name}")]}).encode())).page(PROJECT)
    assert page.files == [] and page.ignored == [f"{name}: not a valid file name (its tags: expected a wheel tag such as "
                                                 "'cp312-cp312-manylinux_2_28_x86_64')"]
