"""compat's resolver against `uv pip compile` on real stacks, over a loopback index.

`tests/snapshot_index.py` serves the database's own snapshots as a PEP 691
index on 127.0.0.1: each release's real wheel file names (so uv applies the
real platform and Python tags) and a PEP 658 METADATA file carrying the
requirements as compat sees them. No wheel is ever downloaded, and nothing
leaves the machine: uv runs without configuration or Python downloads, and
every host but 127.0.0.1 is behind a proxy where nothing listens.

The stacks are seeded ranges over the tracked packages (`data/sync.toml`):
one to four of them, each ``>=X``, ``<X``, ``>=X,<Y`` or a pin, from real
versions, on CPython 3.12, linux-x86_64 and an H100 (every CUDA build on the
index runs there, so what compat knows of builds and hardware, which uv
cannot see, takes nothing away). Where the stack schema has
``[system] glibc``, most stacks name one and uv targets the matching
``x86_64-manylinux_2_NN``; a stack that names none puts no floor on glibc,
which for uv is the newest manylinux it knows (``x86_64-manylinux_2_40``).
uv reads the requirements in the order compat decides them (pins first,
then by name), since a stack, a TOML table, gives none.

For each stack: the same verdict (solvable or not) from compat's resolver
and uv, and for solvable ones the same version of every package both
report. A failure names the stack and both answers, with what each side
says of the other's answer (compat's check of uv's pins, compat's check of
the stack, uv on compat's pins, compat over the whole closure) and which
releases of compat's answer have no wheel for the target. A stack on which
either side gives no verdict fails too (uv failing for another reason than
an unsolvable problem, compat failing on its input), except that compat's
round budget may run out on at most 3% of a run's stacks: resolvelib, as
pip, can backtrack for thousands of rounds where uv's PubGrub settles a
problem at once; those stacks are listed and counted apart.

Four differences are designed, and are counted apart and listed, not
failed, each only once it is shown to be the whole difference:

- a gap (docs/resolve.md): a requirement on a release the database does not
  hold is a `gap:` warning in compat, not a conflict, while uv, which sees
  only the served index, fails there or backtracks to an older release.
  Counted so only when a release of compat's answer carries the gap.
- pre-releases: compat takes the pre-releases a specifier names, as pip
  does (PEP 440, docs/resolve.md); uv takes one only when no final release
  fits. Counted so only when compat, with the pre-releases of the stack's
  ranges left out, returns uv's answer, or when uv, given as pins the
  pre-releases compat took (each named by a specifier), returns compat's.
- curated knowledge: the database's rules (a lockstep of two packages, a
  release's CUDA floor), which no package metadata carries. Counted so only
  when every error compat finds in uv's answer comes from the curated layer
  and uv accepts compat's answer (if it has one).
- equally good answers: where a conflict leaves several solutions, compat
  (resolvelib, as pip) and uv (PubGrub) may settle on different ones.
  Counted so only when each side accepts the other's answer and each answer
  is newer than the other on some package (compat's as uv completes it with
  the packages compat leaves to the installer); an answer older on every
  package they differ on fails.

Requirement lines naming a package the database does not hold are left out
of the served metadata; the summary counts those in the metadata uv read,
and those of them that apply to the target (its platform, and no extra that
nothing asks for). Once every snapshot's header carries ``tracked`` (the
database holds the closure of the tracked packages), the count that
applies must be zero.

The default run checks a bounded sample; the full run is marked slow:

    python -m pytest -rA tests/test_uv_index.py           # the first 20 stacks, and the summary
    python -m pytest -rA -m slow tests/test_uv_index.py   # 400 stacks

COMPAT_UV_STACKS=N sets the size of the default sample while working.
"""

from __future__ import annotations

import glob
import hashlib
import inspect
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from compat import Database, load_stack
from compat.engine.check import check_stack
from compat.engine.resolver import resolve
from compat.errors import CompatError
from compat.stack import System

