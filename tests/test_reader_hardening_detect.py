"""Hostile input to the lock reader, to `compat detect`'s readers of
nvidia-smi and rocm-smi, and the line a bug prints: input compat cannot use
is one line and exit 2 (or, for a GPU tool, a note and no GPU), never a
traceback nor exit 3."""

from __future__ import annotations

import logging
import os
import random
import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from compat._toml import loads
from compat.errors import LINE_LIMIT, CompatError
from compat.formats.detected import render
from compat.sources.detect import Machine, parse_nvidia_smi, parse_rocm_smi
from compat.sources.pylock import read_pylock
from compat.knowledge.binding import load_stack

from .conftest import EXAMPLES
from .test_exit_codes import boom, run

SMI = Path(__file__).parent / "data" / "smi"
CAT = shutil.which("cat")
posix_only = pytest.mark.skipif(os.name != "posix", reason="the fake tools are shell scripts")


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    line = err[:-1]
    assert len(line) <= LINE_LIMIT + len("compat: error: "), len(line)
    return line


# -- 1. a lock of lock-version 1.1 -------------------------------------------------

WHEEL = "numpy-2.3.1-cp312-cp312-manylinux_2_28_x86_64.whl"
LOCK_1_1 = f"""lock-version = "1.1"
created-by = "a newer locker"

[[packages]]
name = "numpy"
version = "2.3.1"
wheels = [{{ name = "{WHEEL}", url = "https://example.org/{WHEEL}", hashes = {{ sha256 = "aa" }} }}]
"""


def test_a_lock_of_minor_version_1_1_is_read_without_a_stray_line(tmp_path, capsys):
    """packaging reads 1.1 (PEP 751: a newer minor version is read, with a
    warning) and logs that it is "not supported"; compat reads it too, and
    the log line no longer reaches standard error beside compat's output."""
    path = tmp_path / "pylock.toml"
    path.write_text(LOCK_1_1)
    lock = read_pylock(str(path))
    assert [p.name for p in lock.lock.packages] == ["numpy"]
    assert lock.said == ["pylock minor version 1.1 is not supported"]
    assert capsys.readouterr().err == ""
    logger = logging.getLogger("packaging.pylock")
    assert logger.propagate and not logger.handlers  # put back as it was
    code, out, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"), "--pylock", str(path), "-q")
    assert code == 0 and err == "", (out, err)


def test_a_bad_lock_of_minor_version_1_1_is_one_line_that_says_both(tmp_path, capsys):
    path = tmp_path / "pylock.toml"
    path.write_text(LOCK_1_1 + "\n[tool.compat]\napplications = 1\n")
    code, _, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"), "--pylock", str(path))
    line = one_line(err)
    assert code == 2
    assert f"{path}:" in line and "[tool.compat] applications" in line
    assert "pylock minor version 1.1 is not supported" in line


def test_a_lock_of_major_version_2_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "pylock.toml"
    path.write_text(LOCK_1_1.replace('"1.1"', '"2.0"'))
    code, _, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"), "--pylock", str(path))
    assert code == 2 and "lock-version" in one_line(err) and str(path) in err


# -- 2. what nvidia-smi and rocm-smi print -----------------------------------------


def test_a_driver_version_of_5000_digits_is_not_read():
    with pytest.raises(ValueError, match="more than 100 digits"):
        parse_nvidia_smi("NVIDIA H100 80GB HBM3, 9.0, " + "5" * 5000 + "\n")
    with pytest.raises(ValueError, match="more than 100 digits"):
        parse_nvidia_smi("NVIDIA H100 80GB HBM3, 9." + "0" * 500 + ", 580.95.05\n")


def test_rocm_smi_json_nested_too_deep_is_not_read():
    with pytest.raises(ValueError, match="nests more than"):
        parse_rocm_smi('{"card0": ' + "[" * 100_000 + "]" * 100_000 + "}")
    # brackets inside strings are no nesting
    (gpu,) = parse_rocm_smi('{"card0": {"Card series": "AMD [[[[{{{{\\" MI300X", "x": "' + "[" * 5000 + '"}}')
    assert gpu.name == 'AMD [[[[{{{{" MI300X'


