"""The database readers trust nothing they read: each malformed value in a
snapshot, its wheel records, a catalog or a rendering is one line that
names the file, the line and the key (exit 2 for check, show and resolve),
a problem for `compat db lint` (which reports every one of them), and never
a traceback (docs/reliability.md, "Database files").

The tests run on a small database cut from the bundled one (`small_database`):
vLLM and Transformers with a few real releases each, their curated files,
and the GPUs, models, engine flags and sources those cite.
"""

from __future__ import annotations

import gc
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

import compat
from compat import Database, DatabaseError, _compiled, _toml, cli
from compat.knowledge.graph import read_graph, write_graph
from compat.knowledge.lint import lint_database
from compat.knowledge.requires import _common
from compat.knowledge.snapshot import (
    simple_requirement,
    _wheel_file,
    lazy_releases,
    line_offsets,
    read_snapshot,
    requirement_problem,
    write_snapshot,
)

from .conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

BUNDLED = ROOT / "data"
KEEP = {"vllm": ("0.7.2", "0.10.2", "0.11.0", "0.19.0", "0.31.0", "0.32.0"), "transformers": ("5.19.0", "5.20.2")}
GPUS = ("H200", "B200", "Jetson Thor")
MODELS = ("GLM-5",)
FLAGS = ("kv-cache-dtype", "tensor-parallel-size", "max-model-len", "enforce-eager",
         # and those the file's [gpus] table names
         "pipeline-parallel-size", "data-parallel-size", "data-parallel-size-local", "nnodes",
         "distributed-executor-backend", "data-parallel-backend")
STACK = {
    "system": {"python": "3.12", "cuda": "13.0", "driver": "580.95.05"},
    "hardware": {"gpu": "B200"},
    "packages": {"vllm": "0.32.0", "transformers": ">=5.19"},
    "model": {"name": "GLM-5"},
    "options": {"vllm": {"kv-cache-dtype": "auto", "tensor-parallel-size": 2}},
}


def _tables(path: Path, header: str, names: tuple[str, ...] | set[str], key: str = "name") -> str:
    """The file's text before its first [[header]] table, then the tables whose `key` is one of `names`."""
    text = path.read_text(encoding="utf-8")
    found = _toml.blocks(text, header)
    head = "".join(text.splitlines(keepends=True)[: found[0][0] - 1])
    pattern = re.compile(rf'^{key} = "([^"]+)"', re.MULTILINE)
    return head + "".join(f"{block}\n\n" for _, block in found if pattern.search(block).group(1) in names)


