"""Fuzzing the readers of lock files (``--pylock``), axes files (``compat
matrix``) and overlay databases (``--db-overlay``) through the command line:
whatever such a file holds, the only outcomes are a report (exit 0, or 1 for
a conflict) or one line ``compat: error: ...`` of at most 600 characters
(exit 2); never exit 3, a traceback, a longer or second line, or a hang
(docs/reliability.md, "Fuzzing").

Each campaign mutates small valid inputs, some of which pass, some of which
fail (a conflict), some naming packages the database does not know. The
seed is fixed, so a failure repeats; a small sample runs with the suite, the
full runs (2,000 inputs each by default) under ``-m slow``, their number set
by COMPAT_FUZZ_PYLOCK_INPUTS, COMPAT_FUZZ_AXES_INPUTS and
COMPAT_FUZZ_OVERLAY_INPUTS.
"""

from __future__ import annotations

import collections
import contextlib
import gc
import io
import json
import os
import random
import shutil
import signal
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from compat._toml import tomllib
from compat.cli import main

from .test_fuzz import mutate
from .test_fuzz_db import mutate_bytes, mutate_jsonl, mutate_toml
from .test_inputs import LOCK, UV_LOCK
from .test_layers import ACME_OVERLAY
from .test_overlay_commands import ORG
from .test_reader_hardening_requirements import _mutant

LIMIT = 600  # characters of an error line after "compat: error: "
HANG = 60  # seconds one input may take
PREFIX = "compat: error: "

# -- running the command line and judging what it did ---------------------------------------------


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """compat's command line in this process: its exit code, standard output and error
    (with the traceback of an internal error, as --debug gives it)."""
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    code: Any = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                main([*args, "--debug"])
            except SystemExit as exc:
                code = exc.code
    finally:
        gc.enable()  # `compat check` turns the collector off for its short process
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return (code if isinstance(code, int) else 1 if code else 0), out.getvalue(), err.getvalue()


def judged(code: int, out: str, err: str) -> str:
    """'passed' (exit 0), 'failed' (exit 1, a conflict), 'refused' (exit 2,
    one line of at most 600 characters), or what went wrong."""
    if code in (0, 1):
        if not (out.strip() or err.strip()):  # (resolve reports a conflict on standard error)
            return f"exit {code} without a report"
        return "passed" if code == 0 else "failed"
    if code == 2:
        lines = err.rstrip("\n").split("\n")
        if len(lines) != 1 or not lines[0].startswith(PREFIX) or "\r" in err:
            return f"an error of {len(lines)} lines: {err[:300]!r}"
        if out.strip() and not _json_error(out):  # --format json also prints the error as JSON
            return f"an error with output: {out[:300]!r}"
        if len(lines[0]) - len(PREFIX) > LIMIT:
            return f"an error line of {len(lines[0]) - len(PREFIX)} characters: {err[:200]!r}"
        return "refused"
    return f"exit {code}: {err[-1500:]}"


def _json_error(out: str) -> bool:
    try:
        return isinstance(json.loads(out).get("error"), dict)
    except (ValueError, AttributeError):
        return False


class Hang(Exception):
    pass


@contextlib.contextmanager
def bounded(seconds: float) -> Iterator[None]:
    """Raise Hang in the block once `seconds` have passed (where signals allow)."""
    alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
    if not alarm:
        yield
        return

    def hang(*_: object) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def campaign(count: int, make: Callable[[int], tuple[list[str], dict[str, str]]],
             label: str) -> collections.Counter[str]:
    """Run `count` inputs (`make(i)` writes input i and gives the command's
    arguments and environment) and count their outcomes: 'read' (exit 0 or
    1; 'failed' counts those of exit 1), 'refused' and 'crashes'."""
    counts: collections.Counter[str] = collections.Counter()
    crashes: list[str] = []
    started = time.perf_counter()
    for number in range(count):
        args, env = make(number)
        try:
            with bounded(HANG):
                outcome = judged(*run_cli(*args, env=env))
        except Hang:
            outcome = f"took more than {HANG} s"
        if outcome in ("passed", "failed"):
            counts["read"] += 1
            counts[outcome] += 1
        elif outcome == "refused":
            counts["refused"] += 1
        else:
            counts["crashes"] += 1
            crashes.append(f"input {number} ({' '.join(args)}): {outcome}")
    print(f"\n{label}: {count} inputs in {time.perf_counter() - started:.1f} s: {dict(sorted(counts.items()))}")
    assert not crashes, "\n".join(crashes[:5])
    return counts


