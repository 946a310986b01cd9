"""Files compat reads that a user (or a program) may have replaced by
something hostile: a snapshot or overlay file that is a link to /dev/zero,
a FIFO or a huge file, and an installed environment (``--env``) whose
METADATA or WHEEL files are such, or whose WHEEL expands to millions of
tags. Each is refused with one line naming the file (exit 2), never a
traceback, a hang or a MemoryError; and a seeded fuzzer feeds the
environment reader mutated site-packages folders (docs/reliability.md)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from compat.engine.installed import installed_findings
from compat.errors import CompatError
from compat.sources.environment import read_environment
from compat.knowledge.binding import load_stack

ROOT = Path(__file__).resolve().parent.parent
STACK = '[system]\npython = "3.12"\n[packages]\nvllm = "0.32.0"\n'


def run_compat(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """compat in a process of its own, bounded in time and (address space) memory."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COMPAT_DB", "COMPAT_DB_OVERLAY")}
    environ.update(env)
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30)); "
    code = limit + "import sys; from compat.cli import main; sys.argv[0] = 'compat'; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=20,
                          env=environ, cwd=tmp_path)


def assert_one_line(result: subprocess.CompletedProcess[str], file: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr[-2000:])
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("compat: error: "), result.stderr[-2000:]
    assert len(result.stderr) <= 600 + len("compat: error: \n") and file in result.stderr
    assert "Traceback" not in result.stderr


# -- snapshots and overlays --------------------------------------------------------


def hostile(folder: Path, kind: str) -> Path:
    """A ``metadata/vllm.jsonl`` in `folder` that is `kind`."""
    (folder / "metadata").mkdir(parents=True)
    path = folder / "metadata" / "vllm.jsonl"
    if kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(100 * 1024 * 1024)  # sparse: 100 MiB of nothing
    elif kind == "folder":
        path.mkdir()
    return path


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge"])
@pytest.mark.parametrize("layer", ["COMPAT_DATA", "COMPAT_DB_OVERLAY"])
@pytest.mark.parametrize("command", ["check", "show"])
def test_a_snapshot_that_is_not_a_bounded_regular_file_is_refused(tmp_path, kind, layer, command):
    path = hostile(tmp_path / "layer", kind)
    (tmp_path / "stack.toml").write_text(STACK)
    args = ["check", "stack.toml"] if command == "check" else ["db", "show", "vllm"]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    result = run_compat(tmp_path, *args, **{layer: str(tmp_path / "layer")})
    assert_one_line(result, str(path))
    assert ("not a regular file" in result.stderr) if kind != "huge" else ("larger than 64 MiB" in result.stderr)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written


def test_a_fifo_snapshot_beside_a_graph_file_is_refused_not_waited_on(tmp_path):
    """With a ``_graph.json`` the user layer's snapshots are not read for the
    graph: the snapshot chosen and the header looked up must not block."""
    path = hostile(tmp_path / "layer", "fifo")
    (tmp_path / "layer" / "metadata" / "_graph.json").write_bytes((ROOT / "data/metadata/_graph.json").read_bytes())
    (tmp_path / "stack.toml").write_text(STACK)
    assert_one_line(run_compat(tmp_path, "check", "stack.toml", COMPAT_DATA=str(tmp_path / "layer")), str(path))


def test_lint_names_a_fifo_snapshot_as_a_problem(tmp_path):
    path = hostile(tmp_path / "layer", "fifo")
    result = run_compat(tmp_path, "db", "lint", COMPAT_DATA=str(tmp_path / "layer"))
    assert result.returncode == 1 and f"{path}: cannot be read: not a regular file" in result.stdout + result.stderr