def small_database(target: Path) -> Path:
    """A database of a few real releases and facts, cut from the bundled one,
    that lints clean: small enough to read thousands of times in a test."""
    for folder in ("constraints", "metadata", "options"):
        (target / folder).mkdir(parents=True)
    for name, versions in KEEP.items():
        shutil.copy(BUNDLED / "constraints" / f"{name}.toml", target / "constraints")
        snapshot = read_snapshot(str(BUNDLED / "metadata" / f"{name}.jsonl"))
        # the requirements of extras left out: they make lines of thousands of bytes a check skips
        kept = [r._replace(requires_dist=[t for t in r.requires_dist if "extra ==" not in t])
                for r in snapshot.releases if r.version in versions]
        yanked = tuple(v for v in snapshot.yanked or () if v in versions)
        write_snapshot(snapshot._replace(releases=kept, versions=versions, yanked=yanked), str(target / "metadata" / f"{name}.jsonl"))
    write_graph(str(target / "metadata"))
    shutil.copy(BUNDLED / "cuda.toml", target)
    shutil.copy(BUNDLED / "platforms.toml", target)
    # what the kept rules name (GPUs, models, flags) comes along, so that the copy lints clean
    curated = "".join((target / "constraints" / f"{name}.toml").read_text(encoding="utf-8") for name in KEEP)
    named = set(re.findall(r'"([^"]+)"', curated)) | set(re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*", curated))
    (target / "gpus.toml").write_text(_tables(BUNDLED / "gpus.toml", "gpu", named | set(GPUS)), encoding="utf-8")
    (target / "models.toml").write_text(_tables(BUNDLED / "models.toml", "model", named | set(MODELS)), encoding="utf-8")
    options = _tables(BUNDLED / "options" / "vllm.toml", "option", named | set(FLAGS))
    (target / "options" / "vllm.toml").write_text(options, encoding="utf-8")
    texts = [path.read_text(encoding="utf-8") for path in target.rglob("*.toml")]
    cited = {m for text in texts for m in re.findall(r'source = "([^"]+)"', text)}
    cited |= {m for text in texts for inline in re.findall(r"^sources = \{(.*)\}$", text, re.MULTILINE)
              for m in re.findall(r'"([^"]+)"', inline)}  # a [gpus] table's sources of single flags
    cited |= {m for text in texts for listed in re.findall(r"^also = \[(.*)\]$", text, re.MULTILINE)
              for m in re.findall(r'"([^"]+)"', listed)}  # further sources of a fact (cuda.toml's [torch_labels])
    sources = _tables(BUNDLED / "constraints" / "_sources.toml", "source", cited, key="id")
    (target / "constraints" / "_sources.toml").write_text(sources, encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = small_database(tmp_path_factory.mktemp("small") / "data")
    assert lint_database(Database.load(root)) == []
    return root


@pytest.fixture
def data(template, tmp_path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "data"))


def run(capsys, data: Path, *args: str) -> tuple[int, str, str]:
    """The command line, in this process; the code, standard output and standard error."""
    with pytest.raises(SystemExit) as info:
        cli.main([*args, "--db", str(data)])
    gc.enable()  # `compat check` turns the collector off for its short process
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def refused(capsys, data: Path, *args: str) -> str:
    """Run a command that must refuse the database: exit 2, one line, no traceback."""
    code, _, err = run(capsys, data, *args)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("compat: error: ") and "Traceback" not in err, err
    return err


def lint(data: Path) -> list[str]:
    return [str(p) for p in lint_database(Database.load(data))]


def stack_file(tmp_path: Path) -> str:
    path = tmp_path / "stack.toml"
    path.write_text("""[system]\npython = "3.12"\ncuda = "13.0"\ndriver = "580.95.05"\n\n[hardware]\ngpu = "B200"\n\n"""
                    """[packages]\nvllm = "0.32.0"\ntransformers = ">=5.19"\n""", encoding="utf-8")
    return str(path)


def line_number(path: Path, version: str) -> int:
    lines = path.read_bytes().split(b"\n")
    return next(i for i, line in enumerate(lines, start=1) if line.startswith(b'{"version": "%s"' % version.encode()))


def edit_line(path: Path, version: str, edit) -> int:
    """Apply `edit` (bytes -> bytes) to the release line of `version`; its line number."""
    lines = path.read_bytes().split(b"\n")
    number = line_number(path, version)
    edited = edit(lines[number - 1])
    assert edited != lines[number - 1], "the edit changed nothing"
    lines[number - 1] = edited
    path.write_bytes(b"\n".join(lines))
    return number


def same_length(old: bytes, new: bytes):
    """An edit that keeps the line's length, so that the header's offsets still hold."""
    assert len(old) == len(new)
    return lambda line: line.replace(old, new, 1)


def drop_offsets(path: Path) -> None:
    """As a hand edit must: remove the header's ``lines`` (the file is then read whole)."""
    head, rest = path.read_text(encoding="utf-8").split("\n", 1)
    header = json.loads(head)
    del header["lines"]
    path.write_text(json.dumps(header) + "\n" + rest, encoding="utf-8")


# -- bytes that are not UTF-8 ------------------------------------------------------


def test_a_byte_that_is_not_utf8_in_a_release_line_names_its_line(capsys, data, tmp_path):
    snapshot = data / "metadata" / "vllm.jsonl"
    number = edit_line(snapshot, "0.32.0", same_length(b"torch==", b"torc\xff=="))
    where = f"vllm.jsonl:{number}:"
    for args in (("check", stack_file(tmp_path)), ("db", "show", "vllm==0.32.0")):
        error = refused(capsys, data, *args)
        assert where in error and "not UTF-8" in error
    assert any(where in p and "not UTF-8" in p for p in lint(data))


def test_a_byte_that_is_not_utf8_in_a_snapshot_header(capsys, data, tmp_path):
    snapshot = data / "metadata" / "vllm.jsonl"
    snapshot.write_bytes(snapshot.read_bytes().replace(b'"taken": "2', b'"taken": "\xff', 1))
    assert "vllm.jsonl:1:" in refused(capsys, data, "check", stack_file(tmp_path))
    assert "vllm.jsonl:1:" in refused(capsys, data, "db", "show", "vllm")
    assert any("vllm.jsonl:1:" in p and "not UTF-8" in p for p in lint(data))


@pytest.mark.parametrize("file", ["gpus.toml", "constraints/_sources.toml", "models.toml"])
def test_a_byte_that_is_not_utf8_in_a_catalog(capsys, data, tmp_path, file):
    path = data / file
    text = path.read_bytes()
    at = text.index(b' = "', text.index(b"\n[[")) + len(b' = "')  # a value of the first table
    path.write_bytes(text[:at] + b"\xff" + text[at:])
    line = text[:at].count(b"\n") + 1
    stack = tmp_path / "stack.toml"
    stack.write_text(open(stack_file(tmp_path)).read().replace('gpu = "B200"', 'gpu = "H200"') + '\n[model]\nname = "GLM-5"\n')
    error = refused(capsys, data, "check", str(stack))
    assert f"{file}:{line}:" in error and "not UTF-8" in error
    if file != "models.toml":  # show reads the GPU catalog whole, and the sources of what it shows
        refused(capsys, data, "db", "show", "gpus" if file == "gpus.toml" else "vllm==0.32.0")
    assert any(file in p and "not UTF-8" in p for p in lint(data))


# -- values a reader would choke on --------------------------------------------------


@pytest.mark.parametrize(
    "key, old, new",
    [
        ("requires_python", b'"requires_python": "<3.15', b'"requires_python": "~~~~~'),
        ("uploaded", b'"uploaded": "2026-', b'"uploaded": "x026-'),
        # lines the check reads: a check parses only the lines of packages the database holds
        ("requires_dist", b'"transformers<', b'"transformers[  '),
        ("requires_dist", b'"requires_dist": ["', b'"requires_dist": ["transformers; python_version ~= \'3\'", "'),
        ("tags", b'"tags": ["', b'"tags": ["' + b"a." * 40 + b"a-b.b.b.b-c.c.c.c\", \""),
        ("yanked", b'"uploaded": "', b'"yanked": 1, "uploaded": "'),
        ("metadata", b'"file": "', b'"metadata": "no", "file": "'),
    ],
)
def test_a_value_that_does_not_parse_names_file_line_and_key(capsys, data, tmp_path, key, old, new):
    snapshot = data / "metadata" / "vllm.jsonl"
    number = edit_line(snapshot, "0.32.0", lambda line: line.replace(old, new, 1))
    if len(old) != len(new):
        drop_offsets(snapshot)
    where = f"vllm.jsonl:{number}: {key}"
    assert where in refused(capsys, data, "check", stack_file(tmp_path))
    assert where in refused(capsys, data, "db", "show", "vllm==0.32.0")
    problems = lint(data)
    assert any(where in p for p in problems), problems


def test_a_check_leaves_unread_a_bad_line_of_a_package_it_does_not_resolve(capsys, data, tmp_path):
    """A check parses a release's Requires-Dist lines lazily, those of the
    packages the database holds: a line on another package is db lint's and
    db show's to report, and stops no check."""
    snapshot = data / "metadata" / "vllm.jsonl"
    bad = b'"requires_dist": ["a; python_version ~= \'3\'", '
    number = edit_line(snapshot, "0.32.0", lambda line: line.replace(b'"requires_dist": [', bad, 1))
    drop_offsets(snapshot)
    code, out, err = run(capsys, data, "check", stack_file(tmp_path))
    assert code == 0 and err == "", err
    where = f"vllm.jsonl:{number}: requires_dist[0]"
    assert where in refused(capsys, data, "db", "show", "vllm==0.32.0")
    assert any(where in p for p in lint(data))


def test_a_marker_that_would_raise_when_evaluated_is_refused():
    assert requirement_problem("a; platform_machine ~= 'x86'") is not None  # packaging parses it, then cannot compare
    assert requirement_problem("a; '3.10' ~= python_version") is not None
    assert requirement_problem("a; python_version ~= '3.10'") is None
    assert requirement_problem("a; python_version === '3.12'") is None
    assert requirement_problem("a; " + "(" * 2000 + "extra == 'x'" + ")" * 2000) is not None


def test_an_unknown_key_in_a_release_line_is_refused(data):
    snapshot = data / "metadata" / "vllm.jsonl"
    number = edit_line(snapshot, "0.32.0", lambda line: line.replace(b'"requires_dist"', b'"requires-dist"', 1))
    assert any(f"vllm.jsonl:{number}: 'requires-dist': unknown key" in p for p in lint(data))


@pytest.mark.parametrize("value", [b'"vllm-0.32.0-py3-none-any.whl"', b'"vllm-0.31.0.tar.gz"', b"true", b"1",
                                   b'"../vllm-0.32.0.tar.gz"'])
def test_an_sdist_that_is_not_the_releases_is_refused(data, value):
    snapshot = data / "metadata" / "vllm.jsonl"
    number = edit_line(snapshot, "0.32.0", lambda line: re.sub(rb'"sdist": [^,]*,', b'"sdist": ' + value + b",", line))
    drop_offsets(snapshot)
    problems = lint(data)
    assert any(f"vllm.jsonl:{number}: sdist: expected the file name of the release's sdist" in p for p in problems), \
        problems


def test_a_key_given_twice_in_a_release_line_is_refused(data):
    snapshot = data / "metadata" / "vllm.jsonl"
    number = edit_line(snapshot, "0.31.0", lambda line: line[:-1] + b', "requires_dist": []}')
    drop_offsets(snapshot)
    assert any(f"vllm.jsonl:{number}: 'requires_dist': given twice" in p for p in lint(data))


# -- duplicates and key order --------------------------------------------------------


def test_a_duplicated_release_line_is_refused(capsys, data, tmp_path):
    snapshot = data / "metadata" / "vllm.jsonl"
    lines = snapshot.read_text(encoding="utf-8").splitlines()
    first = line_number(snapshot, "0.32.0")
    other = json.loads(lines[first - 1])
    other["requires_dist"] = []  # a second, different line of one release: which one would count?
    lines.insert(first, json.dumps(other))
    header = json.loads(lines[0])
    header["lines"] = line_offsets(lines[1:])  # as if sync had written both
    snapshot.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    message = f"vllm.jsonl:{first + 1}: version: release 0.32.0 is listed twice (lines {first} and {first + 1})"
    assert message in refused(capsys, data, "check", stack_file(tmp_path))
    assert message in "\n".join(lint(data))
    drop_offsets(snapshot)  # a hand edit, read whole: refused alike
    assert message in refused(capsys, data, "db", "show", "vllm")


def test_yanked_counts_wherever_the_line_puts_it(data):
    snapshot = data / "metadata" / "vllm.jsonl"

    def move_yanked(line: bytes) -> bytes:
        entry = json.loads(line)
        entry.pop("yanked", None)
        return json.dumps({**entry, "yanked": True}).encode()  # last, not second

    edit_line(snapshot, "0.31.0", move_yanked)
    drop_offsets(snapshot)
    _, releases = lazy_releases(str(snapshot))
    assert {str(r.version): r.status for r in releases}["0.31.0"] == "yanked"
    assert {r.version: r.yanked for r in read_snapshot(str(snapshot)).releases}["0.31.0"] is True
    assert Database.load(data).component("vllm").releases[Version("0.31.0")].is_yanked
    assert not [p for p in lint(data) if "vllm.jsonl" in p]
    # offsets written for the file agree: the mark is read from the line, not its position
    lines = snapshot.read_text(encoding="utf-8").splitlines()[1:]
    assert [entry[3] for entry in line_offsets(lines)] == [json.loads(line).get("yanked", False) for line in lines]


def test_a_header_whose_yanked_mark_disagrees_with_its_line_is_stale(data):
    snapshot = data / "metadata" / "vllm.jsonl"
    head, rest = snapshot.read_text(encoding="utf-8").split("\n", 1)
    header = json.loads(head)
    header["lines"][0][3] = True
    snapshot.write_text(json.dumps(header) + "\n" + rest, encoding="utf-8")
    _, releases = lazy_releases(str(snapshot))
    with pytest.raises(DatabaseError, match="offset"):
        releases[0].requires_dist
    assert any("vllm.jsonl:1: lines:" in p for p in lint(data))


# -- lint reports every malformed line ------------------------------------------------


def test_lint_reports_every_malformed_line_with_its_file_and_line(data):
    snapshot = data / "metadata" / "vllm.jsonl"
    wheels = data / "metadata" / "vllm.wheels.jsonl"
    broken = {
        edit_line(snapshot, "0.19.0", lambda line: line[:-1]): "invalid JSON",
        edit_line(snapshot, "0.31.0", lambda line: line.replace(b'"requires_python": "', b'"requires_python": "=>', 1)): "requires_python",
        edit_line(snapshot, "0.32.0", lambda line: line.replace(b'"uploaded": "', b'"uploaded": "+', 1)): "uploaded",
    }
    wheel_lines = wheels.read_text(encoding="utf-8").splitlines()
    bad_records = {}
    for number, line in enumerate(wheel_lines[1:], start=2):
        entry = json.loads(line)
        if entry["wheels"]:
            entry["wheels"][0]["sha256"] = "x"
            wheel_lines[number - 1] = json.dumps(entry)
            bad_records[number] = "wheels[0].sha256"
    wheels.write_text("\n".join(wheel_lines) + "\n", encoding="utf-8")
    problems = lint(data)
    for number, what in broken.items():
        assert sum(f"vllm.jsonl:{number}: " in p and what in p for p in problems) == 1, (number, problems)
    assert bad_records and all(any(f"vllm.wheels.jsonl:{n}: {key}" in p for p in problems) for n, key in bad_records.items())
    assert len({p for p in problems if "vllm" in p}) == len(problems)  # no cascade into other files


# -- wheel records -------------------------------------------------------------------


@pytest.mark.parametrize(
    "record, key",
    [
        ({"file": "vllm-0.32.0.tar.gz"}, "file"),
        ({"file": "torch-2.9.0-cp312-cp312-linux_x86_64.whl"}, "file"),  # another project's wheel
        ({"file": "vllm-0.31.0-cp38-abi3-manylinux_2_31_x86_64.whl"}, "file"),  # another release's
        ({"file": "vllm-0.32.0-cp38-abi3-" + ".".join(["x"] * 100) + ".whl"}, "file"),
        ({"url": "file:///etc/passwd"}, "url"),
        ({"sha256": "0" * 63}, "sha256"),
        ({"size": "12"}, "size"),
        ({"size": -1}, "size"),
        ({"extra": 1}, "'extra'"),
    ],
)
def test_a_bad_wheel_record_fails_lint(data, record, key):
    number = break_wheel_record(data, record)
    assert any(f"vllm.wheels.jsonl:{number}: wheels[0].{key}" in p for p in lint(data))


def test_a_bad_wheel_record_fails_the_lock_not_the_check(capsys, data, tmp_path):
    number = break_wheel_record(data, {"file": "torch-2.9.0-cp312-cp312-linux_x86_64.whl"})
    stack = stack_file(tmp_path)
    assert run(capsys, data, "check", stack)[0] == 0  # a check never reads wheel records
    error = refused(capsys, data, "resolve", stack, "--format", "pylock")
    assert f"vllm.wheels.jsonl:{number}: wheels[0].file: 'torch-2.9.0-cp312-cp312-linux_x86_64.whl' is a wheel of torch" in error


def break_wheel_record(data: Path, record: dict) -> int:
    """Update the first wheel record of vLLM 0.32.0 with `record`; the line number."""
    wheels = data / "metadata" / "vllm.wheels.jsonl"
    lines = wheels.read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines, start=1) if line.startswith('{"version": "0.32.0"'))
    entry = json.loads(lines[number - 1])
    entry["wheels"][0].update(record)
    lines[number - 1] = json.dumps(entry)
    wheels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return number


