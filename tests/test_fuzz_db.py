"""Fuzzing the database readers: whatever a database file holds, reading,
checking, showing and linting end in a report, data, lint problems, or a
`CompatError` that prints as one line; never another exception, a hang or a
write (docs/reliability.md, "Fuzzing").

The fuzzer mutates one file of a small database at a time: snapshot lines
and headers (as text, as bytes, and as JSON values), wheel records, the
names graph, the curated TOML files, the GPU and model catalogs, the
sources, the engine flags, the platform table, and the JSON renderings the
wheel carries. The seed is fixed, so a failure repeats;
COMPAT_FUZZ_DB_INPUTS sets the number of inputs (1,000 by default).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.utils import InvalidWheelFilename, parse_wheel_filename
from packaging.version import Version

import compat
from compat import CompatError, Database, _compiled
from compat.engine.findings import Report
from compat.formats.component import describe, render_text
from compat.knowledge.lint import lint_database
from compat._markers import comparison_problem
from compat.knowledge.requires import _common
from compat.knowledge.snapshot import (
    simple_requirement,
    _wheel_file,
    lazy_releases,
    line_offsets,
    snapshot_problems,
)

from .test_db_readers import STACK, small_database
from .test_fuzz import mutate, outcome

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

INPUTS = int(os.environ.get("COMPAT_FUZZ_DB_INPUTS", "1000"))
CHECK_EVERY = 20  # one input in this many is also checked whole
LINT_EVERY = 50  # and one in this many shown and linted
HANG = 20  # seconds: an input that takes longer fails the test
SEED = 20261204
SETTINGS = settings(deadline=None, derandomize=True, max_examples=50,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

# Values a reader must refuse or survive, as JSON and as TOML.
JSON_VALUES = [None, True, False, 0, -1, 2**70, 1.5, float("inf"), "", "x", "1.0", "0.32.0", "2026-02-30", "9999-99-99",
               "2026-10-18T00:00:00Z", "\u2028", "\x00", "é", "x" * 5000, [], {}, [[]], ["x"], [1], [None], {"$date": 5},
               {"$date": "x"}, {"file": "x"}, [["1.0", 0, 1, False]], [["1.0", -1, "a", 1]]]
REQUIREMENTS = ["torch[", "torch>>2", "a; python_version ~= '3'", "a; platform_machine ~= 'x86'", "a; '3' ~= python_version",
                "a; python_version === 'a b'", "a @ file:///etc/passwd", "a; extra ==", "a" * 3000, "a; " + "(" * 600 + "extra == 'x'" + ")" * 600,
                "a[" + ",".join(["b"] * 500) + "]", "a>=1.0.*", "a~=1", "==1", "", " ", "a;", "\u2028a", "ａ>=1", "a>=١"]
TAGS = ["", "a", "a-b", "a-b-c-d", "1a-b-c", "-".join([".".join(["x"] * 30)] * 3), "cp312-cp312-manylinux_2_28_x86_64", "a-b-c.\n"]
WHEEL_VALUES = {
    "file": ["", "x.whl", "vllm-0.32.0.tar.gz", "torch-2.9.0-cp312-cp312-linux_x86_64.whl", "vllm-9-py3-none-any.whl",
             "vllm-0.32.0-py3-none-" + ".".join(["x"] * 200) + ".whl", "vllm-0.32.0-x-py3-none-any.whl", "vllm-0.32.0-1-py3-none-any.whl"],
    "url": ["file:///etc/passwd", "ftp://x", "", "https://x/\n", "http://x/a.whl"],
    "sha256": ["", "x", "0" * 63, "A" * 64, "0" * 64],
    "size": [-1, "12", True, 2**70, 0],
}
TOML_VALUES = ['""', '"x"', "1", "-1", "99999999999999999999", "true", "[]", "{}", '[1, "a"]', "1979-05-27T07:32:00Z", "inf", "nan",
               '"torch["', '">=>"', '"a\\nb"', '"\\u2028"', "[[[[]]]]", "[" * 300 + "]" * 300, '"' + "x" * 5000 + '"', "{ a = 1 }",
               '["H200", "B200"]', '"0.32.0"', '"==0.32.0"', '"~=1"', '">=1.0.*"', "2026-10-18"]
BYTES = [b"\xff", b"\xc3", b"\xe2\x80\xa8", b"\x00", b"\r", b"\n", b"\xef\xbb\xbf", b"\xed\xa0\x80"]
UNKNOWN_KEY = "requires-dist"
RENDERING = ".toml" + _compiled.SUFFIX


# -- mutations ---------------------------------------------------------------------


def mutate_bytes(raw: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(raw) + 1)
    cut = rng.choice([0, 0, 1])
    return raw[:at] + rng.choice(BYTES) + raw[at + cut:]


def hostile(rng: random.Random, key: str | None) -> object:
    """A value for `key` that a reader must refuse or survive."""
    if key == "requires_dist":
        return [rng.choice(REQUIREMENTS)] + (["numpy"] if rng.random() < 0.5 else [])
    if key == "tags":
        return [rng.choice(TAGS)]
    if key in WHEEL_VALUES:
        return rng.choice(WHEEL_VALUES[key])
    if rng.random() < 0.1:
        depth = rng.choice([50, 600, 3000])
        return json.loads("[" * depth + "]" * depth) if depth < 900 else "[" * depth
    return rng.choice(JSON_VALUES)


def mutate_object(entry: dict, rng: random.Random) -> tuple[dict, str | None]:
    """One structural change to a decoded JSON object; returns it and, for a
    key given twice, the text to insert (json.dumps cannot write one)."""
    keys = list(entry)
    kind = rng.randrange(7)
    if kind == 0 and keys:  # a value of another type or shape
        key = rng.choice(keys)
        entry[key] = hostile(rng, key)
    elif kind == 1 and keys:  # a key gone
        del entry[rng.choice(keys)]
    elif kind == 2:  # an unknown key
        entry[rng.choice([UNKNOWN_KEY, "Version", "", "\u2028"])] = hostile(rng, None)
    elif kind == 3:  # the same keys, in another order
        rng.shuffle(keys)
        entry = {k: entry[k] for k in keys}
    elif kind == 4 and keys:  # a key given twice
        key = rng.choice(keys + ["yanked"])
        return entry, json.dumps({key: hostile(rng, key) if rng.random() < 0.5 else True})[1:-1]
    elif kind == 5 and isinstance(entry.get("wheels"), list) and entry["wheels"]:  # a wheel record
        record = rng.choice(entry["wheels"])
        if isinstance(record, dict):
            key = rng.choice(list(WHEEL_VALUES))
            record[key] = hostile(rng, key)
    elif kind == 6 and isinstance(entry.get("lines"), list) and entry["lines"]:  # the header's offsets
        line = rng.choice(entry["lines"])
        if isinstance(line, list) and len(line) == 4:
            at = rng.randrange(4)
            line[at] = rng.choice([line[at] + 1 if isinstance(line[at], int) else line[at], "0.31.0", not line[3], -1, 10**9])
    else:
        entry["yanked"] = rng.choice([True, "true", 1])
    return entry, None


def lines_of(text: str) -> list[str]:
    return text.split("\n")


def offsets(lines: list[str]) -> list[list[object]] | None:
    """The header's offsets for `lines`, computed here (not by the reader under test); None when a line does not decode."""
    try:
        return line_offsets([line for line in lines if line])
    except (AssertionError, ValueError):
        return None


