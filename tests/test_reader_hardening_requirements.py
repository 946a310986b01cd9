"""The requirements and pyproject.toml readers refuse hostile input with one
line, exit 2 (docs/reliability.md): a URL whose IPv6 host is malformed, a
wheel or sdist whose version has thousands of digits, an included file whose
name holds a NUL, an unknown --group among thousands; and a seeded fuzz of
mutated files gives a stack or a CompatError of one line, never anything else."""

from __future__ import annotations

import collections
import contextlib
import os
import random
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from click.testing import CliRunner

from compat import Inputs, load_inputs
from compat._toml import tomllib
from compat.cli import cli
from compat.errors import CompatError

MACHINE = '[system]\npython = "3.12"\n'
DIGITS = "1" * 5000
LIMIT = 600


def _check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "machine.toml").write_text(MACHINE, encoding="utf-8")
    return CliRunner().invoke(cli, ["check", "machine.toml", *args])


def _one_error_line(result, *wanted: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.output.strip("\n").split("\n")
    assert len(lines) == 1, result.output
    [line] = lines
    assert line.startswith("compat: error: ")
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert len(line) - len("compat: error: ") <= LIMIT
    for part in wanted:
        assert part in line, line
    return line


def _project(dependencies: list[str]) -> str:
    listed = "".join(f"    '{d}',\n" for d in dependencies)
    return f'[project]\nname = "app"\nversion = "1"\ndependencies = [\n{listed}]\n'


# -- 1. a URL with a malformed IPv6 host -----------------------------------------------------

@pytest.mark.parametrize("line", ["https://[::1/x.whl", "pkg @ https://[::1/x"])
def test_a_malformed_ipv6_url_in_a_requirements_file_is_one_line(tmp_path, monkeypatch, line):
    (tmp_path / "r.txt").write_text(f"numpy\n{line}\n", encoding="utf-8")
    _one_error_line(_check(tmp_path, monkeypatch, "--requirements", "r.txt"), "r.txt:2:", "IPv6")


def test_a_malformed_ipv6_url_in_a_pyproject_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(_project(["pkg @ https://[::1/x"]), encoding="utf-8")
    _one_error_line(_check(tmp_path, monkeypatch, "--pyproject", "pyproject.toml"),
                    "pyproject.toml:5:", "[project] dependencies", "IPv6")


# -- 2. a wheel or sdist whose version has 5,000 digits ---------------------------------------

@pytest.mark.parametrize("line", [
    f"./pkg-{DIGITS}-py3-none-any.whl",
    f"https://example.com/pkg-{DIGITS}-py3-none-any.whl",
    f"pkg-{DIGITS}.tar.gz",
    f"https://example.com/pkg-{DIGITS}.tar.gz",
    f"pkg @ https://example.com/pkg-{DIGITS}-py3-none-any.whl",
    f"pkg @ file:///tmp/pkg-{DIGITS}.tar.gz",
])
def test_an_archive_whose_version_has_thousands_of_digits_is_one_line(tmp_path, monkeypatch, line):
    (tmp_path / "r.txt").write_text(f"{line}\n", encoding="utf-8")
    _one_error_line(_check(tmp_path, monkeypatch, "--requirements", "r.txt"), "r.txt:1:", "digits")


def test_an_archive_whose_version_has_thousands_of_digits_in_a_pyproject_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text(
        _project([f"pkg @ https://example.com/pkg-{DIGITS}-py3-none-any.whl"]), encoding="utf-8")
    _one_error_line(_check(tmp_path, monkeypatch, "--pyproject", "pyproject.toml"),
                    "pyproject.toml:5:", "[project] dependencies", "digits")


@pytest.mark.parametrize("line", ["https://example.com/a/\u00e1g3-3.0-py3-none-any.whl", "./pkg\u02c8-1.0.tar.gz"])
def test_an_archive_whose_name_is_no_requirement_name_is_one_line(tmp_path, monkeypatch, line):
    # packaging parses the file name, but no requirement is named so (found by the fuzz below)
    (tmp_path / "r.txt").write_text(f"{line}\n", encoding="utf-8")
    _one_error_line(_check(tmp_path, monkeypatch, "--requirements", "r.txt"), "r.txt:1:", "pin the version")


# -- 3. an included file whose name holds a NUL -----------------------------------------------

@pytest.mark.parametrize("option", ["-r", "-c", "--requirement=", "--constraint "])
def test_an_included_file_whose_name_holds_a_nul_is_one_line(tmp_path, monkeypatch, option):
    (tmp_path / "r.txt").write_text(f"numpy\n{option}{'' if option[-1] in '= ' else ' '}a\x00b.txt\n",
                                    encoding="utf-8")
    _one_error_line(_check(tmp_path, monkeypatch, "--requirements", "r.txt"), "r.txt:2:", "NUL")


# -- 4. an unknown group (or extra) among thousands --------------------------------------------

def test_an_unknown_group_among_thousands_is_a_short_line(tmp_path, monkeypatch):
    groups = "\n".join(f"group{i} = []" for i in range(3000))
    (tmp_path / "pyproject.toml").write_text(f'{_project([])}\n[dependency-groups]\n{groups}\n', encoding="utf-8")
    line = _one_error_line(_check(tmp_path, monkeypatch, "--pyproject", "pyproject.toml", "--group", "nope"),
                           "pyproject.toml:", "[dependency-groups]", "'nope'", "and 2,990 more")
    assert len(line) < 300


def test_an_unknown_extra_among_thousands_is_a_short_line(tmp_path, monkeypatch):
    extras = "\n".join(f"extra{i} = []" for i in range(3000))
    (tmp_path / "pyproject.toml").write_text(f'{_project([])}\n[project.optional-dependencies]\n{extras}\n',
                                             encoding="utf-8")
    line = _one_error_line(_check(tmp_path, monkeypatch, "--pyproject", "pyproject.toml", "--extra", "nope"),
                           "pyproject.toml:", "'nope'", "and 2,990 more")
    assert len(line) < 300


# -- a seeded fuzz of both readers ------------------------------------------------------------

SEED = 20261205
REQUIREMENTS = """\
# a header
--index-url https://download.pytorch.org/whl/cu128
numpy>=1.26 ; python_version >= "3.10"
transformers[torch]==4.57.1 \\
    --hash=sha256:00
-c constraints.txt
./dist/pkg-1.0-py3-none-any.whl
pkg2 @ https://example.com/pkg2-2.0.tar.gz
https://example.com/a/pkg3-3.0-py3-none-any.whl#sha256=00
-e ./service
requests ; sys_platform == "linux"
"""
CONSTRAINTS = "numpy<3\n"
SERVICE = '[project]\nname = "service"\nversion = "1"\ndependencies = ["click>=8"]\n'
PYPROJECT = """\
[project]
name = "app"
version = "1.0"
dependencies = [
    "numpy>=1.26",
    'requests ; python_version >= "3.10"',
    "pkg @ https://example.com/pkg-1.0-py3-none-any.whl",
    "app[gpu]",
]

[project.optional-dependencies]
gpu = ["torch==2.9.0"]

[dependency-groups]
dev = ["pytest>=8", {include-group = "lint"}]
lint = ["ruff"]
"""
# what the mutations insert: bytes of every kind, long digit runs, brackets, NUL, unicode
PIECES = [
    "\x00", "[", "]", "[::1", "[::", "@", " @ ", "://", "https://[", "\\", "\n", "\r", "\t", "#", ";", ",",
    "=", "==", "-r ", "-c ", "-e ", "--hash=", "${HOME}", "${X", "'", '"', "{", "}", "é", "\u2028", "\ufeff",
    "\U0001f600", "\ud7ff", "~", ".whl", ".tar.gz", "-py3-none-any.whl", "file:///", "git+", "%00", "%5B",
    "(", ")", "<", ">", "!", "*", "\x7f", "\x1b[31m", "/", "../", "..", ".", "a" * 300,
]


def _mutant(rng: random.Random, text: str, changes: int | None = None) -> str:
    for _ in range(changes or rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        kind = rng.random()
        if kind < 0.15:
            piece = rng.choice("0123456789") * rng.choice([101, 300, 4400, 5000])
        elif kind < 0.30:
            piece = "".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(1, 8)))
        elif kind < 0.40:
            end = min(len(text), at + rng.randint(1, 40))
            text = text[:at] + text[end:]
            continue
        else:
            piece = rng.choice(PIECES)
        text = text[:at] + piece + text[at:]
    return text


