"""A package index served on 127.0.0.1 from a compat database's own snapshots.

`SnapshotIndex(db)` serves, for every package component with a metadata
snapshot, a PEP 691 JSON simple page (``/simple/<name>/``; a PEP 503 HTML page
to clients that do not ask for JSON) listing each release's wheels under
their real file names, as ``data/metadata/<name>.wheels.jsonl`` records them
(so the platform and Python tags are the real ones), or one ``py3-none-any``
wheel for a release whose record lists none. Every file advertises its core
metadata (PEP 658/714), and ``<file>.metadata`` is a METADATA document
written from the snapshot: Name, Version, Requires-Python, Provides-Extra
and Requires-Dist as compat sees them (``release.dependencies``: the
index's lines less what a curated entry relaxes, plus what it adds).
Yanked releases are marked yanked.

Wheels themselves are never served (404): a resolver that reads metadata
files needs none, and every request is logged so that a test can say so.

Requirement lines naming a package the database does not hold would make
every installer fail on the missing project; they are left out of the
METADATA documents and recorded with each file (`ServedFile.dropped`), so
that a test can count those of the documents a client read (`fetched`).

Several clients can share one server and still be told apart: a URL may
start with ``/<tag>/`` (``index.url("p17")``), and each logged request carries
its tag.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
import threading
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple

from packaging.utils import canonicalize_name

from compat import Database
from compat.knowledge.snapshot import read_wheels

__all__ = ["SnapshotIndex", "ServedFile", "Dropped", "Request", "held_packages", "metadata_document"]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "text/html; charset=utf-8"
_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


class Dropped(NamedTuple):
    """A requirement line left out of a served METADATA document."""

    package: str  # the release that declares it
    version: str
    line: str
    target: str  # the package it names, which the database does not hold


class Request(NamedTuple):
    tag: str | None
    method: str
    path: str
    kind: str  # "page", "metadata", "wheel", "other"
    status: int


class ServedFile(NamedTuple):
    """One wheel entry of a page, and the METADATA document served for it."""

    project: str
    version: str
    filename: str
    sha256: str
    size: int
    requires_python: str | None
    yanked: bool
    metadata: bytes
    dropped: tuple[Dropped, ...]


def held_packages(db: Database) -> dict[str, Any]:
    """name -> component, for every package component with a metadata snapshot."""
    out = {}
    for name in sorted(db.names()):
        component = db.component(name)
        if component is None or component.kind != "package":
            continue
        if any(r.layer == "metadata" for r in component.releases.values()):
            out[name] = component
    return out


def metadata_document(name: str, version: str, requires_python: str | None, lines: Iterable[str], extras: Iterable[str]) -> bytes:
    """A core metadata (METADATA) file."""
    out = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        out.append(f"Requires-Python: {requires_python}")
    out += [f"Provides-Extra: {extra}" for extra in sorted(set(extras))]
    out += [f"Requires-Dist: {line}" for line in lines]
    return ("\n".join(out) + "\n\n").encode()


class SnapshotIndex:
    """A threaded loopback index over `db`'s snapshots; use it as a context manager."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.held = held_packages(db)
        self.requests: list[Request] = []
        self._projects: dict[str, dict[str, ServedFile]] = {}
        self._pages: dict[str, tuple[bytes, bytes]] = {}
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # -- lifecycle ---------------------------------------------------------------

    def __enter__(self) -> SnapshotIndex:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def url(self, tag: str | None = None) -> str:
        """The simple API root, optionally under a tag that marks the client's requests."""
        prefix = f"/{tag}" if tag else ""
        return f"http://127.0.0.1:{self.server.server_address[1]}{prefix}/simple"

    # -- what was asked ------------------------------------------------------------

    def requests_of(self, tag: str) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.tag == tag]

    def fetched(self, requests: Iterable[Request]) -> list[ServedFile]:
        """The files whose METADATA documents these requests read."""
        out = []
        for request in requests:
            if request.kind != "metadata" or request.status != 200:
                continue
            project, filename = request.path.rsplit("/", 2)[-2:]
            file = (self.project(project) or {}).get(filename[: -len(".metadata")])
            if file is not None:
                out.append(file)
        return out

    # -- the index's content ---------------------------------------------------------

    def project(self, name: str) -> dict[str, ServedFile] | None:
        """filename -> file of one project, built on first use."""
        name = str(canonicalize_name(name))
        if name not in self.held:
            return None
        with self._lock:
            if name not in self._projects:
                self._projects[name] = self._build(name)
            return self._projects[name]

    def _build(self, name: str) -> dict[str, ServedFile]:
        component = self.held[name]
        snapshot = os.path.join(self.db.metadata_dir, f"{name}.jsonl")
        wheels = read_wheels(snapshot)
        files: dict[str, ServedFile] = {}
        for version in component.versions():
            release = component.releases[version]
            if release.layer != "metadata":
                continue  # a curated release the index does not have
            kept, dropped, extras = [], [], set()
            for dependency in release.dependencies:
                requirement = dependency.requirement
                line = str(requirement)
                extras.update(_EXTRA.findall(str(requirement.marker)) if requirement.marker else ())
                target = str(canonicalize_name(requirement.name))
                if target in self.held:
                    kept.append(line)
                else:
                    dropped.append(Dropped(name, str(version), line, target))
            requires_python = str(release.requires_python) if release.requires_python is not None else None
            metadata = metadata_document(name, str(version), requires_python, kept, extras)
            records = [r for r in wheels.get(str(version), ()) if r["file"].endswith(".whl")] or [
                {"file": f"{name.replace('-', '_')}-{version}-py3-none-any.whl", "sha256": None, "size": 0}
            ]
            for record in records:
                filename = record["file"]
                files[filename] = ServedFile(
                    project=name,
                    version=str(version),
                    filename=filename,
                    sha256=record.get("sha256") or hashlib.sha256(filename.encode()).hexdigest(),
                    size=int(record.get("size") or 0),
                    requires_python=requires_python,
                    yanked=release.is_yanked,
                    metadata=metadata,
                    dropped=tuple(dropped),
                )
        return files

    def page(self, name: str) -> tuple[bytes, bytes] | None:
        """(JSON, HTML) simple pages of one project."""
        name = str(canonicalize_name(name))
        files = self.project(name)
        if files is None:
            return None
        with self._lock:
            if name in self._pages:
                return self._pages[name]
        entries, anchors, versions = [], [], []
        for file in files.values():
            if file.version not in versions:
                versions.append(file.version)
            metadata_hash = hashlib.sha256(file.metadata).hexdigest()
            entry: dict[str, Any] = {
                "filename": file.filename,
                "url": f"../../files/{name}/{file.filename}",
                "hashes": {"sha256": file.sha256},
                "size": file.size,
                "core-metadata": {"sha256": metadata_hash},
                "data-dist-info-metadata": {"sha256": metadata_hash},
                "yanked": file.yanked,
            }
            if file.requires_python:
                entry["requires-python"] = file.requires_python
            entries.append(entry)
            attributes = [
                f'href="../../files/{name}/{file.filename}#sha256={file.sha256}"',
                f'data-core-metadata="sha256={metadata_hash}"',
                f'data-dist-info-metadata="sha256={metadata_hash}"',
            ]
            if file.requires_python:
                attributes.append(f'data-requires-python="{html.escape(file.requires_python)}"')
            if file.yanked:
                attributes.append('data-yanked=""')
            anchors.append(f"<a {' '.join(attributes)}>{html.escape(file.filename)}</a><br/>")
        body = json.dumps({"meta": {"api-version": "1.1"}, "name": name, "versions": versions, "files": entries}).encode()
        text = (
            "<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\">"
            f"<title>Links for {name}</title></head><body><h1>Links for {name}</h1>\n"
            + "\n".join(anchors)
            + "\n</body></html>\n"
        ).encode()
        with self._lock:
            self._pages[name] = (body, text)
        return body, text

    # -- HTTP ---------------------------------------------------------------------------

    def _log(self, tag: str | None, method: str, path: str, kind: str, status: int) -> None:
        with self._lock:
            self.requests.append(Request(tag, method, path, kind, status))

    def _handler(self):  # type: ignore[no-untyped-def]
        index = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms stall between them

            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self._serve(head=True)

            def do_GET(self) -> None:
                self._serve(head=False)

            def _send(self, status: int, body: bytes, content_type: str, head: bool) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "max-age=600")
                self.end_headers()
                if not head:
                    self.wfile.write(body)

            def _serve(self, head: bool) -> None:
                path = self.path.split("?", 1)[0].split("#", 1)[0]
                parts = [p for p in path.split("/") if p]
                tag = None
                if parts and parts[0] not in ("simple", "files"):
                    tag, parts = parts[0], parts[1:]
                clean = "/" + "/".join(parts)
                kind, status = "other", 404
                body, content_type = b"not found", "text/plain"
                if parts == ["simple"]:
                    kind, status = "page", 200
                    names = sorted(index.held)
                    if "json" in (self.headers.get("Accept") or ""):
                        body = json.dumps({"meta": {"api-version": "1.1"}, "projects": [{"name": n} for n in names]}).encode()
                        content_type = JSON_TYPE
                    else:
                        body = ("<!DOCTYPE html>\n<html><body>\n" + "\n".join(
                            f'<a href="{n}/">{n}</a><br/>' for n in names) + "\n</body></html>\n").encode()
                        content_type = HTML_TYPE
                elif len(parts) == 2 and parts[0] == "simple":
                    kind = "page"
                    pages = index.page(parts[1])
                    if pages is not None:
                        status = 200
                        if "json" in (self.headers.get("Accept") or ""):
                            body, content_type = pages[0], JSON_TYPE
                        else:
                            body, content_type = pages[1], HTML_TYPE
                elif len(parts) == 3 and parts[0] == "files":
                    project, filename = parts[1], parts[2]
                    if filename.endswith(".metadata"):
                        kind = "metadata"
                        files = index.project(project)
                        file = files.get(filename[: -len(".metadata")]) if files else None
                        if file is not None:
                            status, body, content_type = 200, file.metadata, "text/plain; charset=utf-8"
                    else:
                        kind = "wheel"  # never served: a resolver reading metadata files needs none
                index._log(tag, self.command, clean, kind, status)
                self._send(status, body, content_type, head)

        return Handler
