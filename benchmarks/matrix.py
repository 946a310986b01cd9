"""`compat.matrix` against checking every cell, and its pairwise rows against allpairspy's.

On one axes file (default: examples/axes-wide.toml, 10,800 cells), in one
process and on one loaded database:

1. the full matrix (`compat.matrix`), against the brute force: `compat.check`
   of every cell of the product, as a script would filter it (with
   `--sample N`, N random cells, and the whole product's time estimated from
   them); the two must find the same compatible cells. A second brute force,
   without the suggestions `compat.check` computes for a failing cell, is
   estimated from a sample, to show how much of the gap they make;
2. the pairwise rows (`compat.matrix(..., strength=2)`), against allpairspy
   (if it is installed; it is no dependency of compat) on the same axes, with
   the constraints as its filter: a partial row passes when some compatible
   cell begins with it, a full row when it is compatible.

Times are CPU seconds (user + system of this process: on a shared machine,
wall time also measures the other tenants), with wall time beside them.

    python benchmarks/matrix.py [--axes FILE] [--sample N] [--seed N]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def timed(work: Callable[[], Any]) -> tuple[Any, float, float]:
    """The result of `work`, its CPU seconds and its wall seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return result, time.process_time() - cpu, time.perf_counter() - wall


def brute_force(axes: Any, cells: list[tuple[int, ...]], db: Any, *, suggestions: bool = True) -> set[tuple[int, ...]]:
    """The cells among `cells` whose check passes, each checked on its own."""
    import compat
    from compat.engine.check import check_stack
    from compat.knowledge.binding import load_stack

    ok = set()
    for choice in cells:
        tables = axes.tables(choice)
        if suggestions:
            report = compat.check(tables, database=db)
        else:
            report = check_stack(load_stack(tables, db), db, suggest_fixes=False)
        if report.ok:
            ok.add(choice)
    return ok


def pairs_of(rows: Iterable[tuple[int, ...]]) -> set[Any]:
    """The pairs of axis values the rows hold."""
    from compat.engine.covering import tuples_of

    return {pair for row in rows for pair in tuples_of(row, 2)}


def allpairs_rows(axes: Any, compatible: list[tuple[int, ...]]) -> list[tuple[int, ...]] | None:
    """allpairspy's rows on the axes (as value indices), filtered by the
    constraints: a partial row passes when some compatible cell begins with
    it. None if allpairspy is not installed."""
    try:
        from allpairspy import AllPairs
    except ImportError:
        return None
    prefixes = {row[:n] for row in compatible for n in range(1, len(row) + 1)}
    indices = [list(range(len(axis.values))) for axis in axes.axes]
    return [tuple(row) for row in AllPairs(indices, filter_func=lambda row: tuple(row) in prefixes)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--axes", type=Path, default=ROOT / "examples" / "axes-wide.toml")
    parser.add_argument("--sample", type=int, default=0,
                        help="check N random cells for the brute force, and estimate the product from them "
                             "(default: every cell)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import compat
    from compat.knowledge.database import Database
    from compat.knowledge.axes import load_axes

    db = Database.shared()
    axes = load_axes(args.axes, db)
    cells = list(itertools.product(*(range(n) for n in axes.sizes)))
    brute_force(axes, cells[:1], db)  # the database's first reads, paid before either is timed
    shown = " × ".join(f"{a.name} {len(a.values)}" for a in axes.axes)
    from importlib.metadata import version

    print(f"axes: {args.axes.name}: {shown} = {len(cells):,} cells; anchor: compat.check per cell (compat "
          f"{version('stackcompat')}, resolvelib {version('resolvelib')}, Python {sys.version.split()[0]}); "
          f"load average {__import__('os').getloadavg()[0]:.2f}")

    matrix, cpu, wall = timed(lambda: compat.matrix(axes, database=db))
    print(f"matrix: {cpu:.1f} s CPU ({wall:.1f} s wall): {len(matrix.compatible):,} compatible, "
          f"{matrix.checked:,} cells checked one by one, {len(matrix.excluded)} exclusions")

    sample = cells if not args.sample or args.sample >= len(cells) else \
        sorted(random.Random(args.seed).sample(cells, args.sample))
    ok, brute_cpu, brute_wall = timed(lambda: brute_force(axes, sample, db))
    scale = len(cells) / len(sample)
    found = {r.choice for r in matrix.compatible}
    if ok != found & set(sample):
        sys.exit(f"the matrix and the brute force disagree on {len(ok ^ (found & set(sample)))} cells")
    how = "every cell" if scale == 1 else f"{len(sample):,} random cells, times ×{scale:.1f} for the product"
    print(f"brute force (compat.check of {how}): {brute_cpu * scale:.1f} s CPU ({brute_wall * scale:.1f} s wall); "
          f"the same {len(ok):,} compatible cells")
    print(f"ratio: the matrix is {brute_cpu * scale / cpu:.1f}× faster in CPU time "
          f"({brute_wall * scale / wall:.1f}× in wall time); target ≥ 20×")
    plain = sorted(random.Random(args.seed + 1).sample(cells, min(len(cells), 500)))
    _, plain_cpu, _ = timed(lambda: brute_force(axes, plain, db, suggestions=False))
    plain_cpu *= len(cells) / len(plain)
    print(f"brute force without suggestions (check_stack of {len(plain)} random cells, ×{len(cells) / len(plain):.1f}): "
          f"{plain_cpu:.1f} s CPU: the matrix is {plain_cpu / cpu:.1f}× faster")

    pairwise, cpu, _ = timed(lambda: compat.matrix(axes, database=db, strength=2))
    ours = [row.choice for row in pairwise.rows]
    compatible = [row.choice for row in pairwise.compatible]
    coverable = pairs_of(compatible)
    bound = max(len({(row[a], row[b]) for row in compatible}) for a, b in itertools.combinations(range(len(axes.axes)), 2))
    print(f"pairwise (compat): {len(ours)} rows, covering all {len(coverable)} pairs some compatible cell holds "
          f"(no fewer than {bound} rows can: the pairs of its two most constrained axes) ({cpu:.1f} s CPU)")
    theirs, cpu, _ = timed(lambda: allpairs_rows(axes, compatible))
    if theirs is None:
        print("pairwise (allpairspy): skipped: allpairspy is not installed (it is no dependency of compat; "
              "install it in a separate environment to compare)")
        return
    valid = [row for row in theirs if row in set(compatible)]
    reached = pairs_of(valid) & coverable
    print(f"pairwise (allpairspy, the installed package, filtered by the constraints): {len(theirs)} rows "
          f"({len(valid)} compatible), covering {len(reached)} of the {len(coverable)} pairs; it stops when no "
          f"row it can build adds a pair ({cpu:.1f} s CPU)")
    from compat.engine.covering import cover

    same = cover(compatible, axes.sizes, strength=2, wanted=reached)
    print(f"rows for the same {len(reached)} pairs: compat {len(same.rows)}, allpairspy {len(theirs)}; "
          f"for all {len(coverable)}: compat {len(ours)}, allpairspy cannot (target: no more rows than allpairspy)")

if __name__ == "__main__":
    main()