def structural(rng: random.Random, data: Any, hostile: list[Any]) -> Any:
    """`data` (parsed TOML) with one of its values replaced by a hostile one,
    a key dropped, or a list emptied or repeated."""
    containers: list[tuple[Any, Any]] = []
    pending = [data]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            containers += [(value, k) for k in value]
            pending += list(value.values())
        elif isinstance(value, list):
            containers += [(value, i) for i in range(len(value))]
            pending += value
    if not containers:
        return data
    container, key = rng.choice(containers)
    kind = rng.random()
    if kind < 0.3 and isinstance(container[key], str):
        container[key] = _mutant(rng, container[key], 1).replace("\ud7ff", "")
    elif kind < 0.6:
        container[key] = rng.choice(hostile)
    elif kind < 0.8:
        del container[key]
    elif isinstance(container[key], list):
        container[key] = container[key] * rng.choice([0, 2, 300])
    else:
        container[key] = [container[key]]
    return data


def mutated_toml(rng: random.Random, text: str, hostile: list[Any],
                 sensible: Callable[[random.Random, Any], Any]) -> str:
    """`text` changed as text (one input in five), or as TOML: the values a
    reader expects changed to others it may meet (`sensible`), or to hostile
    ones, or a string of it mutated."""
    kind = rng.random()
    if kind < 0.1:
        return _mutant(rng, text, rng.randint(1, 2))
    if kind < 0.2:
        return mutate(text, rng)
    data = tomllib.loads(text)
    for _ in range(rng.randint(1, 3)):
        data = sensible(rng, data) if rng.random() < 0.75 else structural(rng, data, hostile)
    try:
        return tomli_w.dumps(data)
    except (TypeError, ValueError):  # a value tomli_w cannot write (a list of lists of tables...)
        return _mutant(rng, text)


def write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8", "surrogatepass"))


# -- pylock.toml -------------------------------------------------------------------------------------

MACHINES = {
    "h200": '[system]\npython = "3.12"\ncuda = "13.0"\ndriver = "580.95.05"\n\n[hardware]\ngpu = "H200"\n',
    "py310": '[system]\npython = "3.10"\ncuda = "13.0"\n\n[hardware]\ngpu = "H100"\n',  # vLLM 0.32 fails on it
    "bare": '[system]\npython = "3.12"\n',
}
# a lock that fails (vLLM 0.32.0 requires transformers<5.20.0) and names packages the database does not know
FAILING_LOCK = """\
lock-version = "1.0"
created-by = "hand"
requires-python = ">=3.10"
extras = ["gpu"]
dependency-groups = ["dev"]
default-groups = ["dev"]

[[packages]]
name = "vllm"
version = "0.32.0"

[[packages.wheels]]
name = "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl"
url = "https://example.com/vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl"
hashes = { sha256 = "00" }

[[packages]]
name = "transformers"
version = "5.20.1"
marker = '"gpu" in extras'
sdist = { url = "https://example.com/transformers-5.20.1.tar.gz", hashes = { sha256 = "00" } }

[[packages]]
name = "acme-internal"
version = "1.0"
marker = 'sys_platform == "linux" and "dev" in dependency_groups'
archive = { url = "https://example.com/acme-internal-1.0.tar.gz", hashes = { sha256 = "00" } }

[[packages]]
name = "some-internal-pkg"
version = "2.0"
vcs = { type = "git", url = "https://example.com/x.git", commit-id = "0000000000000000000000000000000000000000" }

[tool.compat]
applications = { comfyui = "0.3.0" }
"""
PYLOCK_HOSTILE = [None, "", "1.1", "2.0", "0.32.0", "5" * 5000, "٢.٠", "torch>>2", "https://[::1/x", "a" * 70_000,
                  "\x00", "\u2028", '"x" in extras', 'python_version ~= "3"', "x.whl", "a-1-py3-none-any.whl",
                  "a-1.0-" + ".".join(["py3"] * 500) + "-none-any.whl", [], {}, [{}], {"sha256": "00"}, 0, -1,
                  2**63 - 1, True, 1.5, [[[]]], {"url": "file:///etc/passwd"}, {"path": "."}, ">=3." + "1" * 200,
                  "some-internal-pkg", "vllm"]


