"""What `compat db sync` costs as the closure grows, against an index on 127.0.0.1.

For each size N, a synthetic index of N projects is served from memory on
127.0.0.1 (the PEP 691 JSON simple API, wheels with HTTP range requests and
each file's size, as PyPI gives them): each project has 3 releases, each
release's wheel requires the next two projects, so the whole closure of
`pkg-0` is N projects and 3N releases. Each reply waits `--latency` seconds
first, as a remote index does (the local one answers in microseconds, which
would measure nothing but this machine's CPU).

For each size, in the same session:

- the anchor: the requests a sync cannot do without (every page, and one
  range request per release), made on the same number of threads with
  urllib alone;
- a cold sync into an empty database (`compat db sync --db`, a fresh
  process, as a user runs it);
- a second sync with nothing changed on the index;
- a third after one new release of every tenth project.

It prints each one's wall time, its ratio to the anchor, its requests and
the process's CPU time and peak memory.

    python benchmarks/sync.py [--sizes 50,200,800] [--latency 0.02] [--workers 16]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zipfile
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _wheel(name: str, version: str, requires: list[str]) -> bytes:
    meta = "\n".join(["Metadata-Version: 2.4", f"Name: {name}", f"Version: {version}",
                      *(f"Requires-Dist: {r}" for r in requires)]) + "\n"
    buffer = io.BytesIO()
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    with zipfile.ZipFile(buffer, "w") as archive:
        for member, text in ((f"{name.replace('-', '_')}/__init__.py", ""), (f"{dist}/METADATA", meta),
                             (f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
                             (f"{dist}/RECORD", "")):
            info = zipfile.ZipInfo(member, (2026, 1, 1, 0, 0, 0))
            archive.writestr(info, text)
    return buffer.getvalue()


class Index:
    """N projects in memory, served on 127.0.0.1 with a fixed latency per reply."""

    def __init__(self, size: int, latency: float) -> None:
        self.latency = latency
        self.files: dict[str, bytes] = {}
        self.pages: dict[str, dict] = {}
        self.requests = 0
        self._lock = threading.Lock()
        for i in range(size):
            requires = [f"pkg-{j}>=1.0" for j in (i + 1, i + 2) if j < size]
            for minor in range(3):
                self.add(f"pkg-{i}", f"1.{minor}", requires, f"2026-0{minor + 1}-01T00:00:00Z")
        index = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_HEAD(self) -> None:
                self.serve(head=True)

            def do_GET(self) -> None:
                self.serve(head=False)

            def serve(self, head: bool) -> None:
                with index._lock:
                    index.requests += 1
                time.sleep(index.latency)
                parts = self.path.strip("/").split("/")
                if len(parts) == 2 and parts[0] == "simple" and parts[1] in index.pages:
                    return self.send(200, json.dumps(index.pages[parts[1]]).encode(),
                                     "application/vnd.pypi.simple.v1+json", {}, head)
                if len(parts) == 2 and parts[0] == "files" and parts[1] in index.files:
                    body = index.files[parts[1]]
                    wanted = self.headers.get("Range")
                    if wanted:
                        start, end = (int(x) for x in wanted.split("=")[1].split("-"))
                        end = min(end, len(body) - 1)
                        return self.send(206, body[start:end + 1], "application/octet-stream",
                                         {"Content-Range": f"bytes {start}-{end}/{len(body)}"}, head)
                    return self.send(200, body, "application/octet-stream", {"Accept-Ranges": "bytes"}, head)
                return self.send(404, b"not found", "text/plain", {}, head)

            def send(self, status: int, body: bytes, kind: str, extra: dict, head: bool) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                if not head:
                    self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def add(self, name: str, version: str, requires: list[str], uploaded: str) -> None:
        body = _wheel(name, version, requires)
        filename = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
        self.files[filename] = body
        page = self.pages.setdefault(name, {"meta": {"api-version": "1.1"}, "name": name, "files": []})
        page["files"].append({"filename": filename, "url": f"../../files/{filename}", "upload-time": uploaded,
                              "hashes": {"sha256": hashlib.sha256(body).hexdigest()}, "size": len(body),
                              "yanked": False})

    def close(self) -> None:
        self.server.shutdown()


def anchor(index: Index, workers: int) -> float:
    """Every page and one range request per release, on `workers` threads, with urllib alone."""
    base = index.url
    jobs = [(base + f"{name}/", None) for name in index.pages]
    files = base[: -len("simple/")] + "files/"
    jobs += [(files + f, f"bytes=0-{len(b) - 1}") for f, b in index.files.items()]

    def get(job: tuple[str, str | None]) -> None:
        url, wanted = job
        request = urllib.request.Request(url, headers={"Range": wanted} if wanted else {})
        with urllib.request.urlopen(request, timeout=60) as reply:
            reply.read()

    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(get, jobs))
    return time.perf_counter() - started


def run_sync(database: Path, index: Index, workers: int, cache: Path) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds and peak MiB of one `compat db sync --db` process, and its requests."""
    before = index.requests
    command = [sys.executable, "-m", "compat", "db", "sync", "--quiet", "--db", str(database),
               "--index-url", index.url, "--workers", str(workers)]
    env = {**os.environ, "COMPAT_CACHE": str(cache)}
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"compat db sync exited {os.waitstatus_to_exitcode(status)}: {process.stderr.read()[:400]!r}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, index.requests - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,200,800")
    parser.add_argument("--latency", type=float, default=0.02, help="seconds each reply waits (default 0.02)")
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    print(f"latency {args.latency * 1000:.0f} ms a reply, {args.workers} workers; times are wall seconds, "
          f"ratios against the anchor of the same size")
    print(f"{'projects':>8} {'releases':>8} {'run':<24} {'wall s':>7} {'ratio':>6} {'requests':>8} {'CPU s':>6} {'MiB':>6}")
    for size in (int(s) for s in args.sizes.split(",")):
        index = Index(size, args.latency)
        work = Path(tempfile.mkdtemp(prefix="compat-sync-bench-"))
        try:
            database = work / "db"
            (database / "metadata").mkdir(parents=True)
            shutil.copy(ROOT / "data" / "gpus.toml", database / "gpus.toml")
            (database / "constraints").mkdir()
            (database / "sync.toml").write_text('schema = 1\nsince = 2024-01-01\npackages = ["pkg-0"]\n')
            floor = anchor(index, args.workers)
            releases = len(index.files)
            print(f"{size:>8} {releases:>8} {'anchor (urllib alone)':<24} {floor:>7.2f} {1:>6.2f} "
                  f"{len(index.pages) + releases:>8} {'-':>6} {'-':>6}")
            for label in ("cold sync", "again, nothing changed", "again, 10% new releases"):
                if label.endswith("new releases"):
                    for i in range(0, size, 10):
                        index.add(f"pkg-{i}", "1.3", [], "2026-04-01T00:00:00Z")
                wall, cpu, peak, requests = run_sync(database, index, args.workers, work / "cache")
                print(f"{size:>8} {len(index.files):>8} {label:<24} {wall:>7.2f} {wall / floor:>6.2f} "
                      f"{requests:>8} {cpu:>6.2f} {peak:>6.1f}")
        finally:
            index.close()
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
