"""`compat db sync` requests only what changed, resumes a sync cut short,
limits time by the wall clock, and says where it is (docs/reliability.md,
"db sync"). The index is served on 127.0.0.1 (tests/index_server.py) and
every request it answers is counted.
"""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from compat.cli import cli
from compat.knowledge.index import IndexClient
from compat.knowledge.sync import LAST_SYNC, journal_path, load_plan, read_last_sync, sync

from .index_server import HostileIndex, entry, hostile_database, metadata, serve_bytes, sync_database, wheel


from .test_sync import database, index  # noqa: F401 - the fixtures: the test index and a database tracking alpha and Beta


def run_sync(database, index, *extra):
    return CliRunner().invoke(cli, ["db", "sync", "--db", str(database), "--index-url", index.url, "--retries", "0",
                                    *extra])


def gets(index, prefix="/files/"):
    return sorted(path for method, path, _ in index.requests if method == "GET" and path.startswith(prefix))


def snapshot_files(database):
    """The snapshots, wheel records and names graph (not the last sync's record, which counts its requests)."""
    return {p.name: p.read_bytes() for p in sorted((database / "metadata").iterdir())
            if p.is_file() and p.name != LAST_SYNC}


def test_a_second_sync_with_nothing_changed_requests_the_pages_alone(database, index):
    first = run_sync(database, index, "--quiet")
    assert first.exit_code == 0, first.output
    assert gets(index)  # the first sync read the releases' metadata
    written = snapshot_files(database)
    index.requests.clear()
    again = run_sync(database, index, "--quiet")
    assert again.exit_code == 0, again.output
    assert gets(index) == []  # no wheel, sdist nor metadata file: only the projects' pages
    assert gets(index, "/simple/") == sorted({path for _, path, _ in index.requests})
    assert "nothing changed since the last snapshots" in again.output
    assert "kept the metadata already read for the same file" in again.output
    # the snapshots are the same but for nothing: the same bytes (the date of the sync is the same day)
    assert snapshot_files(database) == written


def publish_beta_1_2(index) -> str:
    """Upload beta 1.2 to the test index (as a new release appears on a real one); its wheel's file name."""
    body = wheel("beta", "1.2")
    name = "beta-1.2-py3-none-any.whl"
    index.files[name] = body
    index.pages["beta"]["files"].append({
        "filename": name, "url": f"../../files/{name}", "hashes": {"sha256": hashlib.sha256(body).hexdigest()},
        "upload-time": "2026-04-01T10:00:00.000000Z", "yanked": False, "size": len(body)})
    return name


def test_a_new_release_is_the_only_file_read_again(database, index):
    assert run_sync(database, index, "--quiet").exit_code == 0
    name = publish_beta_1_2(index)
    index.requests.clear()
    result = run_sync(database, index, "--quiet")
    assert result.exit_code == 0, result.output
    assert gets(index) == [f"/files/{name}"]  # a range read or a download of that wheel, nothing else
    header = json.loads((database / "metadata" / "beta.jsonl").read_text().splitlines()[0])
    assert "1.2" in header["versions"]
    assert "changed in 1 package(s): 1 release(s) new on the index, 1 release(s) newly kept" in result.output


def test_a_newly_yanked_release_is_seen_without_reading_its_metadata(database, index):
    assert run_sync(database, index, "--quiet").exit_code == 0
    for file in index.pages["beta"]["files"]:
        if file["filename"].startswith("beta-1.1-"):
            file["yanked"] = "broken"
    index.requests.clear()
    result = run_sync(database, index, "--quiet")
    assert result.exit_code == 0, result.output
    assert gets(index) == []
    lines = [json.loads(line) for line in (database / "metadata" / "beta.jsonl").read_text().splitlines()]
    assert "1.1" in lines[0]["yanked"]
    assert {r["version"]: r.get("yanked", False) for r in lines[1:]}["1.1"] is True
    assert "1 release(s) newly yanked" in result.output


