from __future__ import annotations

import atexit
import copy
import gc
import json
import os
import shutil
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pytest

from compat import Database

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# Every test (and every compat it starts) sees the same machine state: the
# ages of snapshots are counted to a fixed date (the bundled snapshots' week,
# so no "stale snapshot" note appears), and neither a user data folder nor an
# overlay of the developer's own is read.
os.environ["SOURCE_DATE_EPOCH"] = "1796256000"  # 2026-12-03
os.environ["COMPAT_DATA"] = tempfile.mkdtemp(prefix="compat-test-data-")  # empty: no user layer
atexit.register(shutil.rmtree, os.environ["COMPAT_DATA"], True)
os.environ["COMPAT_CACHE"] = tempfile.mkdtemp(prefix="compat-test-cache-")  # a sync's journal
atexit.register(shutil.rmtree, os.environ["COMPAT_CACHE"], True)
for _name in ("COMPAT_DB", "COMPAT_DB_OVERLAY"):
    os.environ.pop(_name, None)


def installed(name: str) -> str:
    """A command the test environment installs (uv, compat): the one next to
    this Python first, as .ci/run's virtual environment has it."""
    found = Path(sys.executable).with_name(name)
    if found.exists():
        return str(found)
    path = shutil.which(name)
    assert path, f"{name} is not installed next to this Python (.ci/run installs the test extra)"
    return path


def copy_database(target: Path) -> Path:
    """A copy of the bundled database small enough to lint in a test: the
    curated and derived files and the snapshots of the tracked packages and of
    those with derived facts (not the hundreds of
    dependencies' snapshots, nor the names graph, which is optional)."""
    source = ROOT / "data"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("metadata"))
    (target / "metadata").mkdir()
    derived = {path.stem for path in (source / "derived").glob("*.toml")}  # their packages' snapshots come too
    for path in (source / "metadata").glob("*.jsonl"):
        if path.name.endswith(".wheels.jsonl"):
            continue
        with path.open(encoding="utf-8") as handle:
            if json.loads(handle.readline()).get("tracked", True) or path.stem in derived:
                shutil.copy(path, target / "metadata" / path.name)
    return target


def load_tool(name: str) -> Any:
    """A script of tools/ as a module (tools/ is no package): registered under its own name, so that its
    dataclasses find their module, and a script that imports another (derive_torch_builds imports
    derive_wheel_archs) gets this one."""
    import importlib.util

    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def db() -> Database:
    return Database.load()


@pytest.fixture(autouse=True)
def _fresh_resolutions():
    """Each test starts with no reused resolution (engine/resolver.py, resolve_install): a test that patches
    how compat resolves or judges sees its own answers, and no test's outcome depends on which ran before it
    in the same process."""
    from compat.engine.resolver import forget_resolutions

    forget_resolutions()


@pytest.fixture(autouse=True)
def _bundled_platforms():
    """Each test starts with the bundled platform table in use (knowledge/platforms.py): a platform table
    another test bound a stack with (a copy of the database, a mutated one) is not what this one's
    stacks mean."""
    from compat.knowledge.platforms import use_platforms

    use_platforms(None)


def pytest_sessionstart(session: pytest.Session) -> None:
    """A test process holds loaded databases and their caches for its whole
    run: a full collection walks them all, again and again. Collections of
    the oldest generation are made rarer here (the test run's setting; the
    product leaves the collector as it finds it)."""
    gc.set_threshold(10_000, 20, 100)


@pytest.fixture
def hostile():
    """A package index on 127.0.0.1 that answers what each test tells it to (tests/index_server.py)."""
    from .index_server import HostileIndex

    with HostileIndex() as served:
        yield served


@pytest.fixture
def write_stack(tmp_path: Path):
    """Write a stack.toml from dedented text and return its path."""

    def write(text: str, name: str = "stack.toml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


def base(**tables: dict) -> dict:
    """A minimal valid stack mapping, with tables merged in."""
    data: dict = {"system": {"python": "3.12", "cuda": "13.0"}}
    for name, table in tables.items():
        data.setdefault(name, {}).update(table)
    return data


def stack_table(packages, gpu=None, *, cuda="13.0", python="3.12", options=None, model=None, env=None, count=None,
                driver=None, cc=None, platform=None, rocm=None):
    """A stack as the mapping compat.check takes: only the keys given (copied)."""
    data = {"system": {"python": python}, "packages": dict(packages)}
    for key, value in (("cuda", cuda), ("rocm", rocm), ("driver", driver), ("platform", platform)):
        if value:
            data["system"][key] = value
    hardware = {key: value for key, value in (("gpu", gpu), ("compute_capability", cc), ("count", count)) if value}
    if hardware:
        data["hardware"] = hardware
    for key, value in (("options", options), ("model", model), ("env", env)):
        if value:
            data[key] = copy.deepcopy(value)
    return data



# COMPAT_VERIFY_WIDENING=FILE: every resolution of a whole closure that the
# suite makes in its own process is made twice, the cheap way (a scope
# resolved, the rest added: resolver._widened) and by resolvelib over the
# whole closure, and each stack on which they disagree (verdict or a version)
# is written to FILE, one JSON line a stack compared ({"agree": true} or what differs).
# Slow (every check pays a full resolution too); tests/test_widening.py holds
# the examples and a grid of real stacks to it in every run.
if os.environ.get("COMPAT_VERIFY_WIDENING"):
    from compat.engine import resolver as _resolver

    _plain_resolve = _resolver.resolve

    def _verifying_resolve(stack, db, **options):
        found = _plain_resolve(stack, db, **options)
        if options.get("closure") and not options.get("exhaustive") and found.ok:
            full = _plain_resolve(stack, db, **{**options, "exhaustive": True})
            ours = {k: str(c.version) for k, c in found.versions.items()}
            theirs = {k: str(c.version) for k, c in full.versions.items()}
            line = {"agree": full.ok and ours == theirs}
            if not line["agree"]:
                line.update(stack=stack.path, packages={n: str(s.specifier) for n, s in stack.packages.items()},
                            full_ok=full.ok, differ={k: [ours.get(k), theirs.get(k)] for k in ours.keys() | theirs.keys()
                                                     if ours.get(k) != theirs.get(k)})
            with open(os.environ["COMPAT_VERIFY_WIDENING"], "a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")  # a line a stack: a worker's exit may skip atexit
        return found

    _resolver.resolve = _verifying_resolve
    for _module in ("compat.engine.check", "compat.engine.why", "compat.api"):
        __import__(_module)
        if getattr(sys.modules[_module], "resolve", None) is _plain_resolve:
            sys.modules[_module].resolve = _verifying_resolve