def test_the_lock_of_sound_records_is_written(capsys, data, tmp_path):
    code, out, _ = run(capsys, data, "resolve", stack_file(tmp_path), "--format", "pylock")
    packages = {p["name"]: p for p in tomllib.loads(out)["packages"]}
    assert code == 0 and packages["vllm"]["version"] == "0.32.0"
    assert all(len(w["hashes"]["sha256"]) == 64 for p in packages.values() for w in p["wheels"])


def test_wheel_file_names_are_read_as_packaging_reads_them():
    names = ["vllm-0.32.0-cp38-abi3-manylinux_2_31_x86_64.whl", "a_b-1.0-1x-py3-none-any.whl", "a-1.0-py2.py3-none-any.whl",
             "a__b-1.0-py3-none-any.whl", "a-1.0-x-py3-none-any.whl", "a-v1-py3-none-any.whl", "a-1.0-1-py3-none.whl",
             "a-1.0-3x-none-any.whl", "a-1.0-py3-none-any.zip", "é-1.0-py3-none-any.whl", "a-1.0-py3-none-.whl"]
    for name in names:
        try:
            expected = parse_wheel_filename(name)[:2]
        except InvalidWheelFilename:
            expected = None
        found = _wheel_file(name)
        assert (None if isinstance(found, str) else found) == expected, name


