"""compat against pip and uv on the same resolution problems, growing in size.

For each size N (packages in the problem's universe), a synthetic index is
generated: N packages, each with 4 releases; each release needs the next
package and two later ones at some minimum version, so all N end up in the
solution,
and the root's newer releases need an `anchor` release that the problem pins
away, so that every resolver has to step back once. The same data is written
as a compat database (JSON Lines snapshots) and as stub wheels for pip and uv.

(Problems that make a resolvelib-based resolver backtrack exponentially,
which uv's PubGrub solves at once, are in tests/test_differential.py for
correctness; pip and compat both give up on the worst of them at their round
budget, so they are no fair measure of speed.)

Each tool runs as a fresh process, as a user would run it, in the same
session; each size prints the median time and the ratios compat/pip and
compat/uv (below 1: compat is faster), and the median peak memory of each.
uv is given this interpreter (`--python`), so that its search for one is not
counted; the versions of the anchors are printed first.

    python benchmarks/resolve.py [--sizes 10,100,500,2000] [--runs 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

VERSIONS = 4


def universe(size: int, seed: int = 7) -> dict[str, dict[str, list[str]]]:
    rng = random.Random(seed)
    names = [f"pkg-{i:04d}" for i in range(size)]
    data: dict[str, dict[str, list[str]]] = {}
    for i, name in enumerate(names):
        releases = {}
        later = names[i + 1:]
        for v in range(1, VERSIONS + 1):
            # the next package (so that all N end up in the solution), and two more at random
            picked = later[:1] + rng.sample(later[1:], min(2, len(later) - 1)) if later else []
            needs = [f"{dep}>={rng.randint(1, VERSIONS)}.0" for dep in picked]
            if i == 0 and v > 1:
                needs.append(f"anchor>={v}.0")  # pinned away: the root must step back to 1.0
            releases[f"{v}.0"] = needs
        data[name] = releases
    data["anchor"] = {f"{v}.0": [] for v in range(1, VERSIONS + 1)}
    return data


def write_database(data: dict, root: Path) -> None:
    (root / "constraints").mkdir(parents=True)
    (root / "constraints" / "_sources.toml").write_text("schema = 1\n")
    (root / "metadata").mkdir()
    for name, releases in data.items():
        lines = [json.dumps({"schema": 1, "name": name, "index": "synthetic", "taken": "2026-12-02"})]
        lines += [json.dumps({"version": v, "requires_dist": r}) for v, r in releases.items()]
        (root / "metadata" / f"{name}.jsonl").write_text("\n".join(lines) + "\n")


def write_wheels(data: dict, folder: Path) -> None:
    folder.mkdir(parents=True)
    for name, releases in data.items():
        for version, requires in releases.items():
            dist = f"{name.replace('-', '_')}-{version}"
            metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
            metadata += [f"Requires-Dist: {r}" for r in requires]
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w") as wheel:
                wheel.writestr(f"{dist}.dist-info/METADATA", "\n".join(metadata) + "\n\n")
                wheel.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
                wheel.writestr(f"{dist}.dist-info/RECORD", "")
            (folder / f"{dist}-py3-none-any.whl").write_bytes(buffer.getvalue())


def tool(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    return str(path) if path.exists() else (shutil.which(name) or name)


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int, float]:
    """Wall seconds, exit code and peak resident memory (MiB) of one run."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


def version_of(command: list[str]) -> str:
    run = subprocess.run(command, capture_output=True, text=True)
    return (run.stdout or run.stderr).strip().splitlines()[0] if run.returncode == 0 else "not found"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,500,2000")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, UV_NO_CONFIG="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    print(f"anchors: {version_of([sys.executable, '-m', 'pip', '--version']).split(' from ')[0]}; "
          f"{version_of([tool('uv'), '--version'])}; Python {sys.version.split()[0]}")
    print(f"{'packages':>9} {'compat s':>9} {'pip s':>9} {'uv s':>9} {'compat/pip':>11} {'compat/uv':>10} "
          f"{'MiB compat/pip/uv':>19}  verdicts")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            data = universe(size)
            write_database(data, Path(tmp) / "db")
            write_wheels(data, Path(tmp) / "wheels")
            stack = Path(tmp) / "stack.toml"
            stack.write_text('[system]\npython = "%d.%d"\n[packages]\npkg-0000 = ">=1"\nanchor = "1.0"\n' % sys.version_info[:2])
            requirements = Path(tmp) / "requirements.in"
            requirements.write_text("pkg-0000>=1\nanchor==1.0\n")
            commands = {
                "compat": [tool("compat"), "resolve", str(stack), "--db", str(Path(tmp) / "db"), "--max-rounds", "1000000"],
                "pip": [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--find-links",
                        str(Path(tmp) / "wheels"), "--ignore-installed", "--quiet", "--report", os.devnull, "-r", str(requirements)],
                "uv": [tool("uv"), "pip", "compile", "--no-index", "--find-links", str(Path(tmp) / "wheels"), "--quiet",
                       "--python", sys.executable, "--cache-dir", str(Path(tmp) / "uv-cache"), str(requirements)],
            }
            times: dict[str, list[float]] = {k: [] for k in commands}
            memory: dict[str, list[float]] = {k: [] for k in commands}
            codes: dict[str, int] = {}
            for _ in range(args.runs):
                for name, command in commands.items():
                    elapsed, code, peak = timed(command, env)
                    times[name].append(elapsed)
                    memory[name].append(peak)
                    codes[name] = code
            median = {k: statistics.median(v) for k, v in times.items()}
            peaks = "/".join(f"{statistics.median(memory[k]):.0f}" for k in commands)
            verdicts = " ".join(f"{k}={'ok' if c == 0 else f'exit {c}'}" for k, c in codes.items())
            print(f"{size:>9} {median['compat']:>9.2f} {median['pip']:>9.2f} {median['uv']:>9.2f} "
                  f"{median['compat'] / median['pip']:>11.2f} {median['compat'] / median['uv']:>10.2f} "
                  f"{peaks:>19}  {verdicts}")


if __name__ == "__main__":
    main()
