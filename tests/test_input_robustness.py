"""The readers of a user's own files never crash: whatever a requirements
file, a pyproject.toml, a pylock.toml or an interpreter gives, the answer is
the stack or one line that names the file (and the line or key), exit 2
(docs/inputs.md, "What the readers refuse")."""

from __future__ import annotations

import json
import stat
import sys
import textwrap
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.markers import Marker, default_environment

from compat import Inputs, StackError, load_inputs
from compat.cli import cli
from compat.sources import environment as environment_module
from compat.sources.detect import detect
from compat.sources.environment import read_environment
from compat.sources.requirements import marker_problem

MACHINE = '[system]\npython = "3.12"\ncuda = "13.0"\n\n[hardware]\ngpu = "H200"\n'
WHEEL = "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl"
HUGE = "1" * 5000
# Markers that parse but that packaging cannot evaluate outside a lock
UNEVALUABLE = {
    "compatible": ('python_version ~= "3"', "'~=3' is not a version specifier"),
    "dependency-groups": ('dependency_groups == "x"', "dependency_groups"),
    "extras": ('"x" in extras', "extras"),
    "two-strings": ('"a" < "b"', "two strings"),
    "huge": (f'python_version < "{HUGE}"', "a number of more than 100 digits"),
}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh current folder holding the machine's stack file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stack.toml").write_text(MACHINE, encoding="utf-8")
    return tmp_path


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", *args])
    return result.exit_code, result.output


def error_of(db, **inputs) -> StackError:
    with pytest.raises(StackError) as info:
        load_inputs(Inputs(stacks=("stack.toml",), **inputs), db)
    return info.value


def lock(marker_line: str = "", head: str = "") -> str:
    return textwrap.dedent(f"""\
        lock-version = "1.0"
        created-by = "hand"
        {head}

        [[packages]]
        name = "vllm"
        version = "0.32.0"
        {marker_line}
        wheels = [{{ name = "{WHEEL}", url = "https://example.com/{WHEEL}", hashes = {{ sha256 = "00" }} }}]
        """)


# -- markers that parse but cannot be evaluated ----------------------------------------------------


@pytest.mark.parametrize("marker, says", UNEVALUABLE.values(), ids=UNEVALUABLE)
def test_a_requirements_line_whose_marker_cannot_be_evaluated_is_one_line_exit_2(folder, marker, says):
    (folder / "r.txt").write_text(f"numpy\nvllm==0.32.0; {marker}\n", encoding="utf-8")
    code, output = check("stack.toml", "-r", "r.txt")
    assert code == 2 and output.startswith("compat: error: r.txt:2: marker: ") and says in output
    assert output.count("\n") == 1


@pytest.mark.parametrize("marker, says", UNEVALUABLE.values(), ids=UNEVALUABLE)
def test_a_pyproject_dependency_whose_marker_cannot_be_evaluated_names_the_key(folder, db, marker, says):
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "x"\ndependencies = [\n  "numpy",\n  {json.dumps("vllm; " + marker)},\n]\n',
        encoding="utf-8")
    err = error_of(db, pyproject="pyproject.toml")
    assert (err.file, err.key, err.line) == ("pyproject.toml", "[project] dependencies", 5) and says in err.message


@pytest.mark.parametrize("marker", ['python_version ~= "3"', '"a" < "b"', f'python_version >= "{HUGE}"'])
def test_a_lock_marker_that_cannot_be_evaluated_names_the_package_or_environment(folder, db, marker):
    (folder / "pylock.toml").write_text(lock(marker_line=f"marker = {json.dumps(marker)}"), encoding="utf-8")
    err = error_of(db, pylock="pylock.toml")
    assert (err.key, err.line) == ("packages[0].marker", 5) and err.message.startswith("marker: ")
    (folder / "pylock.toml").write_text(lock(head=f"environments = [{json.dumps(marker)}]"), encoding="utf-8")
    assert error_of(db, pylock="pylock.toml").key == "environments[0]"


