"""How `compat check` grows with the database.

Three series, each timed in the same run against its own anchor (the
bundled database):

1. unrelated growth: N extra components (a snapshot of 40 releases with 60
   Requires-Dist lines each, and a constraints file of 10 rules), none of
   which the stack uses;
2. related growth: the snapshot of a package the stack does use
   (transformers) made K times longer, with distinct releases;
3. the closure grows: every snapshot of an untracked dependency (those
   `db sync` follows from the tracked packages) made K times longer, checked
   with the example stack pinned throughout (every package its resolution
   chooses), as a lock file pins it.

Each point is the median CPU time (user + system) and peak memory of fresh
`compat check` processes on examples/h200-vllm.toml with --db pointing at a
generated copy.

    python benchmarks/check_scaling.py [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STACK = ROOT / "examples" / "h200-vllm.toml"


def compat() -> list[str]:
    script = Path(sys.executable).with_name("compat")
    return [str(script)] if script.exists() else [sys.executable, "-m", "compat"]


def write_graph(metadata_dir: str) -> None:
    from compat.knowledge.graph import write_graph as write

    write(metadata_dir)


def bundled() -> Path:
    import compat as package
    from compat.knowledge.paths import default_data_dir

    del package
    return Path(default_data_dir())


# Runs each command and reports its CPU time and peak memory. A process's peak
# memory as the kernel reports it counts the memory of the process it was
# started from (Linux keeps the larger), and this script grows as it writes
# the databases: the checks are started from this small process instead.
LAUNCHER = """
import json, os, subprocess, sys
for line in sys.stdin:
    process = subprocess.Popen(json.loads(line), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    print(json.dumps([usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status)]), flush=True)