VERSIONS = ["0.31.0", "0.32.0", "0.33.0", "5.19.0", "5.20.1", "2.13.0", "2.10.0+cu128", "1.0", "99.0", "0.1rc1",
            "1.0.post1", "3.0.0.dev1", "0", "1." + "1" * 150, "5" * 4400]
NAMES = ["vllm", "transformers", "torch", "numpy", "flashinfer-python", "acme-internal", "some-internal-pkg", "Vllm",
         "flash_attn", "x" * 200]
MARKERS = ['sys_platform == "win32"', 'python_version < "3.11"', '"gpu" in extras', '"dev" in dependency_groups',
           'platform_machine == "aarch64"', 'extra == "gpu"', 'python_full_version >= "3.12.1"', "os_name == 'nt' or "
           "python_version >= '3'"]


def sensible_lock(rng: random.Random, data: Any) -> Any:
    """A lock changed as a lock may differ: a package's version, name,
    marker or Requires-Python; a package dropped, repeated or added; a
    wheel without its name; the applications, extras, groups or
    environments; a newer lock-version."""
    if not isinstance(data, dict):
        return data
    packages = data.get("packages") if isinstance(data.get("packages"), list) else []
    package = rng.choice(packages) if packages else {}
    if not isinstance(package, dict):
        return data
    kind = rng.choices(range(11), weights=[10] * 9 + [1, 10])[0]  # (a lock of 1,000 packages is slow to write)
    if kind in (0, 1) and package:
        name = rng.choice(NAMES) if kind else str(package.get("name"))
        retarget(package, name, rng.choice(VERSIONS) if not kind or rng.random() < 0.5 else str(package.get("version")))
    elif kind == 2:
        package["marker"] = rng.choice(MARKERS)
    elif kind == 3:
        rng.choice([package, data])["requires-python"] = rng.choice([">=3.11", "<3.11", "==3.12.*", ">=3.10,!=3.12.*"])
    elif kind == 4 and packages:
        packages.remove(package) if rng.random() < 0.5 else packages.append(dict(package))
    elif kind == 5:
        packages.append(retarget({}, rng.choice(NAMES), rng.choice(VERSIONS)))
    elif kind == 6 and isinstance(package.get("wheels"), list) and package["wheels"]:
        wheel = rng.choice(package["wheels"])
        if isinstance(wheel, dict) and "name" in wheel:
            wheel.setdefault("url", f"https://example.com/{wheel['name']}")
            del wheel["name"]
    elif kind == 7:  # the applications compat resolve names
        data.setdefault("tool", {}).setdefault("compat", {})["applications"] = rng.choice([
            {"comfyui": "0.3.0"}, {"comfyui": "99.0"}, {"acme-app": "1.0"}, {"vllm": "0.32.0"}, {"comfyui": ">=0"},
            {"comfyui": 3}, [], "comfyui"])
    elif kind == 8:  # what the lock declares and where it may be used
        key, values = rng.choice([("extras", ["gpu", "cpu", "GPU", ""]), ("dependency-groups", ["dev", "x y"]),
                                  ("default-groups", ["dev", "nope"]), ("environments", MARKERS)])
        data[key] = rng.sample(values, rng.randint(0, 2))
    elif kind == 9:  # more packages than a stack may hold
        data["packages"] = packages + [retarget({}, f"acme-pkg{i}", "1.0") for i in range(1001)]
    else:
        data["lock-version"] = rng.choice(["1.1", "1.0", "2.0"])
    return data