# -- the names graph and the renderings ---------------------------------------------------


def test_a_names_graph_of_wrong_types_is_a_database_error(capsys, data, tmp_path):
    graph = data / "metadata" / "_graph.json"
    head, edges = graph.read_text().splitlines()
    content = json.loads(head)
    content["packages"].append({"not": "a name"})
    graph.write_text(json.dumps(content) + "\n" + edges + "\n")
    assert "_graph.json" in refused(capsys, data, "check", stack_file(tmp_path))
    assert any("_graph.json" in p for p in lint(data))


def test_a_check_reads_both_lines_of_the_names_graph_and_lint_both(capsys, data, tmp_path):
    """The first line says what the scope of a check is; the edges (the
    second line) order the rest of the closure (graph.requirers_first), so
    a check reads them too and refuses them malformed, naming the file. A
    graph of one line (as older releases wrote it) is read."""
    graph = data / "metadata" / "_graph.json"
    head, edges = graph.read_text().splitlines()
    whole = {**json.loads(head), **json.loads(edges)}
    graph.write_text(json.dumps(whole))
    assert read_graph(str(data / "metadata")) == whole
    assert run(capsys, data, "check", stack_file(tmp_path))[0] == 0
    graph.write_text(head + "\n" + '{"required_by": 5}\n')
    assert "_graph.json" in refused(capsys, data, "check", stack_file(tmp_path))
    assert any("_graph.json" in p for p in lint(data))
    graph.write_text(head + "\n" + '{"required_by": {}, "reach": []}\n')
    assert any("_graph.json" in p for p in lint(data))