from .conftest import installed
from .snapshot_index import Dropped, ServedFile, SnapshotIndex

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SEED = 20261207  # a sample of 8 that has both verdicts (with bitsandbytes tracked, 20261203's had no unsolvable stack)
DEFAULT_STACKS = int(os.environ.get("COMPAT_UV_STACKS", "8"))  # about 3 s on two cores
FULL_STACKS = 400
PYTHON = "3.12"
PLATFORM = "linux-x86_64"
# A machine on which every CUDA build on the index runs (an H100, with no CUDA
# version or driver to judge builds against): what compat knows of builds and
# hardware, and uv cannot see, then takes nothing away from the comparison.
HARDWARE = {"gpu": "H100"}
# The glibc of the sampled stacks (None: the stack names none), where the schema has it.
GLIBCS: tuple[str | None, ...] = ("2.28", "2.28", "2.31", "2.34", None) if "glibc" in getattr(System, "_fields", ()) else (None,)
NEWEST_MANYLINUX = (2, 40)  # the newest x86_64-manylinux_2_NN that uv's --python-platform names
NO_NETWORK = "http://127.0.0.1:9"  # a proxy where nothing listens
UV_TIMEOUT = 300  # seconds; a run that takes longer gives no verdict
WORKERS = min(2, os.cpu_count() or 1)  # compat processes, and uv runs, at once
DESIGNED = ("gap", "pre-release", "curated", "tie")  # the kinds of difference that do not fail (see above)
# resolvelib (as pip) can exhaust its round budget where uv's PubGrub settles a
# problem at once; such stacks give no verdict, are listed, and may be at most
# this share of a run (a known limit of the resolver, not a wrong answer)
BUDGET_SHARE = 0.03


# -- the stacks ----------------------------------------------------------------


def tracked_packages(db: Database) -> dict[str, list[Version]]:
    """Each tracked package with a snapshot -> the versions it records."""
    with open(os.path.join(db.root, "sync.toml"), "rb") as handle:
        names = tomllib.load(handle)["packages"]
    out = {}
    for name in sorted(str(canonicalize_name(n)) for n in names):
        component = db.component(name)
        if component is None or component.kind != "package":
            continue
        versions = sorted(v for v, r in component.releases.items() if r.layer == "metadata")
        if len(versions) >= 2:
            out[name] = versions
    return out


def sample_stacks(db: Database, count: int, seed: int = SEED) -> list[dict]:
    """`count` seeded stacks: one to four tracked packages, each a range or a pin."""
    universe = tracked_packages(db)
    names = sorted(universe)
    rng = random.Random(seed)
    stacks = []
    for _ in range(count):
        packages = {}
        for name in rng.sample(names, min(len(names), rng.choice((1, 2, 2, 3, 3, 4)))):
            versions = universe[name]
            while True:
                shape = rng.random()
                if shape < 0.25:
                    written = str(rng.choice(versions))
                elif shape < 0.5:
                    written = f">={rng.choice(versions)}"
                elif shape < 0.7:
                    written = f"<{rng.choice(versions[1:])}"
                else:
                    low, high = sorted(rng.sample(range(len(versions)), 2))
                    written = f">={versions[low]},<{versions[high]}"
                # a range must admit a recorded version (">=2.3.0rc1,<2.3.0" admits none)
                if written[0].isdigit() or any(SpecifierSet(written).contains(v, prereleases=True) for v in versions):
                    break
            packages[name] = written
        system = {"python": PYTHON, "platform": PLATFORM}
        glibc = rng.choice(GLIBCS)
        if glibc is not None:
            system["glibc"] = glibc
        stacks.append({"system": system, "hardware": dict(HARDWARE), "packages": packages})
    return stacks


def requirement_lines(stack: dict) -> list[str]:
    """The stack's packages as requirements, in the order compat decides them
    (pins first, then by name): uv decides direct requirements in the order
    it reads them."""
    packages = sorted(stack["packages"].items(), key=lambda item: (not item[1][0].isdigit(), item[0]))
    return [f"{n}=={v}" if v[0].isdigit() else f"{n}{v}" for n, v in packages]


def glibc_of(stack: dict) -> tuple[int, int]:
    written = stack["system"].get("glibc")
    return tuple(int(p) for p in written.split(".")) if written else NEWEST_MANYLINUX  # type: ignore[return-value]


