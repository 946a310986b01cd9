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
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

HERE = Path(__file__).resolve().parent / "index"


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


def _wheel(release: dict, metadata: bytes, tag: str) -> bytes:
    buffer = io.BytesIO()
    dist = _dist(release)
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(f"{release['project']}/__init__.py", "# padding\n" * 4000)
        wheel.writestr(f"{dist}.dist-info/METADATA", metadata)
        wheel.writestr(f"{dist}.dist-info/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: {tag}\n")
        wheel.writestr(f"{dist}.dist-info/RECORD", "")
    return buffer.getvalue()


def _sdist(release: dict, metadata: bytes, kind: str) -> bytes:
    """An sdist whose one folder holds setup.py and PKG-INFO."""
    dist = _dist(release)
    members = {f"{dist}/setup.py": b"# padding\n" * 4000, f"{dist}/PKG-INFO": metadata}
    buffer = io.BytesIO()
    if kind == "zip":
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for name, data in members.items():
                archive.writestr(name, data)
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class LocalIndex:
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
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _serve(self, name: str, body: bytes, release: dict, yanked: bool) -> dict:
        """Serve `body` as file `name`, and return its entry on the project page."""
        self.files[name] = body
        return {
            "filename": name,
            "url": f"../../files/{name}",
            "hashes": {"sha256": hashlib.sha256(body).hexdigest()},
            "upload-time": release["uploaded"],
            "yanked": release.get("yanked", False) or yanked,
        }

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def __enter__(self) -> LocalIndex:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

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