@pytest.mark.parametrize(
    "data_json",
    ['{"a": null}', '{"d": {"$date": 5}}', '{"d": {"$date": "2026-13-45"}}', "[" * 5000 + "]" * 5000, '"x"'],
)
def test_a_rendering_that_toml_could_not_have_produced_is_ignored(tmp_path, data_json):
    path = tmp_path / "x.toml"
    text = 'a = 1\nd = 2026-10-18\n'
    path.write_text(text)
    rendering = tmp_path / "x.toml.json"
    rendering.write_text(f'{{"source": {json.dumps(text)}, "data": {data_json}}}')
    assert _compiled.read(str(path), text) is None
    assert _toml.load(str(path))[0] == tomllib.loads(text)  # the TOML itself is read instead


def test_a_rendering_larger_than_its_toml_could_be_is_not_read(tmp_path):
    path = tmp_path / "x.toml"
    text = "a = 1\n"
    path.write_text(text)
    padding = " " * (5 * 65536)
    (tmp_path / "x.toml.json").write_text(f'{{"source": {json.dumps(text)}, "data": {{"a": 1}}{padding}}}')
    assert _compiled.read(str(path), text) is None


# -- one line, whatever the file holds ----------------------------------------------------


def test_a_key_with_a_line_break_is_shown_on_one_line(data):
    path = data / "constraints" / "transformers.toml"
    path.write_text(path.read_text(encoding="utf-8").replace('[component]\n', '[component]\n"a\\nb\\u2028c" = 1\n', 1))
    with pytest.raises(DatabaseError) as info:
        Database.load(data).component("transformers")
    assert "\n" not in str(info.value) and "\u2028" not in str(info.value) and "a\\nb" in str(info.value)


