"""`compat db sync` against an index served on 127.0.0.1 from tests/index/."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest
from click.testing import CliRunner

from compat.cli import cli
from compat.knowledge import index as index_module
from compat.knowledge.index import IndexClient
from compat.knowledge.snapshot import lazy_releases, read_header, read_snapshot
from compat.knowledge.sync import load_plan, sync

from .index_server import LocalIndex, sync_database


@pytest.fixture
def index():
    with LocalIndex() as served:
        yield served


@pytest.fixture
def database(tmp_path):
    return sync_database(tmp_path / "data", ["alpha", "Beta"])


def snapshot(database, name):
    header, *lines = (database / "metadata" / f"{name}.jsonl").read_text().splitlines()
    return {**json.loads(header), "releases": [json.loads(line) for line in lines]}


def versions(database, name):
    return [r["version"] for r in snapshot(database, name)["releases"]]


def run_sync(database, index, *extra, env=None):
    return CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(database), "--index-url", index.url, "--retries", "0", *extra], env=env)


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
    result = CliRunner().invoke(cli, ["db", "sync", "--quiet", "--db", str(database), "--retries", "0"], env={"PIP_INDEX_URL": index.url})
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


# -- what an installer sees ------------------------------------------------------


def sync_packages(database, index, *packages, workers=8, since="2026-01-01"):
    """Sync `packages` (tracked) from the local index, through the Python API."""
    (database / "sync.toml").write_text(f"schema = 1\nsince = {since}\npackages = {json.dumps(list(packages))}\n")
    plan = load_plan(str(database / "sync.toml"))
    return sync(plan, str(database / "metadata"), IndexClient(index.url, retries=0), workers=workers)


def releases(database, name):
    return {r["version"]: r for r in snapshot(database, name)["releases"]}


def test_the_highest_build_tag_is_the_wheel_read(database, index):
    sync_packages(database, index, "built")
    built = releases(database, "built")
    assert built["1.0"]["file"] == "built-1.0-2-cp38-abi3-manylinux1_x86_64.whl"
    assert built["1.0"]["requires_dist"] == ["new-dep"]
    # 1.1's build 3 is yanked: an installer takes the untagged wheel
    assert built["1.1"]["file"] == "built-1.1-cp38-abi3-manylinux1_x86_64.whl"
    assert built["1.1"]["requires_dist"] == ["kept-dep"]


def test_release_lines_carry_the_tags_of_their_wheels(database, index):
    sync_packages(database, index, "built", "sourcey")
    built, sourcey = releases(database, "built"), releases(database, "sourcey")
    assert built["1.0"]["tags"] == ["cp38-abi3-manylinux1_x86_64", "cp38-abi3-manylinux2014_aarch64"]
    assert built["1.1"]["tags"] == ["cp38-abi3-manylinux1_x86_64", "py2.py3-none-macosx_11_0_arm64.macosx_11_0_x86_64"]
    assert sourcey["1.0"]["tags"] == [] and sourcey["1.4"]["tags"] == ["py3-none-any"]
    # and whether each release has an sdist to build when no wheel fits
    assert built["1.0"]["sdist"] is False and sourcey["1.0"]["sdist"] == "sourcey-1.0.tar.gz"
    first = (database / "metadata" / "built.jsonl").read_text().splitlines()[1]
    assert first.startswith('{"version": "1.0", "uploaded": ')


def test_an_sdist_only_release_is_read_from_its_pkg_info(database, index):
    result = sync_packages(database, index, "sourcey")
    sourcey = releases(database, "sourcey")
    assert sourcey["1.0"] == {
        "version": "1.0", "uploaded": "2026-02-01", "requires_python": ">=3.9", "file": "sourcey-1.0.tar.gz",
        "tags": [], "sdist": "sourcey-1.0.tar.gz", "requires_dist": ["dep-one>=1"],
        # no pyproject.toml: pip's legacy setuptools build, whose setuptools this index does not have
        "build_system": {"backend": "setuptools.build_meta:__legacy__", "requires": ["setuptools>=40.8.0"],
                         "unmet": ["setuptools>=40.8.0"]},
    }
    assert sourcey["1.1"]["file"] == "sourcey-1.1.zip" and sourcey["1.1"]["requires_dist"] == ["dep-two"]
    assert "metadata" not in sourcey["1.0"] and "metadata" not in sourcey["1.1"]
    assert sourcey["1.4"]["file"] == "sourcey-1.4-py3-none-any.whl"  # a wheel when there is one
    assert result.how == {"sdist": 4, "range": 1}


def test_how_the_sdist_of_a_release_without_a_wheel_for_linux_is_built_is_recorded(database, index):
    result = sync_packages(database, index, "stubby", "ghostly", "built")
    stubby, ghostly = releases(database, "stubby"), releases(database, "ghostly")
    # wheel-stub is on the index: met
    assert stubby["1.0"]["build_system"] == {"backend": "wheel_stub.buildapi", "requires": ["wheel-stub"],
                                             "index_url": "https://pypi.example.com/"}
    # a wheel for x86-64 Linux only: an aarch64 machine builds the sdist; the index lacks two of its requirements
    assert ghostly["1.0"]["build_system"] == {"backend": "ghost_backend.build",
                                              "requires": ["ghost-backend>=1", "beta>=0.5", "setuptools"],
                                              "unmet": ["ghost-backend>=1", "setuptools"]}
    assert "build_system" not in releases(database, "built")["1.0"]  # wheels for both Linux machines
    assert result.build_systems == 2 and 0 < result.build_bytes
    # a second sync reads neither sdist again, for its build system nor for its PKG-INFO: a file does not change
    index.requests.clear()
    again = sync_packages(database, index, "stubby", "ghostly", "built")
    gets = [path for method, path, _ in index.requests if method == "GET"]
    assert "/files/stubby-1.0.tar.gz" not in gets and "/files/ghostly-1.0.zip" not in gets
    assert again.build_systems == 0 and releases(database, "ghostly") == ghostly


def test_sync_prints_how_many_sdists_it_read_for_their_build_system(database, index):
    (database / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["stubby"]\n')
    result = run_sync(database, index)
    assert result.exit_code == 0, result.output
    assert "1 sdist(s) of releases without a wheel for Linux read for their build system" in result.output


def test_sdist_requirements_that_may_change_at_build_time_are_unknown(database, index):
    result = sync_packages(database, index, "sourcey")
    sourcey = releases(database, "sourcey")
    # 1.2 marks Requires-Dist Dynamic; 1.3's Metadata-Version 2.1 promises nothing
    for version in ("1.2", "1.3"):
        assert sourcey[version]["metadata"] == "unknown" and sourcey[version]["requires_dist"] == []
        assert "requires_python" not in sourcey[version]
    assert result.unknown == 2
    read = {r.version: r for r in read_snapshot(str(database / "metadata" / "sourcey.jsonl")).releases}
    assert read["1.2"].metadata == "unknown" and read["1.0"].metadata is None


@pytest.mark.parametrize("limit", ["SDIST_LIMIT", "PKG_INFO_LIMIT"])
def test_an_sdist_or_pkg_info_over_the_bound_is_not_read(database, index, monkeypatch, limit):
    monkeypatch.setattr(index_module, limit, 20)
    result = sync_packages(database, index, "sourcey")
    assert result.how == {"unreadable": 4, "range": 1} and result.unknown == 4
    assert releases(database, "sourcey")["1.0"]["metadata"] == "unknown"


def test_the_header_lists_every_version_on_the_index(database, index):
    assert run_sync(database, index).exit_code == 0
    beta = snapshot(database, "beta")
    assert beta["versions"] == ["0.8", "0.9", "1.0", "1.1"] and beta["yanked"] == ["1.0"]
    assert beta["tracked"] is True
    assert snapshot(database, "alpha")["versions"] == ["1.0", "2.0", "2.1rc1"]
    path = str(database / "metadata" / "beta.jsonl")
    assert read_header(path) == {k: v for k, v in beta.items() if k not in ("releases", "lines")}
    header, _ = lazy_releases(path)
    assert header["versions"] == beta["versions"]
    assert "versions" not in snapshot(database, "beta.wheels")  # the snapshot's to list


def test_a_required_project_the_index_lacks_is_recorded_not_fatal(database, index):
    result = sync(load_plan(str(database / "sync.toml")), str(database / "metadata"), IndexClient(index.url, retries=0))
    # alpha 2.0 requires numpy; beta 1.0 requires torchish on s390x only: any platform counts
    assert result.missing == ["numpy", "torchish"]
    assert result.untracked == [] and sorted(result.written) == ["alpha", "beta"]


# -- the closure -------------------------------------------------------------------


def test_the_closure_reaches_untracked_packages_with_the_releases_required(database, index):
    result = sync_packages(database, index, "chain-a")
    assert versions(database, "chain-a") == ["1.0"]
    # chain-a requires chain-b>=2,<3: 2.0 is older than the window, 2.2rc1 a
    # pre-release no requirement names, 3.0 out of range
    assert versions(database, "chain-b") == ["2.1"]
    assert snapshot(database, "chain-b")["versions"] == ["1.0", "2.0", "2.1", "2.2rc1", "3.0"]
    assert versions(database, "chain-c") == ["1.0", "1.1"]  # chain-b requires chain-c>=1.0
    assert versions(database, "chain-g") == ["2.0rc1", "2.0"]  # chain-g>=2.0rc1 names a pre-release
    assert snapshot(database, "chain-a")["tracked"] is True and snapshot(database, "chain-b")["tracked"] is False
    assert result.untracked == ["chain-b", "chain-c", "chain-d", "chain-e", "chain-g"]
    assert result.missing == ["chain-missing"]
    assert result.invalid == 1  # "not a requirement!!" is skipped


def test_the_closure_follows_markers_and_requested_extras_only(database, index):
    sync_packages(database, index, "chain-a")
    # chain-d is required on win32 only: some stack may run there
    assert versions(database, "chain-d") == ["1.0"]
    # chain-b requires chain-c[fast], whose "fast" lines name chain-e
    assert "1.0" in versions(database, "chain-e")
    # nothing requests chain-c[slow] or chain-a[never]
    assert not (database / "metadata" / "chain-f.jsonl").exists()
    assert not (database / "metadata" / "chain-x.jsonl").exists()


def test_the_closure_ends_on_cycles_and_keeps_the_newest_release_an_unmet_requirement_needs(database, index):
    sync_packages(database, index, "chain-a")
    # chain-a -> chain-b -> chain-c -> chain-a, and chain-d <-> chain-e;
    # chain-d needs chain-e<1, met only by 0.5, older than the window
    assert versions(database, "chain-e") == ["0.5", "1.0"]


def test_a_tracked_package_reached_from_another_keeps_its_whole_window(database, index):
    (database / "sync.toml").write_text('schema = 1\nsince = 2026-01-01\npackages = ["chain-a", "chain-c"]\n')
    result = run_sync(database, index, "--package", "chain-b")
    assert result.exit_code == 0, result.output
    # chain-c is tracked: 2.0b1 is in its window though no requirement names it
    assert versions(database, "chain-c") == ["1.0", "1.1", "2.0b1"]
    assert snapshot(database, "chain-c")["tracked"] is True and snapshot(database, "chain-e")["tracked"] is False


def test_the_same_index_gives_the_same_bytes_whatever_the_workers(database, index, tmp_path):
    sync_packages(database, index, "chain-a", "built", "sourcey", workers=1)
    one = {p.name: p.read_bytes() for p in (database / "metadata").iterdir()}
    for path in (database / "metadata").iterdir():
        path.unlink()
    sync_packages(database, index, "chain-a", "built", "sourcey", workers=8)
    assert {p.name: p.read_bytes() for p in (database / "metadata").iterdir()} == one


def test_the_client_counts_every_request_across_threads(database, index):
    result = sync_packages(database, index, "chain-a", "built", "sourcey", workers=8)
    assert result.requests == len(index.requests)


def test_a_release_requiring_its_own_package_only_adds_extras():
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from compat.knowledge.index import ReleaseMetadata
    from compat.knowledge.sync import _demands

    def release(*lines):
        return ReleaseMetadata("1.0", None, None, list(lines), False, "x-1.0-py3-none-any.whl", "range")

    fetched = {
        ("app", Version("1.0")): release("lib[all]"),
        ("lib", Version("1.0")): release('lib[gpu]>=0.5; extra == "all"', 'cuda-thing; extra == "gpu"'),
    }
    # lib[all] means lib[gpu] of the same release: ">=0.5" admits no other lib
    assert _demands(fetched) == {"lib": {SpecifierSet("")}, "cuda-thing": {SpecifierSet("")}}