def mutate_jsonl(raw: bytes, rng: random.Random) -> bytes:
    """One change to a snapshot or wheels file as JSON: a line's value, key,
    order or duplicate, a duplicated line; then the header's offsets left
    stale, dropped or recomputed, so that every reader path is reached."""
    lines = lines_of(raw.decode("utf-8"))
    number = rng.randrange(len(lines) - 1 if lines[-1] == "" else len(lines))
    if number > 0 and rng.random() < 0.15:
        lines.insert(rng.randrange(1, len(lines)), lines[number])  # a release line twice
    else:
        try:
            entry = json.loads(lines[number])
        except ValueError:
            return mutate_bytes(raw, rng)
        if isinstance(entry, dict):
            entry, twice = mutate_object(entry, rng)
            text = json.dumps(entry, ensure_ascii=rng.random() < 0.5)
            if twice is not None:
                text = "{" + twice + (", " + text[1:] if text != "{}" else "}")
            lines[number] = text
    header = _json_or_none(lines[0])
    if isinstance(header, dict) and "lines" in header:
        choice = rng.randrange(3)
        if choice == 0:
            del header["lines"]
        elif choice == 1:
            header["lines"] = offsets(lines[1:]) or header["lines"]
        lines[0] = json.dumps(header)
    return "\n".join(lines).encode("utf-8")


