"""The whole install the cheap way agrees with resolvelib over the whole closure.

`resolve(..., closure=True)` first chooses the whole closure greedily, and
where that fails resolves the scope with resolvelib and adds the rest of
the closure greedily, verified (resolver._widened); the
check's verdict must be the one the whole closure resolved by resolvelib
gives. Here on the examples (whole reports) and on a grid of real stacks
(resolutions: verdict and every version); the grid's full run is marked
slow, and `COMPAT_VERIFY_WIDENING=FILE python -m pytest` holds every
resolution the suite makes to it (tests/conftest.py).
"""

from __future__ import annotations

import itertools

import pytest
from packaging.version import Version

from compat import check
from compat.engine import resolver
from compat.knowledge.binding import load_stack

from .conftest import EXAMPLES, stack_table

STACKS = sorted(p for p in EXAMPLES.glob("*.toml") if not p.name.startswith("axes"))


def _exhaustive(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = resolver.resolve
    monkeypatch.setattr(resolver, "resolve", lambda stack, db, **o: plain(stack, db, **{**o, "exhaustive": True}))
    resolver.forget_resolutions()  # the checks before resolved the cheap way: resolve again


@pytest.mark.parametrize("example", STACKS, ids=lambda p: p.name)
def test_an_example_gets_the_report_of_the_unpruned_check(example, db, monkeypatch):
    cheap = check(example, database=db).to_dict()
    _exhaustive(monkeypatch)
    assert check(example, database=db).to_dict() == cheap


def _grid(db):
    """Real stacks: the engines' recent releases on each Python and a few GPUs."""
    engines = []
    for name, since in (("vllm", "0.10.0"), ("sglang", "0.5.0"), ("transformers", "5.0.0"), ("vllm-omni", "0.1.0")):
        component = db.component(name)
        if component is None:
            continue
        engines += [(name, str(v)) for v in component.versions() if v >= Version(since) and not v.is_prerelease]
    machines = [("3.10", "A100", "12.8"), ("3.12", "H100", "12.9"), ("3.12", "H200", "13.0"),
                ("3.13", "RTX 4090", "12.8"), ("3.11", "B200", "13.0")]
    return [stack_table({name: version}, gpu, cuda=cuda, python=python)
            for (name, version), (python, gpu, cuda) in itertools.product(engines, machines)]


def _compare(db, stacks, *, closure=True):
    """Each stack resolved the cheap way and by resolvelib alone, compared; for
    each, whether a cheap way (`_greedy`, or with `closure` `_widened`) gave it."""
    cheap_ways = []
    plain = {name: getattr(resolver, name) for name in ("_greedy", "_widened")}

    def counting(name):
        def counted(*args, **kwargs):
            found = plain[name](*args, **kwargs)
            if found is not None:
                cheap_ways.append(name)
            return found
        return counted

    for name in plain:
        setattr(resolver, name, counting(name))
    taken = []
    try:
        for table in stacks:
            stack = load_stack(table, db)
            before = len(cheap_ways)
            cheap = resolver.resolve(stack, db, closure=closure)
            taken.append(len(cheap_ways) > before)
            resolver.forget_resolutions()  # resolvelib's answer shares no judgment the cheap way made
            full = resolver.resolve(stack, db, closure=closure, exhaustive=True)
            assert cheap.ok == full.ok, table
            assert ({k: c.version for k, c in cheap.versions.items()}
                    == {k: c.version for k, c in full.versions.items()}), table
    finally:
        for name, function in plain.items():
            setattr(resolver, name, function)
    return taken


def test_a_sample_of_real_stacks_resolves_as_the_whole_closure_does(db):
    grid = _grid(db)
    assert len(grid) > 300
    taken = _compare(db, grid[:: len(grid) // 24])
    assert sum(taken) >= len(taken) // 2  # a cheap way was taken, not always left to resolvelib


def test_the_packages_that_bear_on_the_tracked_ones_resolve_greedily_as_resolvelib_resolves_them(db):
    """Without `closure` (`compat resolve`, suggestions, `why`), the greedy choice over the scope
    against resolvelib's search of it, on a sample of the grid."""
    grid = _grid(db)
    taken = _compare(db, grid[:: len(grid) // 24], closure=False)
    assert sum(taken) >= len(taken) // 2  # the greedy way was taken, not always left to resolvelib


@pytest.mark.slow
def test_every_stack_of_the_grid_resolves_as_the_whole_closure_does(db):
    _compare(db, _grid(db))


def test_where_resolvelib_would_backtrack_the_closure_takes_what_uv_takes(db):
    # FlashInfer 0.6.13 names no torch release. Resolved whole by resolvelib, whose order here is by
    # name, cuda-toolkit is pinned first (13.4.3) and torch backtracks to 2.1.1, which needs no
    # cuda-toolkit; `uv pip compile` of the same two lines against an index served from the snapshot
    # (tests/snapshot_index.py; Python 3.12, x86_64-manylinux_2_28) takes torch 2.15.0 and
    # cuda-toolkit 13.2.2, as the closure chosen greedily does: each package after what requires it
    stack = load_stack(stack_table({"flashinfer-python": "==0.6.13", "flashinfer-cubin": "==0.6.13"}, "H100"), db)
    found = resolver.resolve(stack, db, closure=True)
    assert found.ok
    assert (str(found.versions["torch"].version), str(found.versions["cuda-toolkit"].version)) == ("2.15.0", "13.2.2")
    assert str(resolver.resolve(stack, db, closure=True, exhaustive=True).versions["torch"].version) == "2.1.1"


def test_a_release_passed_over_for_what_is_chosen_is_the_one_uv_passes_over(db):
    # FlashInfer 0.6.18 on CUDA 12.8: torch 2.11 and newer need CUDA 13, so torch 2.10.0 is the newest
    # that can run, and it needs cuda-bindings 12.9.*. resolvelib, by name, pins cuda-bindings 13.4.4
    # first and backtracks torch to 2.9.1; the greedy closure chooses torch first and passes over the
    # cuda-bindings releases it refuses (_Extension._agrees). `uv pip compile flashinfer-python==0.6.18
    # "torch<2.11"` against the snapshot's index takes torch 2.10.0 and cuda-bindings 12.9.4 too.
    stack = load_stack(stack_table({"flashinfer-python": "==0.6.18"}, "H100", cuda="12.8"), db)
    found = resolver.resolve(stack, db, closure=True)
    assert found.ok
    assert (str(found.versions["torch"].version), str(found.versions["cuda-bindings"].version)) == ("2.10.0", "12.9.4")


def test_a_release_that_requires_another_of_a_package_chosen_is_passed_over(db):
    # vLLM 0.26.0 pins apache-tvm-ffi 0.1.10; xgrammar 0.2.9 needs 0.1.11 or newer: the greedy closure
    # takes an older xgrammar at once instead of leaving the stack to resolvelib
    stack = load_stack(stack_table({"vllm": "==0.26.0", "torch": "==2.11.0", "transformers": "==5.18.0"}, "H100"), db)
    provider = resolver.StackProvider(stack, db, closure=True)
    extension = resolver._Extension(provider, {})
    assert extension.complete(resolver.stack_needs(stack))
    assert str(extension.chosen["apache-tvm-ffi"].version) == "0.1.10"
    assert extension.chosen["xgrammar"].version < Version("0.2.9")
    full = resolver.resolve(stack, db, closure=True, exhaustive=True)
    assert {k: c.version for k, c in extension.chosen.items()} == {k: c.version for k, c in full.versions.items()}
