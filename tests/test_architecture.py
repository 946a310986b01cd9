"""The floors of docs/architecture.md, held: the import contracts of
pyproject.toml ([tool.importlinter]) pass, a forbidden import breaks them,
and the page lists every module of each floor."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import tomli_w

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
FLOORS = ("sources", "knowledge", "engine", "formats", "cli")


def lint_imports(config: Path, cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("lint-imports")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "importlinter.cli"]
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([*command, "--config", str(config), "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_the_import_contracts_hold():
    done = lint_imports(ROOT / "pyproject.toml", ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def lint_a_copy_with(tmp_path: Path, module: str, line: str) -> subprocess.CompletedProcess[str]:
    """lint-imports on a copy of the package where `module` (a path under
    compat/) ends with the import `line`, under this file's contracts."""
    package = tmp_path / "pkg"
    shutil.copytree(ROOT / "compat", package / "compat", ignore=shutil.ignore_patterns("__pycache__", "_data"))
    changed = package / "compat" / module
    changed.write_text(changed.read_text(encoding="utf-8") + f"\n{line}  # noqa\n", encoding="utf-8")
    config = tmp_path / "pyproject.toml"
    config.write_text(tomli_w.dumps({"tool": {"importlinter": tomllib.loads(
        (ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]}}), encoding="utf-8")
    return lint_imports(config, tmp_path, pythonpath=package)


def test_an_import_from_a_floor_above_breaks_them(tmp_path):
    """A copy of the package where a source module imports the engine."""
    done = lint_a_copy_with(tmp_path, "sources/pyproject.py", "from ..engine import findings as _above")
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and "compat.sources.pyproject -> compat.engine.findings" in done.stdout


def test_the_search_for_fixes_calling_back_up_into_the_check_breaks_them(tmp_path):
    """A copy where suggest.py imports check.py, which composes it: the circle the engine had."""
    done = lint_a_copy_with(tmp_path, "engine/suggest.py", "from .check import check_stack as _up")
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and "compat.engine.suggest -> compat.engine.check" in done.stdout


def test_the_page_lists_every_module_of_each_floor():
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for floor in FLOORS:
        section = re.search(rf"^### {floor}\n(.*?)(?=^#|\Z)", page, re.M | re.S)
        assert section, f"docs/architecture.md has no section for {floor}"
        listed = set(re.findall(r"`([a-z_]+)`", section.group(1)))
        modules = {p.stem for p in (ROOT / "compat" / floor).glob("*.py") if p.stem != "__init__"}
        assert listed == modules, f"{floor}: the page lists {sorted(listed - modules)} that the code lacks, " \
                                  f"and lacks {sorted(modules - listed)}"