def test_a_lock_selects_by_its_extras_and_dependency_groups_markers(folder, db):
    text = lock(marker_line="marker = '\"gpu\" in extras or \"serve\" in dependency_groups'",
                head='extras = ["gpu"]\ndependency-groups = ["serve"]')
    (folder / "pylock.toml").write_text(text, encoding="utf-8")

    def packages(**chosen: tuple[str, ...]) -> list[str]:
        [stack] = load_inputs(Inputs(stacks=("stack.toml",), pylock="pylock.toml", **chosen), db)
        return list(stack.packages)

    assert packages() == [] and packages(extras=("gpu",)) == ["vllm"] and packages(groups=("serve",)) == ["vllm"]


@settings(max_examples=150, deadline=None)
@given(left=st.sampled_from(["python_version", "platform_release", "extra", "extras", "dependency_groups", '"3.1"',
                             '"x"', f'"{HUGE[:150]}"']),
       op=st.sampled_from(["==", "!=", "<", ">=", "~=", "===", "in", "not in"]),
       right=st.sampled_from(['"3"', '"3.11"', '"x"', '"1.0.post1"', "python_version", "extras", f'"{HUGE[:150]}"']))
def test_a_marker_that_passes_the_check_evaluates_on_any_stack(left, op, right):
    # the check is sound: what it lets through, the merge evaluates without raising
    marker = Marker(f"{left} {op} {right}")
    if marker_problem(marker) is None:
        for python in ("3.10", "3.14"):
            marker.evaluate({**default_environment(), "python_version": python, "platform_release": "", "extra": ""})


# -- numbers too long to compare ---------------------------------------------------------------------


@pytest.mark.parametrize("where, key, line", [("head", "requires-python", None),
                                              ("package", "packages[0].requires-python", 5)])
def test_a_lock_requires_python_of_thousands_of_digits_names_its_key(folder, db, where, key, line):
    written = f'requires-python = ">={HUGE}"'
    text = lock(head=written) if where == "head" else lock(marker_line=written)
    (folder / "pylock.toml").write_text(text, encoding="utf-8")
    err = error_of(db, pylock="pylock.toml")
    assert (err.key, err.line) == (key, line) and "more than 100 digits" in err.message


# -- chains that would recurse --------------------------------------------------------------------------


def test_a_chain_of_500_self_referencing_extras_is_read_without_recursion(folder, db):
    extras = "\n".join(f'e{i} = ["x[e{i + 1}]"]' for i in range(500))
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "x"\ndependencies = []\n[project.optional-dependencies]\n{extras}\n'
        'e500 = ["vllm==0.32.0; sys_platform == \'linux\'"]\n', encoding="utf-8")
    [stack] = load_inputs(Inputs(stacks=("stack.toml",), pyproject="pyproject.toml", extras=("e0",)), db)
    assert list(stack.packages) == ["vllm"] and stack.places["vllm"] == ("pyproject.toml", 505)


def test_a_marker_on_a_self_reference_applies_to_all_it_brings_in(folder, db):
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = []\n[project.optional-dependencies]\n'
        'all = ["x[gpu]; sys_platform == \'win32\'"]\ngpu = ["x[serve]"]\nserve = ["vllm==0.32.0"]\n',
        encoding="utf-8")
    [stack] = load_inputs(Inputs(stacks=("stack.toml",), pyproject="pyproject.toml", extras=("all",)), db)
    assert list(stack.packages) == []  # vllm comes only on Windows


def test_a_chain_of_500_included_groups_is_read_and_one_past_the_bound_refused(folder, db):
    def write(count: int) -> None:
        groups = "\n".join(f'g{i} = [{{include-group = "g{i + 1}"}}]' for i in range(count))
        (folder / "pyproject.toml").write_text(f'[dependency-groups]\n{groups}\ng{count} = ["vllm==0.32.0"]\n',
                                               encoding="utf-8")

    write(500)
    [stack] = load_inputs(Inputs(stacks=("stack.toml",), pyproject="pyproject.toml", groups=("g0",)), db)
    assert list(stack.packages) == ["vllm"]
    write(1000)
    err = error_of(db, pyproject="pyproject.toml", groups=("g0",))
    assert err.file == "pyproject.toml" and "more than 1,000 extras and groups" in err.message