def _mutant_strings(rng: random.Random, data: Any) -> Any:
    """`data` with each of its strings (keys too) mutated, now and then."""
    if isinstance(data, dict):
        return {_mutant_strings(rng, k): _mutant_strings(rng, v) for k, v in data.items()}
    if isinstance(data, list):
        return [_mutant_strings(rng, v) for v in data]
    if isinstance(data, str) and rng.random() < 0.3:
        return _mutant(rng, data, rng.randint(1, 2)).replace("\ud7ff", "")
    return data


def _outcome(run) -> str:
    """'stack', 'error' (a CompatError of one line of at most 600
    characters), or what else it raised (the equivalent of exit 3)."""
    try:
        run()
    except CompatError as exc:
        line = str(exc)
        if "\n" in line or "\r" in line or len(line) > LIMIT:
            return f"long or split error line: {line[:200]!r}"
        return "error"
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return "stack"


def _fuzz(tmp_path: Path, db, count: int, seed: int = SEED) -> dict[str, collections.Counter]:
    with contextlib.chdir(tmp_path):  # pip reads a requirement's path from the current folder
        return _fuzz_here(tmp_path, db, count, seed)


def _fuzz_here(tmp_path: Path, db, count: int, seed: int) -> dict[str, collections.Counter]:
    rng = random.Random(seed)
    (tmp_path / "machine.toml").write_text(MACHINE, encoding="utf-8")
    (tmp_path / "constraints.txt").write_text(CONSTRAINTS, encoding="utf-8")
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "pyproject.toml").write_text(SERVICE, encoding="utf-8")
    machine = str(tmp_path / "machine.toml")
    found: dict[str, collections.Counter] = {"requirements": collections.Counter(),
                                             "pyproject": collections.Counter()}
    for index in range(count):
        path = tmp_path / f"r{index}.txt"
        path.write_bytes(_mutant(rng, REQUIREMENTS).encode("utf-8", "surrogatepass"))
        inputs = Inputs(stacks=(machine,), requirements=(str(path),))
        found["requirements"][_outcome(lambda: load_inputs(inputs, db))] += 1
    for index in range(count):
        folder = tmp_path / f"p{index}"
        folder.mkdir()
        if rng.random() < 0.5:  # the text, as a broken file is
            text = _mutant(rng, PYPROJECT)
        else:  # the strings, in a file that stays TOML (so the requirements themselves are read)
            text = tomli_w.dumps(_mutant_strings(rng, tomllib.loads(PYPROJECT)))
        (folder / "pyproject.toml").write_bytes(text.encode("utf-8", "surrogatepass"))
        groups = tuple(rng.sample(["dev", "lint", "de v", "nope"], rng.randint(0, 2)))
        extras = tuple(rng.sample(["gpu", "GPU", "cpu"], rng.randint(0, 1)))
        inputs = Inputs(stacks=(machine,), pyproject=str(folder / "pyproject.toml"), groups=groups, extras=extras)
        found["pyproject"][_outcome(lambda: load_inputs(inputs, db))] += 1
    return found


def _assert_no_crash(found: dict[str, collections.Counter]) -> None:
    crashes = {reader: {k: n for k, n in counts.items() if k not in ("stack", "error")}
               for reader, counts in found.items()}
    assert not any(crashes.values()), crashes


def test_mutated_requirements_and_pyprojects_give_a_stack_or_one_line(tmp_path, db):
    _assert_no_crash(_fuzz(tmp_path, db, 200))


@pytest.mark.slow
def test_many_mutated_requirements_and_pyprojects_give_a_stack_or_one_line(tmp_path, db):
    count = int(os.environ.get("COMPAT_FUZZ_READER_INPUTS", "2000"))
    found = _fuzz(tmp_path, db, count)
    print({reader: dict(counts) for reader, counts in found.items()})
    _assert_no_crash(found)
