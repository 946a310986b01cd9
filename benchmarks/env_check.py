"""How long `compat check --env` takes next to `pip check`, on the same environment.

Builds, in a temporary folder, a virtual environment of a vLLM deployment:
the closure that `compat resolve` pins for vLLM 0.32.0 on an H200 (about
two hundred distributions, at least 150), each installed from a stub wheel
whose METADATA carries the release's real Requires-Python and Requires-Dist
(those on the closure's packages). pip is made importable there (a link to
this interpreter's pip, with no metadata: it is no distribution of the
environment). Then runs, alternately and each as a fresh process,

    VENV/bin/python -m pip check
    compat check STACK --env --python VENV/bin/python

where STACK gives the machine ([system] cuda, [hardware] gpu), so that the
check judges builds and rules too. Prints the median wall time and CPU time
(user + system, the processes' children included) of each and their ratio.
Target: compat is faster (ratio below 1). On a shared machine the wall time
also measures the other tenants; the CPU time does not.

    python benchmarks/env_check.py [--runs 15] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.stubs import kept_lines, write_wheel  # noqa: E402  (the wheels the tests build)

PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"
STACK = """[system]
cuda = "13.0"
driver = "580.95.05"

[hardware]
gpu = "H200"
"""


def closure() -> dict[str, object]:
    """name -> release of every package compat pins for vLLM 0.32.0 on this Python."""
    from compat import Database, load_stack
    from compat.engine.resolver import resolve

    db = Database.load()
    stack = load_stack({"system": {"python": PYTHON, "cuda": "13.0"}, "hardware": {"gpu": "H200"},
                        "packages": {"vllm": "0.32.0"}}, db)
    resolution = resolve(stack, db, closure=True)
    if not resolution.ok:
        raise SystemExit("the vLLM stack does not resolve on this Python; the benchmark needs it to")
    releases = {}
    for name, candidate in resolution.versions.items():
        if name.startswith("__") or candidate.release is None:
            continue
        component = db.component(name)
        if component is not None and component.kind == "package":
            releases[name] = candidate.release
    return releases


def build(folder: Path) -> Path:
    """The environment, in `folder`; returns its interpreter."""
    uv = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if uv is None:
        raise SystemExit("uv is needed to build the environment (pip install uv)")
    releases = closure()
    if len(releases) < 150:
        raise SystemExit(f"the closure has {len(releases)} packages; the benchmark needs at least 150")
    wheels = folder / "wheels"
    wheels.mkdir(parents=True)
    names = set(releases)
    for name, release in sorted(releases.items()):
        python = str(release.requires_python) if release.requires_python else None  # type: ignore[attr-defined]
        write_wheel(wheels, name, str(release.version), python, kept_lines(release, names))  # type: ignore[attr-defined]
    venv = folder / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    interpreter = venv / "bin" / "python"
    subprocess.run([uv, "pip", "install", "-q", "--python", str(interpreter), "--offline", "--no-index", "--no-deps",
                    "--find-links", str(wheels), *sorted(releases)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    import pip

    os.symlink(Path(pip.__file__).parent, site / "pip")
    print(f"environment: {len(releases)} distributions; anchor: pip {pip.__version__} (pip check), "
          f"Python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.2f}")
    return interpreter


# Both run as installed software does: with bytecode caches (an install compiles them; the
# first, warming run writes those a source checkout lacks).
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_once(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (with the children it waited for) and the exit status of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    code = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENVIRONMENT,
                          check=False).returncode
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code


def compat_command(stack: Path, interpreter: Path) -> list[str]:
    script = Path(sys.executable).with_name("compat")
    head = [str(script)] if script.exists() else [sys.executable, "-m", "compat"]
    return [*head, "check", str(stack), "--env", "--python", str(interpreter)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--keep", type=Path, help="build the environment here and keep it")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="compat-env-check-"))
    try:
        interpreter = build(folder)
        stack = folder / "stack.toml"
        stack.write_text(STACK, encoding="utf-8")
        commands = {"pip check": [str(interpreter), "-m", "pip", "check"],
                    "compat check --env": compat_command(stack, interpreter)}
        for name, command in commands.items():  # warm the file cache; both must pass
            _, _, code = run_once(command)
            if code != 0:
                raise SystemExit(f"{name} exited {code} on the environment: {' '.join(command)}")
        samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, command in commands.items():
                samples[name].append(run_once(command))
        medians = {name: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
                   for name, runs in samples.items()}
        for name, (wall, cpu) in medians.items():
            print(f"{name:20} wall {wall * 1000:7.0f} ms   cpu {cpu * 1000:7.0f} ms   ({args.runs} runs)")
        (pip_wall, pip_cpu), (compat_wall, compat_cpu) = medians["pip check"], medians["compat check --env"]
        print(f"ratio compat / pip: wall {compat_wall / pip_wall:.2f}, cpu {compat_cpu / pip_cpu:.2f} "
              "(target: below 1)")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