def uv_platform(stack: dict) -> str:
    major, minor = glibc_of(stack)
    return f"x86_64-manylinux_{major}_{minor}"


def describe(stack: dict) -> str:
    system = stack["system"]
    where = f"Python {system['python']}, {system['platform']}" + (f", glibc {system['glibc']}" if "glibc" in system else "")
    where += "".join(f", {v}" for v in stack.get("hardware", {}).values())
    return "{" + ", ".join(f"{n} = {v!r}" for n, v in stack["packages"].items()) + f"}} ({where})"


def _pins(pins: dict[str, Version]) -> str:
    return ", ".join(f"{n}=={v}" for n, v in sorted(pins.items())) or "(nothing)"


def _indent(text: str, by: str = "            ") -> str:
    return text.replace("\n", "\n" + by)


def _names_prerelease(specifier: SpecifierSet) -> bool:
    for item in specifier:
        try:
            if Version(item.version.removesuffix(".*")).is_prerelease:
                return True
        except ValueError:
            continue
    return False


# -- uv ------------------------------------------------------------------------------


def clean_env() -> dict[str, str]:
    """No configuration of this machine may leak in, and nothing may leave it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_")) and not k.lower().endswith("_proxy")}
    env.update(
        UV_NO_CONFIG="1",
        UV_PYTHON_DOWNLOADS="never",
        HTTP_PROXY=NO_NETWORK,
        HTTPS_PROXY=NO_NETWORK,
        ALL_PROXY=NO_NETWORK,
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


@dataclass
class UvAnswer:
    ok: bool
    pins: dict[str, Version]
    error: str
    read: list[ServedFile]  # the files whose metadata it read
    wheels: list[str]  # the wheels it asked for: a resolution from metadata files needs none
    seconds: float
    failed: bool = False  # uv failed for another reason than an unsolvable problem: no verdict


def run_uv(index: SnapshotIndex, tag: str, requirements: list[str], platform: str, workdir: Path) -> UvAnswer:
    """`uv pip compile` of `requirements` against the index; its requests are marked with `tag`."""
    started = time.perf_counter()
    workdir.mkdir(parents=True, exist_ok=True)
    infile = workdir / "requirements.in"
    infile.write_text("\n".join(requirements) + "\n")
    try:
        result = subprocess.run(
            [installed("uv"), "pip", "compile", "--index-url", index.url(tag), "--python", sys.executable,
             "--python-version", PYTHON, "--python-platform", platform, "--no-python-downloads",
             "--no-header", "--no-annotate", "--cache-dir", str(workdir / "uv-cache"), str(infile)],
            capture_output=True, text=True, env=clean_env(), timeout=UV_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        result = subprocess.CompletedProcess([], -1, "", f"uv did not answer within {UV_TIMEOUT} s")
    requests = index.requests_of(tag)
    read = index.fetched(requests)
    wheels = [r.path for r in requests if r.kind == "wheel"]
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        lines = [line for line in result.stderr.splitlines() if line.strip() and "requested Python version" not in line]
        unsolvable = "No solution found when resolving dependencies" in result.stderr
        return UvAnswer(False, {}, "\n".join(lines[:20]), read, wheels, seconds, failed=not unsolvable)
    pins = {}
    for line in result.stdout.splitlines():
        line = line.split("#")[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[str(canonicalize_name(name.split("[")[0]))] = Version(version.strip())
    return UvAnswer(True, pins, "", read, wheels, seconds)


# -- compat --------------------------------------------------------------------------


@dataclass
class CompatAnswer:
    ok: bool
    pins: dict[str, Version]
    gaps: dict[str, str] = field(default_factory=dict)  # release of the answer -> its requirement no release in the database meets
    named_pre: set[str] = field(default_factory=set)  # packages a specifier of the stack or of the answer's releases names a pre-release of
    error: str = ""
    seconds: float = 0.0
    failed: bool = False  # compat raised (the budget ran out, or bad input): no verdict


def run_compat(db: Database, stack: dict, **options: object) -> CompatAnswer:
    started = time.perf_counter()
    try:
        resolution = resolve(load_stack(stack, db), db, **options)  # type: ignore[arg-type]
    except CompatError as exc:  # the budget ran out, or the stack is bad input: no verdict
        return CompatAnswer(False, {}, error=f"{type(exc).__name__}: {exc}", seconds=time.perf_counter() - started, failed=True)
    if not resolution.ok:
        causes = sorted({f"{c.parent or 'the stack'} requires {c.requirement}" for c in resolution.causes})
        return CompatAnswer(False, {}, error="; ".join(causes), seconds=time.perf_counter() - started)
    pins = {k: c.version for k, c in resolution.versions.items() if not k.startswith("__") and c.version is not None}
    chosen = {f"{n} {v}" for n, v in pins.items()}
    gaps = {g.need.parent: f"{g.need.parent} requires {g.need}" for g in resolution.gaps if g.need.parent in chosen}
    specifiers = [(str(canonicalize_name(n)), SpecifierSet(v if not v[0].isdigit() else f"=={v}")) for n, v in stack["packages"].items()]
    for candidate in resolution.versions.values():
        if candidate.release is not None:
            specifiers += [(need.name, need.specifier) for need in resolution.provider.dependencies(candidate.release)]
    named = {name for name, specifier in specifiers if _names_prerelease(specifier)}
    return CompatAnswer(True, pins, gaps, named, seconds=time.perf_counter() - started)


# -- the comparison ------------------------------------------------------------------


@dataclass
class Outcome:
    number: int
    stack: dict
    kind: str  # "sat", "unsat" (they agree); "gap", "pre-release", "curated", "tie" (they differ by design); "disagree"
    message: str
    uv: UvAnswer
    seconds: float


def judge(db: Database, index: SnapshotIndex, number: int, stack: dict, ours: CompatAnswer, uv: UvAnswer, workdir: Path) -> Outcome:
    started = time.perf_counter()
    platform = uv_platform(stack)
    head = f"stack #{number} {describe(stack)}, uv --python-platform {platform}:"
    answers = (
        f"\n    compat: {_pins(ours.pins) if ours.ok else 'unsolvable: ' + ours.error}"
        f"\n    uv:     {_pins(uv.pins) if uv.ok else _indent(uv.error)}"
    )
    differ = {n for n in ours.pins.keys() & uv.pins.keys() if ours.pins[n] != uv.pins[n]}
    if ours.failed and not uv.failed and ours.error.startswith("ResolutionTooComplex"):
        # resolvelib's backtracking, not a wrong answer: counted, listed, and bounded (BUDGET_SHARE)
        return Outcome(number, stack, "budget", f"{head} compat's round budget ran out{answers}\n", uv,
                       ours.seconds + uv.seconds)
    if ours.failed or uv.failed:
        who = "compat" if ours.failed else "uv"
        return Outcome(number, stack, "disagree", f"{head} {who} gave no verdict{answers}\n", uv, ours.seconds + uv.seconds)
    if ours.ok == uv.ok and not differ:
        return Outcome(number, stack, "sat" if ours.ok else "unsat", "", uv, ours.seconds + uv.seconds)
    verdicts = (
        f"versions differ on {', '.join(sorted(differ))}" if ours.ok == uv.ok
        else f"compat says {'solvable' if ours.ok else 'unsolvable'}, uv says {'solvable' if uv.ok else 'unsolvable'}"
    )
    kind, message = "disagree", ""
    if ours.ok and ours.gaps:
        kind, message = "gap", f"{head} {verdicts}: compat's answer carries gaps ({'; '.join(ours.gaps.values())}){answers}"
    else:
        explained, tried = _prerelease_policy(db, index, number, stack, ours, uv, platform, workdir)
        if explained:
            kind, message = "pre-release", f"{head} {verdicts}: {explained}{answers}"
        else:
            # what each side says of the other's answer: the heart of a diagnosis
            on_uv = _errors(db, {**stack, "packages": {n: str(v) for n, v in uv.pins.items() if n in db.names()}}) if uv.ok else None
            on_stack = _errors(db, stack) if ours.ok else None
            on_ours = run_uv(index, f"x{number}", [f"{n}=={v}" for n, v in sorted(ours.pins.items())], platform, workdir / "uv-x") if ours.ok else None
            # uv's answer against uv's completion of compat's (the packages compat leaves to the installer included)
            completed = on_ours.pins if on_ours is not None and on_ours.ok else ours.pins
            newer = {"compat" if completed[n] > uv.pins[n] else "uv" for n in completed.keys() & uv.pins.keys() if completed[n] != uv.pins[n]}
            if on_uv and all(e.layer == "curated" for e in on_uv) and (on_ours is None or on_ours.ok):
                kind = "curated"
                rules = ", ".join(sorted({e.id for e in on_uv}))
                message = f"{head} {verdicts}: uv's answer breaks what the database curates ({rules}), and uv accepts compat's{answers}"
            elif on_uv == [] and on_ours is not None and on_ours.ok and newer == {"compat", "uv"}:
                kind = "tie"
                message = (
                    f"{head} {verdicts}: two answers, each accepted by the other side and each newer on some package: "
                    f"the resolvers settle a conflict differently{answers}"
                )
            else:
                lines = [_no_wheel(db, index, stack, ours)]
                open_ = sorted(set(stack["packages"]) - set(ours.pins)) if ours.ok else []
                if open_:
                    lines.append(f"    compat's answer leaves {', '.join(open_)} open: it judges nothing of them\n")
                if on_uv is not None:
                    lines.append(f"    compat's check of uv's pins: {_error_text(on_uv)}\n")
                if on_stack is not None:
                    lines.append(f"    compat's check of the stack: {_error_text(on_stack)}\n")
                if on_ours is not None:
                    lines.append(f"    uv on compat's pins: {'accepted' if on_ours.ok else _indent(on_ours.error, '        ')}\n")
                if on_ours is not None and not on_ours.ok and "closure" in inspect.signature(resolve).parameters:
                    # compat resolved fewer packages than uv installs: what does the whole closure say?
                    whole = run_compat(db, stack, closure=True)
                    verdict = _pins(whole.pins) if whole.ok else f"unsolvable: {whole.error}"
                    lines.append(f"    compat resolving the whole closure: {'the same as uv' if whole.ok == uv.ok and _same(whole.pins, uv.pins) else verdict}\n")
                message = f"{head} {verdicts}{answers}\n" + "".join(lines) + tried
    return Outcome(number, stack, kind, message, uv, ours.seconds + uv.seconds + time.perf_counter() - started)


def _errors(db: Database, stack: dict) -> list:
    """compat's errors on a stack (without the suggestions a failing check would also compute)."""
    try:
        return list(check_stack(load_stack(stack, db), db, suggest_fixes=False).errors)
    except CompatError as exc:
        return [SimpleNamespace(id="input", message=str(exc), layer="stack")]


