"""A package index served on 127.0.0.1 from tests/index/, for `db sync` tests.

It speaks the PEP 691 JSON simple API, serves wheels and sdists with HEAD
and HTTP range requests, and PEP 658/714 metadata files where releases.toml
asks. A release is one py3-none-any wheel unless it lists its `wheel`s (a
tag, a build tag, their own requirements, a yank of their own), and has an
sdist (.tar.gz or .zip, with a PKG-INFO of the given Metadata-Version and
Dynamic fields) when it names one.
`mode` makes it misbehave: "error" (HTTP 500), "slow" (answers after the
client's timeout), "malformed" (bad JSON), "html" (a PEP 503 page),
"no-ranges" (ignores Range headers and answers with the whole file, as
some servers do).

`MemoryIndex` is the same kind of index held in memory and spoken to through
the client's `opener`, with no socket: what the fuzzer (tests/test_fuzz_index.py)
feeds thousands of replies through.
"""

from __future__ import annotations

import email.message
import gzip
import hashlib
import io
import json
import shutil
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from compat.knowledge.paths import default_data_dir

HERE = Path(__file__).resolve().parent / "index"


def sync_database(root: Path, packages: list[str], *catalog: str) -> Path:
    """An empty database at `root` whose sync.toml tracks `packages`, with the
    bundled `catalog` files (paths under data/) copied in."""
    (root / "constraints").mkdir(parents=True)
    (root / "metadata").mkdir()
    for name in catalog:
        shutil.copy(Path(default_data_dir()) / name, root / name)
    (root / "sync.toml").write_text(f"schema = 1\nsince = 2026-01-01\npackages = {json.dumps(packages)}\n")
    return root


def hostile_database(root: Path) -> Path:
    """A database tracking `alpha` alone, with what `db lint` wants beside
    it (the GPU catalog and its sources): the one the hostile-index tests sync."""
    return sync_database(root, ["alpha"], "gpus.toml", "constraints/_sources.toml")


def run_sync(db: Path, url: str, *extra: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    """`compat db sync` of `db` from the index at `url`, with no retries, as a CliRunner result."""
    from click.testing import CliRunner

    from compat.cli import cli

    return CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(db), "--index-url", url, "--retries", "0", *extra],
                              env=env)


def _dist(release: dict) -> str:
    """`<name>-<version>` as wheel and sdist filenames write it (PEP 427, PEP 625: no dash in the name)."""
    return f"{release['project'].replace('-', '_')}-{release['version']}"


def _metadata(release: dict, requires_dist: list[str] | None = None) -> bytes:
    """The release's core metadata; `requires_dist`, when given, replaces its own (one wheel that differs)."""
    lines = [f"Metadata-Version: {release.get('metadata_version', '2.4')}", f"Name: {release['project']}",
             f"Version: {release['version']}"]
    lines += [f"Dynamic: {name}" for name in release.get("dynamic", [])]
    if "requires_python" in release:
        lines.append(f"Requires-Python: {release['requires_python']}")
    own = release.get("requires_dist", []) if requires_dist is None else requires_dist
    lines += [f"Requires-Dist: {line}" for line in own]
    return ("\n".join(lines) + "\n\nA test package.\n").encode()


# Archives are the same bytes in every run (zip and gzip would stamp them
# with the clock): a page lists their hashes, and a fuzzer's input must not
# depend on the second it was built in.
ARCHIVE_TIME = (2026, 1, 1, 0, 0, 0)