def test_the_file_helpers_refuse_what_is_not_a_regular_file(tmp_path):
    from compat import _files

    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "small").write_bytes(b"x" * 10)
    for path in ("/dev/zero", str(tmp_path / "fifo"), str(tmp_path)):
        with pytest.raises(_files.NotAFile):
            _files.read_bytes(path)
        assert _files.read_text(path) is None and not _files.is_regular(path)
    with pytest.raises(_files.NotAFile, match="larger than 5 bytes"):
        _files.read_bytes(str(tmp_path / "small"), 5)
    assert _files.read_text(str(tmp_path / "small")) == "x" * 10


def test_a_header_offset_past_any_file_is_an_error_not_a_memory_error(tmp_path):
    from compat.knowledge.snapshot import _read_line

    path = tmp_path / "x.jsonl"
    path.write_text('{"name": "x"}\n{"version": "1.0"}\n')
    # read(10**12 + 1) used to ask for a terabyte: now the read is bounded by the file's cap
    assert _read_line(str(path), 14, 10**12, "1.0", False, 2)["version"] == "1.0"
    with pytest.raises(CompatError, match="does not point at its line"):
        _read_line(str(path), 0, 10**12, "1.0", False, 2)


# -- an installed environment (--env) ------------------------------------------------


def site(tmp_path: Path, dists: dict[str, dict[str, str | bytes | None]]) -> Path:
    """An interpreter that sees only the distributions `dists` (folder ->
    file -> content; None: a FIFO, b"/dev/zero": a link to it)."""
    packages = tmp_path / "site-packages"
    packages.mkdir(parents=True, exist_ok=True)
    for folder, files in dists.items():
        (packages / folder).mkdir()
        for name, content in files.items():
            path = packages / folder / name
            if content is None:
                os.mkfifo(path)
            elif content == b"/dev/zero":
                path.symlink_to("/dev/zero")
            elif isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nPYTHONPATH="{packages}" exec "{sys.executable}" -S "$@"\n')
    python.chmod(0o755)
    return python


