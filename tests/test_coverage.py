"""docs/coverage.md's table of architecture and capability data is the one
the database gives (tools/coverage.py writes it)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_coverage_table_is_current():
    run = subprocess.run([sys.executable, str(ROOT / "tools" / "coverage.py"), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, "docs/coverage.md is out of date: run python tools/coverage.py\n" + run.stderr


def test_runs_of_covered_releases():
    spec = importlib.util.spec_from_file_location("coverage_table", ROOT / "tools" / "coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _ranges = module._ranges
    assert _ranges([1, 2, 3, 4, 5, 6], {1, 2, 4, 6}) == "1-2, 4, 6"
    assert _ranges([1, 2], set()) == ""
