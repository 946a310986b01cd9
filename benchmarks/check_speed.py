"""How much `compat check` costs beyond the imports it cannot avoid.

Runs, alternately and in the same session, the anchor

    python -c "import click, packaging.requirements, packaging.specifiers"

and `compat check` on the bundled working example, each as a fresh process,
and prints the median wall time and peak memory of each and their ratio.
Target: the ratio of medians is at most 1.5.

    python benchmarks/check_speed.py [--runs 30] [--stack examples/h200-vllm.toml]
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


def run_once(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak resident memory (MiB) of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(command)} exited {code}")
    return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--stack", type=Path, default=ROOT / "examples" / "h200-vllm.toml")
    args = parser.parse_args()
    check = compat_command(args.stack)
    for command in (ANCHOR, check):  # warm the file cache
        run_once(command)
    anchor_t, anchor_m, check_t, check_m = [], [], [], []
    for _ in range(args.runs):
        t, m = run_once(ANCHOR)
        anchor_t.append(t)
        anchor_m.append(m)
        t, m = run_once(check)
        check_t.append(t)
        check_m.append(m)
    a, c = statistics.median(anchor_t), statistics.median(check_t)
    print(f"runs: {args.runs} each, alternating; stack: {args.stack.name}")
    print(f"anchor  (import click, packaging): median {a * 1000:7.1f} ms   peak RSS {statistics.median(anchor_m):6.1f} MiB")
    print(f"compat check                     : median {c * 1000:7.1f} ms   peak RSS {statistics.median(check_m):6.1f} MiB")
    print(f"ratio check/anchor: time {c / a:.2f} (target <= 1.5), memory {statistics.median(check_m) / statistics.median(anchor_m):.2f}")


if __name__ == "__main__":
    main()