def retarget(package: dict[str, Any], name: str, version: str) -> dict[str, Any]:
    """`package` made `name` `version`, with an sdist or wheel of that name
    (packaging refuses a file another package's name)."""
    for key in ("sdist", "wheels", "archive", "vcs", "directory"):
        package.pop(key, None)
    package.update(name=name, version=version)
    stem = f"{name.replace('-', '_')}-{version}"
    digest = {"sha256": "0" * 64}
    if version.isascii() and "+" not in version and random.Random(stem).random() < 0.5:
        package["sdist"] = {"url": f"https://example.com/{stem}.tar.gz", "hashes": digest}
    else:
        package["wheels"] = [{"name": f"{stem}-py3-none-any.whl", "url": f"https://example.com/{stem}-py3-none-any.whl",
                              "hashes": digest}]
    return package


def pylock_bases(folder: Path) -> list[str]:
    """The locks the fuzzer starts from: one `compat resolve` wrote, uv's,
    a hand-written one, and one that fails and names unknown packages."""
    (folder / "stack.toml").write_text(MACHINES["bare"] + '\n[packages]\ntransformers = "5.19.0"\n', encoding="utf-8")
    code, written, err = run_cli("resolve", str(folder / "stack.toml"), "--format", "pylock")
    assert code == 0, err
    extra = '[tool.compat]\napplications = { comfyui = "0.3.0" }\n'
    return [written, UV_LOCK, LOCK.format(extra=extra), FAILING_LOCK]


def pylock_inputs(folder: Path, seed: int) -> Callable[[int], tuple[list[str], dict[str, str]]]:
    rng = random.Random(seed)
    bases = pylock_bases(folder)
    for name, text in MACHINES.items():
        (folder / f"{name}.toml").write_text(text, encoding="utf-8")

    def make(number: int) -> tuple[list[str], dict[str, str]]:
        path = folder / "pylock.toml"
        write(path, mutated_toml(rng, rng.choice(bases), PYLOCK_HOSTILE, sensible_lock))
        machine = rng.choice([*MACHINES, None])
        args = ["check", *([str(folder / f"{machine}.toml")] if machine else []), "--pylock", str(path)]
        args += [a for option, values in (("--extra", ["gpu", "GPU", "nope"]), ("--group", ["dev", "de v", "x"]))
                 if rng.random() < 0.1 for a in (option, rng.choice(values))]
        args += rng.choice([[], [], ["--format", "json"], ["--strict"], ["--require-known"]])
        return args, {}

    return make


# -- axes files (compat matrix) -----------------------------------------------------------------------

