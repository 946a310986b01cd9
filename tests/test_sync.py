"""`compat db sync` against an index served on 127.0.0.1 from tests/index/."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest
from click.testing import CliRunner

from compat.cli import cli
from compat.knowledge.index import IndexClient
from compat.knowledge.sync import load_plan, sync

from .index_server import LocalIndex


@pytest.fixture
def index():
    with LocalIndex() as served:
        yield served


@pytest.fixture
def database(tmp_path):
    root = tmp_path / "data"
    (root / "constraints").mkdir(parents=True)
    (root / "metadata").mkdir()
    (root / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["alpha", "Beta"]\n')
    return root


def snapshot(database, name):
    header, *lines = (database / "metadata" / f"{name}.jsonl").read_text().splitlines()
    return {**json.loads(header), "releases": [json.loads(line) for line in lines]}


def versions(database, name):
    return [r["version"] for r in snapshot(database, name)["releases"]]


def run_sync(database, index, *extra, env=None):
    return CliRunner().invoke(cli, ["db", "sync", "--db", str(database), "--index-url", index.url, "--retries", "0", *extra], env=env)


def test_sync_reads_the_window_and_closes_it_under_requirements(database, index):
    result = run_sync(database, index)
    assert result.exit_code == 0, result.output
    # alpha 1.0 is older than the window and required by nothing
    assert versions(database, "alpha") == ["2.0", "2.1rc1"]
    # beta 0.9 is older than the window but alpha 2.0 requires beta<1.0
    assert versions(database, "beta") == ["0.9", "1.0", "1.1"]
    alpha = {r["version"]: r for r in snapshot(database, "alpha")["releases"]}
    assert alpha["2.0"]["requires_python"] == ">=3.10"
    assert alpha["2.0"]["requires_dist"] == ["beta<1.0", "numpy>=2", 'gamma; extra == "extra"']
    assert alpha["2.0"]["uploaded"] == "2026-02-01"
    beta = {r["version"]: r for r in snapshot(database, "beta")["releases"]}
    assert beta["1.0"]["yanked"] is True and "yanked" not in beta["1.1"]
    assert snapshot(database, "alpha")["index"] == index.url
    assert snapshot(database, "alpha")["taken"] == dt.date.today().isoformat()


def test_metadata_files_are_used_when_served_and_ranges_otherwise(database, index):
    client = IndexClient(index.url, retries=0)
    result = sync(load_plan(str(database / "sync.toml")), str(database / "metadata"), client)
    assert result.how == {"metadata-file": 1, "range": 4}
    wheel_gets = [(m, p, r) for m, p, r in index.requests if m == "GET" and p.endswith(".whl")]
    assert wheel_gets and all(r is not None for _, _, r in wheel_gets), "whole wheels were downloaded"
    assert any(p.endswith(".whl.metadata") for _, p, _ in index.requests)


def test_server_without_ranges_falls_back_to_downloading(database, index):
    index.mode = "no-ranges"
    client = IndexClient(index.url, retries=0)
    result = sync(load_plan(str(database / "sync.toml")), str(database / "metadata"), client)
    assert result.how == {"metadata-file": 1, "download": 4}
    assert versions(database, "beta") == ["0.9", "1.0", "1.1"]


def test_second_run_changes_nothing(database, index):
    assert run_sync(database, index).exit_code == 0
    before = {p.name: p.read_bytes() for p in (database / "metadata").iterdir()}
    second = run_sync(database, index)
    assert second.exit_code == 0 and "0 snapshot(s) written, 2 unchanged" in second.output
    assert {p.name: p.read_bytes() for p in (database / "metadata").iterdir()} == before


def test_only_the_date_changes_on_another_day(database, index):
    plan = load_plan(str(database / "sync.toml"))
    sync(plan, str(database / "metadata"), IndexClient(index.url, retries=0), today=dt.date(2026, 11, 1))
    first = snapshot(database, "alpha")
    sync(plan, str(database / "metadata"), IndexClient(index.url, retries=0), today=dt.date(2026, 11, 2))
    second = snapshot(database, "alpha")
    assert first["taken"] == "2026-11-01" and second["taken"] == "2026-11-02"
    assert {**first, "taken": None} == {**second, "taken": None}


def test_pip_index_url_is_honoured(database, index):
    result = CliRunner().invoke(cli, ["db", "sync", "--db", str(database), "--retries", "0"], env={"PIP_INDEX_URL": index.url})
    assert result.exit_code == 0, result.output
    assert snapshot(database, "alpha")["index"] == index.url


@pytest.mark.parametrize(
    ("mode", "expected"),
    [("error", "HTTP 500"), ("malformed", "malformed JSON"), ("html", "not the JSON simple API"), ("slow", "timed out")],
)
def test_a_failing_index_is_a_clear_error_and_leaves_snapshots_intact(database, index, mode, expected):
    old = database / "metadata" / "alpha.jsonl"
    old.write_text('{"schema": 1, "name": "alpha", "index": "x", "taken": "2020-01-01"}\n')
    before = old.read_bytes()
    index.mode = mode
    index.delay = 1.5
    result = run_sync(database, index, "--timeout", "0.5")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and expected.lower() in lines[0].lower(), result.output
    assert "Traceback" not in result.output
    assert old.read_bytes() == before
    assert sorted(p.name for p in (database / "metadata").iterdir()) == ["alpha.jsonl"]  # nothing new either


def test_retries_ride_out_a_passing_failure(database, index):
    calls = {"n": 0}
    real = IndexClient(index.url)._open

    def flaky(request, timeout):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("connection reset")
        return real(request, timeout=timeout)

    client = IndexClient(index.url, retries=2, backoff=0.01, opener=flaky)
    result = sync(load_plan(str(database / "sync.toml")), str(database / "metadata"), client)
    assert result.releases == 5


def test_files_that_are_neither_wheel_nor_sdist_are_skipped(database, index):
    index.pages["alpha"]["files"].append(
        {"filename": "alpha-0.5-py2.7.egg", "url": "../../files/alpha-0.5-py2.7.egg", "hashes": {}}
    )
    assert run_sync(database, index).exit_code == 0
    assert versions(database, "alpha") == ["2.0", "2.1rc1"]


def test_unknown_project_is_an_error(database, index):
    (database / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["nope"]\n')
    result = run_sync(database, index)
    assert result.exit_code == 2 and "not found" in result.output


def test_synced_snapshot_is_read_by_the_database(database, index):
    from compat import Database

    assert run_sync(database, index).exit_code == 0
    db = Database.load(database)
    beta = db.component("beta")
    assert {str(v) for v in beta.releases} == {"0.9", "1.0", "1.1"}
    assert beta.release(next(v for v in beta.releases if str(v) == "1.0")).is_yanked
    assert db.component("alpha").release(next(v for v in db.component("alpha").releases if v.is_prerelease)).is_prerelease


def test_atomic_write_leaves_no_temporary_files(database, index):
    assert run_sync(database, index).exit_code == 0
    assert not [p for p in os.listdir(database / "metadata") if p.startswith(".")]


def test_snapshot_records_every_wheel_with_its_hash(database, index):
    assert run_sync(database, index).exit_code == 0
    assert "wheels" not in snapshot(database, "alpha")["releases"][0]  # a check never reads them
    release = next(r for r in snapshot(database, "alpha.wheels")["releases"] if r["version"] == "2.0")
    assert [w["file"] for w in release["wheels"]] == ["alpha-2.0-py3-none-any.whl"]
    assert len(release["wheels"][0]["sha256"]) == 64 and release["wheels"][0]["url"].startswith("http://127.0.0.1")


def test_resolve_to_a_pylock_from_the_synced_snapshot(database, index, tmp_path):
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from packaging.pylock import Pylock

    (database / "constraints" / "_sources.toml").write_text("schema = 1\n")
    assert run_sync(database, index).exit_code == 0
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nalpha = "2.0"\n')
    result = CliRunner().invoke(cli, ["resolve", str(stack), "--db", str(database), "--format", "pylock"])
    assert result.exit_code == 0, result.output
    lock = Pylock.from_dict(tomllib.loads(result.stdout))
    assert {(p.name, str(p.version)) for p in lock.packages} == {("alpha", "2.0"), ("beta", "0.9")}
    assert all(p.wheels and p.wheels[0].hashes["sha256"] for p in lock.packages)
    assert str(lock.requires_python) == "==3.12.*"


def test_pylock_refuses_a_package_without_wheel_records(database, index, tmp_path):
    (database / "constraints" / "_sources.toml").write_text("schema = 1\n")
    assert run_sync(database, index).exit_code == 0
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nalpha = "2.0"\nnumpy = "2.3.0"\n')
    result = CliRunner().invoke(cli, ["resolve", str(stack), "--db", str(database), "--format", "pylock"])
    assert result.exit_code == 2 and "cannot write a lock: numpy 2.3.0" in result.output