def test_projects_that_name_each_other_by_file_url_are_a_cycle_not_an_endless_read(folder, db):
    for name, other in (("a", "b"), ("b", "a")):
        (folder / name).mkdir()
        url = (folder / other).as_uri()
        (folder / name / "pyproject.toml").write_text(
            f'[project]\nname = "{name}"\ndependencies = ["{other} @ {url}"]\n', encoding="utf-8")
    err = error_of(db, pyproject="a/pyproject.toml")
    assert "require one another in a cycle" in err.message


# -- direct references in a pyproject.toml read as a requirements file reads them -----------------------


def test_a_pyproject_direct_reference_to_a_wheel_pins_its_version_as_a_requirements_line_does(folder, db):
    requirement = f"vllm @ https://example.com/{WHEEL}"
    (folder / "r.txt").write_text(f"{requirement}\n", encoding="utf-8")
    (folder / "pyproject.toml").write_text(f'[project]\nname = "x"\ndependencies = ["{requirement}"]\n',
                                           encoding="utf-8")
    [from_file] = load_inputs(Inputs(stacks=("stack.toml",), requirements=("r.txt",)), db)
    [from_project] = load_inputs(Inputs(stacks=("stack.toml",), pyproject="pyproject.toml"), db)
    assert str(from_project.packages["vllm"].specifier) == str(from_file.packages["vllm"].specifier) == "==0.32.0"


def test_a_pyproject_direct_reference_to_a_vcs_checkout_is_refused_as_a_requirements_line_is(folder, db):
    requirement = "vllm @ git+https://example.com/vllm"
    (folder / "r.txt").write_text(f"{requirement}\n", encoding="utf-8")
    (folder / "pyproject.toml").write_text(f'[project]\nname = "x"\ndependencies = ["{requirement}"]\n',
                                           encoding="utf-8")
    from_file = error_of(db, requirements=("r.txt",))
    from_project = error_of(db, pyproject="pyproject.toml")
    assert "cannot tell which version a VCS checkout installs" in from_file.message
    assert from_project.message == from_file.message
    assert (from_file.file, from_file.line) == ("r.txt", 1)
    assert (from_project.file, from_project.key, from_project.line) == ("pyproject.toml", "[project] dependencies", 3)


# -- the file that holds the entry is the one blamed --------------------------------------------------


def test_a_3_mb_line_is_blamed_on_its_requirements_file(folder):
    (folder / "r.txt").write_text("numpy\n" + "a" * 3_000_000 + "\n", encoding="utf-8")
    code, output = check("stack.toml", "-r", "r.txt")
    assert code == 2 and output.startswith("compat: error: r.txt:2: a package name of 3,000,000 characters")