def _error_text(errors: list) -> str:
    return "no error" if not errors else "; ".join(f"[{e.id}] {e.message}" for e in errors[:5])


def _same(a: dict[str, Version], b: dict[str, Version]) -> bool:
    return all(a[n] == b[n] for n in a.keys() & b.keys())


def _prerelease_policy(db, index, number, stack, ours: CompatAnswer, uv: UvAnswer, platform: str, workdir: Path) -> tuple[str, str]:
    """(Why the difference is only which pre-releases each admits, or "";
    what the attempts to show it found, for a failure message.)"""
    tried = []
    # compat, with the pre-releases of the stack's ranges left out where a final release is in the range
    narrowed, left_out = {}, Counter()
    for name, written in stack["packages"].items():
        component = db.component(name)
        narrowed[name] = written
        if written[0].isdigit() or component is None or not _names_prerelease(SpecifierSet(written)):
            continue
        inside = [v for v in component.versions() if SpecifierSet(written).contains(v, prereleases=True)]
        pre = [v for v in inside if v.is_prerelease]
        if pre and len(pre) < len(inside):
            narrowed[name] = ",".join([written, *(f"!={v}" for v in pre)])
            left_out[name] = len(pre)
    if left_out:
        again = run_compat(db, {**stack, "packages": narrowed})
        without = ", ".join(f"the {c} pre-release(s) of {n} in the range" for n, c in left_out.items())
        tried.append(f"compat without {without}: {_pins(again.pins) if again.ok else 'unsolvable: ' + again.error}")
        if not again.failed and again.ok == uv.ok and _same(again.pins, uv.pins):
            return f"compat takes pre-releases that the stack's ranges name; without {without}, it returns uv's answer", ""
    # uv, given as pins the pre-releases compat took where a specifier names them
    taken = {n: v for n, v in ours.pins.items() if v.is_prerelease and uv.pins.get(n) != v}
    if ours.ok and taken and set(taken) <= ours.named_pre:
        again = run_uv(index, f"p{number}", requirement_lines(stack) + [f"{n}=={v}" for n, v in taken.items()], platform, workdir / "uv-pre")
        tried.append(f"uv with {_pins(taken)}: {_pins(again.pins) if again.ok else _indent(again.error, '        ')}")
        if again.ok and _same(again.pins, ours.pins):
            return f"compat takes the pre-releases {_pins(taken)} that a specifier names; uv, given them as pins, returns compat's answer", ""
    return "", "".join(f"    {line}\n" for line in tried)


