"""`compat db sync` against hostile and broken indexes served on 127.0.0.1.

Each test serves an index that lies, stalls, floods or points elsewhere
(tests/index_server.py, HostileIndex), and checks that the sync refuses what
it must with one line naming the package, the URL and the rule, never a
traceback, and that the database is the old one, byte for byte, whenever the
run fails (docs/reliability.md, "db sync"). Nothing leaves 127.0.0.1
("localhost" stands for another host).
"""

from __future__ import annotations

import base64
import datetime
import errno
import io
import json
import os
import resource
import time
import urllib.request

import pytest
from click.testing import CliRunner

from compat import _files
from compat.cli import cli
from compat.errors import CompatError, PackageIndexError
from compat.knowledge import index as index_module
from compat.knowledge.index import IndexClient, _Redirects, mask_url
from compat.knowledge.paths import default_data_dir
from compat.knowledge.sync import SyncPlan, load_plan, sync

from .index_server import (MemoryIndex, entry, hostile_database, memory_page, metadata, raw_zip, send, serve_bytes,
                           wheel, zeros_deflated)
from .index_server import run_sync as run

JSON = "application/vnd.pypi.simple.v1+json"
WHEEL = "alpha-2.0-py3-none-any.whl"
DIST_INFO = b"alpha-2.0.dist-info/METADATA"


@pytest.fixture
def db(tmp_path):
    return hostile_database(tmp_path / "data")


def state(root):
    """Every file under `root` with its bytes: the database, byte for byte."""
    out = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as handle:
                out[os.path.relpath(path, root)] = handle.read()
    return out


def releases(db, name="alpha"):
    header, *lines = (db / "metadata" / f"{name}.jsonl").read_text().splitlines()
    return json.loads(header), {r["version"]: r for r in map(json.loads, lines)}


def assert_lint_clean(db):
    """The database loads, and `db lint` finds nothing wrong with its snapshots and graph (the
    fixture's borrowed GPU catalog and sources have problems of their own: unused sources)."""
    result = CliRunner().invoke(cli, ["db", "lint", "--db", str(db)])
    assert result.exit_code in (0, 1) and "error" not in result.output, result.output
    assert str(db / "metadata") not in result.output, result.output


def assert_refused(result, db, before, *expected):
    """A failed run: exit 2, one line naming what was wrong, the database unchanged and lint-clean."""
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and lines[0].startswith("compat: error: "), result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    for text in expected:
        assert text in lines[0], lines[0]
    assert state(db) == before
    assert not [p for p in os.listdir(db / "metadata") if p.startswith(".")]
    assert_lint_clean(db)


def serve_alpha(hostile, meta=None, *, project="alpha", version="2.0", extra_files=()):
    """Serve `project` with one wheel (read by range requests) whose METADATA is `meta`."""
    filename = f"{project}-{version}-py3-none-any.whl"
    body = wheel(project, version, meta)
    hostile.project(project, [entry(filename, hostile.file(filename, body), body), *extra_files])
    return body


def serve_zip(hostile, body):
    hostile.project("alpha", [entry(WHEEL, hostile.file(WHEEL, body))])


# -- URLs: schemes and hosts ------------------------------------------------------------


@pytest.mark.parametrize("url", ["file:///etc/passwd", "file:///dev/zero", "ftp://127.0.0.1/alpha.whl", "data:,Name: alpha"])
def test_file_urls_of_other_schemes_are_refused(db, hostile, url):
    hostile.project("alpha", [entry(WHEEL, url)])
    before = state(db)
    result = run(db, hostile.url)
    assert_refused(result, db, before, "alpha: ", hostile.url, "is not http(s)")


def test_a_local_wheel_never_enters_the_snapshot(db, hostile, tmp_path):
    local = tmp_path / WHEEL
    local.write_bytes(wheel("alpha", "2.0", metadata("alpha", "2.0", "Requires-Dist: evil-dependency")))
    hostile.project("alpha", [entry(WHEEL, local.as_uri())])
    result = run(db, hostile.url)
    assert result.exit_code == 2 and "file: URL is not http(s)" in result.output
    assert not (db / "metadata" / "alpha.jsonl").exists()


def test_plain_http_files_of_an_https_index_are_refused():
    served = MemoryIndex()
    served.routes["/simple/alpha/"] = memory_page("alpha", [entry(WHEEL, f"http://index.test/files/{WHEEL}")])
    client = IndexClient(served.url, retries=0, use_netrc=False, opener=served.opener)
    with pytest.raises(PackageIndexError, match="plain http from an https index"):
        client.page("alpha")