def metadata(name: str, version: str, *extra: str) -> str:
    return "".join(f"{line}\n" for line in ("Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *extra))


def run_env(tmp_path: Path, python: Path) -> subprocess.CompletedProcess[str]:
    return run_compat(tmp_path, "check", "--env", "--python", str(python))


def test_a_wheel_whose_tags_expand_to_millions_is_refused(tmp_path):
    parts = ".".join(f"x{i}" for i in range(500))
    python = site(tmp_path, {"bomb-1.0.dist-info": {"METADATA": metadata("bomb", "1.0"),
                                                    "WHEEL": f"Wheel-Version: 1.0\nTag: {parts}-{parts}-{parts}\n"}})
    result = run_env(tmp_path, python)
    assert_one_line(result, "bomb-1.0.dist-info/WHEEL")
    assert "more than 10,000" in result.stderr


def test_a_wheel_of_many_tags_under_the_bound_is_judged(tmp_path):
    parts = ".".join(f"x{i}" for i in range(20))  # 8,000 tags
    python = site(tmp_path, {"many-1.0.dist-info": {"METADATA": metadata("many", "1.0"),
                                                    "WHEEL": f"Wheel-Version: 1.0\nTag: {parts}-{parts}-{parts}\n"}})
    environment = read_environment(str(python))
    assert [d.name for d in environment.distributions] == ["many"]


@pytest.mark.parametrize("file", ["METADATA", "WHEEL"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_metadata_file_that_is_not_a_bounded_regular_file_is_refused(tmp_path, file, kind):
    files: dict[str, str | bytes | None] = {"METADATA": metadata("bad", "1.0"), "WHEEL": "Tag: py3-none-any\n"}
    files[file] = {"fifo": None, "dev-zero": b"/dev/zero", "huge": b""}[kind]
    python = site(tmp_path, {"bad-1.0.dist-info": files})
    if kind == "huge":
        with open(tmp_path / "site-packages" / "bad-1.0.dist-info" / file, "wb") as handle:
            handle.truncate(17 * 1024 * 1024)
    result = run_env(tmp_path, python)
    assert_one_line(result, f"bad-1.0.dist-info/{file}")
    assert ("larger than 16 MiB" if kind == "huge" else "not a regular file") in result.stderr


def test_metadata_without_a_name_or_version_is_a_finding_not_dropped(tmp_path, db):
    python = site(tmp_path, {"noversion-1.0.dist-info": {"METADATA": "Metadata-Version: 2.1\nName: noversion\n"},
                             "noname-2.0.dist-info": {"METADATA": "Metadata-Version: 2.1\nVersion: 2.0\n"},
                             "fine-1.0.dist-info": {"METADATA": metadata("fine", "1.0")}})
    environment = read_environment(str(python))
    stack = load_stack({"system": {"python": environment.python}}, db)
    findings = installed_findings(environment, stack)
    found = {f.id: f.message for f in findings}
    assert {f.severity for f in findings} == {"warning"}  # pip ignores them, and pip check passes
    assert set(found) == {"installed-metadata:noversion", "installed-metadata:noname"}
    assert "its metadata has no Version" in found["installed-metadata:noversion"]
    assert "its metadata has no Name" in found["installed-metadata:noname"]


# -- the fuzzer ------------------------------------------------------------------------

_HOSTILE_VALUES = ["", "٢.٠", "1" * 5000, "torch>>2", "x; extra == ", "(" * 200, "foo; python_version > '3'",
                   "a" * 70_000, "\x00\x1b[31m", "\u2028", "py3-none-any", "-".join(["a." * 300 + "b"] * 3),
                   "cp312-cp312-" + ".".join(["manylinux_2_17_x86_64"] * 200), "1.0", "~orch", ">=3.", "∞"]
_FIELDS = ["Name", "Version", "Requires-Dist", "Requires-Python", "Provides-Extra", "Tag", "Metadata-Version"]


def _mutate(text: bytes, rng: random.Random) -> bytes:
    for _ in range(rng.randint(1, 3)):
        choice = rng.randrange(9)
        lines = text.split(b"\n")
        if choice == 0 and text:  # flip bytes
            data = bytearray(text)
            for _ in range(rng.randint(1, 5)):
                data[rng.randrange(len(data))] = rng.randrange(256)
            text = bytes(data)
        elif choice == 1:  # cut
            text = text[: rng.randint(0, len(text))]
        elif choice == 2:  # a field with a hostile value
            lines.insert(rng.randint(0, len(lines)),
                         f"{rng.choice(_FIELDS)}: {rng.choice(_HOSTILE_VALUES)}".encode("utf-8", "surrogatepass"))
            text = b"\n".join(lines)
        elif choice == 3 and lines:  # delete, repeat or shuffle lines
            rng.choice([lambda: lines.pop(rng.randrange(len(lines))), lambda: lines.extend(lines * rng.randint(1, 50)),
                        lambda: rng.shuffle(lines)])()
            text = b"\n".join(lines)
        elif choice == 4:
            text = text.decode("utf-8", "replace").encode("utf-16")
        elif choice == 5:  # continuation lines, CRLF
            text = text.replace(b"\n", rng.choice([b"\r\n", b"\n ", b"\n\t", b"\r"]))
        elif choice == 6:  # a body, or a huge one
            text += b"\n\n" + b"x" * rng.choice([10, 100_000, 2_000_000])
        elif choice == 7:
            text = b""
        else:  # a tag set compressed a little or a lot
            width = rng.choice([2, 10, 30, 500])
            part = ".".join(f"p{i}" for i in range(width)).encode()
            text += b"\nTag: " + b"-".join([part] * 3) + b"\n"
    return text


def _fake_site(folder: Path, rng: random.Random) -> Path:
    dists: dict[str, dict[str, str | bytes | None]] = {}
    for number in range(rng.randint(1, 3)):
        name, version = f"pkg{number}", rng.choice(["1.0", "2.0.post1", "0.1.dev3"])
        files: dict[str, str | bytes | None] = {
            "METADATA": metadata(name, version, "Requires-Dist: pkg0>=0.1", "Requires-Python: >=3.8",
                                 "Provides-Extra: gpu", 'Requires-Dist: pkg1; extra == "gpu"').encode(),
            "WHEEL": b"Wheel-Version: 1.0\nGenerator: x\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
            "RECORD": f"{name}/__init__.py,sha256=abc,10\n{name}-{version}.dist-info/METADATA,,\n".encode(),
        }
        for file in list(files):
            if rng.random() < 0.5:
                files[file] = _mutate(files[file], rng)  # type: ignore[arg-type]
        if rng.random() < 0.03:
            files[rng.choice(["METADATA", "WHEEL"])] = rng.choice([None, b"/dev/zero"])
        if rng.random() < 0.05:
            del files["METADATA"]
        dists[f"{name}-{version}.dist-info"] = files
    return site(folder, dists)


def fuzz_environments(count: int, seed: int, tmp_path: Path, db) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"read": 0, "refused": 0, "findings": 0}
    for number in range(count):
        python = _fake_site(tmp_path / str(number), rng)
        try:
            environment = read_environment(str(python), timeout=20)
            stack = load_stack({"system": {"python": environment.python}}, db)
            findings = installed_findings(environment, stack)
        except CompatError as exc:
            text = str(exc)
            assert "\n" not in text and len(text) <= 600, (number, text[:2000])
            counts["refused"] += 1
        else:
            counts["read"] += 1
            counts["findings"] += len(findings)
            for finding in findings:
                assert "\n" not in finding.message, (number, finding.message[:2000])
    return counts


def test_fuzz_mutated_site_packages(tmp_path, db):
    counts = fuzz_environments(40, 20261205, tmp_path, db)
    print(counts)
    assert counts["read"] + counts["refused"] == 40 and counts["read"] and counts["refused"]


@pytest.mark.slow
def test_fuzz_mutated_site_packages_long(tmp_path, db):
    count = int(os.environ.get("COMPAT_FUZZ_ENV_INPUTS", "2000"))
    counts = fuzz_environments(count, 1205, tmp_path, db)
    print(counts)
    assert counts["read"] + counts["refused"] == count


# -- the names graph, a snapshot's header looked up, a WHEEL read through the library ----------------


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge", "folder"])
def test_a_names_graph_that_is_not_a_bounded_regular_file_is_refused(tmp_path, kind):
    """Found by tests/test_fuzz_readers.py: an overlay's ``_graph.json`` linked
    to /dev/zero was read until memory ran out (a FIFO would have hung)."""
    from compat.knowledge.database import Database
    from compat.knowledge.graph import GRAPH_FILE, read_graph

    from .test_fuzz_readers import bounded

    graph = hostile(tmp_path, kind).with_name(GRAPH_FILE)
    (tmp_path / "metadata" / "vllm.jsonl").rename(graph)
    (tmp_path / "constraints").mkdir()
    with bounded(10):
        with pytest.raises(CompatError, match="cannot be read: (not a regular file|larger than 64 MiB)") as caught:
            read_graph(str(tmp_path / "metadata"))
        assert caught.value.file == str(graph)
        with pytest.raises(CompatError, match="cannot be read"):
            Database(str(tmp_path)).names()


def test_an_overlay_names_graph_linked_to_dev_zero_is_one_line(tmp_path):
    (tmp_path / "org" / "metadata").mkdir(parents=True)
    (tmp_path / "org" / "metadata" / "_graph.json").symlink_to("/dev/zero")
    (tmp_path / "stack.toml").write_text(STACK)
    result = run_compat(tmp_path, "check", "stack.toml", COMPAT_DB_OVERLAY=str(tmp_path / "org"))
    assert_one_line(result, "org/metadata/_graph.json")
    assert "not a regular file" in result.stderr


def test_a_snapshot_the_graph_is_built_from_is_read_within_its_bound(tmp_path, monkeypatch):
    from compat.knowledge import graph

    header = '{"schema": 1, "name": "alpha", "index": "https://x/", "taken": "2026-12-03"}\n'
    (tmp_path / "alpha.jsonl").write_text(header + '{"version": "1.0", "requires_dist": ["numpy"]}\n' * 20)
    assert graph.build_graph(str(tmp_path))["packages"] == ["alpha"]
    monkeypatch.setattr(graph, "MAX_SNAPSHOT_BYTES", 500)  # the header alone is read within the snapshot's own bound
    with pytest.raises(CompatError, match="cannot be read: larger than 500 bytes") as caught:
        graph.build_graph(str(tmp_path))
    assert caught.value.file == str(tmp_path / "alpha.jsonl")


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge"])
def test_looking_up_a_release_in_a_snapshot_header_never_blocks_or_reads_on(tmp_path, kind):
    from compat.knowledge.database import Database

    from .test_fuzz_readers import bounded

    hostile(tmp_path, kind)
    with bounded(10):  # a FIFO opened for reading blocked until a writer came
        assert Database(str(tmp_path)).may_list("vllm", "0.32.0") is False


def test_a_wheel_of_millions_of_tags_is_refused_through_the_library_too(tmp_path, db):
    """An environment not read by `read_environment` (made by a program) is
    held to the same bound when it is judged: counted, not expanded."""
    import compat
    from compat.sources.environment import Distribution, Environment

    parts = ".".join(f"x{i}" for i in range(500))
    bomb = Distribution("bomb", "1.0", (), None, (), (f"{parts}-{parts}-{parts}",),
                        str(tmp_path / "bomb-1.0.dist-info"))
    machine = load_stack({"system": {"python": "3.12"}}, db)
    markers = {**machine.system.marker_environment(), "python_full_version": "3.12.7"}
    environment = Environment("python", "python", markers, None, (bomb,))
    stack = machine.replace(environment=environment)
    for judge in (lambda: installed_findings(environment, stack), lambda: compat.check(stack, database=db)):
        with pytest.raises(CompatError, match="more than 10,000") as caught:
            judge()
        assert caught.value.file == str(tmp_path / "bomb-1.0.dist-info" / "WHEEL")


def test_a_distribution_whose_name_is_no_project_name_is_a_finding_not_dropped(tmp_path, db):
    python = site(tmp_path, {
        "~orch-2.0.dist-info": {"METADATA": metadata("~orch", "2.0")},  # what an interrupted pip leaves
        "-1.0.dist-info": {"METADATA": "Metadata-Version: 2.1\nVersion: 1.0\n"},  # no Name, and no name in its folder
        "bad name-1.0.dist-info": {"METADATA": metadata("bad name", "1.0")},
        "empty-1.0.dist-info": {"RECORD": "x\n"},  # no METADATA at all
        "fine-1.0.dist-info": {"METADATA": metadata("fine", "1.0", "Requires-Dist: legacy>=1")},
    })
    (tmp_path / "site-packages" / "legacy-1.0.egg-info").write_text(metadata("legacy", "1.0"))  # a file: its PKG-INFO
    environment = read_environment(str(python))
    stack = load_stack({"system": {"python": environment.python}}, db)
    findings = installed_findings(environment, stack)
    found = {f.id: f.message for f in findings}
    # pip ignores each ("Ignoring invalid distribution") and pip check passes: warnings, never a conflict
    assert {f.severity for f in findings} == {"warning"}
    assert set(found) == {"installed-metadata:~orch-2.0.dist-info", "installed-metadata:-1.0.dist-info",
                          "installed-metadata:bad name-1.0.dist-info", "installed-metadata:empty"}, found
    assert found["installed-metadata:~orch-2.0.dist-info"].startswith(
        "~orch-2.0.dist-info: its name '~orch' is not a project name (pip ignores it)")
    assert "its metadata has no Name" in found["installed-metadata:-1.0.dist-info"]
    assert "it has no METADATA (or PKG-INFO) file" in found["installed-metadata:empty"]
    assert sorted(environment.installed) == ["empty", "fine", "legacy"]  # fine's requirement: met by the egg-info file