@pytest.mark.parametrize("reader", ["requirements", "pyproject"])
def test_more_packages_than_a_stack_holds_are_blamed_on_the_file_that_gives_them(folder, db, reader):
    names = [f"pkg{i}==1.0" for i in range(2000)]
    if reader == "requirements":
        (folder / "r.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
        err = error_of(db, requirements=("r.txt",))
        assert (err.file, err.line) == ("r.txt", 1001)
    else:  # two thousand on one line: read in one pass
        (folder / "pyproject.toml").write_text(f'[project]\nname = "x"\ndependencies = {json.dumps(names)}\n',
                                               encoding="utf-8")
        err = error_of(db, pyproject="pyproject.toml")
        assert (err.file, err.line) == ("pyproject.toml", 3)
    assert "more than 1,000 packages" in err.message


def test_an_included_file_that_is_no_requirements_file_is_not_printed(folder):
    secret = "root:$6$saltsalt$hashhashhashhash:19000:0:99999:7:::"
    (folder / "shadow").write_text(secret + "\n", encoding="utf-8")
    (folder / "r.txt").write_text("-r shadow\n", encoding="utf-8")
    code, output = check("stack.toml", "-r", "r.txt")
    assert code == 2 and output.startswith("compat: error: shadow:1: not a PEP 508 requirement")
    assert "'root:$6'" in output and "hash" not in output and "19000" not in output


# -- an interpreter that is not trusted ----------------------------------------------------------------


def interpreter(folder: Path, name: str, body: str) -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def listing(folder: Path, **distribution: object) -> str:
    """An interpreter that lists one distribution (`distribution`) for this machine."""
    data = {"executable": sys.executable, "markers": default_environment(), "glibc": None,
            "distributions": [{"name": "jjj", "version": "1.0", "requires": [], "requires_python": None,
                               "tags": [], "extras": [], "metadata": "/site/jjj-1.0.dist-info", **distribution}]}
    (folder / "listing.json").write_text(json.dumps(data), encoding="utf-8")
    return interpreter(folder, "python", f"cat '{folder / 'listing.json'}'")


@pytest.mark.parametrize("distribution, says", [
    ({"requires": ['kkk; dependency_groups == "x"']}, "its Requires-Dist 'kkk; dependency_groups == \"x\"' cannot"),
    ({"requires": ['kkk; "a" < "b"']}, "cannot be judged (marker: 'a' < 'b'"),
    ({"requires": [f'kkk; python_version >= "{HUGE}"']}, "a number of more than 100 digits"),
    ({"requires": [f"kkk>={HUGE}"]}, "a version of more than 256 characters"),
    ({"requires_python": f">={HUGE}"}, "its Requires-Python names a number of more than 100 digits"),
    ({"version": HUGE}, "its Version has 5,000 characters"),
], ids=["dependency-groups", "two-strings", "huge-marker", "huge-specifier", "huge-requires-python", "huge-version"])
def test_installed_metadata_that_cannot_be_judged_is_a_finding_not_a_crash(folder, distribution, says):
    result = CliRunner().invoke(cli, ["check", "--env", "--python", listing(folder, **distribution),
                                      "--format", "json"])
    assert result.exit_code == 1, result.output
    [finding] = [f for f in json.loads(result.output)["findings"] if f["id"] == "installed-metadata:jjj"]
    assert says in finding["message"] and len(finding["message"]) < 500


def test_an_interpreter_that_hangs_is_stopped_at_the_timeout(folder, db):
    python = interpreter(folder, "hang", "sleep 30")
    started = time.monotonic()
    with pytest.raises(StackError, match=r"did not list its distributions within 0.5 s \(stopped\)"):
        detect(python, timeout=0.5, platforms=db.platforms)  # `compat detect --timeout` covers the interpreter too
    assert time.monotonic() - started < 5


def test_an_interpreter_that_prints_without_end_is_stopped(folder, monkeypatch):
    monkeypatch.setattr(environment_module, "MAX_LISTING", 1024 * 1024)
    with pytest.raises(StackError, match=r"printed more than 1 MiB .*\(stopped\)"):
        read_environment(interpreter(folder, "yes", "yes"), timeout=30)


def test_an_interpreters_error_is_one_escaped_line_whatever_it_writes(folder):
    flood = interpreter(folder, "flood", "head -c 1000000 /dev/zero | tr '\\0' x >&2; "
                                         "printf 'line1\\n\\033[31mred\\r\\n' >&2; exit 5")
    with pytest.raises(StackError) as info:
        read_environment(flood, timeout=30)
    message = str(info.value)
    assert "(exit 5: " in message and "\\x1b[31mred" in message and "\x1b" not in message and "\n" not in message
    assert len(message) < 500


def test_check_env_with_a_hanging_interpreter_is_one_line_exit_2(folder, monkeypatch):
    monkeypatch.setattr(environment_module, "TIMEOUT", 0.5)
    code, output = check("--env", "--python", interpreter(folder, "hang", "sleep 30"))
    assert code == 2 and output.count("\n") == 1 and "within 0.5 s (stopped)" in output