def test_redirects_never_go_from_https_to_http():
    handler = _Redirects(IndexClient("https://index.test/simple/", use_netrc=False))
    request = urllib.request.Request(f"https://index.test/files/{WHEEL}")
    with pytest.raises(PackageIndexError, match="plain http from an https index"):
        handler.redirect_request(request, io.BytesIO(), 302, "Found", {}, f"http://index.test/files/{WHEEL}")
    # an http index may use http, but a redirect may still not leave https for it
    handler = _Redirects(IndexClient("http://index.test/simple/", use_netrc=False))
    request = urllib.request.Request(f"https://index.test/files/{WHEEL}")
    with pytest.raises(PackageIndexError, match="from https to plain http"):
        handler.redirect_request(request, io.BytesIO(), 302, "Found", {}, f"http://index.test/files/{WHEEL}")


def test_a_redirect_to_another_host_is_refused_unless_allowed(db, hostile):
    body = wheel("alpha", "2.0")
    hostile.file(WHEEL, body)
    elsewhere = f"{hostile.base('localhost')}/files/{WHEEL}"
    hostile.routes[f"/moved/{WHEEL}"] = lambda h: send(h, 302, headers={"Location": elsewhere})
    hostile.project("alpha", [entry(WHEEL, f"../../moved/{WHEEL}", body)])
    before = state(db)
    result = run(db, hostile.url)
    assert_refused(result, db, before, f"redirected to {elsewhere}", "host localhost is not the index's")
    assert not [r for r in hostile.requests if r[2].get("Host", "").startswith("localhost")]
    # allowed on the command line (or in sync.toml's allow_hosts), it is followed
    assert run(db, hostile.url, "--allow-host", "localhost").exit_code == 0
    (db / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["alpha"]\nallow_hosts = ["localhost"]\n')
    assert run(db, hostile.url).exit_code == 0
    assert releases(db)[1]["2.0"]["file"] == WHEEL


def test_files_on_another_host_are_refused(db, hostile):
    body = wheel("alpha", "2.0")
    hostile.file(WHEEL, body)
    hostile.project("alpha", [entry(WHEEL, f"{hostile.base('localhost')}/files/{WHEEL}", body)])
    before = state(db)
    assert_refused(run(db, hostile.url), db, before, "host localhost is not the index's", "--allow-host")


def test_the_bundled_plan_allows_pythonhosted():
    assert "files.pythonhosted.org" in load_plan(os.path.join(default_data_dir(), "sync.toml")).allow_hosts


# -- limits ---------------------------------------------------------------------------------


def test_a_zip_bomb_metadata_is_refused_without_inflating_it(db, hostile):
    bomb = zeros_deflated(1 << 30)  # about 1 MiB that inflates to 1 GiB
    assert len(bomb) < 2 << 20
    before = state(db)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    serve_zip(hostile, raw_zip([{"name": DIST_INFO, "data": bomb, "method": 8, "size": 1 << 30, "crc": 0}]))
    assert_refused(run(db, hostile.url), db, before, "alpha: ", WHEEL, "inflates to 1 GiB, more than 16 MiB")
    # the same bomb declaring a small size: inflated as a stream, stopped at the size it declares
    serve_zip(hostile, raw_zip([{"name": DIST_INFO, "data": bomb, "method": 8, "size": 1000, "crc": 0}]))
    assert_refused(run(db, hostile.url), db, before, "not a valid wheel", "CRC")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 200 * 1024  # KiB: never inflated


def test_a_huge_metadata_member_is_refused_past_the_limit(db, hostile, monkeypatch):
    monkeypatch.setattr(index_module, "METADATA_LIMIT", 4096)
    serve_alpha(hostile, metadata("alpha", "2.0") + b"x" * 10000)
    before = state(db)
    assert_refused(run(db, hostile.url), db, before, "more than 4 KiB (the limit)")


def _endless(h):
    h.send_response(200)
    h.send_header("Content-Type", JSON)
    h.end_headers()
    chunk = b" " * (1 << 20)
    for _ in range(200):  # 200 MiB, or until the client hangs up
        h.wfile.write(chunk)


def _announced(h):
    h.send_response(200)
    h.send_header("Content-Type", JSON)
    h.send_header("Content-Length", str(100 << 20))
    h.end_headers()
    h.wfile.write(b" " * (1 << 20))


@pytest.mark.parametrize("route", [_endless, _announced], ids=["streamed", "announced"])
def test_a_huge_json_page_is_refused(db, hostile, route):
    hostile.routes["/simple/alpha/"] = route
    before = state(db)
    started = time.monotonic()
    assert_refused(run(db, hostile.url), db, before, "the project page is larger than 32 MiB (the limit)")
    assert time.monotonic() - started < 10


def test_a_huge_metadata_file_is_refused(db, hostile, monkeypatch):
    body = wheel("alpha", "2.0")
    hostile.file(WHEEL, body)
    hostile.routes[f"/files/{WHEEL}.metadata"] = _endless
    hostile.project("alpha", [entry(WHEEL, f"../../files/{WHEEL}", body, **{"core-metadata": True})])
    before = state(db)
    assert_refused(run(db, hostile.url), db, before, f"{WHEEL}.metadata: the metadata file is larger than 16 MiB")


@pytest.mark.parametrize("announce", [True, False], ids=["announced", "streamed"])
def test_an_oversized_range_reply_is_refused(db, hostile, announce):
    body = wheel("alpha", "2.0")

    def liar(h):
        if h.command == "HEAD":
            return send(h, 200, body, headers={"Accept-Ranges": "bytes"})
        send(h, 206, b"x" * (50 << 20), headers={"Content-Range": f"bytes 0-{len(body) - 1}/{len(body)}"}, length=announce)

    hostile.routes[f"/files/{WHEEL}"] = liar
    hostile.project("alpha", [entry(WHEEL, f"../../files/{WHEEL}", body)])
    before = state(db)
    assert_refused(run(db, hostile.url), db, before, f"a range reply larger than the {len(body)} bytes asked")


def _trickle_body(h):
    h.send_response(200)
    h.send_header("Content-Type", JSON)
    h.send_header("Content-Length", "1000")
    h.end_headers()
    for _ in range(1000):
        h.wfile.write(b" ")
        time.sleep(0.05)


def _trickle_headers(h):
    for byte in b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nX-Padding: " + b"x" * 1000:
        h.wfile.write(bytes([byte]))
        time.sleep(0.05)


@pytest.mark.parametrize("route", [_trickle_body, _trickle_headers], ids=["body", "headers"])
def test_a_trickling_server_times_out_on_the_whole_request(db, hostile, route):
    hostile.routes["/simple/alpha/"] = route
    before = state(db)
    started = time.monotonic()
    assert_refused(run(db, hostile.url, "--timeout", "0.5"), db, before, "alpha: ", "timed out")
    assert time.monotonic() - started < 3


def test_the_run_has_a_deadline(db, hostile):
    names = [f"pkg{i}" for i in range(8)]
    (db / "sync.toml").write_text(f"schema = 1\nsince = 2026-01-01\npackages = {json.dumps(names)}\n")

    def slow(h):
        time.sleep(0.4)
        send(h, 200, b'{"files": []}', JSON)

    for name in names:
        hostile.routes[f"/simple/{name}/"] = slow
    before = state(db)
    started = time.monotonic()
    assert_refused(run(db, hostile.url, "--timeout", "5", "--deadline", "1", "--workers", "1"), db, before, "timed out")
    assert time.monotonic() - started < 3


def test_each_package_has_a_deadline(db, hostile):
    files = []
    for version in ("2.0", "2.1", "2.2", "2.3"):
        name = f"alpha-{version}-py3-none-any.whl"
        body = wheel("alpha", version)
        inner = serve_bytes(body)
        hostile.routes[f"/files/{name}"] = lambda h, inner=inner: (time.sleep(0.3), inner(h))
        files.append(entry(name, f"../../files/{name}", body))
    hostile.project("alpha", files)
    client = IndexClient(hostile.url, retries=0, package_deadline=0.5, use_netrc=False)
    with pytest.raises(PackageIndexError, match=r"alpha: .*timed out: the package's requests have taken 0.5 s \(--package-deadline\)"):
        sync(load_plan(str(db / "sync.toml")), str(db / "metadata"), client, workers=1)
    assert not (db / "metadata" / "alpha.jsonl").exists()


# -- wrong data -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "version", "reason"),
    [("beta", "2.0", "names the project 'beta', not alpha"), ("alpha", "9.9", "names the version '9.9', not 2.0"),
     ("beta", "1.0", "names the project 'beta'")],
)
def test_metadata_of_another_project_or_version_is_refused(db, hostile, name, version, reason):
    serve_alpha(hostile, metadata(name, version, "Requires-Dist: evil-dependency", "Requires-Python: >=3.99"))
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    assert f"refused release: alpha 2.0 ({WHEEL}): the metadata {reason}" in result.output
    release = releases(db)[1]["2.0"]
    assert release["metadata"] == "unknown" and release["requires_dist"] == [] and "requires_python" not in release
    assert not (db / "metadata" / "evil-dependency.jsonl").exists()  # a refused release's lines are not followed
    assert_lint_clean(db)


