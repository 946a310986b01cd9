"""Bad input a user can give the readers: each is one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from compat.cli import cli

from .conftest import EXAMPLES

STACK = str(EXAMPLES / "h200-vllm.toml")
HUGE = "0." + "9" * 5000  # more digits than Python turns into an int
LOCK = "lock-version = '1.0'\ncreated-by = 'x'\npackages = []\n"


def refused(tmp_path: Path, *args: str) -> str:
    result = CliRunner().invoke(cli, ["check", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_requirement_of_thousands_of_digits_is_refused(tmp_path):
    path = tmp_path / "requirements.txt"
    path.write_text(f"vllm=={HUGE}\n", encoding="utf-8")
    line = refused(tmp_path, STACK, "-r", str(path))
    assert "requirements.txt:1" in line and "more than 256 characters" in line


def test_a_pyproject_requirement_of_thousands_of_digits_is_refused(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text(f"[project]\nname = 'x'\ndependencies = ['vllm=={HUGE}']\n", encoding="utf-8")
    line = refused(tmp_path, STACK, "--pyproject", str(path))
    assert "[project] dependencies" in line and "more than 256 characters" in line


@pytest.mark.parametrize("entry", ["vllm = '!!'", "'v v' = '1'", f"vllm = '{HUGE}'", "vllm = '1; os_name == \"nt\"'"])
def test_a_lock_application_that_is_no_name_and_version_is_refused(tmp_path, entry):
    path = tmp_path / "pylock.toml"
    path.write_text(LOCK + f"[tool.compat.applications]\n{entry}\n", encoding="utf-8")
    line = refused(tmp_path, STACK, "--pylock", str(path))
    # the line of the entry (of the table, for a line too long to scan)
    assert ("pylock.toml:4: [tool.compat.applications]" if entry.endswith("9'") else
            "pylock.toml:5: [tool.compat.applications]") in line


def test_a_lock_application_is_read_back(tmp_path):
    path = tmp_path / "pylock.toml"
    path.write_text(LOCK + "[tool.compat.applications]\ncomfyui = '0.3.0'\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["check", STACK, "--pylock", str(path)])
    assert result.exit_code == 0, result.output


def test_a_lock_marker_error_is_one_line(tmp_path):
    path = tmp_path / "pylock.toml"
    path.write_text(LOCK.replace("packages = []\n", "") + "[[packages]]\nname = 'vllm'\nversion = '0.32.0'\n"
                    "marker = '>>'\n", encoding="utf-8")
    line = refused(tmp_path, STACK, "--pylock", str(path))
    assert "pylock.toml:3: packages[0].marker" in line


@pytest.mark.parametrize("python", ["3.99999999999999999999999999", "3.100"])
def test_a_python_minor_past_99_is_refused_not_walked(tmp_path, python):
    path = tmp_path / "stack.toml"
    path.write_text((EXAMPLES / "h200-vllm.toml").read_text(encoding="utf-8")
                    .replace('python = "3.12"', f'python = "{python}"'), encoding="utf-8")
    line = refused(tmp_path, str(path))
    assert "[system] python" in line