def zip_archive(members: list[tuple[str, bytes | str]], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip of (name, data) members, in order, dated ARCHIVE_TIME."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, ARCHIVE_TIME)
            info.compress_type = compression
            archive.writestr(info, data)
    return buffer.getvalue()


def tar_gz(members: list[tarfile.TarInfo | tuple[str, bytes]]) -> bytes:
    """A .tar.gz of members, in order: (name, data) for a file, or a TarInfo
    as it is (a link, a folder); gzip's own time stamp is zero."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as compressed, tarfile.open(fileobj=compressed, mode="w") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
                continue
            name, data = member
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _wheel(release: dict, metadata: bytes, tag: str) -> bytes:
    dist = _dist(release)
    return zip_archive([(f"{release['project']}/__init__.py", "# padding\n" * 4000), (f"{dist}.dist-info/METADATA", metadata),
                        (f"{dist}.dist-info/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n"),
                        (f"{dist}.dist-info/RECORD", "")])


def _sdist(release: dict, metadata: bytes, kind: str) -> bytes:
    """An sdist whose one folder holds setup.py and PKG-INFO (after the
    release's `pyproject`, when it gives one)."""
    dist = _dist(release)
    members = [(f"{dist}/setup.py", b"# padding\n" * 4000), (f"{dist}/PKG-INFO", metadata)]
    if "pyproject" in release:
        members.insert(0, (f"{dist}/pyproject.toml", release["pyproject"].encode()))
    return zip_archive(members) if kind == "zip" else tar_gz(members)


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
        """Quiet when the client hung up (as the client must on a reply over a
        limit): the traceback would land in the output of the command under test."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _Served:
    """A server on a free port of 127.0.0.1, run in a thread while the `with` block lasts."""

    server: ThreadingHTTPServer
    thread: threading.Thread

    def _start_server(self, handler: type) -> None:
        self.server = _Server(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return self.server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/simple/"

    def __enter__(self):  # type: ignore[no-untyped-def]
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class LocalIndex(_Served):
    def __init__(self) -> None:
        data = tomllib.loads((HERE / "releases.toml").read_text())
        self.files: dict[str, bytes] = {}
        self.pages: dict[str, dict] = {}
        for release in data["release"]:
            dist = _dist(release)
            page = self.pages.setdefault(release["project"], {"meta": {"api-version": "1.1"}, "name": release["project"], "files": []})
            for wheel in release.get("wheel", [{"tag": "py3-none-any"}]):
                metadata = _metadata(release, wheel.get("requires_dist"))
                build = f"-{wheel['build']}" if "build" in wheel else ""
                name = f"{dist}{build}-{wheel['tag']}.whl"
                entry = self._serve(name, _wheel(release, metadata, wheel["tag"]), release, wheel.get("yanked", False))
                if release.get("metadata_file"):
                    self.files[name + ".metadata"] = metadata
                    entry["core-metadata"] = {"sha256": hashlib.sha256(metadata).hexdigest()}
                page["files"].append(entry)
            if "sdist" in release:
                name = f"{dist}.{release['sdist']}"
                sdist = _sdist(release, _metadata(release), release["sdist"])
                page["files"].append(self._serve(name, sdist, release, False))
        self.mode = "ok"
        self.delay = 0.0
        self.requests: list[tuple[str, str, str | None]] = []
        self._start_server(self._handler())

    def _serve(self, name: str, body: bytes, release: dict, yanked: bool) -> dict:
        """Serve `body` as file `name`, and return its entry on the project page."""
        self.files[name] = body
        return {
            "filename": name,
            "url": f"../../files/{name}",
            "hashes": {"sha256": hashlib.sha256(body).hexdigest()},
            "upload-time": release["uploaded"],
            "yanked": release.get("yanked", False) or yanked,
            "size": len(body),  # as PyPI gives it (PEP 700)
        }

    def _handler(self):  # type: ignore[no-untyped-def]
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._serve(head=True)

            def do_GET(self) -> None:
                self._serve(head=False)

            def _send(self, status: int, body: bytes, content_type: str, extra: dict | None = None, head: bool = False) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _serve(self, head: bool) -> None:
                index.requests.append((self.command, self.path, self.headers.get("Range")))
                if index.mode == "slow":
                    time.sleep(index.delay)
                if index.mode == "error":
                    return self._send(500, b"boom", "text/plain", head=head)
                parts = self.path.strip("/").split("/")
                if len(parts) == 2 and parts[0] == "simple":
                    page = index.pages.get(parts[1])
                    if page is None:
                        return self._send(404, b"no such project", "text/plain", head=head)
                    if index.mode == "malformed":
                        return self._send(200, b'{"files": [', "application/vnd.pypi.simple.v1+json", head=head)
                    if index.mode == "html":
                        return self._send(200, b"<html></html>", "text/html", head=head)
                    body = json.dumps(page).encode()
                    return self._send(200, body, "application/vnd.pypi.simple.v1+json", head=head)
                if len(parts) == 2 and parts[0] == "files" and parts[1] in index.files:
                    body = index.files[parts[1]]
                    wanted = self.headers.get("Range")
                    if wanted and index.mode != "no-ranges":
                        start, end = wanted.split("=")[1].split("-")
                        start, end = int(start), min(int(end), len(body) - 1)
                        chunk = body[start: end + 1]
                        return self._send(206, chunk, "application/octet-stream",
                                          {"Content-Range": f"bytes {start}-{end}/{len(body)}", "Accept-Ranges": "bytes"}, head)
                    ranges = {} if index.mode == "no-ranges" else {"Accept-Ranges": "bytes"}
                    return self._send(200, body, "application/octet-stream", ranges, head)
                return self._send(404, b"not found", "text/plain", head=head)

        return Handler


# -- hostile indexes ------------------------------------------------------------------
#
# `HostileIndex` answers each path with a function of the request handler, so
# that a test composes the index it needs: a page naming file:// URLs, a
# redirect to another host, a wheel whose METADATA is a zip bomb, a reply that
# trickles or never ends. The helpers below build the pages, wheels and raw
# zip archives those need.


def send(handler, status: int, body: bytes = b"", content_type: str = "application/octet-stream",
         headers: dict | None = None, length: bool = True) -> None:
    """One reply; `length=False` leaves out Content-Length (the body ends when the connection closes)."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    if length and not any(k.lower() == "content-length" for k in (headers or {})):
        handler.send_header("Content-Length", str(len(body)))
    for key, value in (headers or {}).items():
        handler.send_header(key, value)
    handler.end_headers()
    if handler.command != "HEAD":
        try:
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def serve_bytes(body: bytes, ranges: bool = True):
    """A route serving `body` as a file, with HEAD and range requests."""

    def route(handler) -> None:
        wanted = handler.headers.get("Range")
        if wanted and ranges:
            start, end = wanted.split("=")[1].split("-")
            start, end = int(start), min(int(end), len(body) - 1)
            return send(handler, 206, body[start: end + 1],
                        headers={"Content-Range": f"bytes {start}-{end}/{len(body)}", "Accept-Ranges": "bytes"})
        return send(handler, 200, body, headers={"Accept-Ranges": "bytes"} if ranges else {})

    return route


def page(project: str, files: list[dict]) -> bytes:
    return json.dumps({"meta": {"api-version": "1.1"}, "name": project, "files": files}).encode()


def metadata(project: str, version: str, *lines: str) -> bytes:
    """Core metadata naming `project` and `version`, with extra header lines (``Requires-Dist: x``)."""
    return ("\n".join(["Metadata-Version: 2.4", f"Name: {project}", f"Version: {version}", *lines]) + "\n\nA test package.\n").encode()


def wheel(project: str, version: str, meta: bytes | None = None) -> bytes:
    release = {"project": project, "version": version}
    return _wheel(release, meta if meta is not None else metadata(project, version), "py3-none-any")


def entry(filename: str, url: str, body: bytes | None = None, **extra) -> dict:
    data = {"filename": filename, "url": url, "upload-time": "2026-02-01T10:00:00.000000Z", "yanked": False}
    if body is not None:
        data["hashes"] = {"sha256": hashlib.sha256(body).hexdigest()}
        data["size"] = len(body)
    data.update(extra)
    return data


def raw_zip(members: list[dict]) -> bytes:
    """A zip written by hand, for archives zipfile would not write: each
    member gives `name` (bytes), `data` (the stored bytes), and optionally
    `method`, `crc`, `size` (the declared uncompressed size) and `flags`."""
    import struct
    import zlib

    out = io.BytesIO()
    central = []
    for member in members:
        name, data = member["name"], member["data"]
        method, flags = member.get("method", 0), member.get("flags", 0)
        crc = member.get("crc", zlib.crc32(data) if method == 0 else 0)
        size = member.get("size", len(data))
        offset = out.tell()
        out.write(struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, flags, method, 0, 0, crc, len(data), size, len(name), 0))
        out.write(name)
        out.write(data)
        central.append(struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, flags, method, 0, 0, crc, len(data), size,
                                   len(name), 0, 0, 0, 0, 0, offset) + name)
    start = out.tell()
    for record in central:
        out.write(record)
    end = out.tell()
    out.write(struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(central), len(central), end - start, start, 0))
    return out.getvalue()