def test_names_and_versions_are_compared_normalized(db, hostile):
    serve_alpha(hostile, metadata("ALPHA", "2.0.0", "Requires-Dist: beta>=1"))
    result = run(db, hostile.url)
    assert result.exit_code == 0 and "refused" not in result.output, result.output
    assert releases(db)[1]["2.0"]["requires_dist"] == ["beta>=1"]


def test_a_file_of_another_project_is_ignored(db, hostile):
    evil = wheel("evil", "6.6")
    name = "evil-6.6-py3-none-any.whl"
    serve_alpha(hostile, extra_files=[entry(name, hostile.file(name, evil), evil)])
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    assert f"ignored: alpha: {name}: a file of another project (evil)" in result.output
    header, lines = releases(db)
    assert list(lines) == ["2.0"] and header["versions"] == ["2.0"]


def test_a_listing_that_drops_releases_keeps_the_old_snapshot(db, hostile):
    serve_alpha(hostile)
    assert run(db, hostile.url).exit_code == 0
    before = state(db)
    hostile.project("alpha", [])  # an empty files list
    result = run(db, hostile.url)
    assert result.exit_code == 4, result.output
    assert "refused: alpha: the index no longer lists 1 release(s) its snapshot holds (2.0)" in result.output
    assert "--allow-removal" in result.output
    assert state(db) == before
    assert_lint_clean(db)
    # one bad file name is the same loss
    hostile.project("alpha", [entry("alpha-2.0.whl", f"../../files/{WHEEL}")])
    result = run(db, hostile.url)
    assert result.exit_code == 4 and "ignored: alpha: alpha-2.0.whl: not a valid file name" in result.output
    assert state(db) == before
    # accepted on request
    hostile.project("alpha", [])
    assert run(db, hostile.url, "--allow-removal").exit_code == 0
    assert releases(db) == (releases(db)[0], {}) and releases(db)[0]["versions"] == []
    assert_lint_clean(db)