def _supported_tags(stack: dict) -> set[Tag]:
    major, minor = glibc_of(stack)
    python = tuple(int(p) for p in PYTHON.split("."))
    platforms = [f"manylinux_{major}_{m}_x86_64" for m in range(minor, 4, -1)]
    platforms += [legacy for legacy, floor in (("manylinux2014_x86_64", 17), ("manylinux2010_x86_64", 12), ("manylinux1_x86_64", 5)) if floor <= minor]
    return set(cpython_tags(python, platforms=platforms)) | set(compatible_tags(python, platforms=platforms))


def _no_wheel(db: Database, index: SnapshotIndex, stack: dict, ours: CompatAnswer) -> str:
    """The releases of compat's answer that have no wheel for the target."""
    supported = _supported_tags(stack)
    out = []
    for name, version in sorted(ours.pins.items()):
        files = [f for f in (index.project(name) or {}).values() if Version(f.version) == version]
        if not files or any(parse_wheel_filename(f.filename)[3] & supported for f in files):
            continue
        release = db.component(name).releases.get(version) if db.component(name) else None
        recorded = getattr(release, "tags", None)
        knows = "compat's snapshot records no wheel tags for it" if not recorded else f"compat's snapshot records its tags: {', '.join(recorded)}"
        platforms = sorted({t.platform for f in files for t in parse_wheel_filename(f.filename)[3]})
        out.append(f"    {name} {version} has no wheel for CPython {PYTHON} on {uv_platform(stack)} (only {', '.join(platforms)}); {knows}\n")
    return "".join(out)