def test_empty_nvidia_smi_fields_are_no_gpu():
    for text in (",,,,\n", ",,,\n", " ,, , , \n", "--, 9.0, 580.95.05\n"):
        with pytest.raises(ValueError, match="names no GPU"):
            parse_nvidia_smi(text)
    with pytest.raises(ValueError, match="is not 'name, compute capability, driver'"):
        parse_nvidia_smi(",,\n")  # an empty name: refused before too
    assert parse_nvidia_smi("NVIDIA A10, , \n")[0].name == "NVIDIA A10"  # a name alone is still a GPU


@pytest.fixture
def tools(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.delenv("COMPAT_DEBUG", raising=False)

    def prints(name: str, text: str) -> None:
        recorded = tmp_path / f"{name}.out"
        recorded.write_text(text, encoding="utf-8")
        (folder / name).write_text(f"#!/bin/sh\n{CAT} '{recorded}'\n", encoding="utf-8")
        (folder / name).chmod(0o755)

    return prints


@posix_only
@pytest.mark.parametrize("tool, text, note", [
    ("nvidia-smi", "NVIDIA H100 80GB HBM3, 9.0, " + "5" * 5000 + "\n", "a number of more than 100 digits"),
    ("rocm-smi", '{"card0": ' + "[" * 100_000 + "]" * 100_000 + "}", "its JSON nests more than 50 deep"),
    ("nvidia-smi", ",,,,\n", "line 1 names no GPU"),
], ids=["long-driver", "deep-json", "empty-fields"])
def test_compat_detect_notes_what_it_cannot_read_and_claims_no_gpu(tools, capsys, tool, text, note):
    tools(tool, text)
    code, out, err = run(capsys, "detect", "--python", sys.executable, "--timeout", "30")
    assert code == 0, err
    assert "internal error" not in err and "Traceback" not in err
    assert any(note in line and line.startswith(f"compat: note: {tool} printed what compat cannot read")
               for line in err.splitlines()), err
    assert "[hardware]" not in out and "accelerator" not in out and "cuda" not in out.split("[packages]")[0]
    assert all(len(line) <= LINE_LIMIT for line in err.splitlines())


# -- 3. the line a bug prints ------------------------------------------------------


def test_an_internal_error_names_no_address_and_says_what_to_send(capsys, monkeypatch):
    monkeypatch.delenv("COMPAT_DEBUG", raising=False)
    monkeypatch.setattr("compat.engine.check.check_stack", boom)
    code, _, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"))
    assert code == 3
    line = err[:-1]
    assert err.count("\n") == 1 and len(line) <= LINE_LIMIT
    assert "http" not in line and "github" not in line and "://" not in line
    assert "--debug" in line and "traceback" in line and "input" in line and "report" in line
    code, _, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"), "--debug")
    assert code == 3 and "Traceback" in err and "http" not in err.splitlines()[-1]


def test_the_project_names_no_issue_tracker():
    pyproject = loads((Path(__file__).parents[1] / "pyproject.toml").read_text(), file="pyproject.toml")
    assert "Issues" not in pyproject["project"].get("urls", {})


# -- fuzz: mutated tool output through the readers and the stack they render -------

NVIDIA_SEEDS = [p.read_text() for p in sorted(SMI.glob("nvidia-*"))] + ["NVIDIA A10, [N/A], [N/A]\n"]
ROCM_SEEDS = [p.read_text() for p in sorted(SMI.glob("rocm-*"))] + [
    'WARNING: low power\n{"card1": {"Card Series": "AMD Instinct MI250X", "GFX Version": "gfx90a"}, '
    '"card0": {"Card series": "AMD Instinct MI210"}, "system": {}}']
PIECES = [",", ", ", ",,,,", "\n", "[N/A]", "9.0", "sm_90", "12.0", "580.95.05", "\x00", "\u2028", "\ufeff",
          "é", "{", "}", "[", "]", '"', "\\", '"card0": ', '{"Card series": "x"}', "null", "1e999",
          "NVIDIA", "AMD Instinct", "0x74a1", "gfx942", " " * 40]


def mutate(rng: random.Random, seed: str) -> str:
    text = seed
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(text))
        kind = rng.randrange(10)
        if kind == 0:  # a long number
            text = text[:at] + "9" * rng.choice([101, 4301, 5000, 20_000]) + text[at:]
        elif kind == 1:  # deep nesting
            n = rng.choice([20, 60, 1000, 50_000])
            text = text[:at] + rng.choice(["[", "{\"a\":"]) * n + text[at:]
        elif kind == 2:  # a piece of the grammar
            text = text[:at] + rng.choice(PIECES) + text[at:]
        elif kind == 3:  # cut
            text = text[:at]
        elif kind == 4 and text:  # delete a slice
            text = text[:at] + text[at + rng.randint(1, 30):]
        elif kind == 5:  # duplicate a slice
            text = text[:at] + text[at:at + rng.randint(1, 200)] * rng.randint(2, 50) + text[at:]
        elif kind == 6:  # random characters
            text = text[:at] + "".join(chr(rng.choice([rng.randint(0, 127), rng.randint(128, 0x2FFF)]))
                                       for _ in range(rng.randint(1, 20))) + text[at:]
        elif kind == 7:  # empty every field of a line
            lines = text.splitlines(keepends=True) or [""]
            i = rng.randrange(len(lines))
            lines[i] = ",".join("" for _ in lines[i].split(",")) + "\n"
            text = "".join(lines)
        elif kind == 8:  # a long field
            text = text[:at] + "x" * rng.choice([199, 201, 100_000]) + text[at:]
        else:  # swap digits for other digits
            text = "".join(str(rng.randrange(10)) if c.isdigit() and rng.random() < 0.3 else c for c in text)
    return text


