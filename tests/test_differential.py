"""compat against uv and pip on the same problems, offline.

An index of stub wheels (valid wheels whose METADATA carries the database's
requirements) is written to a temporary folder; each problem is resolved by
compat, by `uv pip compile --no-index --find-links` and by
`pip install --dry-run --no-index --find-links --report`. For every problem:
the same satisfiable / unsatisfiable verdict; every compat solution passes a
check; every uv solution is accepted by compat.

The problems: random sub-stacks of the tracked packages of the real
snapshot, resolved with their whole closure (seeded, so a failure
reproduces), and synthetic chains built to force deep backtracking. The
default run takes COMPAT_DIFFERENTIAL_PROBLEMS (6) of them; `pytest -m slow`
runs 188.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.utils import canonicalize_name

from compat import Database, check, load_stack
from compat.engine.check import check_stack
from compat.engine.resolver import resolve

from .conftest import installed
from .stubs import build_index, write_wheel
from .test_resolve import synthetic_database

# The default run compares a bounded sample; `pytest -m slow` runs the full 200.
PROBLEMS = int(os.environ.get("COMPAT_DIFFERENTIAL_PROBLEMS", "4"))
FULL = 200
SYNTHETIC = 12
PYTHON = ".".join(str(p) for p in sys.version_info[:3])


def _clean_env() -> dict[str, str]:
    # No pip configuration, constraint file or find-links of this machine may leak in.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["UV_NO_CONFIG"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run_uv(index: Path, requirements: list[str], workdir: Path, *options: str,
           python: str = f"{sys.version_info[0]}.{sys.version_info[1]}", cache: Path | None = None,
           timeout: int = 120) -> dict[str, str] | None:
    """uv's pins for `requirements` from the folder `index` alone, or None when it finds no solution.

    uv resolves for `python` (--python-version) but runs on this Python
    (--python): left to find an interpreter of that version itself, it asks
    every python3.X on PATH (a pyenv shim takes a fraction of a second to
    say no) and then tries to download one, which costs seconds of retries
    against the network, or a Python, on every call. --offline and
    --no-python-downloads make sure neither ever happens. Any failure other
    than "no solution" (a refused stub wheel, a bad option) is an error of
    the test, never a verdict.
    """
    infile = workdir / "requirements.in"
    infile.write_text("\n".join(requirements) + "\n")
    result = subprocess.run(
        [installed("uv"), "pip", "compile", "--no-index", "--find-links", str(index), "--python-version", python,
         "--python", sys.executable, "--offline", "--no-python-downloads", *options, "--no-header",
         "--no-annotate", "--quiet", "--cache-dir", str(cache or workdir / "uv-cache"), str(infile)],
        capture_output=True, text=True, env=_clean_env(), timeout=timeout,
    )
    if result.returncode != 0:
        assert result.returncode == 1 and "No solution found" in result.stderr, (requirements, result.stderr)
        return None
    pins = {}
    for line in result.stdout.splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[str(canonicalize_name(name.split("[")[0]))] = version.strip()
    return pins


PIP_GAVE_UP: dict[str, str] = {}  # what run_pip returns when pip's backtracking outlasts its time


def run_pip(index: Path, requirements: list[str], workdir: Path) -> dict[str, str] | None:
    infile = workdir / "requirements.txt"
    infile.write_text("\n".join(requirements) + "\n")
    try:
        result = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--find-links", str(index),
             "--ignore-installed", "--quiet", "--report", "-", "-r", str(infile)],
            capture_output=True, text=True, env=_clean_env(), timeout=300,
        )
    except subprocess.TimeoutExpired:
        return PIP_GAVE_UP  # no answer from pip: uv's alone is compared (and the run says how often)
    if result.returncode != 0:
        return None
    report = json.loads(result.stdout)
    return {str(canonicalize_name(i["metadata"]["name"])): i["metadata"]["version"] for i in report["install"]}


def _stack(packages: dict[str, str]) -> dict:
    # A GPU every build here serves, and no CUDA or driver: nothing compat
    # knows beyond the metadata narrows what uv and pip may choose.
    return {"system": {"python": PYTHON, "platform": "linux-x86_64"}, "hardware": {"gpu": "H100"}, "packages": packages}


def _random_problems(universe: dict[str, dict], count: int, seed: int = 20261202,
                     names: list[str] | None = None) -> list[dict[str, str]]:
    rng = random.Random(seed)
    names = sorted(names if names is not None else universe)
    problems = []
    while len(problems) < count:
        chosen = rng.sample(names, rng.choice((1, 2, 2, 3, 3, 4)))
        packages = {}
        for name in chosen:
            versions = sorted(universe[name])
            version = rng.choice(versions)
            shape = rng.random()
            if shape < 0.6:
                packages[name] = str(version)
            elif shape < 0.85:
                packages[name] = f">={version}"
            else:
                packages[name] = f"<{version}" if version != versions[0] else f">={version}"
        problems.append(packages)
    return problems


def _requirements(packages: dict[str, str]) -> list[str]:
    return [f"{n}=={v}" if v[0].isdigit() else f"{n}{v}" for n, v in packages.items()]


@pytest.fixture(scope="module")
def real_index(tmp_path_factory):
    db = Database.load()
    folder = tmp_path_factory.mktemp("stub-index")
    return db, folder, build_index(db, folder)


def _compare(db: Database, index: Path, packages: dict[str, str], workdir: Path) -> str:
    stack = load_stack(_stack(packages), db)
    ours = resolve(stack, db, closure=True)  # uv and pip install the whole closure
    uv = run_uv(index, _requirements(packages), workdir)
    pip = run_pip(index, _requirements(packages), workdir)
    if pip is PIP_GAVE_UP:
        return _against_uv(db, packages, ours, uv) + ", pip gave up"
    assert (uv is not None) == (pip is not None), f"{packages}: uv and pip disagree ({uv} / {pip})"
    return _against_uv(db, packages, ours, uv)


def _against_uv(db: Database, packages: dict[str, str], ours: Any, uv: dict[str, str] | None) -> str:
    if ours.ok and uv is None and ours.gaps:
        # compat judges only what its database holds: a requirement on a release
        # it does not have (vllm 0.34.0 pins flashinfer-python==0.7.3, which the
        # index has no wheel of) is a `gap:` warning there, never a conflict. In
        # this closed index that release does not exist, so pip and uv are right
        # to fail; compat is lenient by design, and its check says why.
        return "gap"
    if not ours.ok and uv is not None:
        # compat knows what no metadata says (a lockstep of vLLM-Omni and vLLM, a
        # release's CUDA floor): a difference only if those curated rules are all
        # that compat finds wrong with uv's answer
        errors = check_stack(load_stack(_stack(uv), db), db, suggest_fixes=False).errors
        if errors and all(f.layer == "curated" for f in errors):
            return "curated"
    assert ours.ok == (uv is not None), f"{packages}: compat says {ours.ok}, uv and pip say {uv is not None}"
    if ours.ok:
        pins = {k: str(c.version) for k, c in ours.versions.items() if not k.startswith("__")}
        assert check(_stack(pins), database=db).errors == [], f"{packages}: compat's own solution fails its check"
        assert check(_stack(uv), database=db).errors == [], f"{packages}: compat rejects uv's solution {uv}"
        return "sat"
    return "unsat"


def _agree_on_random_sub_stacks(real_index, tmp_path, count: int) -> None:
    db, index, universe = real_index
    # stacks are made of the tracked packages; their whole closure is in the index
    tracked = [c.name for c in db.components() if c.tracked and c.name in universe]
    outcomes: dict[str, int] = {}
    for number, packages in enumerate(_random_problems(universe, count, names=tracked)):
        workdir = tmp_path / f"p{number}"
        workdir.mkdir()
        outcome = _compare(db, index, packages, workdir)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    print(f"{count} sub-stacks: {outcomes}")
    # Both verdicts must be exercised, or the comparison proves little.
    assert outcomes.get("sat", 0) > 0 and outcomes.get("unsat", 0) > 0, outcomes


def test_compat_agrees_with_uv_and_pip_on_random_sub_stacks(real_index, tmp_path):
    _agree_on_random_sub_stacks(real_index, tmp_path, PROBLEMS)


@pytest.mark.slow
def test_compat_agrees_with_uv_and_pip_on_random_sub_stacks_full(real_index, tmp_path):
    _agree_on_random_sub_stacks(real_index, tmp_path, FULL - SYNTHETIC)


def _synthetic_database(root: Path, depth: int, width: int) -> Database:
    """A chain chain-0 -> chain-1 -> ... where version v of each link needs
    version v of the next, and the last link's version v needs anchor==v. With
    anchor pinned to 1.0, every newest choice fails at the bottom of the
    chain, and only backtracking every level down to 1.0 resolves."""
    links = [f"chain-{level}" for level in range(depth)] + ["anchor"]
    packages = {
        name: {f"{v}.0": [f"{following}=={v}.0"] if following else [] for v in range(1, width + 1)}
        for name, following in zip(links, [*links[1:], None])
    }
    return synthetic_database(root, packages, gpus=True)


@pytest.mark.parametrize("depth,width,pin", [(d, w, p) for d in (3, 6, 9) for w in (2, 4) for p in (None, "2.0")][:SYNTHETIC])
def test_compat_agrees_on_deep_backtracking(tmp_path, depth, width, pin):
    db = _synthetic_database(tmp_path / "db", depth, width)
    index = tmp_path / "index"
    index.mkdir()
    for component in db.components():
        for version, release in component.releases.items():
            write_wheel(index, component.name, str(version), None, list(release.requires_dist))
    packages = {"chain-0": pin or ">=1", "anchor": "1.0"}
    outcome = _compare(db, index, packages, tmp_path)
    # unpinned, the only solution is 1.0 all the way down; chain-0 pinned to 2.0 has none
    assert outcome == ("unsat" if pin else "sat")
    if not pin:
        resolution = resolve(load_stack(_stack(packages), db), db)
        assert {str(c.version) for k, c in resolution.versions.items() if k.startswith("chain")} == {"1.0"}
