"""The whole install's resolution is reused in one process (engine/resolver.py,
resolve_install): a stack checked again, or one that differs only in what the
report alone reads, resolves once, and its report is the one a fresh process
gives."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import compat
from compat.engine import resolver

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
STACKS = sorted(p.name for p in EXAMPLES.glob("*.toml") if not p.name.startswith("axes"))


def in_new_thread(function):
    """`function()` in a thread of its own: an empty cache (the cache is per thread)."""
    out = {}
    thread = threading.Thread(target=lambda: out.setdefault("value", function()))
    thread.start()
    thread.join()
    return out["value"]


@pytest.mark.parametrize("name", STACKS)
def test_a_checked_stack_checked_again_gives_the_same_report(db, name):
    path = EXAMPLES / name

    def twice():
        first = compat.check(path, database=db).to_dict()
        return first, compat.check(path, database=db).to_dict()

    first, again = in_new_thread(twice)
    assert again == first  # suggestions and explanations included: failing examples search for fixes


def count_resolutions(monkeypatch) -> list:
    calls: list = []
    original = resolver.resolve

    def counted(*args, **kwargs):
        calls.append(kwargs.get("closure"))
        return original(*args, **kwargs)

    monkeypatch.setattr(resolver, "resolve", counted)
    return calls


BASE = {"system": {"python": "3.12", "platform": "linux-x86_64", "cuda": "13.0"}, "hardware": {"gpu": "H100"},
        "packages": {"vllm": "0.32.0"}}


def test_what_only_the_report_reads_does_not_resolve_again(db, monkeypatch):
    calls = count_resolutions(monkeypatch)

    def run():
        compat.check(BASE, database=db, suggest=False)
        compat.check({**BASE, "stack": {"name": "renamed"}, "compat": {"ignore": ["glibc:*"]}}, database=db,
                     suggest=False, strict=True)
        return len(calls)

    assert in_new_thread(run) == 1


@pytest.mark.parametrize("change", [
    {"packages": {"vllm": "0.31.0"}},
    {"system": {**BASE["system"], "python": "3.11"}},
    {"hardware": {"gpu": "A100 80GB"}},
    {"options": {"vllm": {"kv-cache-dtype": "fp8"}}},
    {"env": {"VLLM_USE_V1": "0"}},
    {"model": {"checkpoint_dtype": "fp8"}},
])
def test_what_a_resolution_reads_resolves_again(db, monkeypatch, change):
    calls = count_resolutions(monkeypatch)

    def run():
        compat.check(BASE, database=db, suggest=False)
        compat.check({**BASE, **change}, database=db, suggest=False)
        return len(calls)

    assert in_new_thread(run) == 2


def test_another_database_object_resolves_again(db, monkeypatch):
    calls = count_resolutions(monkeypatch)
    other = compat.Database.load()

    def run():
        compat.check(BASE, database=db, suggest=False)
        compat.check(BASE, database=other, suggest=False)
        return len(calls)

    assert in_new_thread(run) == 2


def test_a_dropped_database_goes_with_its_reused_resolutions():
    import gc
    import weakref

    def run():
        other = compat.Database.load()
        compat.check(BASE, database=other, suggest=False)
        return weakref.ref(other)

    gone = in_new_thread(run)
    gc.collect()
    assert gone() is None  # a resolution refers to its database: kept beside it, it would keep it alive


def test_judgments_shared_between_stacks_alike_change_no_report(db):
    """Stacks of one machine and the same package names share what a release's
    own requirements and wheels say there (resolver._Shared): each checked
    after the others gives the report it gets alone, in a thread of its own."""
    variants = [
        {"vllm": "0.32.0"}, {"vllm": "0.31.0"}, {"vllm": "0.26.0"}, {"vllm": "0.30.0"},
    ]
    stacks = [{**BASE, "packages": packages} for packages in variants]
    alone = [in_new_thread(lambda s=s: compat.check(s, database=db).to_dict()) for s in stacks]

    def in_a_row():
        return [compat.check(s, database=db).to_dict() for s in stacks]

    assert in_new_thread(in_a_row) == alone
    shared = in_new_thread(lambda: (compat.check(stacks[0], database=db),
                                    resolver._shared_for(compat.load_stack(stacks[0], db), db)))[1]
    assert shared.requires and shared.fits and shared.wheels  # judged once, for all of them


def test_a_gap_found_through_a_shared_release_is_said_to_every_stack_that_reads_it(tmp_path):
    """app 2.0 reaches mid 2.0 and 1.0, both needing base>=5, which no release meets; app 1.0
    reaches mid 1.0 alone. Checked after app 2.0 in the same thread, app 1.0 still hears of the
    gap: the shared lines of mid 1.0 keep it though app 2.0's check had met it through mid 2.0."""
    from .test_resolve import synthetic_database

    db = synthetic_database(tmp_path / "db", {
        "app": {"1.0": ["mid<2"], "2.0": ["mid"]},
        "mid": {"1.0": ["base>=5"], "2.0": ["base>=5", "app<2"]},
        "base": {"1.0": []},
    })
    first, then = ({"system": {"python": "3.12"}, "packages": {"app": version}} for version in ("==2.0", "==1.0"))

    def ids(stack):
        return sorted(f.id for f in compat.check(stack, database=db, suggest=False).findings)

    alone = in_new_thread(lambda: ids(then))
    assert "gap:base" in alone
    assert in_new_thread(lambda: (ids(first), ids(then)))[1] == alone


def test_stacks_that_differ_in_their_gpu_alone_share_no_judgment_of_a_build(db):
    """Whether a build runs reads the hardware, which the shared judgments' key leaves out."""
    stacks = [{**BASE, "hardware": {"gpu": gpu}, "packages": {"vllm": "0.32.0"}} for gpu in ("H100", "T4", "B200")]
    alone = [in_new_thread(lambda s=s: compat.check(s, database=db).to_dict()) for s in stacks]
    assert in_new_thread(lambda: [compat.check(s, database=db).to_dict() for s in stacks]) == alone