AXES_BASES = [
    # a cell fails (vLLM 0.32.0 needs Python 3.11)
    '[base.system]\nplatform = "linux-x86_64"\ncuda = "13.0"\ndriver = "580.95.05"\n\n'
    '[axes]\npython = ["3.10", "3.12"]\ngpu = ["A100", "H100"]\nvllm = ["0.32.0"]\n',
    # every cell fails, and the base names packages the database does not know
    '[base.system]\npython = "3.10"\ncuda = "13.0"\n\n[base.hardware]\ngpu = "H100"\n\n[base.packages]\n'
    'acme-internal = "1.0"\nsome-internal-pkg = { version = ">=0", external = true }\n\n'
    '[axes]\nvllm = ["0.32.0", "0.33.0"]\ncuda = ["12.8", "13.0"]\n',
    # a specifier's releases
    '[base.system]\nplatform = "linux-x86_64"\n\n[axes]\npython = ["3.11", "3.12"]\ntransformers = ">=5.19"\n',
    # an overlay's package and GPU as axes, options and a compute capability
    '[base.system]\npython = "3.12"\ncuda = "13.0"\ndriver = "580.95.05"\n\n[base.packages]\n'
    'transformers = { version = "5.19.0", extras = ["torch"] }\n\n[base.options.vllm]\ntensor-parallel-size = 2\n\n'
    '[base.compat]\noverlay = "org"\n\n[axes]\ncompute_capability = ["8.0", "9.0"]\nacme-router = ["3.2.0", "3.3.0"]\n'
    'vllm = ["0.32.0", "0.33.0"]\n',
]
AXIS_VALUES: dict[str, list[Any]] = {
    "python": ["3.9", "3.10", "3.11", "3.12", "3.13", "3.14", "3.12.1", "3", "3.12.0rc1"],
    "gpu": ["A100", "H100", "H200", "B200", "NVIDIA H100", "ACME-X1", "MI300X", "RTX 4090", "nope"],
    "cuda": ["11.8", "12.8", "12.9", "13.0", "12", "13.0.1"],
    "driver": ["535.54.03", "580.95.05", "1", "999.0"],
    "platform": ["linux-x86_64", "linux-aarch64", "macos-arm64", "windows-x86_64", "linux"],
    "compute_capability": ["7.0", "8.0", "8.9", "9.0", "10.0", "12.0", "90"],
    "vllm": ["0.31.0", "0.32.0", "0.33.0", "0.34.0", ">=0.30", "<0", ">=0.32,<0.34", "==0.32.*"],
    "transformers": ["5.19.0", "5.20.1", ">=5.19", ">=0", "~=5.20.0"],
    "torch": ["2.9.0", "2.13.0", ">=2.10", "2.10.0+cu128"],
    "acme-router": ["3.2.0", "3.3.0", ">=3"],
    "acme-internal": ["1.0", ">=0"],
    "flashinfer-python": ["0.7.0.post1", "0.7.2", "0.7.2rc5"],
}
AXES_HOSTILE = [None, "", [], {}, [[]], [1], [3.12], ["3.12", "3.12"], ["3.12", "3.12.0"], ">=0", "٢.٠", "1" * 5000,
                ["x" * 300], [str(i) for i in range(1200)], "\u2028", "\x00", True, 0, {"version": "0.32.0"},
                {"overlay": "/dev/zero"}, {"overlay": "nowhere"}, "org", ["H100", "NVIDIA H100"]]


def sensible_axes(rng: random.Random, data: Any) -> Any:
    """An axes file changed as one may differ: an axis's values, an axis
    added, dropped or renamed, the base's packages, machine, overlay,
    model, options or environment changed."""
    if not isinstance(data, dict):
        return data
    axes = data.setdefault("axes", {}) if isinstance(data.get("axes", {}), dict) else {}
    base = data.setdefault("base", {}) if isinstance(data.get("base", {}), dict) else {}
    name = rng.choice(list(AXIS_VALUES))
    values = AXIS_VALUES[name]
    kind = rng.randrange(7)
    if kind in (0, 1):  # an axis of some of its values (or a specifier string)
        chosen = rng.choice(values)
        releases = [v for v in values if v[0] not in "<>=~"]
        axes[name] = chosen if chosen[0] in "<>=~" and rng.random() < 0.7 else \
            rng.sample(releases, rng.randint(1, min(3, len(releases))))
    elif kind == 2 and axes:
        del axes[rng.choice(list(axes))]
    elif kind == 3 and axes:
        axes[name] = axes.pop(rng.choice(list(axes)))
    elif kind == 4:
        table = base.setdefault("packages", {}) if isinstance(base.get("packages", {}), dict) else {}
        table[name if name not in ("python", "gpu", "cuda", "driver", "platform", "compute_capability")
              else "some-internal-pkg"] = rng.choice(values)
    elif kind == 5:  # what else a stack holds, for every cell
        table, key, value = rng.choice([("compat", "overlay", "org"), ("compat", "overlay", "nowhere"),
                                        ("compat", "overlay", "/dev/null"), ("compat", "ignore", ["requires-python:*"]),
                                        ("model", "name", "acme-chat"), ("model", "name", "GLM-5"),
                                        ("options", "vllm", {"kv-cache-dtype": "fp8"}), ("env", "VLLM_X", "1"),
                                        ("stack", "name", "fuzzed")])
        if isinstance(base.get(table, {}), dict):
            base.setdefault(table, {})[key] = value
    else:
        name = rng.choice(["python", "gpu", "cuda", "driver", "platform", "compute_capability"])
        machine = "hardware" if name in ("gpu", "compute_capability") else "system"
        table = base.setdefault(machine, {}) if isinstance(base.get(machine, {}), dict) else {}
        table[name] = rng.choice(AXIS_VALUES[name])
    return data