def test_a_gpu_name_outside_any_gpu_table_is_a_database_error(data):
    path = data / "gpus.toml"
    path.write_text('name = "Z9000"\n' + path.read_text(encoding="utf-8"))
    with pytest.raises(DatabaseError, match="outside a"):
        Database.load(data).gpu("Z9000")


# -- the fast path of requirement lines ---------------------------------------------------


def test_the_fast_path_accepts_only_lines_packaging_accepts():
    """Every Requires-Dist line of the tracked packages' snapshots that the
    pattern matches parses and evaluates; most lines take it."""
    texts = set()
    for name in ("vllm", "sglang", "transformers", "torch", "flashinfer-python", "diffusers"):
        with open(BUNDLED / "metadata" / f"{name}.jsonl", encoding="utf-8") as handle:
            handle.readline()
            for line in handle:
                texts.update(json.loads(line).get("requires_dist", ()))
    fast = [t for t in texts if simple_requirement().match(t)]
    assert len(fast) > 0.9 * len(texts)
    for text in fast:
        Requirement(text)
    near_misses = ["a>=1.*", "a~=1", "a==1.0a1.*", "a<=1.0.*", "a; python_version ~= '3'", "a; extras == 'x'",
                   "a>=1,", "a[b,]", "a; (extra == 'x'", "a==1.0+local", "a; extra == 'x' and", "-a",
                   "a >=1)", "a (>=1", "a (>=1))", "a; extra == 'x' or 'y')", "a; (extra == 'x') or extra == 'y')",
                   "a; extra == 'x' and and extra == 'y'", "a; extra == 'x'extra == 'y'",
                   "a; python_version == '\\'", "a; os_name == 'a\nb'"]
    for text in near_misses:
        assert not simple_requirement().match(text), text