def test_a_file_replaced_under_the_same_name_is_read_again(database, index):
    """A digest that differs from the one the snapshot recorded is a changed file, read again."""
    assert run_sync(database, index, "--quiet").exit_code == 0
    name = "beta-1.1-py3-none-any.whl"
    body = wheel("beta", "1.1", metadata("beta", "1.1", "Requires-Dist: delta>=1"))  # another digest
    assert hashlib.sha256(body).hexdigest() != hashlib.sha256(index.files[name]).hexdigest()
    index.files[name] = body
    for file in index.pages["beta"]["files"]:
        if file["filename"] == name:
            file["hashes"] = {"sha256": hashlib.sha256(body).hexdigest()}
            file["size"] = len(body)
    index.requests.clear()
    result = run_sync(database, index, "--quiet")
    assert result.exit_code == 0, result.output
    assert gets(index) == [f"/files/{name}"] * len(gets(index)) and gets(index)
    lines = [json.loads(line) for line in (database / "metadata" / "beta.jsonl").read_text().splitlines()[1:]]
    assert {r["version"]: r["requires_dist"] for r in lines}["1.1"] == ["delta>=1"]
    assert "1 release(s) with changed requirements" in result.output


def test_an_interrupted_sync_resumes_without_reading_again_what_it_read(database, index):
    # beta 1.1's wheel is missing for the first sync: it fails there (one worker: in order), having read alpha's
    name = "beta-1.1-py3-none-any.whl"
    held = index.files.pop(name)
    before = snapshot_files(database)
    failed = run_sync(database, index, "--quiet", "--workers", "1")
    assert failed.exit_code == 2, failed.output
    assert snapshot_files(database) == before  # a failed sync leaves the database as it was
    read_first = set(gets(index))
    assert any("alpha" in path for path in read_first)
    journal = journal_path(str(database / "metadata"), index.url)
    assert json.loads(open(journal, encoding="utf-8").readline())["index"] == index.url
    index.files[name] = held
    index.requests.clear()
    resumed = run_sync(database, index, "--quiet", "--workers", "1")
    assert resumed.exit_code == 0, resumed.output
    read_again = set(gets(index))
    assert f"/files/{name}" in read_again
    assert not read_again & {p for p in read_first if p != f"/files/{name}"}
    with pytest.raises(FileNotFoundError):  # committed: nothing left to resume
        open(journal, encoding="utf-8")