def axes_inputs(folder: Path, seed: int) -> Callable[[int], tuple[list[str], dict[str, str]]]:
    rng = random.Random(seed)
    overlay_files(folder / "org")

    def make(number: int) -> tuple[list[str], dict[str, str]]:
        path = folder / "axes.toml"
        write(path, mutated_toml(rng, rng.choice(AXES_BASES), AXES_HOSTILE, sensible_axes))
        args = ["matrix", str(path), "--format", rng.choice(["github", "json", "markdown"]), "--deadline", "30"]
        args += rng.choice([[], [], [], ["--pairwise"], ["--strength", "3"], ["--explain-excluded"],
                            ["--rows", "vllm", "--columns", "python"], ["--columns", "nope"]])
        return args, {}

    return make


# -- overlay databases --------------------------------------------------------------------------------

# the overlays of tests/test_layers.py (a source, a rule on vLLM, a GPU) and of
# tests/test_overlay_commands.py (an application following vLLM), with the
# application's newer release needing the private package below, its options and a model
OVERLAY = {
    **{name: textwrap.dedent(text) for name, text in ACME_OVERLAY.items()},
    "constraints/acme-router.toml": textwrap.dedent(ORG["constraints/acme-router.toml"]).replace(
        '"vllm>=0.33,<0.34"]', '"vllm>=0.33,<0.34", "acme-lib>=1.1"]'),
    "options/acme-router.toml": """\
schema = 1
component = "acme-router"
covers = ">=3.2.0"

[[option]]
name = "workers"
summary = "How many router processes to run"
type = "int"
releases = ">=3.2.0"
source = "acme-policy"
""",
    "models.toml": """\
schema = 1

[[model]]
name = "acme-chat"
repo = "acme/acme-chat-70b"
aliases = ["acme-chat-70b"]
family = "acme-chat"
moe = false
multimodal = false
source = "acme-policy"
""",
}
# a private package's snapshot, as db sync writes one from a private index
SNAPSHOT = [
    {"schema": 1, "name": "acme-lib", "index": "https://pypi.acme.example/simple/", "taken": "2026-11-20",
     "tracked": True, "versions": ["1.0", "1.1"], "yanked": []},
    {"version": "1.0", "uploaded": "2026-10-01", "requires_python": ">=3.10", "file": "acme_lib-1.0-py3-none-any.whl",
     "tags": ["py3-none-any"], "sdist": False, "requires_dist": ["numpy>=1.26", "torch>=2.9; extra == 'gpu'"]},
    {"version": "1.1", "uploaded": "2026-11-20", "requires_python": ">=3.11", "file": "acme_lib-1.1-py3-none-any.whl",
     "tags": ["py3-none-any"], "sdist": False, "requires_dist": ["numpy>=2", "huggingface-hub>=1.0"]},
]
WHEELS = [{key: SNAPSHOT[0][key] for key in ("schema", "name", "index", "taken")},
          {"version": "1.0", "wheels": [{"file": "acme_lib-1.0-py3-none-any.whl",
                                         "url": "https://pypi.acme.example/files/acme_lib-1.0-py3-none-any.whl",
                                         "sha256": "0" * 64, "size": 1000}]},
          {"version": "1.1", "wheels": [{"file": "acme_lib-1.1-py3-none-any.whl",
                                         "url": "https://pypi.acme.example/files/acme_lib-1.1-py3-none-any.whl",
                                         "sha256": "1" * 64, "size": 1000}]}]
