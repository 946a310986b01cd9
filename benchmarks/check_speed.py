"""How much `compat check` costs beyond the imports it cannot avoid.

Runs, alternately and in the same session, the anchor

    python -c "import click, packaging.requirements, packaging.specifiers"

and `compat check` on the bundled working example, each as a fresh process,
and prints the median wall time, CPU time (user + system, as the kernel
accounts it to the process) and peak memory of each, and their ratios.
Target: the ratio of medians is at most 1.5; with --failing, which checks
the broken-upgrade example (a check that fails, explains why and searches
for the smallest changes that work), at most 2. On a shared machine the wall
time also measures the other tenants (a process waiting for a CPU is not
slower code); the CPU time does not, so the target is judged on it, and
both are printed.

    python benchmarks/check_speed.py [--runs 30] [--stack examples/h200-vllm.toml | --failing]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ANCHOR = [sys.executable, "-c", "import click, packaging.requirements, packaging.specifiers"]


def compat_command(stack: Path) -> list[str]:
    script = Path(sys.executable).with_name("compat")
    if script.exists():
        return [str(script), "check", str(stack)]
    return [sys.executable, "-m", "compat", "check", str(stack)]


def run_once(command: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident memory (MiB) of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {code}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--stack", type=Path, default=ROOT / "examples" / "h200-vllm.toml")
    parser.add_argument("--failing", action="store_true",
                        help="check examples/broken-upgrade.toml against the failing path's target (2)")
    args = parser.parse_args()
    target = 2.0 if args.failing else 1.5
    if args.failing:
        args.stack = ROOT / "examples" / "broken-upgrade.toml"
    check = compat_command(args.stack)
    for command in (ANCHOR, check):  # warm the file cache
        run_once(command)
    samples: dict[str, list[tuple[float, float, float]]] = {"anchor": [], "check": []}
    for _ in range(args.runs):
        samples["anchor"].append(run_once(ANCHOR))
        samples["check"].append(run_once(check))
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in samples.items()}
    (aw, ac, am), (cw, cc, cm) = med["anchor"], med["check"]
    from importlib.metadata import version

    print(f"runs: {args.runs} each, alternating; stack: {args.stack.name}; anchor: Python {sys.version.split()[0]}, "
          f"click {version('click')}, packaging {version('packaging')}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'':34} {'wall ms':>9} {'CPU ms':>8} {'RSS MiB':>8}")
    print(f"{'anchor (import click, packaging)':34} {aw * 1000:>9.1f} {ac * 1000:>8.1f} {am:>8.1f}")
    print(f"{'compat check':34} {cw * 1000:>9.1f} {cc * 1000:>8.1f} {cm:>8.1f}")
    print(f"ratio check/anchor: CPU {cc / ac:.2f} (target <= {target:g}), wall {cw / aw:.2f}, memory {cm / am:.2f}")

if __name__ == "__main__":
    main()