# -- dropped requirement lines --------------------------------------------------------


def closure_complete(db: Database) -> bool:
    """Every snapshot's header says whether sync.toml tracks its package,
    which `compat db sync` writes once it takes the whole closure."""
    paths = [p for p in glob.glob(os.path.join(db.metadata_dir, "*.jsonl")) if not p.endswith(".wheels.jsonl")]
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            if "tracked" not in json.loads(handle.readline()):
                return False
    return bool(paths)


def applicable(read: list[ServedFile], environment: dict[str, str]) -> list[Dropped]:
    """The lines left out of these files' metadata that a resolution on the
    target would follow: their markers hold on its platform, with no extra
    or with one that such a line asks of the package (to a fixed point)."""
    lines: dict[str, list[tuple[Requirement, Dropped | None]]] = {}  # package -> its lines, kept and dropped
    for file in read:
        kept = [Requirement(line[len("Requires-Dist: "):]) for line in file.metadata.decode().splitlines() if line.startswith("Requires-Dist: ")]
        entries = lines.setdefault(file.project, [])
        entries += [(r, None) for r in kept] + [(Requirement(d.line), d) for d in file.dropped]

    def holds(requirement: Requirement, extras: set[str]) -> bool:
        marker = requirement.marker
        return marker is None or any(Marker(str(marker)).evaluate({**environment, "extra": e}) for e in ("", *sorted(extras)))

    asked: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for package, entries in lines.items():
            for requirement, _ in entries:
                if requirement.extras and holds(requirement, asked.get(package, set())):
                    target = asked.setdefault(str(canonicalize_name(requirement.name)), set())
                    new = {str(canonicalize_name(e)) for e in requirement.extras} - target
                    if new:
                        target.update(new)
                        changed = True
    out: dict[tuple[str, str, str], Dropped] = {}
    for package, entries in lines.items():
        for requirement, dropped in entries:
            if dropped is not None and holds(requirement, asked.get(package, set())):
                out[(dropped.package, dropped.version, dropped.line)] = dropped
    return list(out.values())