def read_and_render(parse, text: str, tool: str, db) -> str:
    """What `compat detect` makes of `text`: "read" (GPUs, and a stack that
    loads), "none" (no GPU), or "refused" (the note it leaves)."""
    try:
        gpus = parse(text)
    except ValueError as exc:
        note = f"{tool} printed what compat cannot read ({exc}): no GPU detected"
        assert "\n" not in note and len(note) <= LINE_LIMIT, note
        return "refused"
    except CompatError as exc:  # pragma: no cover - the readers raise ValueError; a CompatError is fine too
        assert "\n" not in str(exc) and len(str(exc)) <= LINE_LIMIT
        return "refused"
    if not gpus:
        return "none"
    machine = Machine(python="3.12.7", platform="linux-x86_64", glibc="2.35", gpus=gpus, gpu_tool=tool)
    rendered = render(machine, db)
    stack = load_stack(loads(rendered, file="<detected>"), db)  # else `compat detect` exits 3
    assert stack.hardware.count == len(gpus)
    assert all("\n" not in note and len(note) <= LINE_LIMIT for note in
               (line for line in rendered.splitlines() if line.startswith("# note: ")))
    return "read"


def fuzz(db, count: int, seed: int) -> dict[str, Counter]:
    rng = random.Random(seed)
    outcomes = {"nvidia-smi": Counter(), "rocm-smi": Counter()}
    for tool, parse, seeds in (("nvidia-smi", parse_nvidia_smi, NVIDIA_SEEDS),
                               ("rocm-smi", parse_rocm_smi, ROCM_SEEDS)):
        for _ in range(count):
            text = mutate(rng, rng.choice(seeds))
            outcomes[tool][read_and_render(parse, text, tool, db)] += 1
    return outcomes


def test_mutated_tool_output_is_read_or_refused_never_a_crash(db):
    outcomes = fuzz(db, 200, seed=751)
    assert sum(outcomes["nvidia-smi"].values()) == sum(outcomes["rocm-smi"].values()) == 200
    assert outcomes["nvidia-smi"]["read"] and outcomes["nvidia-smi"]["refused"]
    assert outcomes["rocm-smi"]["read"] and outcomes["rocm-smi"]["refused"]


@pytest.mark.slow
def test_mutated_tool_output_many_more(db):
    count = int(os.environ.get("COMPAT_FUZZ_DETECT_INPUTS", "2000"))
    outcomes = fuzz(db, count, seed=int(os.environ.get("COMPAT_FUZZ_DETECT_SEED", "2026")))
    print(f"\ndetect fuzz, {count} each: " + "; ".join(f"{tool} {dict(sorted(c.items()))}"
                                                        for tool, c in outcomes.items()))
    assert all(sum(c.values()) == count for c in outcomes.values())