def deflate(data: bytes) -> bytes:
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


def zeros_deflated(size: int) -> bytes:
    """A raw deflate stream of `size` zero bytes, built in 1 MiB blocks
    (each fully flushed, so the blocks after the first are the same bytes)."""
    import zlib

    block = 1024 * 1024
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = compressor.compress(bytes(block)) + compressor.flush(zlib.Z_FULL_FLUSH)
    middle = compressor.compress(bytes(block)) + compressor.flush(zlib.Z_FULL_FLUSH)
    count = size // block
    last = compressor.compress(bytes(size - count * block)) + compressor.flush()
    return first + middle * (count - 1) + last


class HostileIndex(_Served):
    """A server on 127.0.0.1 whose `routes` map a path to a function of the
    request handler; anything else is a 404. `requests` records (method,
    path, headers) of every request."""

    def __init__(self) -> None:
        self.routes: dict = {}
        self.requests: list[tuple[str, str, dict]] = []
        self._start_server(self._handler())

    def base(self, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}"

    def project(self, name: str, files: list[dict], content_type: str = "application/vnd.pypi.simple.v1+json") -> None:
        body = page(name, files)
        self.routes[f"/simple/{name}/"] = lambda h: send(h, 200, body, content_type)

    def file(self, name: str, body: bytes, ranges: bool = True) -> str:
        """Serve `body` at /files/`name`; returns its URL as a page names it."""
        self.routes[f"/files/{name}"] = serve_bytes(body, ranges)
        return f"../../files/{name}"

    def _handler(self):  # type: ignore[no-untyped-def]
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._serve()

            def do_GET(self) -> None:
                self._serve()

            def _serve(self) -> None:
                index.requests.append((self.command, self.path, dict(self.headers.items())))
                route = index.routes.get(self.path)
                if route is None:
                    return send(self, 404, b"not found", "text/plain")
                try:
                    route(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler


# -- an index in memory ------------------------------------------------------------


@dataclass
class Reply:
    """One reply: a status, headers (a list, since a header may repeat) and a body."""

    status: int = 200
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


class MemoryResponse:
    """What urllib's opener returns for a reply: `status`, `headers`, `read1`, `close`."""

    def __init__(self, reply: Reply) -> None:
        self.status = reply.status
        self.headers = email.message.Message()
        for key, value in reply.headers:
            self.headers[key] = value  # a Message keeps repeated headers
        self._body = io.BytesIO(reply.body)

    def read1(self, n: int = -1) -> bytes:
        return self._body.read(n)

    read = read1

    def close(self) -> None:
        pass


Route = Callable[[str, dict], Reply]  # (method, request headers) -> the reply


def memory_file(body: bytes, ranges: bool = True) -> Route:
    """A file with HEAD and range requests, as `serve_bytes` serves one on 127.0.0.1."""

    def route(method: str, headers: dict) -> Reply:
        wanted = headers.get("Range")
        if wanted and ranges and method == "GET":
            start, end = (int(n) for n in wanted.split("=")[1].split("-"))
            chunk = body[start: min(end, len(body) - 1) + 1]
            return Reply(206, [("Content-Length", str(len(chunk))), ("Accept-Ranges", "bytes"),
                               ("Content-Range", f"bytes {start}-{start + len(chunk) - 1}/{len(body)}")], chunk)
        accepts = [("Accept-Ranges", "bytes")] if ranges else []
        return Reply(200, [("Content-Length", str(len(body))), *accepts], b"" if method == "HEAD" else body)

    return route


def memory_page(project: str, files: list[dict]) -> Route:
    body = page(project, files)
    return lambda method, headers: Reply(200, [("Content-Type", "application/vnd.pypi.simple.v1+json"),
                                               ("Content-Length", str(len(body)))], body)


class MemoryIndex:
    """An index on https://index.test/ held in memory: `routes` map a URL path
    to a Route (anything else is a 404), `opener` answers the client as
    urllib's would (a status outside 2xx raises HTTPError), and `requests`
    records (method, URL, headers) of every request."""

    url = "https://index.test/simple/"

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, str, dict]] = []

    def opener(self, request, timeout: float) -> MemoryResponse:  # type: ignore[no-untyped-def]
        headers = dict(request.header_items())
        self.requests.append((request.get_method(), request.full_url, headers))
        route = self.routes.get(urllib.parse.urlsplit(request.full_url).path)
        reply = route(request.get_method(), headers) if route is not None else Reply(404, [], b"not found")
        response = MemoryResponse(reply)
        if not 200 <= reply.status < 300:
            raise urllib.error.HTTPError(request.full_url, reply.status, "refused", response.headers,  # type: ignore[arg-type]
                                         io.BytesIO(reply.body))
        return response