def test_a_refused_package_does_not_hold_back_the_others(db, hostile):
    (db / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["alpha", "beta"]\n')
    serve_alpha(hostile)
    serve_alpha(hostile, project="beta", version="1.0")
    assert run(db, hostile.url).exit_code == 0
    alpha_before = {k: v for k, v in state(db).items() if "alpha" in k}
    hostile.project("alpha", [])
    serve_alpha(hostile, project="beta", version="1.0",
                extra_files=[entry("beta-1.1-py3-none-any.whl", hostile.file("beta-1.1-py3-none-any.whl", wheel("beta", "1.1")))])
    result = run(db, hostile.url)
    assert result.exit_code == 4, result.output
    assert {k: v for k, v in state(db).items() if "alpha" in k} == alpha_before
    assert list(releases(db, "beta")[1]) == ["1.0", "1.1"]
    assert_lint_clean(db)


@pytest.mark.parametrize(
    ("line", "reason"),
    [("Requires-Python: 3.10", "Requires-Python '3.10' does not parse"),
     ("Requires-Dist: torch>>2", "Requires-Dist 'torch>>2' does not parse"),
     ("Requires-Dist: ", "Requires-Dist '' does not parse")],
)
def test_fields_that_do_not_parse_refuse_the_release_and_later_checks_work(db, hostile, tmp_path, line, reason):
    serve_alpha(hostile, metadata("alpha", "2.0", line))
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    assert f"refused release: alpha 2.0 ({WHEEL}): {reason}; recorded with unknown metadata" in result.output
    release = releases(db)[1]["2.0"]
    assert release["metadata"] == "unknown" and release["requires_dist"] == [] and "requires_python" not in release
    assert_lint_clean(db)
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nalpha = "2.0"\n')
    check = CliRunner().invoke(cli, ["check", str(stack), "--db", str(db)])
    assert check.exit_code == 0 and "Traceback" not in check.output, check.output


def test_repeated_fields_refuse_the_release(db, hostile):
    serve_alpha(hostile, metadata("alpha", "2.0", "Requires-Python: >=3.10", "Requires-Python: >=3.13"))
    result = run(db, hostile.url)
    assert result.exit_code == 0 and "malformed or repeated requires-python" in result.output
    assert releases(db)[1]["2.0"]["metadata"] == "unknown"


# -- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["/abs/dir/name", "../escape", "a/b", "name/..", "", "-x", "x y", "C:\\x"])
def test_path_like_package_names_are_refused(db, hostile, tmp_path, name):
    serve_alpha(hostile)
    before = state(tmp_path)
    result = run(db, hostile.url, "--package", name)
    assert result.exit_code == 2 and "not a package name" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert state(tmp_path) == before and not hostile.requests


def test_path_like_names_in_sync_toml_are_refused(db, hostile):
    (db / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["alpha", "/abs/dir/name"]\n')
    before = state(db)
    result = run(db, hostile.url)
    assert result.exit_code == 2 and "sync.toml" in result.output and "packages: '/abs/dir/name' is not a package name" in result.output
    assert state(db) == before
    with pytest.raises(CompatError, match="not a normalized package name"):
        sync(SyncPlan(packages=["../x"], since=datetime.date(2026, 1, 1)), str(db / "metadata"), IndexClient(hostile.url, use_netrc=False))


def test_bad_allow_hosts_and_unreadable_sync_toml_are_bad_input(db, hostile):
    (db / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["alpha"]\nallow_hosts = ["http://x/"]\n')
    result = run(db, hostile.url)
    assert result.exit_code == 2 and "allow_hosts: 'http://x/' is not a host name" in result.output
    (db / "sync.toml").write_text("schema = [\n")
    assert run(db, hostile.url).exit_code == 2
    assert run(db, hostile.url, "--allow-host", "a/b").exit_code == 2


# -- writing ----------------------------------------------------------------------------------


def _two_packages(db, hostile, version):
    (db / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["alpha", "beta"]\n')
    serve_alpha(hostile, version=version)
    serve_alpha(hostile, project="beta", version=version)


def _new_releases(hostile):
    """A 1.1 of alpha and beta beside their 1.0."""
    for project in ("alpha", "beta"):
        name = f"{project}-1.1-py3-none-any.whl"
        body = wheel(project, "1.1")
        hostile.project(project, [entry(f"{project}-1.0-py3-none-any.whl", f"../../files/{project}-1.0-py3-none-any.whl"),
                                  entry(name, hostile.file(name, body), body)])


def test_a_full_disk_leaves_the_old_database_byte_identical(db, hostile, monkeypatch):
    _two_packages(db, hostile, "1.0")
    assert run(db, hostile.url).exit_code == 0
    before = state(db)
    _new_releases(hostile)
    real = _files.write_file

    def full(path, text):
        if os.path.basename(path).startswith("beta"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        return real(path, text)

    monkeypatch.setattr(_files, "write_file", full)
    result = run(db, hostile.url)
    assert_refused(result, db, before, "cannot write the database", "No space left on device", "nothing was changed")
    monkeypatch.setattr(_files, "write_file", real)
    assert run(db, hostile.url).exit_code == 0
    assert list(releases(db, "beta")[1]) == ["1.0", "1.1"]


def test_a_failure_while_renaming_puts_the_old_files_back(db, hostile, monkeypatch):
    _two_packages(db, hostile, "1.0")
    assert run(db, hostile.url).exit_code == 0
    before = state(db)
    _new_releases(hostile)
    real = os.replace
    calls = []

    def failing(source, target):
        if f"{os.sep}new{os.sep}" in str(source):
            calls.append(target)
            if len(calls) == 3:  # alpha's two files are in place, beta's first is not
                raise OSError(errno.EIO, "I/O error", str(target))
        return real(source, target)

    monkeypatch.setattr(os, "replace", failing)
    result = run(db, hostile.url)
    monkeypatch.setattr(os, "replace", real)
    assert len(calls) == 3
    assert_refused(result, db, before, "cannot write the database")


def test_the_staged_write_fsyncs_and_leaves_nothing_behind(db, hostile, monkeypatch):
    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    serve_alpha(hostile)
    assert run(db, hostile.url).exit_code == 0
    assert len(synced) >= 4  # the two snapshot files, the graph, and the folders
    assert sorted(os.listdir(db / "metadata")) == ["_graph.json", "alpha.jsonl", "alpha.wheels.jsonl", "last-sync.json"]


# -- credentials ------------------------------------------------------------------------------


def _guarded(hostile, credentials: bytes) -> str:
    """Every route of the index's host answers 401 without `credentials` ("user:password") as Basic auth; the
    Authorization header they make."""
    expected = "Basic " + base64.b64encode(credentials).decode()
    for path, route in list(hostile.routes.items()):
        def guarded(h, route=route):
            if h.headers.get("Host", "").startswith("127.0.0.1") and h.headers.get("Authorization") != expected:
                return send(h, 401, b"who are you?", "text/plain", {"WWW-Authenticate": 'Basic realm="index"'})
            return route(h)

        hostile.routes[path] = guarded
    return expected


def _netrc_home(tmp_path, monkeypatch, password: str):
    """HOME with a ~/.netrc giving robot:`password` for the index's host."""
    home = tmp_path / "home"
    home.mkdir()
    (home / ".netrc").write_text(f"machine 127.0.0.1 login robot password {password}\n")
    (home / ".netrc").chmod(0o600)
    monkeypatch.setenv("HOME", str(home))


def test_credentials_in_the_index_url_are_sent_to_the_index_only_and_masked(db, hostile):
    body = wheel("alpha", "2.0")
    hostile.file(WHEEL, body)
    hostile.project("alpha", [entry(WHEEL, f"{hostile.base('localhost')}/files/{WHEEL}", body)])
    expected = _guarded(hostile, b"user:s3cr@t")
    url = f"http://user:s3cr%40t@127.0.0.1:{hostile.port}/simple/"
    result = run(db, url, "--allow-host", "localhost")
    assert result.exit_code == 0, result.output
    assert f"http://user:***@127.0.0.1:{hostile.port}/simple/" in result.output and "s3cr" not in result.output
    index_requests = [r for r in hostile.requests if r[2]["Host"].startswith("127.0.0.1")]
    file_requests = [r for r in hostile.requests if r[2]["Host"].startswith("localhost")]
    assert index_requests and all(r[2].get("Authorization") == expected for r in index_requests)
    assert file_requests and not any("Authorization" in r[2] for r in file_requests)  # never to another host
    assert releases(db)[0]["index"] == hostile.url  # stored without them
    assert "s3cr" not in "".join(p.read_text() for p in (db / "metadata").iterdir())
    # the same from PIP_INDEX_URL, and an error shows them masked
    hostile.routes["/simple/alpha/"] = lambda h: send(h, 500, b"boom", "text/plain")
    result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(db), "--retries", "0"], env={"PIP_INDEX_URL": url})
    assert result.exit_code == 2 and f"alpha: http://user:***@127.0.0.1:{hostile.port}/simple/alpha/: HTTP 500" in result.output
    assert "s3cr" not in result.output


def test_credentials_follow_a_redirect_on_the_index_host_only(db, hostile):
    body = wheel("alpha", "2.0")
    hostile.file(WHEEL, body)
    hostile.routes[f"/here/{WHEEL}"] = lambda h: send(h, 302, headers={"Location": f"/files/{WHEEL}"})
    hostile.routes[f"/there/{WHEEL}"] = lambda h: send(h, 302, headers={"Location": f"{hostile.base('localhost')}/files/{WHEEL}"})
    hostile.project("alpha", [entry(WHEEL, f"../../here/{WHEEL}", body)])
    _guarded(hostile, b"user:pw")
    url = f"http://user:pw@127.0.0.1:{hostile.port}/simple/"
    assert run(db, url).exit_code == 0
    hostile.project("alpha", [entry(WHEEL, f"../../there/{WHEEL}", body)])
    _guarded(hostile, b"user:pw")
    hostile.requests.clear()
    assert run(db, url, "--allow-host", "localhost").exit_code == 0
    assert not any("Authorization" in r[2] for r in hostile.requests if r[2]["Host"].startswith("localhost"))


def test_netrc_credentials_are_used_for_the_index_host(db, hostile, tmp_path, monkeypatch):
    serve_alpha(hostile)
    _guarded(hostile, b"robot:n3trc")
    _netrc_home(tmp_path, monkeypatch, "n3trc")
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    assert "n3trc" not in result.output


def test_the_netrc_environment_variable_names_the_file(db, hostile, tmp_path, monkeypatch):
    """NETRC, as pip and requests read it, wins over ~/.netrc; the password is never printed, not even in an error."""
    serve_alpha(hostile)
    _guarded(hostile, b"robot:fr0m-env")
    _netrc_home(tmp_path, monkeypatch, "wr0ng")
    elsewhere = tmp_path / "secrets" / "netrc"
    elsewhere.parent.mkdir()
    elsewhere.write_text("machine 127.0.0.1 login robot password fr0m-env\n")
    monkeypatch.setenv("NETRC", str(elsewhere))
    result = run(db, hostile.url)
    assert result.exit_code == 0, result.output
    assert "fr0m-env" not in result.output and "wr0ng" not in result.output
    assert "fr0m-env" not in "".join(p.read_text() for p in (db / "metadata").iterdir())
    # an error shows neither the password nor the file's lines
    hostile.routes["/simple/alpha/"] = lambda h: send(h, 500, b"boom", "text/plain")
    result = run(db, hostile.url)
    assert result.exit_code == 2 and "HTTP 500" in result.output and "fr0m-env" not in result.output


def test_a_malformed_or_missing_netrc_gives_no_credentials(db, hostile, tmp_path, monkeypatch):
    serve_alpha(hostile)
    _guarded(hostile, b"robot:s3cret")
    bad = tmp_path / "netrc"
    bad.write_text("machine 127.0.0.1 login robot password s3cret\nbogus-token s3cret\n")  # a parse error
    for path in (bad, tmp_path / "missing"):
        monkeypatch.setenv("NETRC", str(path))
        result = run(db, hostile.url)
        assert result.exit_code == 2 and "HTTP 401" in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and "s3cret" not in result.output
        assert index_module._netrc_auth("127.0.0.1") is None


def test_mask_url():
    assert mask_url("https://user:token@host/simple") == "https://user:***@host/simple"
    assert mask_url("https://token@host/simple") == "https://***@host/simple"
    assert mask_url("https://host/simple") == "https://host/simple"


def test_a_bad_index_url_is_bad_input_and_masked(db):
    for url, expected in [("not-a-url", "not an http(s) URL"), ("ftp://x/simple", "not an http(s) URL"),
                          ("https://user:s3cret@host:port/simple", "not a valid URL")]:
        result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(db), "--index-url", url])
        assert result.exit_code == 2 and expected in result.output, result.output
        assert "s3cret" not in result.output and len(result.output.strip().splitlines()) == 1


# -- malformed responses ------------------------------------------------------------------------


def _raw(status_and_headers: bytes, body: bytes = b""):
    def route(h):
        h.wfile.write(status_and_headers + b"\r\n" + (b"" if h.command == "HEAD" else body))

    return route


def _page_with(**changes):
    def build(hostile):
        body = wheel("alpha", "2.0")
        data = entry(WHEEL, hostile.file(WHEEL, body), body)
        data.update(changes)
        hostile.project("alpha", [data])

    return build


def _routed(path, route, wheel_body=None):
    def build(hostile):
        body = wheel_body if wheel_body is not None else wheel("alpha", "2.0")
        hostile.project("alpha", [entry(WHEEL, hostile.file(WHEEL, body), body)])
        hostile.routes[path.format(wheel=WHEEL)] = route

    return build


def _zip(*members):
    return lambda hostile: serve_zip(hostile, raw_zip(list(members)))


def _route(path, route):
    def build(hostile):
        hostile.routes[path] = route

    return build


def _body(raw: bytes, content_type: str = JSON):
    return _route("/simple/alpha/", lambda h: send(h, 200, raw, content_type))


MALFORMED = {
    "content-length abc on a wheel": (_routed("/files/{wheel}", _raw(b"HTTP/1.0 200 OK\r\nContent-Length: abc\r\nAccept-Ranges: bytes\r\n")),
                                      "malformed Content-Length 'abc'"),
    "content-length abc on a page": (_route("/simple/alpha/", _raw(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                                                                   b"Content-Length: abc\r\n", b'{"files": []}')),
                                     "malformed Content-Length 'abc'"),
    "zip method 99": (_zip({"name": DIST_INFO, "data": b"x" * 100, "method": 99}), "compression method 99"),
    "encrypted member": (_zip({"name": DIST_INFO, "data": b"x" * 100, "flags": 1}), "is encrypted"),
    "corrupt member": (_zip({"name": DIST_INFO, "data": b"\xff" * 100, "method": 8, "size": 100}), "not a valid wheel (error:"),
    "non-UTF-8 member name": (_zip({"name": b"alpha-2.0.dist-info/\xff\xfe", "data": b"x", "flags": 0x800}), "not a valid wheel (UnicodeDecodeError"),
    "not a zip": (lambda hostile: serve_zip(hostile, b"just some bytes" * 10), "not a valid wheel"),
    "two METADATA": (_zip({"name": DIST_INFO, "data": metadata("alpha", "2.0")}, {"name": b"other-1.0.dist-info/METADATA", "data": b"x"}),
                     "2 .dist-info/METADATA members"),
    "METADATA not UTF-8": (_zip({"name": DIST_INFO, "data": b"Name: \xff\xfe\n"}), "METADATA is not UTF-8"),
    "filename 123": (_page_with(filename=123), "filename '123' is not a string"),
    "hashes x": (_page_with(hashes="x"), "hashes is not an object"),
    "sha256 not hex": (_page_with(hashes={"sha256": "zz"}), "hashes.sha256 is not a SHA-256 digest"),
    "integer upload-time": (_page_with(**{"upload-time": 123}), "upload-time '123' is not an ISO 8601 time"),
    "url 5": (_page_with(url=5), "url '5' is not a string"),
    "yanked 5": (_page_with(yanked=5), "yanked is neither"),
    "size big": (_page_with(size="big"), "size 'big' is not a number of bytes"),
    "core-metadata 5": (_page_with(**{"core-metadata": 5}), "core-metadata is neither"),
    "entry not an object": (_body(b'{"files": ["x"]}'), "malformed file entry #1: not an object"),
    "files not a list": (_body(b'{"files": {}}'), "malformed project page (no files list)"),
    "page a list": (_body(b"[]"), "malformed project page"),
    "page of another project": (_body(b'{"name": "beta", "files": []}'), "it names the project 'beta'"),
    "JSON nested deeply": (_body(b"[" * 100000), "malformed JSON"),
    "JSON not UTF-8": (_body(b'{"files": ["\xff"]}'), "malformed JSON"),
    "not JSON": (_body(b"<html></html>", "text/html"), "not the JSON simple API"),
    "HTTP 204": (_route("/simple/alpha/", lambda h: send(h, 204)), "unexpected HTTP 204"),
    "redirect loop": (_route("/simple/alpha/", lambda h: send(h, 302, headers={"Location": "/simple/alpha/"})), "HTTP 302"),
    "wrong Content-Range": (_routed("/files/{wheel}", lambda h: send(h, 200, b"x" * 10, headers={"Accept-Ranges": "bytes"})
                                    if h.command == "HEAD" else send(h, 206, b"x" * 10, headers={"Content-Range": "bytes 5-14/10"})),
                            "the range reply covers 'bytes 5-14/10'"),
    "short range reply": (_routed("/files/{wheel}", lambda h: send(h, 200, b"x" * 10, headers={"Accept-Ranges": "bytes"})
                                  if h.command == "HEAD" else send(h, 206, b"x" * 3, headers={"Content-Range": "bytes 0-2/10"})),
                          "short range response"),
    "truncated body": (_route("/simple/alpha/", _raw(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n"
                                                     b"Content-Length: 100\r\n", b'{"files": []}')),
                       "incomplete reply (13 of 100 bytes)"),
    "metadata file hash": (lambda hostile: (hostile.file(WHEEL + ".metadata", metadata("alpha", "2.0")), hostile.project("alpha", [
        entry(WHEEL, f"../../files/{WHEEL}", **{"core-metadata": {"sha256": "0" * 64}})])), "sha256 does not match the index's"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_responses_are_one_line_errors(db, hostile, case):
    build, expected = MALFORMED[case]
    build(hostile)
    before = state(db)
    assert_refused(run(db, hostile.url), db, before, "compat: error: alpha: ", f"127.0.0.1:{hostile.port}/", expected)


def test_a_package_page_is_cut_off_at_the_limit_not_read_whole(hostile, monkeypatch):
    monkeypatch.setattr(index_module, "PAGE_LIMIT", 1000)
    hostile.routes["/simple/alpha/"] = _endless
    client = IndexClient(hostile.url, retries=0, use_netrc=False)
    with pytest.raises(PackageIndexError, match="larger than 1000 bytes"):
        client.page("alpha")