OVERLAY_STACKS = {
    "passes": '[system]\npython = "3.12"\ncuda = "13.0"\ndriver = "580.95.05"\nglibc = "2.35"\n\n[hardware]\n'
              'gpu = "ACME X1 Accelerator"\n\n[packages]\nvllm = "0.32.0"\nacme-router = "3.2.0"\nacme-lib = "1.1"\n\n'
              '[options.vllm]\nkv-cache-dtype = "fp8"\n\n[options.acme-router]\nworkers = 4\n\n'
              '[model]\nname = "acme-chat"\n',
    "fails": '[system]\npython = "3.12"\ncuda = "13.0"\n\n[hardware]\ngpu = "ACME-X1"\n\n[packages]\n'
             'vllm = "0.33.0"\nacme-router = "3.2.0"\nacme-lib = ">=1.0"\n',
    "unknown": '[system]\npython = "3.10"\ncuda = "13.0"\n\n[hardware]\ngpu = "H100"\n\n[packages]\nvllm = "0.32.0"\n'
               'acme-lib = "1.0"\nsome-internal-pkg = ">=0"\nacme-internal = "1.0"\n',
}


def overlay_files(folder: Path) -> Path:
    """The small valid overlay the fuzzer starts from."""
    import json

    from compat.knowledge.graph import write_graph
    from compat.knowledge.snapshot import line_offsets

    for name, text in OVERLAY.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    lines = [json.dumps(entry) for entry in SNAPSHOT[1:]]
    header = {**SNAPSHOT[0], "lines": line_offsets(lines)}
    (folder / "metadata").mkdir(exist_ok=True)
    (folder / "metadata" / "acme-lib.jsonl").write_text("\n".join([json.dumps(header), *lines]) + "\n",
                                                         encoding="utf-8")
    (folder / "metadata" / "acme-lib.wheels.jsonl").write_text("".join(json.dumps(w) + "\n" for w in WHEELS),
                                                                encoding="utf-8")
    write_graph(str(folder / "metadata"))
    return folder


def hostile_file(path: Path, rng: random.Random) -> None:
    """`path` (a file or a folder) made what no reader may read whole or wait on."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    path.unlink(missing_ok=True)
    kind = rng.randrange(4)
    if kind == 0:
        path.symlink_to("/dev/zero")
    elif kind == 1:
        os.mkfifo(path)
    elif kind == 2:
        path.mkdir()
    else:
        with open(path, "wb") as handle:
            handle.truncate(rng.choice([17, 65]) * 1024 * 1024)  # sparse: past the bounds


OVERLAY_HOSTILE = [*PYLOCK_HOSTILE[:12], [], {}, 0, True, "acme-policy", "vllm-0.32.0", ">=0", "ACME-X1", "H100"]


def mutated_file(name: str, raw: bytes, rng: random.Random) -> bytes:
    """An overlay's file changed as bytes, as JSON lines, as TOML, or as text."""
    roll = rng.random()
    try:
        if roll < 0.15 or not raw:
            return mutate_bytes(raw, rng)
        if name.endswith(".jsonl") and roll < 0.75:
            return mutate_jsonl(raw, rng)
        if name.endswith(".toml") and roll < 0.45:
            return mutate_toml(raw, rng)
        if name.endswith(".toml") and roll < 0.8:
            return mutated_toml(rng, raw.decode("utf-8"), OVERLAY_HOSTILE, lambda _, data: data).encode(
                "utf-8", "surrogatepass")
        return mutate(raw.decode("utf-8"), rng).encode("utf-8", "surrogatepass")
    except ValueError:  # a file an earlier change left no longer UTF-8, JSON or TOML
        return mutate_bytes(raw, rng)


