"""Write the table of docs/coverage.md that says, per package, which releases
the database holds architecture and capability data for.

Architecture data: a build (``[[build]]``, hand-written or derived) that
lists the GPU architectures its wheels carry kernels for. Capability data: a
rule whose condition or requirement tests the GPU (``compute_capability``,
``gpu``, ``gpu_arch``, ``gpu_segment``). For each package with either, the
table counts the releases of its snapshot each covers, names the files the
facts come from (``derived`` for data/derived/, written by a script in
tools/; ``curated`` for data/constraints/), and gives the ranges covered.

    python tools/coverage.py [--check]

With --check it writes nothing and exits 1 when the table in
docs/coverage.md is not the one the database gives (tests/test_coverage.py
runs it so).
"""

from __future__ import annotations

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from compat.knowledge.database import Database  # noqa: E402

PAGE = os.path.join(ROOT, "docs", "coverage.md")
START = "<!-- coverage table: written by tools/coverage.py -->"
END = "<!-- end of the coverage table -->"
GPU_TESTS = {"compute_capability", "gpu", "gpu_arch", "gpu_segment"}


def _tests_gpu(condition) -> bool:
    return condition is not None and any(t.key in GPU_TESTS for t in condition.walk())


def _layer(file: str | None) -> str:
    return "derived" if os.path.basename(os.path.dirname(file or "")) == "derived" else "curated"


def _ranges(versions: list, covered: set) -> str:
    """The covered versions, in order, as runs of neighbours: "0.1.0-0.2.3, 0.4.0"."""
    runs: list[list] = []
    previous = False
    for version in versions:
        if version in covered:
            if previous:
                runs[-1][1] = version
            else:
                runs.append([version, version])
        previous = version in covered
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def rows(db: Database) -> list[str]:
    out = []
    for component in db.components():
        builds = [b for b in component.builds if b.archs]
        rules = [r for r in component.rules if _tests_gpu(r.when) or _tests_gpu(r.require)]
        if not builds and not rules:
            continue
        versions = sorted(v for v in component.releases if not v.is_devrelease)
        archs = {v for v in versions if any(b.covers(v) for b in builds)}
        caps = {v for v in versions if any(r.covers(v) for r in rules)}
        layers = sorted({_layer(b.file) for b in builds} | {_layer(r.file) for r in rules})
        out.append(f"| {component.name} | {len(archs)} of {len(versions)} | {_ranges(versions, archs) or '-'} "
                   f"| {len(caps)} of {len(versions)} | {_ranges(versions, caps) or '-'} | {', '.join(layers)} |")
    return out


def table(db: Database) -> str:
    head = [
        START,
        "",
        "| package | releases with architecture data | which | releases with capability rules | which | from |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    return "\n".join(head + rows(db) + ["", END])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/coverage.md is not current")
    args = parser.parse_args()
    with open(PAGE, encoding="utf-8") as handle:
        page = handle.read()
    if START not in page or END not in page:
        print(f"{PAGE}: no coverage table markers", file=sys.stderr)
        return 2
    before, rest = page.split(START, 1)
    _, after = rest.split(END, 1)
    new = before + table(Database.load(os.path.join(ROOT, "data"))) + after
    if args.check:
        return 0 if new == page else 1
    with open(PAGE, "w", encoding="utf-8") as handle:
        handle.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
