"""compat check's verdict against uv's on the same machine, offline.

An index of stub wheels is served from a folder: one stub per wheel the
snapshot records for Linux x86-64 (its real tags, so a wheel for glibc 2.34
is one uv refuses on glibc 2.28), with the release's Requires-Python and
Requires-Dist. Each stack (a random sub-stack of the tracked packages, with a
Python and a glibc) is checked by compat (`--only-binary`: the stub index
has no sdists) and resolved by `uv pip compile --only-binary :all:
--python-platform x86_64-manylinux_2_NN`. The verdicts must agree, or the
disagreement must be one compat explains:

- "curated": compat fails the stack only through facts no metadata states
  (a rule, a build's CUDA or kernels, a lockstep), and finds nothing else
  wrong with uv's own solution;
- "gap": compat passes and says the database lacks a release a requirement
  names (`gap:`), which this closed index lacks too.

The index holds every release of the snapshot (a handful of stacks reach
nearly all of it anyway), built once per module: a wheel's tags share one
file, linked under each name, and it takes about two seconds. The default
run checks the first COMPAT_AGREEMENT_STACKS (4) of the seeded stacks, in
about five seconds in all (uv takes a fifth of a second a stack: see
`run_uv`); `pytest -m slow` checks 300, the same 8 first, and prints the
counts.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from compat import Database
from compat.engine.check import check_stack
from compat.knowledge.binding import load_stack

from .stubs import _EXTRA, kept_lines
from .test_differential import _requirements, run_uv

STACKS = int(os.environ.get("COMPAT_AGREEMENT_STACKS", "4"))
FULL = 300
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
GLIBCS = ("2.28", "2.31", "2.34", "2.39")


def _x86_64(tag: str) -> bool:
    platform = tag.rsplit("-", 1)[-1]
    return platform == "any" or any(p.endswith("x86_64") and ("linux" in p) for p in platform.split("."))


def write_tagged(folder: Path, name: str, version: str, tags: list[str], requires_python: str | None,
                 lines: list[str]) -> int:
    """One stub wheel per tag, all of one content: a WHEEL that lists every
    tag (as a wheel built for several does), written once and linked under
    each tag's file name (uv reads the tags from the name)."""
    dist = f"{name.replace('-', '_')}-{version}"
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    if requires_python:
        metadata.append(f"Requires-Python: {requires_python}")
    metadata += [f"Provides-Extra: {e}" for e in sorted({e for line in lines for e in _EXTRA.findall(line)})]
    metadata += [f"Requires-Dist: {line}" for line in lines]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as wheel:
        wheel.writestr(f"{dist}.dist-info/METADATA", "\n".join(metadata) + "\n\n")
        wheel.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: compat-tests\n"
                                                 "Root-Is-Purelib: false\n" + "".join(f"Tag: {t}\n" for t in tags))
        wheel.writestr(f"{dist}.dist-info/RECORD", "")
    first = folder / f"{dist}-{tags[0]}.whl"
    first.write_bytes(buffer.getvalue())
    for tag in tags[1:]:
        try:
            os.link(first, folder / f"{dist}-{tag}.whl")
        except OSError:  # a file system without hard links
            (folder / f"{dist}-{tag}.whl").write_bytes(buffer.getvalue())
    return len(tags)


