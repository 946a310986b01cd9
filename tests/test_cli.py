"""The command line, through click's runner and as the installed script."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from compat.cli import cli

from .conftest import EXAMPLES, copy_database, installed
from .test_db_readers import small_database


@pytest.fixture
def run():
    def invoke(*args: str, env: dict | None = None):
        return CliRunner().invoke(cli, [str(a) for a in args], env=env)

    return invoke


def test_check_working_stack_exits_0(run):
    result = run("check", EXAMPLES / "h200-vllm.toml")
    assert result.exit_code == 0, result.output
    assert "OK" in result.output


def test_text_report_names_the_glibc_and_the_build_index(run, write_stack):
    path = write_stack("""
        [system]
        python = "3.12"
        cuda = "12.8"
        glibc = "2.35"
        index = "cu128"
        [hardware]
        gpu = "H100"
        [packages]
        torch = "2.10.0"
    """)
    result = run("check", path)
    assert result.exit_code == 0, result.output
    assert "linux-x86_64 · glibc 2.35 · cu128 builds · CUDA 12.8" in result.output


def test_check_broken_stack_exits_1_and_lists_each_error(run):
    result = run("check", EXAMPLES / "broken-upgrade.toml")
    assert result.exit_code == 1
    assert "Errors (3)" in result.output
    assert "requires:vllm==0.32.0:transformers" in result.output


def test_text_output_groups_by_severity(run):
    out = run("check", EXAMPLES / "vllm-omni-fa3-fp8.toml").output
    assert out.index("Warnings (") < out.index("Notes (")


def test_json_output_is_one_object(run):
    result = run("check", EXAMPLES / "broken-upgrade.toml", "--format", "json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["ok"] is False
    assert data["summary"]["errors"] == 3
    assert len(data["findings"]) == sum(data["summary"][k] for k in ("errors", "warnings", "infos"))


def test_strict_flag_fails_on_warnings(run):
    path = EXAMPLES / "vllm-omni-fa3-fp8.toml"
    assert run("check", path).exit_code == 0
    assert run("check", path, "--strict").exit_code == 1


def test_ignore_flag_suppresses(run):
    path = EXAMPLES / "ltx2-fp8-a100.toml"
    result = run("check", path, "--ignore", "ltx-2.fp8-scaled-mm.compute-capability", "--format", "json")
    assert result.exit_code == 0
    assert json.loads(result.output)["findings"][0]["suppressed"] is True


def test_missing_file_exits_2_with_one_line(run, tmp_path):
    result = run("check", tmp_path / "missing.toml")
    assert result.exit_code == 2
    assert "missing.toml" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[system]\npython = 3.10\n', "quote it"),
        ('[system]\npython = "3.12\n', "invalid TOML"),
        ('[system]\npython = "3.12"\n[packages]\nvllmm = "0.32.0"\n', "did you mean 'vllm'"),
        ('[system]\npython = "3.12"\n[hardware]\ngpu = "H201"\n', "unknown GPU"),
        ('[system]\npython = "3.12"\n[hardware]\ngpu = "A100"\ncompute_capability = "9.0"\n', "disagrees"),
        ('[stack]\nschema = 2\n[system]\npython = "3.12"\n', "schema"),
        ('[system]\npython = "3.12"\n[sytem]\n', "did you mean 'system'"),
    ],
)
def test_bad_input_exits_2_with_one_line_naming_the_file(run, tmp_path, text, expected):
    path = tmp_path / "stack.toml"
    path.write_text(text)
    result = run("check", path)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert str(path) in lines[0] and expected in lines[0]
    assert "Traceback" not in result.output


def test_bad_input_writes_nothing(run, tmp_path):
    path = tmp_path / "stack.toml"
    path.write_text('[system]\npython = 3.10\n')
    run("check", path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stack.toml"]
    assert path.read_text() == '[system]\npython = 3.10\n'


def test_no_color_when_not_a_terminal(run):
    assert "\x1b[" not in run("check", EXAMPLES / "broken-upgrade.toml").output


def test_no_color_env_wins_over_force(run):
    out = run("check", EXAMPLES / "broken-upgrade.toml", env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).output
    assert "\x1b[" not in out


def test_force_color(run):
    assert "\x1b[" in run("check", EXAMPLES / "broken-upgrade.toml", env={"FORCE_COLOR": "1"}).output


def test_db_lint_passes_on_a_clean_database(run, tmp_path):
    # the bundled database's own lint is test_database.py's (and .ci/run's): here the command, on a small one
    result = run("db", "lint", "--db", small_database(tmp_path / "data"))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: ") and "components" in result.output


def test_db_lint_fails_on_a_broken_database(run, tmp_path):
    copy_database(tmp_path / "data")
    rules = tmp_path / "data" / "constraints" / "ltx-2.toml"
    rules.write_text(rules.read_text().replace('source = "ltx-2-1.5.0"\n\n[[rule]]', 'source = "no-such-source"\n\n[[rule]]', 1))
    result = run("db", "lint", "--db", tmp_path / "data")
    assert result.exit_code == 1
    assert "no-such-source" in result.output


def test_unknown_command_exits_2(run):
    assert run("chekc").exit_code == 2


def test_installed_console_script_runs_from_another_folder(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COMPAT_DB")}
    ok = subprocess.run(
        [installed("compat"), "check", str(EXAMPLES / "h200-vllm.toml")], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert ok.returncode == 0, ok.stderr
    broken = subprocess.run(
        [installed("compat"), "check", str(EXAMPLES / "broken-upgrade.toml"), "--format", "json"],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )
    assert broken.returncode == 1
    assert json.loads(broken.stdout)["ok"] is False
    bad = subprocess.run([installed("compat"), "check", "nope.toml"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


def test_import_compat_does_not_import_networkx():
    code = "import sys, compat; compat.check({'system': {'python': '3.12'}}); print('networkx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_db_show_component(run):
    result = run("db", "show", "ltx-2")
    assert result.exit_code == 0
    assert "ltx-2.fp8-scaled-mm.compute-capability" in result.output
    assert "Releases (1)" in result.output and "--quantization" in result.output


def test_db_show_release_lists_both_layers(run):
    result = run("db", "show", "flashinfer-python==0.7.2")
    assert result.exit_code == 0
    assert "requires nvidia-cudnn-frontend>=1.31.0" in result.output
    assert "nvidia-cudnn-frontend[cutedsl]>=1.31.0 [curated:" in result.output
    assert "flashinfer.0.7.2rc5-is-pre-release" not in result.output  # a rule of another release


def test_db_show_json(run):
    data = json.loads(run("db", "show", "vllm==0.32.0", "--format", "json").output)
    assert data["release"]["requires_python"] == ">=3.11,<3.15"
    assert any(r["requirement"].startswith("transformers") for r in data["release"]["requires"])


@pytest.mark.parametrize("version", ["abc", "9" * 5000])
def test_db_show_of_no_version_is_one_line_exit_2(run, version):
    result = run("db", "show", f"vllm=={version}")
    assert result.exit_code == 2 and result.output.count("\n") == 1 and "is not a version" in result.output
    assert len(result.output) < 200


def test_db_show_unknown_release_is_bad_input(run):
    result = run("db", "show", "vllm==9.9.9")
    assert result.exit_code == 2 and "vllm 9.9.9 is not in the database; did you mean" in result.output


def test_db_show_unknown_component_suggests(run):
    result = run("db", "show", "vllmm")
    assert result.exit_code == 2 and "did you mean 'vllm'" in result.output


def test_every_command_is_listed_where_the_group_finds_it():
    """The group imports a command's module only when the command is asked
    for: a command its map does not name would be missing from --help."""
    import importlib
    import pkgutil

    import compat.cli as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"compat.cli.{module.name}")
    assert set(cli.commands) == set(type(cli).modules)
    result = CliRunner().invoke(cli, ["--help"])
    assert all(name in result.output for name in type(cli).modules)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_db_sync_seconds_are_positive_and_finite(run, value):
    for option in ("--timeout", "--deadline"):
        result = run("db", "sync", option, value, "--package", "idna", "--index-url", "http://127.0.0.1:9/simple/")
        said = result.output
        assert result.exit_code == 2 and option in said and ("finite number" in said or "not in the range" in said)


def test_a_check_run_in_the_caller_s_process_gives_the_collector_back_as_it_found_it():
    """compat check turns the cyclic collector off while it runs; called from
    Python (a process that goes on), it leaves it as it was."""
    import gc

    from compat.cli import main

    assert gc.isenabled()
    for args in (["check", str(EXAMPLES / "h200-vllm.toml")], ["check", str(EXAMPLES / "broken-upgrade.toml")],
                 ["check", "no-such-file.toml"]):
        with pytest.raises(SystemExit):
            main(args)
        assert gc.isenabled(), args
    gc.disable()
    try:
        with pytest.raises(SystemExit):
            main(["check", str(EXAMPLES / "h200-vllm.toml")])
        assert not gc.isenabled()
    finally:
        gc.enable()