# -- the runs ----------------------------------------------------------------------------


@dataclass
class Run:
    outcomes: list[Outcome]
    dropped: list[Dropped]
    applicable: list[Dropped]
    seconds: float

    def count(self, kind: str) -> int:
        return sum(1 for o in self.outcomes if o.kind == kind)

    def summary(self) -> str:
        sat, unsat = self.count("sat"), self.count("unsat")
        targets = Counter(d.target for d in self.applicable)
        lines = [
            f"{len(self.outcomes)} stacks in {self.seconds:.1f} s: {sat + unsat} agree ({sat} solvable, {unsat} unsolvable), "
            f"{self.count('disagree')} disagree, {self.count('budget')} without compat's verdict (round budget), "
            f"{sum(self.count(k) for k in DESIGNED)} differ by design "
            f"({self.count('gap')} gap(s) in the database, {self.count('pre-release')} pre-release policy, "
            f"{self.count('curated')} curated knowledge, {self.count('tie')} equally good answers)",
            f"requirement lines left out of the metadata uv read (packages the database does not hold): "
            f"{len(self.applicable)} that apply to the target, {len(self.dropped)} in all"
            + (f"; most named: {', '.join(f'{n} ({c})' for n, c in targets.most_common(8))}" if targets else ""),
        ]
        slowest = max(self.outcomes, key=lambda o: o.seconds, default=None)
        if slowest is not None:
            lines.append(f"slowest: stack #{slowest.number} {describe(slowest.stack)} ({slowest.seconds:.1f} s)")
        return "\n".join(lines)


_WORKER_DB: Database | None = None


def _start_worker(root: str) -> None:
    global _WORKER_DB
    _WORKER_DB = Database.load(root)


def _compat_in_worker(stack: dict) -> CompatAnswer:
    assert _WORKER_DB is not None
    return run_compat(_WORKER_DB, stack, closure=True)  # as `compat resolve` does: uv installs the whole closure


def run_stacks(db: Database, index: SnapshotIndex, stacks: list[dict], tmp: Path) -> Run:
    """compat (in WORKERS processes) and uv (WORKERS at once) on every stack,
    then the judgements, one by one."""
    started = time.perf_counter()

    def uv(number: int) -> UvAnswer:
        stack = stacks[number]
        return run_uv(index, f"s{number}", requirement_lines(stack), uv_platform(stack), tmp / f"s{number}" / "uv")

    context = multiprocessing.get_context("spawn")  # the index's threads are running: no fork
    with ProcessPoolExecutor(WORKERS, mp_context=context, initializer=_start_worker, initargs=(db.root,)) as processes, \
            ThreadPoolExecutor(WORKERS) as threads:
        compat_jobs = [processes.submit(_compat_in_worker, stack) for stack in stacks]
        uv_jobs = [threads.submit(uv, number) for number in range(len(stacks))]
        ours = [job.result() for job in compat_jobs]
        theirs = [job.result() for job in uv_jobs]
    outcomes = [judge(db, index, n, stacks[n], ours[n], theirs[n], tmp / f"s{n}") for n in range(len(stacks))]
    read = list({(f.project, f.filename): f for o in outcomes for f in o.uv.read}.values())
    dropped = list({(d.package, d.version, d.line): d for f in read for d in f.dropped}.values())
    environment = load_stack({"system": {"python": PYTHON, "platform": PLATFORM}}, db).system.marker_environment()
    return Run(outcomes, dropped, applicable(read, environment), time.perf_counter() - started)


