"""The same input gives the same bytes: `check --format json`, `db show
--format json` and `resolve` (a lock file, a pinned stack) print byte for
byte the same output whatever the string hash seed (PYTHONHASHSEED) and
whatever order the file system lists the database's files in
(docs/reliability.md, "Determinism").

Each variant runs in its own interpreter, all at once: hash seed 1 on the
bundled database; seed 2 on a copy of it whose files were created in reverse
order; seed 3 on the bundled database with `os.listdir` and `os.scandir`
made to list every folder backwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import EXAMPLES, ROOT


LOCKED = "[system]\npython = \"3.12\"\n[packages]\ntransformers = \"5.19.0\"\n"  # a closure of some thirty wheels


def commands(database: str, locked: str) -> list[list[str]]:
    stacks = [str(p.relative_to(ROOT)) for p in sorted(EXAMPLES.glob("*.toml"))]
    runs = [["check", stack, "--format", "json"] for stack in stacks]
    runs += [["db", "show", name, "--format", "json"] for name in ("vllm", "flashinfer-python==0.7.2", "torch", "gpus")]
    runs += [["resolve", locked, "--format", "pylock"], ["resolve", "examples/vllm-omni-fa3-fp8.toml"]]
    return [[*run, "--db", database] for run in runs]


# The program each interpreter runs: argv[1] the commands (JSON), argv[2]
# "backwards" to list every folder in reverse of the order the system gives.
# It prints {command: [exit, output]} as JSON. (Inline, so that it imports
# compat and click only, not the test suite and pytest.)
RENDER = """
import json, os, sys

if sys.argv[2] == "backwards":
    listdir, scandir = os.listdir, os.scandir

    class Backwards(list):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

        def close(self):
            pass

    def backwards_scandir(path="."):
        with scandir(path) as entries:
            return Backwards(list(entries)[::-1])

    os.listdir = lambda path=".": listdir(path)[::-1]
    os.scandir = backwards_scandir

from click.testing import CliRunner
from compat.cli import cli

out = {}
for run in json.loads(sys.argv[1]):
    result = CliRunner().invoke(cli, run)
    out[" ".join(run[:-2])] = [result.exit_code, result.output]
sys.stdout.write(json.dumps(out))
"""


def copy_backwards(source: str, target: str) -> None:
    """A copy of folder `source` whose entries are created in reverse order
    (hard links where allowed): another order for a file system that lists in creation order."""
    os.makedirs(target)
    for name in sorted(os.listdir(source), reverse=True):
        path, copy = os.path.join(source, name), os.path.join(target, name)
        if os.path.isdir(path):
            copy_backwards(path, copy)
        else:
            try:
                os.link(path, copy)
            except OSError:
                with open(path, "rb") as handle, open(copy, "wb") as out:
                    out.write(handle.read())


@pytest.fixture
def copy_of_the_database(tmp_path):
    """The bundled database, copied backwards; removed at once after the test,
    so that no hard link to the bundled files outlives it."""
    copy = str(tmp_path / "data")
    copy_backwards(str(ROOT / "data"), copy)
    yield copy
    shutil.rmtree(copy)


def test_output_is_the_same_bytes_whatever_the_hash_seed_and_file_order(tmp_path, copy_of_the_database):
    bundled, copy = str(ROOT / "data"), copy_of_the_database
    locked = tmp_path / "locked.toml"
    locked.write_text(LOCKED)
    variants = [("1", bundled, "forwards"), ("2", copy, "forwards"), ("3", bundled, "backwards")]
    running = [
        subprocess.Popen([sys.executable, "-c", RENDER, json.dumps(commands(database, str(locked))), how], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONHASHSEED": seed})
        for seed, database, how in variants
    ]
    outputs = []
    for process in running:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr.decode()[-2000:]
        outputs.append(json.loads(stdout))
    first = outputs[0]
    assert sum(code in (0, 1) and output.startswith("{") for code, output in first.values()) >= 5  # reports, not errors
    assert first[f"resolve {locked} --format pylock"][1].count("[[packages]]") > 10
    assert first["resolve examples/vllm-omni-fa3-fp8.toml"][1].startswith("# Resolved by compat")
    for other, (seed, database, how) in zip(outputs[1:], variants[1:]):
        other = {name: [code, output.replace(database, bundled)] for name, (code, output) in other.items()}
        for name in first:
            assert other[name] == first[name], f"{name}: hash seed {seed}, {database} listed {how}: the output differs"