def test_a_journal_of_another_index_or_garbage_is_passed_over(database, index):
    journal = journal_path(str(database / "metadata"), index.url)
    import os

    os.makedirs(os.path.dirname(journal), exist_ok=True)
    lines = [json.dumps({"schema": 1, "index": "https://elsewhere.example/simple/"}),
             json.dumps({"project": "alpha", "file": "alpha-2.0-py3-none-any.whl", "sha256": "0" * 64,
                         "requires_python": None, "requires_dist": ["evil"]}), "{not json", "[]"]
    with open(journal, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    result = run_sync(database, index, "--quiet")
    assert result.exit_code == 0, result.output
    alpha = [json.loads(line) for line in (database / "metadata" / "alpha.jsonl").read_text().splitlines()[1:]]
    assert all("evil" not in r.get("requires_dist", []) for r in alpha)


def test_progress_lines_go_to_stderr_when_it_is_not_a_terminal(database, index):
    result = CliRunner().invoke(cli, ["db", "sync", "--db", str(database), "--index-url", index.url, "--retries", "0"])
    assert result.exit_code == 0, result.output
    progress = [line for line in result.stderr.splitlines() if line.startswith("compat db sync: ")]
    assert any("listing projects" in line for line in progress)
    assert any("reading metadata" in line and "requests" in line for line in progress)
    assert "compat db sync:" not in result.stdout
    quiet = run_sync(database, index, "--quiet")
    assert "compat db sync:" not in quiet.output


def test_progress_lines_are_throttled():
    from compat.cli.db import _Progress
    from compat.knowledge.sync import SyncProgress

    class Stream:
        def __init__(self):
            self.text = ""

        def write(self, text):
            self.text += text

        def flush(self):
            pass

    stream = Stream()
    shown = _Progress(stream, terminal=False, every=3600)
    for done in range(1, 1001):
        shown(SyncProgress("metadata", done, 1000, done, done / 100, "alpha"))
    lines = stream.text.splitlines()
    assert len(lines) == 2  # the first, and the phase's end
    assert lines[-1] == "compat db sync: reading metadata 1000/1000 (alpha), 1000 requests, 10 s"


# -- time limits are wall-clock ------------------------------------------------------------


@pytest.fixture
def hostile(tmp_path):
    with HostileIndex() as served:
        yield served


def _slow_wheels(hostile, count: int, seconds: float) -> None:
    files = []
    for minor in range(count):
        version = f"2.{minor}"
        name = f"alpha-{version}-py3-none-any.whl"
        body = wheel("alpha", version)
        inner = serve_bytes(body)
        hostile.routes[f"/files/{name}"] = lambda h, inner=inner: (time.sleep(seconds), inner(h))
        files.append(entry(name, f"../../files/{name}", body))
    hostile.project("alpha", files)


def test_a_packages_deadline_counts_concurrent_requests_once(tmp_path, hostile):
    """Four requests of 0.4 s at once take 0.4 s of the package's time, not 1.6 s."""
    db = hostile_database(tmp_path / "db")
    _slow_wheels(hostile, 4, 0.4)
    client = IndexClient(hostile.url, retries=0, package_deadline=1.2, use_netrc=False)
    result = sync(load_plan(str(db / "sync.toml")), str(db / "metadata"), client, workers=4)
    assert result.releases == 4
    assert client.package_seconds("alpha") < 1.2


@pytest.mark.parametrize(("flag", "says"), [
    ("--package-deadline", "alpha: .*timed out: the package's requests have taken 0.6 s (--package-deadline)"),
    ("--deadline", "alpha: .*the run's deadline (0.6 s, --deadline) has passed"),
])
def test_a_deadline_passed_is_named_with_its_flag_and_writes_nothing(tmp_path, hostile, flag, says):
    import re

    db = hostile_database(tmp_path / "db")
    _slow_wheels(hostile, 4, 0.4)
    result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(db), "--index-url", hostile.url,
                                      "--retries", "0", "--workers", "1", flag, "0.6"])
    assert result.exit_code == 2, result.output
    assert re.search(re.escape(says).replace(r"\.\*", ".*"), result.output), result.output
    assert not (db / "metadata" / "alpha.jsonl").exists()


# -- a page a cache serves stale --------------------------------------------------------------


def _serve_wheel(hostile, project: str, version: str, *requires: str) -> dict:
    name = f"{project}-{version}-py3-none-any.whl"
    body = wheel(project, version, metadata(project, version, *(f"Requires-Dist: {r}" for r in requires)))
    return entry(name, hostile.file(name, body), body)


def test_a_listing_a_cache_served_stale_is_read_again_past_the_cache(tmp_path, hostile):
    """The class of the kernels 0.18.3 and 0.19.1 a snapshot missed: a cache between
    the sync and the index answers with a copy of the page older than what the index
    lists. Pages are asked with max-age=0 as pip asks; and a requirement (extras too)
    that no listed release meets makes the sync read that page once more with no-cache."""
    db = hostile_database(tmp_path / "db")
    hostile.project("alpha", [_serve_wheel(hostile, "alpha", "2.0", "kernels>=0.17", 'kernels>=0.19.1; extra == "hub"')])
    old = [_serve_wheel(hostile, "kernels", "0.17.2")]
    new = old + [_serve_wheel(hostile, "kernels", "0.19.1")]
    from .index_server import page, send

    def kernels(handler):
        fresh = handler.headers.get("Cache-Control") == "no-cache"
        send(handler, 200, page("kernels", new if fresh else old), "application/vnd.pypi.simple.v1+json")

    hostile.routes["/simple/kernels/"] = kernels
    result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(db), "--index-url", hostile.url,
                                      "--retries", "0"])
    assert result.exit_code == 0, result.output
    header = json.loads((db / "metadata" / "kernels.jsonl").read_text().splitlines()[0])
    assert "0.19.1" in header["versions"]
    asked = [h.get("Cache-Control") for _, path, h in hostile.requests if path.startswith("/simple/")]
    assert asked.count("no-cache") == 1 and set(asked) == {"max-age=0", "no-cache"}
    assert "no release on the index meets" not in result.output