"""


class Launcher:
    """A small process that starts the checks (see LAUNCHER)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)

    def run(self, command: list[str]) -> tuple[float, float, int]:
        """CPU seconds, peak RSS (MiB) and exit code of one run of `command`."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        cpu, rss, code = json.loads(self.process.stdout.readline())
        return cpu, rss / 1024, code


def measure(launcher: Launcher, db: Path, runs: int, stack: Path = STACK) -> tuple[float, float]:
    """Median CPU seconds (user + system: on a shared machine, wall time also
    measures the other tenants) and median peak RSS (MiB) of `runs` checks."""
    times, memory = [], []
    command = [*compat(), "check", str(stack), "--db", str(db)]
    for _ in range(runs):
        cpu, rss, code = launcher.run(command)
        times.append(cpu)
        memory.append(rss)
        if code != 0:
            raise SystemExit(f"compat check failed on {db}")
    return statistics.median(times), statistics.median(memory)


def add_components(db: Path, count: int) -> None:
    requires = [f"dep{i}>=1.{i}" for i in range(50)] + [f'extra{i}>=1; extra == "x{i}"' for i in range(10)]
    for n in range(count):
        name = f"synthetic-{n}"
        lines = [json.dumps({"schema": 1, "name": name, "index": "https://example.invalid/simple/", "taken": "2026-12-01"})]
        for r in range(40):
            lines.append(json.dumps({"version": f"1.{r}.0", "uploaded": "2026-06-01", "requires_python": ">=3.10", "requires_dist": requires}))
        (db / "metadata" / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
        rules = [f'schema = 1\n\n[component]\nname = "{name}"\nkind = "package"\n']
        for r in range(10):
            rules.append(
                f'[[rule]]\nid = "{name}.rule-{r}"\nkind = "note"\nreleases = ">=1.{r}"\n'
                f'when = {{ compute_capability = ">=8.{r % 10}" }}\nmessage = "synthetic"\nsource = "vllm-0.32.0"\n'
            )
        (db / "constraints" / f"{name}.toml").write_text("\n".join(rules))


def grow_snapshot(db: Path, package: str, factor: int, epochs: bool = False) -> int:
    """Repeat the snapshot's releases `factor` times as distinct versions:
    ``.postK`` (newer releases a range may choose) or, with `epochs`,
    ``K!version`` (valid for any version, even one with a .post)."""
    from compat.knowledge.snapshot import line_offsets

    path = db / "metadata" / f"{package}.jsonl"
    header, *lines = path.read_text().splitlines()
    out = []
    for k in range(factor):
        for line in lines:
            entry = json.loads(line)
            if k:
                entry["version"] = f"{k}!{entry['version']}" if epochs else f"{entry['version']}.post{k}"
            out.append(json.dumps(entry))
    data = json.loads(header)
    if "lines" in data:  # as db sync writes it: the header locates every line
        data["lines"] = line_offsets(out)
    path.write_text("\n".join([json.dumps(data), *out]) + "\n")
    return len(out)


def pinned_stack(db: Path, folder: Path) -> Path:
    """The example stack with every package its resolution chooses pinned."""
    out = folder / "pinned.toml"
    subprocess.run([*compat(), "resolve", str(STACK), "--db", str(db), "-o", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def untracked(db: Path) -> list[str]:
    """The packages whose snapshots db sync took only because tracked releases need them."""
    names = []
    for path in (db / "metadata").glob("*.jsonl"):
        if path.name.endswith(".wheels.jsonl"):
            continue
        with path.open(encoding="utf-8") as handle:
            if not json.loads(handle.readline()).get("tracked", True):
                names.append(path.name[: -len(".jsonl")])
    return names


def releases_of(db: Path, names: list[str]) -> int:
    return sum(sum(1 for _ in (db / "metadata" / f"{n}.jsonl").open(encoding="utf-8")) - 1 for n in names)


def grow_closure(db: Path, factor: int) -> int:
    """Make every untracked snapshot `factor` times longer; returns the releases they then hold."""
    return sum(grow_snapshot(db, name, factor, epochs=True) for name in untracked(db))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    launcher = Launcher()  # first, while this process is small
    source = bundled()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        shutil.copytree(source, base)
        t0, m0 = measure(launcher, base, args.runs)
        components = [p for p in (base / "constraints").glob("*.toml") if not p.name.startswith("_")]
        snapshots = [p for p in (base / "metadata").glob("*.jsonl") if not p.name.endswith(".wheels.jsonl")]
        print(f"anchor: bundled database, {len(components)} curated components, "
              f"{len(snapshots)} snapshots: {t0 * 1000:.1f} ms, {m0:.1f} MiB")
        print("\n1. components the stack does not use")
        print(f"{'extra components':>18} {'CPU ms':>9} {'ratio':>6} {'RSS MiB':>8} {'ratio':>6}")
        for count in (100, 1000, 5000):
            db = Path(tmp) / f"n{count}"
            shutil.copytree(base, db)
            add_components(db, count)
            write_graph(str(db / "metadata"))  # as db sync would: the new snapshots join the names graph
            t, m = measure(launcher, db, args.runs)
            print(f"{count:>18} {t * 1000:>9.1f} {t / t0:>6.2f} {m:>8.1f} {m / m0:>6.2f}")
            shutil.rmtree(db)
        print("\n2. a longer snapshot of a package the stack uses (transformers)")
        print(f"{'releases':>18} {'CPU ms':>9} {'ratio':>6} {'RSS MiB':>8} {'ratio':>6}")
        for factor in (2, 5, 20):
            db = Path(tmp) / f"k{factor}"
            shutil.copytree(base, db)
            releases = grow_snapshot(db, "transformers", factor)
            t, m = measure(launcher, db, args.runs)
            print(f"{releases:>18} {t * 1000:>9.1f} {t / t0:>6.2f} {m:>8.1f} {m / m0:>6.2f}")
            shutil.rmtree(db)
        print("\n3. the closure grows, the stack pinned throughout")
        pinned = pinned_stack(base, Path(tmp))
        p0, pm0 = measure(launcher, base, args.runs, pinned)
        print(f"{'untracked releases':>18} {'CPU ms':>9} {'ratio':>6} {'RSS MiB':>8} {'ratio':>6}")
        print(f"{releases_of(base, untracked(base)):>18} {p0 * 1000:>9.1f} {1:>6.2f} {pm0:>8.1f} {1:>6.2f}")
        for factor in (2, 5, 10):
            db = Path(tmp) / f"c{factor}"
            shutil.copytree(base, db)
            releases = grow_closure(db, factor)
            t, m = measure(launcher, db, args.runs, pinned)
            print(f"{releases:>18} {t * 1000:>9.1f} {t / p0:>6.2f} {m:>8.1f} {m / pm0:>6.2f}")
            shutil.rmtree(db)


if __name__ == "__main__":
    main()