def overlay_inputs(folder: Path, seed: int) -> Callable[[int], tuple[list[str], dict[str, str]]]:
    rng = random.Random(seed)
    base = overlay_files(folder / "base")
    names = sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())
    for name, text in OVERLAY_STACKS.items():
        (folder / f"{name}.toml").write_text(text, encoding="utf-8")

    def make(number: int) -> tuple[list[str], dict[str, str]]:
        from compat.knowledge import layers

        layers._OVERLAID.clear()  # a stack's overlay is kept per folder: 2,000 folders would be 2,000 databases
        org = Path(shutil.copytree(base, folder / f"o{number}"))
        for _ in range(rng.choice([1, 1, 1, 2])):
            name = rng.choice([*names, "constraints/acme-lib.toml", "constraints/_x.toml", "metadata/extra.jsonl"])
            path = org / name
            if rng.random() < 0.04:
                hostile_file(org / rng.choice([name, name, name, "constraints", "metadata", "options"]), rng)
                break
            raw = path.read_bytes() if path.exists() else b""
            path.write_bytes(mutated_file(name, raw, rng))
        stack = str(folder / f"{rng.choice(list(OVERLAY_STACKS))}.toml")
        command = rng.choice([["check", stack]] * 6 + [["resolve", stack], ["db", "show", "acme-lib"],
                                                       ["db", "show", "acme-router"], ["why", "acme-lib"]])
        if rng.random() < 0.5:
            return [*command, "--db-overlay", str(org)], {}
        return command, {"COMPAT_DB_OVERLAY": str(org)}

    return make


@pytest.mark.parametrize("part, kind", [("constraints", "file"), ("metadata", "device"), ("options", "file")])
def test_an_overlay_folder_that_is_a_file_is_refused_not_read_as_empty(tmp_path, part, kind):
    org = overlay_files(tmp_path / "org")
    shutil.rmtree(org / part)
    if kind == "file":
        (org / part).write_text("x = 1\n", encoding="utf-8")
    else:
        (org / part).symlink_to("/dev/null")
    (tmp_path / "stack.toml").write_text(OVERLAY_STACKS["passes"], encoding="utf-8")
    code, out, err = run_cli("check", str(tmp_path / "stack.toml"), "--db-overlay", str(org))
    assert judged(code, out, err) == "refused" and f"{org / part}: not a folder" in err, (code, out, err)


# -- the campaigns -------------------------------------------------------------------------------------

# reader -> (its inputs, the default sample, the variable that sets the long run's number)
READERS = {
    "pylock": (pylock_inputs, 20, "COMPAT_FUZZ_PYLOCK_INPUTS"),
    "axes": (axes_inputs, 8, "COMPAT_FUZZ_AXES_INPUTS"),
    "overlay": (overlay_inputs, 8, "COMPAT_FUZZ_OVERLAY_INPUTS"),
}


@pytest.mark.parametrize("reader", READERS)
def test_mutated_inputs_give_a_report_or_one_line(tmp_path, reader):
    inputs, count, _ = READERS[reader]
    counts = campaign(count, inputs(tmp_path, 20261206), reader)
    assert counts["read"] and counts["refused"] and counts["failed"]


@pytest.mark.slow
@pytest.mark.parametrize("reader", READERS)
def test_many_mutated_inputs_give_a_report_or_one_line(tmp_path, reader):
    inputs, _, variable = READERS[reader]
    counts = campaign(int(os.environ.get(variable, "2000")), inputs(tmp_path, 1206), reader)
    assert counts["failed"]