def _json_or_none(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None


def mutate_toml(raw: bytes, rng: random.Random) -> bytes:
    """One change to a TOML file: a value of another type, a key gone or
    misspelt, a table given twice."""
    lines = raw.decode("utf-8").split("\n")
    values = [i for i, line in enumerate(lines) if " = " in line and not line.lstrip().startswith("#")]
    kind = rng.randrange(4)
    if kind == 0 and values:
        i = rng.choice(values)
        lines[i] = lines[i].split(" = ", 1)[0] + " = " + rng.choice(TOML_VALUES)
    elif kind == 1 and values:
        del lines[rng.choice(values)]
    elif kind == 2 and values:
        i = rng.choice(values)
        lines[i] = rng.choice(["x", "name_", "Source", '"a\\nb"', "a.b.c"]) + " = " + lines[i].split(" = ", 1)[1]
    else:
        starts = [i for i, line in enumerate(lines) if line.startswith("[[")]
        if starts:
            i = rng.choice(starts)
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("[")), len(lines))
            lines[end:end] = lines[i:end]
    return "\n".join(lines).encode("utf-8")


def mutate_rendering(raw: bytes, rng: random.Random) -> bytes:
    """A change to a JSON rendering that keeps its digest: the reader uses it."""
    rendered = json.loads(raw)
    pending = [rendered["data"]]
    targets = []
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            targets.extend((value, k) for k in value)
            pending.extend(value.values())
        elif isinstance(value, list):
            targets.extend((value, i) for i in range(len(value)))
            pending.extend(value)
    if targets:
        container, key = rng.choice(targets)
        container[key] = hostile(rng, key if isinstance(key, str) else None)
    return json.dumps(rendered).encode("utf-8")


def mutate_file(name: str, raw: bytes, rng: random.Random) -> bytes:
    roll = rng.random()
    if roll < 0.15 or not raw:
        return mutate_bytes(raw, rng)
    if roll < 0.45:
        return mutate(raw.decode("utf-8"), rng).encode("utf-8")
    if name.endswith(".jsonl"):
        return mutate_jsonl(raw, rng)
    if name.endswith(".toml"):
        return mutate_toml(raw, rng)
    if name.endswith(RENDERING):
        return mutate_rendering(raw, rng)
    return mutate(raw.decode("utf-8"), rng).encode("utf-8")  # the names graph


# -- what is run on each input --------------------------------------------------------


def read_releases(path: Path) -> int:
    """Every release of a snapshot, as a check and show read them (the
    requirements of the newest parsed whole, as show does)."""
    snapshot_problems(str(path))
    _, releases = lazy_releases(str(path))
    for release in releases:
        release.requires_python, release.date, release.tags, release.metadata_known, release.wheels
        release.dependencies_for(frozenset({"audio"}), wanted=lambda name: name in ("torch", "transformers", "numpy"))
    if releases:
        max(releases, key=lambda r: r.version).dependencies
    return len(releases)