@pytest.fixture(scope="module")
def served():
    db = Database.load()
    # The index reads its own copy of the database: its threads never touch compat's.
    with SnapshotIndex(Database.load(db.root)) as index:
        yield db, index


def _verify(db: Database, index: SnapshotIndex, count: int, tmp: Path) -> None:
    run = run_stacks(db, index, sample_stacks(db, count), tmp)
    summary = run.summary()
    print(summary)
    for outcome in run.outcomes:
        if outcome.kind in DESIGNED:
            print(f"[{outcome.kind}] {outcome.message}")
    wheels = [w for o in run.outcomes for w in o.uv.wheels]
    assert not wheels, f"uv asked for wheels, which a resolution from metadata files never needs: {wheels[:5]}"
    assert run.count("sat") and run.count("unsat"), f"both verdicts must be exercised, or the comparison proves little\n{summary}"
    if closure_complete(db):
        listed = "".join(f"\n  {d.package} {d.version}: {d.line}" for d in run.applicable[:20])
        assert not run.applicable, f"the snapshots declare the closure complete, yet requirement lines were left out:\n{summary}{listed}"
    budget = [o.message for o in run.outcomes if o.kind == "budget"]
    for message in budget:
        print(f"[budget] {message}")
    assert len(budget) <= BUDGET_SHARE * len(run.outcomes), (
        f"compat's round budget ran out on {len(budget)} of {len(run.outcomes)} stacks\n{summary}\n\n" + "\n".join(budget)
    )
    disagreements = [o.message for o in run.outcomes if o.kind == "disagree"]
    assert not disagreements, (
        f"compat and uv disagree on {len(disagreements)} of {len(run.outcomes)} stacks\n{summary}\n\n" + "\n".join(disagreements)
    )


def test_the_index_serves_the_snapshot(served):
    """Pages, metadata files and their hashes, yanks and the HTML fallback
    say what the database says, and no wheel is served."""
    db, index = served
    root = index.url("self-test")[: -len("/simple")]

    def get(path: str, accept: str = "*/*") -> bytes:
        request = urllib.request.Request(root + path, headers={"Accept": accept})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read()

    hub = db.component("huggingface-hub")
    page = json.loads(get("/simple/huggingface-hub/", "application/vnd.pypi.simple.v1+json"))
    assert set(page["versions"]) == {str(v) for v, r in hub.releases.items() if r.layer == "metadata"}
    assert {f["filename"].split("-")[1] for f in page["files"] if f["yanked"]} == {str(v) for v, r in hub.releases.items() if r.is_yanked}
    html = get("/simple/huggingface-hub/", "text/html").decode()
    assert html.count("<a ") == len(page["files"]) and html.count("data-core-metadata=") == len(page["files"])
    for entry in page["files"][-3:]:
        body = get(f"/files/huggingface-hub/{entry['filename']}.metadata")
        assert hashlib.sha256(body).hexdigest() == entry["core-metadata"]["sha256"]
        release = hub.releases[Version(entry["filename"].split("-")[1])]
        lines = [line[len("Requires-Dist: "):] for line in body.decode().splitlines() if line.startswith("Requires-Dist: ")]
        assert lines == [str(d.requirement) for d in release.dependencies if str(canonicalize_name(d.requirement.name)) in index.held]
    with pytest.raises(urllib.error.HTTPError) as raised:
        get(f"/files/huggingface-hub/{page['files'][0]['filename']}")
    assert raised.value.code == 404


def test_compat_agrees_with_uv_on_real_stacks(served, tmp_path):
    db, index = served
    _verify(db, index, DEFAULT_STACKS, tmp_path)


@pytest.mark.slow
def test_compat_agrees_with_uv_on_real_stacks_full(served, tmp_path):
    db, index = served
    _verify(db, index, FULL_STACKS, tmp_path)