def test_a_requirement_no_release_meets_after_a_fresh_read_is_reported(tmp_path, hostile):
    db = hostile_database(tmp_path / "db")
    hostile.project("alpha", [_serve_wheel(hostile, "alpha", "2.0", 'kernels>=0.19.1; extra == "hub"', "kernels")])
    hostile.project("kernels", [_serve_wheel(hostile, "kernels", "0.17.2")])
    result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(db), "--index-url", hostile.url,
                                      "--retries", "0"])
    assert result.exit_code == 0, result.output
    assert ("1 requirement(s) that no release on the index meets (its page read again, past any cache): "
            "alpha 2.0 requires 'kernels>=0.19.1; extra == \"hub\"'") in result.output


def test_a_wheels_central_directory_of_thousands_of_entries_is_one_range_request(tmp_path, hostile):
    """torch's and vLLM's wheels hold tens of thousands of files: their central
    directory spans dozens of 64 KiB blocks, read in one request, not one each."""
    from .index_server import zip_archive

    meta = metadata("alpha", "2.0")
    members = [(f"alpha/module_{i:05d}_with_a_long_name.py", b"") for i in range(6000)]
    members += [("alpha-2.0.dist-info/METADATA", meta),
                ("alpha-2.0.dist-info/WHEEL", b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"),
                ("alpha-2.0.dist-info/RECORD", b"")]
    body = zip_archive(members)
    name = "alpha-2.0-py3-none-any.whl"
    hostile.project("alpha", [entry(name, hostile.file(name, body), body)])
    client = IndexClient(hostile.url, retries=0, use_netrc=False)
    meta_read = client.release(client.files("alpha"))
    assert meta_read.how == "range" and meta_read.known
    wheel_requests = [r for r in hostile.requests if r[1] == f"/files/{name}"]
    central = len(body) // (64 * 1024)
    assert central >= 6  # the directory spans many blocks
    assert len(wheel_requests) <= 4, [(m, h.get("Range")) for m, _, h in wheel_requests]


def test_a_tls_socket_shut_down_by_a_deadline_fails_as_a_connection_error():
    """A full sync crashed (exit 3) when a request's deadline passed during a TLS
    handshake: SSLSocket.shutdown drops the TLS layer, and the handshake then
    raised AttributeError. The watchdog now shuts the socket down beneath it."""
    import socket
    import ssl

    from compat.knowledge.index import _shutdown

    left, right = socket.socketpair()
    try:
        wrapped = ssl.create_default_context().wrap_socket(left, server_hostname="index.test",
                                                           do_handshake_on_connect=False)
        _shutdown(wrapped)
        with pytest.raises(OSError):
            wrapped.do_handshake()
    finally:
        right.close()
        left.close()


def test_a_wheel_of_known_size_is_read_in_one_request_from_its_end(tmp_path, hostile):
    """The index's page gives the size (PEP 700): no HEAD, and the last 128 KiB
    hold the directory and METADATA of a wheel of ordinary size."""
    body = wheel("alpha", "2.0", metadata("alpha", "2.0", "Requires-Dist: beta>=1"))
    name = "alpha-2.0-py3-none-any.whl"
    hostile.project("alpha", [entry(name, hostile.file(name, body), body)])
    client = IndexClient(hostile.url, retries=0, use_netrc=False)
    read = client.release(client.files("alpha"))
    assert read.requires_dist == ["beta>=1"] and read.how == "range"
    asked = [(method, h.get("Range")) for method, path, h in hostile.requests if path == f"/files/{name}"]
    assert asked == [("GET", f"bytes=0-{len(body) - 1}")]


def test_a_range_reply_that_states_another_size_than_the_index_is_refused(tmp_path, hostile):
    from compat.knowledge.index import PackageIndexError

    from .index_server import send

    body = wheel("alpha", "2.0")
    name = "alpha-2.0-py3-none-any.whl"
    hostile.project("alpha", [entry(name, f"../../files/{name}", body)])
    hostile.routes[f"/files/{name}"] = lambda h: send(h, 206, body, headers={
        "Content-Range": f"bytes 0-{len(body) - 1}/{len(body) + 5}"})
    client = IndexClient(hostile.url, retries=0, use_netrc=False)
    with pytest.raises(PackageIndexError, match=f"the range reply says the file has {len(body) + 5} bytes, "
                                                f"not the {len(body)} the index states"):
        client.release(client.files("alpha"))


# -- the scheduled workflow of docs/ci.md, end to end -------------------------------------------


def test_the_scheduled_sync_workflow_of_the_docs_runs_against_a_local_index(tmp_path, index):
    """Its sync and commit steps run as written (bash, the installed compat, git),
    PIP_INDEX_URL pointing at the index on 127.0.0.1; only `git push` is left out."""
    import os
    import re
    import shutil
    import subprocess

    from .conftest import ROOT, installed
    from .test_integrations import read_yaml

    if shutil.which("git") is None or shutil.which("bash") is None:
        pytest.skip("needs git and bash")
    doc = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if "db sync" in b]
    steps = {step.get("name"): step["run"] for step in read_yaml(block)["jobs"]["sync"]["steps"] if "name" in step}
    work = tmp_path / "repo"
    sync_database(work / "compat-db", ["alpha", "Beta"])
    summary = tmp_path / "summary.md"
    env = {**os.environ, "PIP_INDEX_URL": index.url, "GITHUB_STEP_SUMMARY": str(summary),
           "PATH": f"{os.path.dirname(installed('compat'))}{os.pathsep}{os.environ.get('PATH', '')}",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def step(name: str) -> str:
        script = steps[name].replace("git push", "true")
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=work, env=env, capture_output=True, text=True, check=True).stdout

    git("init", "-q")
    git("add", "compat-db")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    step("Sync the database")
    assert "alpha: added" in summary.read_text()
    step("Commit what changed")
    assert "alpha: added" in git("log", "-1", "--format=%B")
    commits = git("rev-list", "--count", "HEAD")
    # the same day, nothing new: nothing to commit
    step("Sync the database")
    assert summary.read_text().splitlines()[-1] == "no difference"
    step("Commit what changed")
    assert git("rev-list", "--count", "HEAD") == commits
    # a new release on the index: the next run commits it, and says so
    publish_beta_1_2(index)
    step("Sync the database")
    step("Commit what changed")
    message = git("log", "-1", "--format=%B")
    assert "beta: new on the index 1.2; newly kept 1.2" in message