def load(root: Path, name: str) -> object:
    """The reader of file `name` (a rendering: of its TOML file), as a check or show calls it."""
    db = Database.load(root)
    name = name[: -len(_compiled.SUFFIX)] if name.endswith(RENDERING) else name
    if name.endswith(".wheels.jsonl"):
        return read_releases(root / name.replace(".wheels.jsonl", ".jsonl"))
    if name.endswith(".jsonl"):
        return read_releases(root / name)
    if name.endswith("_graph.json"):
        return db.relevant(["vllm"]), sorted(db.names())
    if name == "gpus.toml":
        return [db.gpu(n) for n in ("B200", "H200", "thor", "RTX 6000")], len(db.catalog.gpus)
    if name == "models.toml":
        return db.model("GLM-5"), db.model("zai-org/GLM-5"), len(db.models.models)
    if name.endswith("_sources.toml"):
        return db.source("vllm-0.32.0"), len(db.sources)
    if name.startswith("options"):
        catalog = db.option_catalog("vllm")
        return None if catalog is None else (list(catalog.problems()), catalog.at("tp", Version("0.32.0")))
    if name == "cuda.toml":
        return db.cuda
    if name == "platforms.toml":
        return db.platforms
    component = db.component(Path(name).stem)  # constraints/<name>.toml
    return None if component is None else (len(component.releases), [r.date for r in component.releases.values()])


def show(root: Path) -> str:
    db = Database.load(root)
    texts = [render_text(describe(db, db.component("vllm"), Version("0.32.0"))),
             render_text(describe(db, db.component("transformers")))]
    return "".join(texts) + str(len(db.catalog.gpus))


def put(path: Path, data: bytes) -> None:
    """Write `data` over the file in place: a file truncated to nothing and
    written again is flushed to disk on close by some file systems (ext4's
    auto_da_alloc), which costs milliseconds an input."""
    with open(path, "r+b" if path.exists() else "wb") as handle:
        handle.write(data)
        handle.truncate()


def state(root: Path) -> dict[str, tuple[int, int]]:
    """What is on disk: any file a reader wrote, or changed, shows here."""
    out = {}
    for folder in (root, root / "constraints", root / "metadata", root / "options"):
        for entry in os.scandir(folder):
            info = entry.stat()
            out[entry.path] = (info.st_size, info.st_mtime_ns)
    return out


class Hang(Exception):
    pass


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory) -> Path:
    """The small database, with the JSON renderings an installed wheel carries
    (so that the files an input leaves alone are read as fast as there)."""
    root = small_database(tmp_path_factory.mktemp("fuzz") / "data")
    for path in sorted(root.rglob("*.toml")):
        text = path.read_text(encoding="utf-8")
        Path(f"{path}{_compiled.SUFFIX}").write_text(_compiled.render(text, tomllib.loads(text)), encoding="utf-8")
    return root


def test_mutated_databases_never_crash_hang_or_write(fuzz_root):
    root = fuzz_root
    names = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    originals = {name: (root / name).read_bytes() for name in names}
    rng = random.Random(SEED)
    outcomes: Counter[str] = Counter()
    alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()

    def hang(*_: object) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, hang) if alarm else None
    started, cpu = time.perf_counter(), time.process_time()
    try:
        for i in range(INPUTS):
            name = rng.choice(names)
            mutated = mutate_file(name, originals[name], rng)
            put(root / name, mutated)
            before = state(root)
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, HANG)
            try:
                steps = [("read", lambda: load(root, name))]
                if i % CHECK_EVERY == 0:
                    steps.append(("check", lambda: compat.check(STACK, database=Database.load(root))))
                if i % LINT_EVERY == 0:
                    steps += [("show", lambda: show(root)), ("lint", lambda: lint_database(Database.load(root)))]
                for step, run in steps:
                    result = outcome(run)
                    if isinstance(result, CompatError):
                        outcomes[f"{step}: error"] += 1
                    elif step == "lint":
                        assert all("\n" not in str(p) for p in result)
                        outcomes[f"lint: {'problems' if result else 'clean'}"] += 1
                    else:
                        assert step != "check" or isinstance(result, Report)
                        outcomes[f"{step}: ok"] += 1
            except Hang:
                pytest.fail(f"input {i} ({name}) took more than {HANG} s")
            except Exception:
                print(f"\ninput {i}: {name}, mutated to {mutated[:300]!r}…")
                raise
            finally:
                if alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            assert state(root) == before, f"input {i} ({name}): a reader wrote to the database"
            put(root / name, originals[name])
    finally:
        if alarm:
            signal.signal(signal.SIGALRM, previous)
        for name, raw in originals.items():
            put(root / name, raw)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"\n{INPUTS} mutated database files in {elapsed:.1f} s ({cpu:.1f} s CPU): {dict(sorted(outcomes.items()))}")
    assert outcomes["read: ok"] and outcomes["read: error"] and outcomes["lint: problems"] and outcomes["check: ok"]


