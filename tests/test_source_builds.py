"""Releases pip and uv install by building their sdist: what the snapshot
records of how each sdist is built (`build_system`, docs/database.md), how
its reader and `db lint` refuse a bad one, and what a check says of the
build: a wheel_stub sdist downloads its wheel from another index, a build
requirement no release on the index meets is an error (pip cannot build
it), any other build is the source-build warning naming its backend.

The databases are small ones written here, shaped like the real one; the
index is held in memory (tests/index_server.py): nothing goes to the network.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.version import Version

from compat import Database, check
from compat.cli import cli
from compat.errors import CompatError, DatabaseError
from compat.knowledge import index as index_module
from compat.knowledge.index import IndexClient, IndexFile, build_system_of
from compat.knowledge.snapshot import lacks_linux_wheel, read_snapshot, snapshot_problems, write_snapshot

from .conftest import base
from .index_server import LocalIndex, MemoryIndex, memory_file, sync_database, tar_gz, zip_archive

ROOT = Path(__file__).resolve().parent.parent
X86 = "cp312-cp312-manylinux_2_28_x86_64"
STUB = {"backend": "wheel_stub.buildapi", "requires": ["wheel-stub"], "index_url": "https://pypi.example.com/"}


def _release(version: str, build_system, *, tags=(), sdist: str | bool | None = None) -> dict:
    line = {"version": version, "requires_dist": [], "tags": list(tags)}
    line["sdist"] = f"pkg-{version}.tar.gz" if sdist is None else sdist
    if build_system is not None:
        line["build_system"] = build_system
    return line


def _snapshot(root: Path, name: str, releases: list[dict], tracked: bool = True) -> Path:
    header = {"schema": 1, "name": name, "index": "https://index.example/simple/", "taken": "2026-12-01",
              "tracked": tracked, "versions": [r["version"] for r in releases]}
    path = root / "metadata" / f"{name}.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in [header, *releases]) + "\n")
    return path


def _database(root: Path) -> Path:
    """An empty database beside the bundled GPU catalog, CUDA table and sources."""
    (root / "constraints").mkdir(parents=True)
    (root / "metadata").mkdir()
    for name in ("gpus.toml", "cuda.toml", "constraints/_sources.toml"):
        shutil.copy(ROOT / "data" / name, root / name)
    return root


# Each release of `pkg` has no wheel at all and an sdist, built as its line says;
# `setup-dep` is a package the database holds, whose index lists 1.0 and 2.0 only.
RELEASES = {
    "1.0": STUB,
    "2.0": {"backend": "ghost.build", "requires": ["ghost-backend>=1", "setuptools"], "unmet": ["ghost-backend>=1"]},
    "3.0": {"backend": "setuptools.build_meta", "requires": ["setuptools>=61", "setup-dep>=5"]},
    "4.0": {"backend": "setuptools.build_meta", "requires": ["setuptools>=61", "setup-dep>=1.5"]},
    "5.0": {"backend": "ghost.build", "requires": ["ghost-backend>=1; sys_platform == 'win32'"],
            "unmet": ["ghost-backend>=1; sys_platform == 'win32'"]},
    "6.0": "unknown",
    "7.0": None,  # not recorded: an older snapshot
    "8.0": {"backend": "wheel_stub.buildapi", "requires": ["wheel-stub"]},  # names no index
}


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Database:
    root = _database(tmp_path_factory.mktemp("db"))
    _snapshot(root, "pkg", [_release(v, b) for v, b in RELEASES.items()])
    _snapshot(root, "setup-dep", [{"version": v, "requires_dist": [], "tags": ["py3-none-any"], "sdist": False}
                                  for v in ("1.0", "2.0")], tracked=False)
    # a wheel for x86-64 Linux only: an aarch64 machine builds the sdist
    _snapshot(root, "half", [_release("1.0", RELEASES["2.0"], tags=[X86], sdist="half-1.0.tar.gz")])
    return Database.load(str(root))


def stack(packages: dict, **system) -> dict:
    return {"system": {"python": "3.12", **system}, "packages": packages}


def finding(report, prefix: str):
    found = [f for f in report.findings if f.id.startswith(prefix)]
    assert len(found) == 1, [f.id for f in report.findings]
    return found[0]


# -- what a check says ----------------------------------------------------------------------------


def test_a_wheel_stub_sdist_is_a_warning_that_names_the_index_it_downloads_from(db):
    report = check(stack({"pkg": "1.0"}), database=db)
    warning = finding(report, "source-build:pkg==1.0")
    assert warning.severity == "warning" and report.ok
    assert "https://pypi.example.com/" in warning.message and "compiles nothing" in warning.message
    assert "compat cannot see that index" in warning.message and "compiler toolchain" not in warning.message
    # its pyproject.toml names no index: wheel-stub takes the one its environment variable names
    unnamed = finding(check(stack({"pkg": "8.0"}), database=db), "source-build:pkg==8.0")
    assert "WHEEL_STUB_PIP_INDEX_URL" in unnamed.message


def test_a_build_requirement_no_release_on_the_index_meets_is_an_error(db):
    # a package the database does not hold: what the snapshot recorded of the index
    report = check(stack({"pkg": "2.0"}), database=db)
    error = finding(report, "sdist-build:pkg==2.0")
    assert error.severity == "error" and not report.ok
    assert "pip cannot build its sdist (pkg-2.0.tar.gz)" in error.message and "ghost-backend>=1" in error.message
    assert "setuptools," not in error.message  # met: only the unmet line is named
    assert not [f for f in report.findings if f.id.startswith("source-build:")]
    # a package the database holds: the index's list of its releases, which stops at 2.0
    held = finding(check(stack({"pkg": "3.0"}), database=db), "sdist-build:pkg==3.0")
    assert "setup-dep>=5" in held.message and "lists every release" in held.message
    # one the list meets is the plain source-build warning, naming the backend and what the build needs
    fine = check(stack({"pkg": "4.0"}), database=db)
    warning = finding(fine, "source-build:pkg==4.0")
    assert fine.ok and "with setuptools.build_meta (build requirements: setuptools>=61, setup-dep>=1.5)" in warning.message
    assert "compiler toolchain" in warning.message


def test_a_build_requirement_whose_marker_does_not_hold_here_is_not_needed(db):
    report = check(stack({"pkg": "5.0"}), database=db)
    assert report.ok and finding(report, "source-build:pkg==5.0").severity == "warning"
    windows = check(stack({"pkg": "5.0"}, platform="windows-x86_64"), database=db)
    assert finding(windows, "sdist-build:pkg==5.0").severity == "error"


def test_a_build_system_not_read_or_not_recorded_is_the_plain_warning(db):
    unread = finding(check(stack({"pkg": "6.0"}), database=db), "source-build:pkg==6.0")
    assert "its pyproject.toml could not be read" in unread.message and "compiler toolchain" in unread.message
    older = finding(check(stack({"pkg": "7.0"}), database=db), "source-build:pkg==7.0")
    assert "pip and uv build it from its sdist (pkg-7.0.tar.gz), which needs a compiler toolchain" in older.message


@pytest.mark.parametrize("version", list(RELEASES))
def test_only_binary_makes_any_sdist_an_error(db, version):
    report = check({**stack({"pkg": version}), "compat": {"only_binary": True}}, database=db)
    assert finding(report, "wheel:pkg==").severity == "error"
    assert not [f for f in report.findings if f.id.startswith(("source-build:", "sdist-build:"))]


def test_the_build_is_judged_only_where_no_wheel_fits(db):
    # x86-64 Linux installs half's wheel; aarch64 Linux builds its sdist, which cannot be built
    assert not [f for f in check(stack({"half": "1.0"}), database=db).findings if "half==" in f.id]
    report = check(stack({"half": "1.0"}, platform="linux-aarch64"), database=db)
    assert "ghost-backend>=1" in finding(report, "sdist-build:half==1.0").message


def test_the_real_cuda_tile_pin_of_sglang_downloads_its_wheel_from_nvidias_index():
    # SGLang 0.5.18 pins cuda-tile==1.6.0rc5: no wheel on PyPI, an sdist whose backend is wheel-stub's
    report = check(base(packages={"sglang": "0.5.18"}, hardware={"gpu": "H100"}))
    warning = finding(report, "source-build:cuda-tile==1.6.0rc5")
    assert report.ok and warning.severity == "warning"
    assert "https://pypi.nvidia.com/" in warning.message and "wheel_stub" in warning.message
    assert "cuda_tile-1.6.0rc5.tar.gz" in warning.message and "compiler toolchain" not in warning.message
    forbidden = check(base(packages={"sglang": "0.5.18"}, hardware={"gpu": "H100"}, compat={"only_binary": True}))
    assert "wheel:cuda-tile==1.6.0rc5" in {f.id for f in forbidden.errors}


def test_the_real_flashinfer_0_4_0_sdist_cannot_be_built():
    # flashinfer-python 0.4.0 has no wheel; its sdist's build needs apache-tvm-ffi==0.1.0b15, which the
    # index no longer has (flashinfer-ai/flashinfer#1962)
    report = check(base(packages={"flashinfer-python": "0.4.0"}, hardware={"gpu": "H100"}))
    error = finding(report, "sdist-build:flashinfer-python==0.4.0")
    assert error.severity == "error" and "apache-tvm-ffi==0.1.0b15" in error.message


# -- what the reader refuses ------------------------------------------------------------------------


BAD = [
    (5, "build_system"),
    ({"backend": "python setup.py", "requires": []}, "build_system.backend"),
    ({"requires": []}, "build_system.backend"),
    ({"backend": "a.b", "requires": "setuptools"}, "build_system.requires"),
    ({"backend": "a.b", "requires": ["setuptools"], "extra": 1}, "build_system.extra"),
    ({"backend": "a.b", "requires": ["setuptools"], "index_url": "ftp://x/"}, "build_system.index_url"),
    ({"backend": "a.b", "requires": ["setuptools"], "unmet": ["wheel"]}, "build_system.unmet"),
    ({"backend": "a.b", "requires": ["torch[ 2"]}, "build_system.requires[0]"),
]


@pytest.mark.parametrize("value, key", BAD)
def test_a_bad_build_system_is_refused_naming_the_file_the_line_and_the_key(tmp_path, value, key):
    root = _database(tmp_path / "data")
    path = _snapshot(root, "pkg", [_release("1.0", value)])
    problems = snapshot_problems(str(path))
    assert [(p.line, p.key) for p in problems] == [(2, key)], problems
    with pytest.raises(DatabaseError) as raised:
        read_snapshot(str(path))
    assert str(raised.value).startswith(f"{path}:2: ")
    lint = CliRunner().invoke(cli, ["db", "lint", "--db", str(root)])
    assert lint.exit_code == 1 and f"pkg.jsonl:2: {key}:" in lint.output
    # a check that reaches the release refuses it: one line, exit 2
    (tmp_path / "stack.toml").write_text('[system]\npython = "3.12"\n[packages]\npkg = "1.0"\n')
    result = CliRunner().invoke(cli, ["check", str(tmp_path / "stack.toml"), "--db", str(root)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "pkg.jsonl:2" in result.output


def test_a_build_system_of_a_release_without_an_sdist_is_refused(tmp_path):
    root = _database(tmp_path / "data")
    path = _snapshot(root, "pkg", [_release("1.0", STUB, sdist=False)])
    assert [(p.line, p.key) for p in snapshot_problems(str(path))] == [(2, "build_system")]


def test_lint_accepts_every_form_and_the_writer_keeps_it(tmp_path):
    root = _database(tmp_path / "data")
    path = _snapshot(root, "pkg", [_release(v, b) for v, b in RELEASES.items()])
    _snapshot(root, "setup-dep", [{"version": "1.0", "requires_dist": [], "tags": ["py3-none-any"]}])
    assert snapshot_problems(str(path)) == []
    snapshot = read_snapshot(str(path))
    write_snapshot(snapshot, str(path))  # rewritten with its offsets, as a sync writes it
    assert read_snapshot(str(path)) == snapshot
    lint = CliRunner().invoke(cli, ["db", "lint", "--db", str(root)])
    assert "pkg.jsonl" not in lint.output, lint.output


def test_the_bundled_snapshots_record_it_for_every_release_a_check_can_reach_as_a_build():
    bundled = Database.load()
    missing = []
    for path in sorted((ROOT / "data" / "metadata").glob("*.jsonl")):
        if path.name.endswith(".wheels.jsonl"):
            continue
        for release in read_snapshot(str(path)).releases:
            if isinstance(release.sdist, str) and lacks_linux_wheel(release.tags or ()) and release.build_system is None:
                missing.append(f"{path.stem} {release.version}")
    assert not missing, missing[:10]
    assert bundled.component("cuda-tile").release(Version("1.6.0rc5")).build_system == {
        "backend": "wheel_stub.buildapi", "requires": ["wheel-stub"], "index_url": "https://pypi.nvidia.com/"}


# -- reading it from the sdist --------------------------------------------------------------------


def _file(index: MemoryIndex, name: str, body: bytes, route=None) -> IndexFile:
    index.routes[f"/files/{name}"] = route or memory_file(body)
    return IndexFile(filename=name, url=f"https://index.test/files/{name}", version=Version("1.0"),
                     uploaded=None, yanked=False, metadata=False, sha256=None, size=len(body), project="pkg")


def _client(index: MemoryIndex) -> IndexClient:
    return IndexClient(index.url, retries=0, use_netrc=False, opener=index.opener)


PYPROJECT = b'[build-system]\nrequires = ["wheel-stub"]\nbuild-backend = "wheel_stub.buildapi"\n' \
            b'[tool.wheel_stub]\nindex_url = "https://pypi.example.com/"\n'


def test_a_tar_gz_is_read_as_a_stream_that_stops_at_its_pyproject():
    index = MemoryIndex()
    padding = os.urandom(2 * 1024 * 1024)  # incompressible: the archive is as large
    body = tar_gz([("pkg-1.0/PKG-INFO", b"Metadata-Version: 2.4\nName: pkg\nVersion: 1.0\n"),
                   ("pkg-1.0/pyproject.toml", PYPROJECT), ("pkg-1.0/data.bin", padding)])
    found, read = _client(index).build_system(_file(index, "pkg-1.0.tar.gz", body))
    assert found == STUB and read < len(body) / 4


def test_an_sdist_without_a_pyproject_is_built_by_setuptools_legacy_backend():
    index = MemoryIndex()
    body = tar_gz([("pkg-1.0/setup.py", b"from setuptools import setup\nsetup()\n")])
    found, read = _client(index).build_system(_file(index, "pkg-1.0.tar.gz", body))
    assert found == {"backend": "setuptools.build_meta:__legacy__", "requires": ["setuptools>=40.8.0"]}
    assert read == len(body)  # read to its end to know there is none
    # a pyproject.toml of another folder, or deeper, is not the sdist's
    body = tar_gz([("pkg-1.0/setup.py", b""), ("pkg-1.0/tests/pyproject.toml", PYPROJECT)])
    assert _client(index).build_system(_file(index, "pkg-1.0.tar.gz", body))[0]["backend"].startswith("setuptools")


def test_a_zip_sdist_is_read_whole():
    index = MemoryIndex()
    body = zip_archive([("pkg-1.0/setup.py", "# nothing\n"), ("pkg-1.0/pyproject.toml", PYPROJECT.decode())])
    assert _client(index).build_system(_file(index, "pkg-1.0.zip", body)) == (STUB, len(body))


@pytest.mark.parametrize("pyproject", [
    b"[build-system\nrequires = []\n",  # not TOML
    b"\xff\xfe",  # not UTF-8
    b'[build-system]\nbuild-backend = "setuptools.build_meta"\n',  # no requires: pip refuses it
    b'[build-system]\nrequires = ["torch[ 2"]\n',  # a line that does not parse
    b'build-system = "setuptools"\n',
    b'[build-system]\nrequires = []\nbuild-backend = "python setup.py"\n',
])
def test_a_pyproject_pip_could_not_use_is_unknown(pyproject):
    assert build_system_of(pyproject) == "unknown"


def test_what_pip_assumes_without_a_backend_or_a_table():
    assert build_system_of(b'[build-system]\nrequires = ["setuptools>=64", "wheel"]\n') == {
        "backend": "setuptools.build_meta:__legacy__", "requires": ["setuptools>=64", "wheel"]}
    assert build_system_of(b'[project]\nname = "pkg"\n') == build_system_of(None)
    # index_url is kept for wheel-stub's backend only
    assert "index_url" not in build_system_of(PYPROJECT.replace(b"wheel_stub.buildapi", b"hatchling.build"))


def test_an_archive_that_does_not_open_or_an_sdist_over_the_cap_is_unknown(monkeypatch):
    index = MemoryIndex()
    assert _client(index).build_system(_file(index, "pkg-1.0.tar.gz", b"not gzip at all"))[0] == "unknown"
    assert _client(index).build_system(_file(index, "pkg-1.0.zip", b"PK not a zip"))[0] == "unknown"
    cut = gzip.compress(b"x" * 5000)[:-20]
    assert _client(index).build_system(_file(index, "pkg-1.0.tar.gz", cut))[0] == "unknown"
    link = tarfile.TarInfo("pkg-1.0/pyproject.toml")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    assert _client(index).build_system(_file(index, "pkg-1.0.tar.gz", tar_gz([link])))[0] == "unknown"
    monkeypatch.setattr(index_module, "BUILD_SYSTEM_LIMIT", 64 * 1024)
    body = tar_gz([("pkg-1.0/data.bin", os.urandom(256 * 1024)), ("pkg-1.0/pyproject.toml", PYPROJECT)])
    found, read = _client(index).build_system(_file(index, "pkg-1.0.tar.gz", body))
    assert found == "unknown" and read == 64 * 1024
    assert _client(index).build_system(_file(index, "pkg-1.0.zip", zip_archive([("a", os.urandom(128 * 1024))])))[0] \
        == "unknown"


def test_a_download_that_fails_is_an_index_error_not_unknown():
    from .index_server import Reply

    index = MemoryIndex()
    body = tar_gz([("pkg-1.0/setup.py", os.urandom(100 * 1024))])
    # the reply ends halfway through what it said it sends: the connection's failure, not a malformed archive
    short = lambda method, headers: Reply(200, [("Content-Length", str(len(body)))], body[:len(body) // 2])  # noqa: E731
    with pytest.raises(CompatError, match="incomplete reply"):
        _client(index).build_system(_file(index, "pkg-1.0.tar.gz", body, route=short))


# -- the backfill -----------------------------------------------------------------------------------


def _tool():
    spec = importlib.util.spec_from_file_location("snapshot_build_systems", ROOT / "tools" / "snapshot_build_systems.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_backfill_records_the_build_system_of_the_releases_a_check_can_reach(tmp_path, capsys):
    from compat.knowledge.sync import load_plan, sync

    with LocalIndex() as served:
        root = sync_database(tmp_path / "data", ["stubby", "ghostly", "sourcey"])
        sync(load_plan(str(root / "sync.toml")), str(root / "metadata"), IndexClient(served.url, retries=0))
        synced = {p.name: p.read_text() for p in (root / "metadata").glob("*.jsonl")}
        for name in ("stubby", "ghostly", "sourcey"):  # as a sync wrote them before the key existed
            path = str(root / "metadata" / f"{name}.jsonl")
            snapshot = read_snapshot(path)
            write_snapshot(snapshot._replace(releases=[r._replace(build_system=None) for r in snapshot.releases]), path)
        with open(root / "sync.toml", "a") as handle:
            handle.write(f'index = "{served.url}"\n')
        served.requests.clear()
        assert _tool().main(["--db", str(root), "--workers", "2"]) == 0
    assert {p.name: p.read_text() for p in (root / "metadata").glob("*.jsonl")} == synced
    printed = capsys.readouterr().err
    assert "6 sdist(s) read" in printed and "0 failed" in printed
    # only the sdists of releases without a wheel for Linux: not sourcey 1.4's, which has a pure-Python wheel
    assert not [p for _, p, _ in served.requests if p.endswith(("sourcey-1.4.tar.gz", ".whl", ".metadata"))]