# -- compat db status and compat db diff ------------------------------------------------------------


def test_db_status_says_when_from_where_how_many_and_what_the_last_sync_changed(database, index):
    assert run_sync(database, index, "--quiet").exit_code == 0
    result = CliRunner().invoke(cli, ["db", "status", "--db", str(database)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("database ")
    assert f"2 packages (2 in use), 5 releases; taken " in lines[1] and f"from {index.url}" in lines[1]
    assert lines[2].startswith("         last sync ") and "5 releases, 0 of them not read again" in lines[2]
    data = json.loads(CliRunner().invoke(cli, ["db", "status", "--db", str(database), "-f", "json"]).output)
    [layer] = [layer for layer in data["layers"] if layer["layer"] == "database"]
    assert layer["packages"] == 2 and layer["releases"] == 5 and layer["indexes"] == [index.url]
    assert layer["last_sync"]["changes"]["alpha"] == {"new": ["2.0", "2.1rc1"]}
    assert read_last_sync(str(database / "metadata"))["index"] == index.url


def test_db_status_of_the_bundled_database_names_its_index():
    result = CliRunner().invoke(cli, ["db", "status"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("bundled ")
    assert "from https://pypi.org/simple/" in result.output.splitlines()[1]


def test_db_diff_lists_what_changed_between_two_copies(tmp_path, database, index):
    import shutil

    assert run_sync(database, index, "--quiet").exit_code == 0
    before = tmp_path / "before"
    shutil.copytree(database, before)
    for file in index.pages["beta"]["files"]:
        if file["filename"].startswith("beta-1.1-"):
            file["yanked"] = True
    assert run_sync(database, index, "--quiet").exit_code == 0
    result = CliRunner().invoke(cli, ["db", "diff", str(before), str(database)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["beta: newly yanked 1.1", "changed in 1 package(s): 1 release(s) newly yanked"]
    data = json.loads(CliRunner().invoke(cli, ["db", "diff", str(before / "metadata"), str(database),
                                               "--format", "json"]).output)
    assert data == {"beta": {"yanked": ["1.1"]}}
    same = CliRunner().invoke(cli, ["db", "diff", str(database), str(database)])
    assert same.output == "no difference\n"
    # a package one side lacks: added or dropped, with the releases its snapshot holds
    (before / "metadata" / "alpha.jsonl").unlink()
    added = json.loads(CliRunner().invoke(cli, ["db", "diff", str(before), str(database), "-f", "json"]).output)
    dropped = json.loads(CliRunner().invoke(cli, ["db", "diff", str(database), str(before), "-f", "json"]).output)
    assert added["alpha"] == {"added": ["2.0", "2.1rc1"]} and dropped["alpha"] == {"dropped": ["2.0", "2.1rc1"]}
    text = CliRunner().invoke(cli, ["db", "diff", str(before), str(database)]).output.splitlines()
    assert "alpha: added 2.0, 2.1rc1" in text and text[-1].endswith("1 package(s) added")


def test_db_diff_of_a_folder_that_does_not_exist_is_one_line_exit_2(tmp_path, database):
    result = CliRunner().invoke(cli, ["db", "diff", str(tmp_path / "nowhere"), str(database)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"compat: error: {tmp_path / 'nowhere'}: no such folder (a database folder, or its metadata/ folder)"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.floats(allow_nan=False),
                    lambda children: st.lists(children, max_size=4) | st.dictionaries(
                        st.sampled_from(["taken", "index", "releases", "reused", "requests", "changes", "new",
                                         "yanked", "alpha", "x"]), children, max_size=5), max_leaves=20))
@example({"taken": [1], "releases": {"a": 1}, "changes": {"x": 5, "y": {"new": 3}}, "reused": None})  # was exit 3
def test_any_json_in_last_sync_is_read_or_passed_over_and_status_never_crashes(tmp_path, value):
    """last-sync.json is an account a sync writes, but a user's folder may hold anything there."""
    import shutil

    from .conftest import ROOT

    database = tmp_path / "db"
    if not database.exists():  # a database with a snapshot: its layer is shown with its last sync
        sync_database(database, ["regex"])
        for name in ("regex.jsonl", "regex.wheels.jsonl"):
            shutil.copy(ROOT / "data" / "metadata" / name, database / "metadata" / name)
    (database / "metadata" / LAST_SYNC).write_text(json.dumps(value), encoding="utf-8")
    record = read_last_sync(str(database / "metadata"))
    assert record is None or isinstance(record, dict)
    for fmt in ("text", "json"):
        result = CliRunner().invoke(cli, ["db", "status", "--db", str(database), "-f", fmt])
        assert result.exit_code == 0, result.output