# -- properties ---------------------------------------------------------------------------

JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
                              st.sampled_from(["1.0", "2026-10-18", "numpy>=1", "cp312-cp312-any", "unknown"])),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
                    max_leaves=12)
RELEASE_KEYS = st.sampled_from(["version", "yanked", "uploaded", "requires_python", "file", "metadata", "tags",
                                "sdist", "requires_dist", "wheels"])
HEADER = json.dumps({"schema": 1, "name": "pkg", "index": "https://pypi.org/simple/", "taken": "2026-12-03"})


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lines")


@SETTINGS
@given(st.dictionaries(st.one_of(RELEASE_KEYS, st.text(max_size=6)), JSON, max_size=6), st.booleans())
def test_any_release_line_is_a_release_or_a_database_error(scratch, entry, with_offsets):
    path = scratch / "pkg.jsonl"
    line = json.dumps(entry)
    header = json.loads(HEADER)
    if with_offsets and offsets([line]) is not None:
        header["lines"] = offsets([line])
    put(path, (json.dumps(header) + "\n" + line + "\n").encode("utf-8"))
    outcome(lambda: read_releases(path))


VERSIONS = st.sampled_from(["1.0", "1.1", "2.0rc1", "2.0.post1"])
VALID_LINE = st.fixed_dictionaries(
    {"version": VERSIONS},
    optional={"yanked": st.booleans(), "uploaded": st.sampled_from(["2026-10-18", "2026-10-18T01:02:03Z"]),
              "requires_python": st.sampled_from([">=3.10", "<3.15,>=3.11"]), "file": st.just("pkg-1.0.tar.gz"),
              "metadata": st.just("unknown"), "tags": st.just(["py3-none-any"]),
              "requires_dist": st.lists(st.sampled_from(["numpy", "torch==2.9.0; extra == 'x'", "a; python_version ~= '3.10'"]),
                                        max_size=3)},
)


@SETTINGS
@given(VALID_LINE, st.randoms(use_true_random=False), st.booleans())
def test_the_order_of_a_lines_keys_does_not_matter(scratch, entry, rng, with_offsets):
    keys = list(entry)
    rng.shuffle(keys)
    line = json.dumps({k: entry[k] for k in keys})
    header = json.loads(HEADER)
    if with_offsets:
        header["lines"] = offsets([line])
    path = scratch / "order.jsonl"
    put(path, (json.dumps(header) + "\n" + line + "\n").encode("utf-8"))
    [release] = lazy_releases(str(path))[1]
    assert release.is_yanked is entry.get("yanked", False)
    assert release.requires_dist == tuple(entry.get("requires_dist", ()))
    assert str(release.requires_python or "") == str(entry.get("requires_python", ""))
    assert not snapshot_problems(str(path))


NAME = st.from_regex(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,4}[A-Za-z0-9])?", fullmatch=True)
PIECES = st.sampled_from(["[x]", "[x,y]", "[x, y]", ">=1.0", "==1.*", "==1.0a1.*", "~=1", "~=1.0", "<2,>=1", " (>=1)", ">1.0.post1.dev2",
                          "; extra == 'x'", ";python_version>='3'", " ; (sys_platform == \"linux\" and extra == 'a')",
                          " or os_name != 'nt'", " and", "; extra in 'a b'", "; python_version ~= '3'", ",", " ", "(", ")",
                          "'", '"', "==", "!=1.0.*", "<=1.0.*", "; extras == 'x'", "===1"])


