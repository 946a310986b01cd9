"""Bad --to values for the machine are input errors, not failures of compat."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from compat.cli import cli

from .conftest import EXAMPLES


@pytest.mark.parametrize("target", ["python==3", "python==2.7", "python==3.12rc1"])
def test_upgrade_to_a_python_that_is_no_cpython_3_version_is_exit_2(target: str) -> None:
    result = CliRunner().invoke(cli, ["upgrade", str(EXAMPLES / "h200-vllm.toml"), "--to", target])
    assert result.exit_code == 2, result.output
    assert "--to" in result.output and target in result.output
    assert "internal error" not in result.output
    assert len(result.output.strip().splitlines()) == 1