def build_tagged_index(db: Database, folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    names = {c.name for c in db.components() if c.kind == "package"}
    written = 0
    for component in db.components():
        if component.kind != "package":
            continue
        for version, release in component.releases.items():
            if release.is_yanked or release.layer != "metadata":
                continue
            tags = [tag for tag in release.tags if _x86_64(tag)]
            if tags:
                python = str(release.requires_python) if release.requires_python else None
                written += write_tagged(folder, component.name, str(version), tags, python,
                                        kept_lines(release, names))
    return written


def stacks(db: Database, count: int, seed: int = 20261205) -> list[dict]:
    rng = random.Random(seed)
    tracked = sorted(c.name for c in db.components() if c.tracked and c.kind == "package" and c.releases)
    out = []
    while len(out) < count:
        packages = {}
        for name in rng.sample(tracked, rng.choice((1, 2, 2, 3))):
            versions = sorted(v for v, r in db.component(name).releases.items() if not r.is_yanked)
            version = rng.choice(versions[-12:])  # the releases users run: the recent ones
            packages[name] = str(version) if rng.random() < 0.7 else f">={version}"
        out.append({"system": {"python": rng.choice(PYTHONS), "platform": "linux-x86_64",
                               "glibc": rng.choice(GLIBCS)},
                    "hardware": {"gpu": "H100"}, "packages": packages, "compat": {"only_binary": True}})
    return out


def run_stack_uv(index: Path, stack: dict, workdir: Path, cache: Path) -> dict[str, str] | None:
    """uv on the stack's machine: its Python and glibc, wheels only (the stub index has no sdists)."""
    system = stack["system"]
    return run_uv(index, _requirements(stack["packages"]), workdir, "--only-binary", ":all:", "--python-platform",
                  f"x86_64-manylinux_{system['glibc'].replace('.', '_')}", python=system["python"], cache=cache,
                  timeout=300)


def judge(db: Database, index: Path, stack: dict, workdir: Path, cache: Path) -> tuple[str, str]:
    """("agree: installs" | "agree: fails" | "curated" | "gap" | "DISAGREE", what was found)."""
    report = check_stack(load_stack(stack, db), db, suggest_fixes=False)
    uv = run_stack_uv(index, stack, workdir, cache)
    ours = not report.errors
    if ours == (uv is not None):
        return ("agree: installs" if ours else "agree: fails"), ""
    if not ours:
        if all(f.layer == "curated" for f in report.errors):
            solution = {**stack, "packages": uv}
            theirs = check_stack(load_stack(solution, db), db, suggest_fixes=False).errors
            if all(f.layer == "curated" for f in theirs):
                return "curated", ", ".join(f.id for f in report.errors)
        return "DISAGREE", f"compat: {[f.id for f in report.errors]}; uv: {uv}"
    gaps = [f.id for f in report.findings if f.id.startswith("gap:")]
    if gaps:
        return "gap", ", ".join(gaps)
    return "DISAGREE", f"compat passes ({report.packages}, {len(report.resolved)} resolved); uv finds no solution"


@pytest.fixture(scope="module")
def tagged_index(tmp_path_factory) -> Iterator[tuple[Database, Path]]:
    db = Database.load()
    index = tmp_path_factory.mktemp("tagged-index")
    build_tagged_index(db, index)
    yield db, index
    shutil.rmtree(index, ignore_errors=True)  # 22,000 names: gone now, not at a later session's start


def _agree(db: Database, index: Path, tmp_path: Path, count: int) -> dict[str, int]:
    outcomes: dict[str, int] = {}
    disagreements = []
    for number, stack in enumerate(stacks(db, count)):
        workdir = tmp_path / f"s{number}"
        workdir.mkdir()
        outcome, detail = judge(db, index, stack, workdir, tmp_path / "uv-cache")
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if not outcome.startswith("agree"):
            print(f"{outcome}: {stack['system']} {stack['packages']}: {detail}")
        if outcome == "DISAGREE":
            disagreements.append((stack, detail))
    print(f"{count} stacks: {dict(sorted(outcomes.items()))}")
    assert not disagreements, disagreements
    # both verdicts exercised, or the comparison proves little
    assert outcomes.get("agree: installs", 0) and outcomes.get("agree: fails", 0), outcomes
    return outcomes


def test_compat_check_agrees_with_uv_on_random_stacks_with_their_glibc(tagged_index, tmp_path):
    _agree(*tagged_index, tmp_path, STACKS)


@pytest.mark.slow
def test_compat_check_agrees_with_uv_on_300_stacks(tagged_index, tmp_path):
    outcomes = _agree(*tagged_index, tmp_path, FULL)
    assert outcomes.get("agree: installs", 0) + outcomes.get("agree: fails", 0) >= FULL * 0.9