@SETTINGS
@given(NAME, st.lists(PIECES, max_size=5))
def test_the_fast_path_of_requirement_lines_is_sound(name, pieces):
    text = name + "".join(pieces)
    if simple_requirement().match(text):
        requirement = Requirement(text)  # parses: no InvalidRequirement
        assert comparison_problem(getattr(requirement.marker, "_markers", [])) is None


def same_requirement(fast: Requirement, text: str) -> None:
    """`fast` (built without packaging's parser) is what packaging parses `text` to."""
    slow = Requirement(text)  # parses: no InvalidRequirement
    assert comparison_problem(getattr(slow.marker, "_markers", [])) is None
    assert (fast.name, fast.url, fast.extras, str(fast.specifier), str(fast.marker)) == \
        (slow.name, slow.url, slow.extras, str(slow.specifier), str(slow.marker)), text
    assert repr(getattr(fast.marker, "_markers", None)) == repr(getattr(slow.marker, "_markers", None))
    assert fast == slow and hash(fast) == hash(slow)


@SETTINGS
@given(NAME, st.lists(PIECES, max_size=5))
def test_requirement_lines_built_without_the_parser_are_the_parsed_ones(name, pieces):
    text = name + "".join(pieces)
    fast = _common(text)
    if fast is not None:
        same_requirement(fast, text)


@SETTINGS
@given(st.text(alphabet="ab_.-019vlm", max_size=12), st.text(alphabet="ab.-019cpny_", max_size=20))
def test_wheel_file_names_agree_with_packaging(stem, tags):
    name = f"{stem}-{tags}.whl"
    try:
        expected = parse_wheel_filename(name)[:2]
    except InvalidWheelFilename:
        expected = None
    found = _wheel_file(name)
    if expected is None:
        assert isinstance(found, str)
    elif not isinstance(found, str):  # a compressed tag set of more than MAX_TAG_SET tags is refused: stricter
        assert found == expected


CATALOG_FILES = st.sampled_from(["gpus.toml", "models.toml", "constraints/_sources.toml", "options/vllm.toml", "cuda.toml",
                                 "platforms.toml", "constraints/vllm.toml"])


@SETTINGS
@given(CATALOG_FILES, st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80).map(
    lambda t: t + '\n[[gpu]]\nname = "B200"\n[[model]]\nname = "GLM-5"\n[[source]]\nid = "vllm-0.32.0"\n'))
def test_any_text_in_a_curated_file_is_read_or_refused(fuzz_root, tmp_path_factory, file, text):
    root = tmp_path_factory.getbasetemp() / "any-text"
    if not root.exists():
        shutil.copytree(fuzz_root, root)
    original = (root / file).read_bytes()
    put(root / file, text.encode("utf-8"))
    try:
        outcome(lambda: load(root, file))
    finally:
        put(root / file, original)


@pytest.mark.parametrize("written", [
    '"' + "1" * 101 + '"',
    '"' + "\\u0031" * 101 + '"',  # digits made by escapes: none shows in the text
    '"""' + "1" * 60 + "\\\n    " + "1" * 60 + '"""',  # a line continuation joins two runs
])
def test_a_number_too_long_is_found_however_the_string_is_written(tmp_path, written):
    from compat.errors import DatabaseError
    from compat.knowledge._schema import MAX_DIGITS, Table

    text = f"summary = {written}\n"
    data = tomllib.loads(text)
    assert any(len(run) > MAX_DIGITS for run in re.findall("[0-9]+", data["summary"]))
    with pytest.raises(DatabaseError, match="digits"):
        Table(data, "x.toml", "", text=text)
    Table({"summary": "1" * 100}, "x.toml", "", text='summary = "' + "1" * 100 + '"\n')  # 100 is allowed
