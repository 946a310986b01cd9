"""`compat check --env`: the installed environment against its own metadata,
with the same verdicts as `pip check` and `uv pip check`, plus what the
database knows (docs/inputs.md).

The environments are real virtual environments, built once for the module
from stub wheels (tests/stubs.py) with uv, offline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from compat.cli import cli
from compat.engine.installed import installed_findings
from compat.sources.environment import Distribution, Environment, current_interpreter
from compat.knowledge.binding import load_stack

from .conftest import installed
from .stubs import write_wheel

# name, version, Requires-Python, Requires-Dist
HEALTHY = [
    ("app", "1.0", ">=3.8", ["lib-a>=1", 'lib-b[fast]>=1; python_version >= "3"', "lib-c>=0.9"]),
    ("lib-a", "1.5", None, []),
    ("lib-b", "1.0", None, ['lib-speed; extra == "fast"']),
    ("lib-c", "1.0rc1", None, []),  # a pre-release meets >=0.9: pip check admits pre-releases
    ("lib-speed", "2.0", None, []),
    ("torch", "2.10.0+cu128", None, []),
]
BROKEN = [
    ("app", "1.0", None, [
        "lib-a>=2",  # wrong version
        "lib-missing",  # missing
        'lib-win>=9; sys_platform == "win32"',  # marker-excluded, and installed at another version
        'lib-extra-only; extra == "feature"',  # an extra nobody asked for: pip check does not look
        "lib-b[fast]",  # the extra needs lib-speed, which is missing: pip check does not look either
        "lib-c>=0.9",
    ]),
    ("lib-a", "1.0", None, []),
    ("lib-b", "1.0", None, ['lib-speed; extra == "fast"']),
    ("lib-c", "1.0rc1", None, []),
    ("lib-win", "1.0", None, ["lib-missing-too"]),
    ("old-lib", "1.0", "<3", []),
]


def make_venv(folder: Path, packages: list) -> Path:
    """A virtual environment with `packages` installed from stub wheels, and
    pip importable (without metadata of its own, so no distribution of it)."""
    wheels = folder / "wheels"
    wheels.mkdir(parents=True)
    for name, version, python, lines in packages:
        write_wheel(wheels, name, version, python, lines)
    uv = installed("uv")
    venv = folder / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([uv, "pip", "install", "-q", "--python", str(python), "--offline", "--no-index", "--no-deps",
                    "--find-links", str(wheels), *(p[0] for p in packages)], check=True)
    import pip

    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "pip").symlink_to(Path(pip.__file__).parent)
    return python


@pytest.fixture(scope="module")
def venvs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("envs")
    return {"healthy": make_venv(root / "healthy", HEALTHY), "broken": make_venv(root / "broken", BROKEN)}


def check(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["check", *map(str, args), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.output)


def pip_verdicts(python: Path) -> set[tuple[str, str, str]]:
    done = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True, check=False)
    found = set()
    for line in done.stdout.splitlines():
        if m := re.fullmatch(r"(\S+) \S+ requires (\S+), which is not installed\.", line):
            found.add(("missing", m[1], m[2]))
        elif m := re.fullmatch(r"(\S+) \S+ has requirement (.+), but you have .+\.", line):
            found.add(("conflict", m[1], Requirement(m[2]).name))
    assert (done.returncode == 0) == (not found), done.stdout
    return {(kind, canonicalize_name(a), canonicalize_name(b)) for kind, a, b in found}


def uv_verdicts(python: Path) -> set[tuple[str, str, str]]:
    done = subprocess.run([installed("uv"), "pip", "check", "--python", str(python)], capture_output=True, text=True,
                          check=False)
    found = set()
    for line in (done.stdout + done.stderr).splitlines():  # uv writes its report to standard error
        if m := re.fullmatch(r"The package `(\S+)` requires `(.+)`, but it's not installed", line.strip()):
            found.add(("missing", m[1], Requirement(m[2]).name))
        elif m := re.fullmatch(r"The package `(\S+)` requires `(.+)`, but `.+` is installed", line.strip()):
            found.add(("conflict", m[1], Requirement(m[2]).name))
    assert (done.returncode == 0) == (not found), done.stdout + done.stderr
    return {(kind, canonicalize_name(a), canonicalize_name(b)) for kind, a, b in found}


def compat_verdicts(report: dict) -> set[tuple[str, str, str]]:
    found = set()
    for finding in report["findings"]:
        kind, _, rest = finding["id"].partition(":")
        if kind in ("installed-missing", "installed-conflict"):
            dist, _, dep = rest.partition(":")
            found.add((kind.split("-")[1], dist.split("==")[0], dep))
    return found


def test_verdicts_match_pip_check_and_uv_pip_check_on_a_broken_environment(venvs):
    code, report = check("--env", "--python", venvs["broken"])
    expected = {("missing", "app", "lib-missing"), ("conflict", "app", "lib-a"), ("missing", "lib-win", "lib-missing-too")}
    assert compat_verdicts(report) == pip_verdicts(venvs["broken"]) == uv_verdicts(venvs["broken"]) == expected
    assert code == 1


def test_verdicts_match_on_a_healthy_environment(venvs):
    code, report = check("--env", "--python", venvs["healthy"])
    assert compat_verdicts(report) == pip_verdicts(venvs["healthy"]) == uv_verdicts(venvs["healthy"]) == set()
    assert code == 0, report["findings"]


def test_env_says_more_than_pip_check_extras_and_requires_python(venvs):
    _, report = check("--env", "--python", venvs["broken"])
    more = {f["id"]: f for f in report["findings"] if f["id"].startswith(("installed-extra", "installed-python"))}
    assert set(more) == {"installed-extra:app==1.0:lib-b", "installed-python:old-lib==1.0"}
    assert more["installed-extra:app==1.0:lib-b"]["severity"] == "warning"
    assert "lib-speed (not installed)" in more["installed-extra:app==1.0:lib-b"]["message"]


def test_env_judges_the_installed_packages_with_what_the_database_knows(venvs, tmp_path):
    """The healthy environment passes pip check; its torch is the CUDA 12.8
    build, which a CUDA 13.0 machine cannot load."""
    stack = tmp_path / "machine.toml"
    stack.write_text('[system]\ncuda = "13.0"\n[hardware]\ngpu = "H100"\n', encoding="utf-8")
    code, report = check(stack, "--env", "--python", venvs["healthy"])
    assert code == 1
    assert report["stack"]["python"] == ".".join(map(str, sys.version_info[:3]))
    assert report["stack"]["packages"]["torch"] == "2.10.0+cu128"
    assert [f["id"] for f in report["findings"] if f["severity"] == "error"] == ["build-cuda:torch==2.10.0"]


def test_a_stack_file_that_disagrees_with_the_interpreter_is_refused(venvs, tmp_path):
    stack = tmp_path / "other.toml"
    stack.write_text('[system]\npython = "3.9"\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", str(stack), "--env", "--python", str(venvs["healthy"])])
    assert result.exit_code == 2
    assert f"other.toml:2: [system] python: '3.9' disagrees with the interpreter {venvs['healthy']}" in result.output


def test_an_interpreter_that_cannot_run_is_one_line_exit_2(tmp_path):
    result = CliRunner().invoke(cli, ["check", "--env", "--python", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.output == f"compat: error: {tmp_path / 'nope'}: --python: no such interpreter\n"


def _environment(*dists: Distribution) -> Environment:
    here = current_interpreter()
    return Environment("python", "python", here.markers, here.glibc, dists)


def _dist(name: str, version: str, requires: tuple[str, ...] = (), where: str = "site-packages") -> Distribution:
    return Distribution(name, version, requires, None, (), ("py3-none-any",), f"{where}/{name}-{version}.dist-info")


def test_a_duplicate_and_unreadable_metadata_are_findings(db):
    environment = _environment(_dist("a", "1.0", ("b>=1",)), _dist("b", "2.0"), _dist("b", "1.0", where="user-site"),
                               _dist("c", "1.0", ("not a requirement!",)))
    stack = load_stack({"system": {"python": environment.python}}, db)
    found = {f.id: f for f in installed_findings(environment, stack)}
    assert set(found) == {"installed-duplicate:b", "installed-metadata:c"}
    assert found["installed-duplicate:b"].message == \
        "b is installed twice: 2.0 at site-packages/b-2.0.dist-info imports, 1.0 at user-site/b-1.0.dist-info is hidden"


def test_a_wheel_built_for_another_platform_is_a_finding(db):
    environment = _environment(_dist("gpu-lib", "1.0")._replace(tags=("cp39-cp39-win_amd64",)))
    stack = load_stack({"system": {"python": environment.python}}, db)
    [finding] = installed_findings(environment, stack)
    assert finding.id == "installed-platform:gpu-lib==1.0" and "cp39-cp39-win_amd64" in finding.message


@pytest.mark.parametrize("change", ['d["glibc"] = 5', 'd["distributions"][0]["tags"] = [5]',
                                    'd["distributions"][0]["requires_python"] = 5'],
                         ids=["glibc", "tags", "requires_python"])
def test_an_interpreter_answering_a_value_of_the_wrong_type_is_one_line_exit_2(tmp_path, change):
    """The listing's JSON parses, but a field is not of its type: bad input, not an internal error."""
    filt = tmp_path / "filt.py"
    filt.write_text(f"import json, sys\nd = json.load(sys.stdin)\n{change}\nprint(json.dumps(d))\n")
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\n"{sys.executable}" "$@" | "{sys.executable}" "{filt}"\n')
    wrapper.chmod(0o755)
    result = CliRunner().invoke(cli, ["check", "--env", "--python", str(wrapper)])
    assert result.exit_code == 2, result.output
    assert "answered something compat cannot read" in result.output and result.output.count("\n") == 1