def test_requirement_lines_are_built_as_packaging_parses_them():
    """A check builds the common lines without packaging's parser
    (requires._common): over the lines of the tracked packages' snapshots,
    each so built is the requirement packaging parses, and most are."""
    from .test_fuzz_db import same_requirement

    texts = set()
    for name in ("vllm", "sglang", "transformers", "torch", "flashinfer-python", "diffusers", "vllm-omni"):
        with open(BUNDLED / "metadata" / f"{name}.jsonl", encoding="utf-8") as handle:
            handle.readline()
            for line in handle:
                texts.update(json.loads(line).get("requires_dist", ()))
    built = {text: _common(text) for text in texts}
    assert sum(1 for r in built.values() if r is not None) > 0.9 * len(texts)
    for text, requirement in built.items():
        if requirement is not None:
            same_requirement(requirement, text)
    for text in ["a>=1,", "a[b,]", "a (>=1", "a; ", "a >=1 <2", "a @ https://x.example/a.whl", "a; extras == 'x'",
                 "a; python_version ~= '3'", "-a", "a.>=1", "a[]]"]:
        assert _common(text) is None, text


def test_a_check_of_the_small_database_still_works(data):
    report = compat.check(STACK, database=Database.load(data))
    assert report.exit_code == 0 and "vllm.glm-5.sm100.fp8-kv-default" in {f.id for f in report.findings}


def test_a_table_is_cut_at_the_lines_toml_counts():
    """A line separator inside a string (U+2028, which str.splitlines would
    cut at) and a CRLF file leave each [[table]] whole, numbered as the
    parser numbers its lines."""
    import tomllib

    text = '[[source]]\r\nid = "a"\r\ntitle = "x\u2028[y]"\r\n\r\n[[source]]\r\nid = "b"\r\n'
    blocks = _toml.blocks(text, "source")
    assert [line for line, _ in blocks] == [1, 5]
    assert [tomllib.loads(block)["source"][0] for _, block in blocks] == tomllib.loads(text)["source"]
