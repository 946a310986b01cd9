"""What `compat.check` costs a script that checks stack after stack in one process.

A deployment script, a matrix of its own or a test run calls `compat.check`
many times on one loaded database. This runs, for each stack file given
(default: the bundled examples that are stacks), in the same session:

- the anchor: `compat check STACK` as a fresh process (what CI pays per
  stack), the median of `--runs` runs;
- the first `compat.check` of the stack in this process, after the database
  and the other stacks were already used (what a new stack costs a script);
- the same call again, the median of `--runs` calls (what a script pays for a
  stack it checked before).

Times are CPU seconds (user + system: on a shared machine, wall time also
measures the other tenants). The ratio in-process / fresh process says how
much of a check a loaded process saves; each call's report is compared with
the first one's (the same findings), so a faster path that answers
differently shows as a failure here.

    python benchmarks/library_loop.py [--runs 15] [STACK ...]
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
STACKS = ("h200-vllm.toml", "h200-vllm-0.33.toml", "vllm-0.31-py310.toml", "broken-upgrade.toml",
          "transformers-too-new.toml", "ltx2-fp8-a100.toml")


def fresh_cpu(stack: Path) -> float:
    """CPU seconds of `compat check STACK` in a process of its own."""
    script = Path(sys.executable).with_name("compat")
    command = [str(script), "check", str(stack)] if script.exists() else [sys.executable, "-m", "compat", "check",
                                                                          str(stack)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed")
    return usage.ru_utime + usage.ru_stime


def in_process_cpu(check, stack: Path) -> tuple[float, tuple[tuple[str, str], ...]]:
    start = time.process_time()
    report = check(str(stack))
    return time.process_time() - start, tuple((f.id, f.severity) for f in report.findings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("stacks", nargs="*", type=Path)
    args = parser.parse_args()
    stacks = args.stacks or [ROOT / "examples" / name for name in STACKS]
    import compat

    compat.check(str(stacks[0]))  # the database loaded, the imports done: a script's state after its first check
    print(f"runs: {args.runs}; Python {sys.version.split()[0]}, compat {compat.__version__}; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'stack':28} {'fresh process':>14} {'first call':>11} {'again':>8} {'again/fresh':>12}")
    totals = [0.0, 0.0, 0.0]
    for stack in stacks:
        fresh = statistics.median(fresh_cpu(stack) for _ in range(args.runs))
        first, findings = in_process_cpu(compat.check, stack)
        again = []
        for _ in range(args.runs):
            cpu, same = in_process_cpu(compat.check, stack)
            if same != findings:
                raise SystemExit(f"{stack.name}: a repeated check found {same}, the first {findings}")
            again.append(cpu)
        median = statistics.median(again)
        totals = [totals[0] + fresh, totals[1] + first, totals[2] + median]
        print(f"{stack.name:28} {fresh * 1000:>11.1f} ms {first * 1000:>8.1f} ms {median * 1000:>5.1f} ms "
              f"{median / fresh:>12.2f}")
    print(f"{'all':28} {totals[0] * 1000:>11.1f} ms {totals[1] * 1000:>8.1f} ms {totals[2] * 1000:>5.1f} ms "
          f"{totals[2] / totals[0]:>12.2f}")


if __name__ == "__main__":
    main()
