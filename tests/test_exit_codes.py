"""Exit codes CI can trust: 1 means a conflict and nothing else."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from compat import cli

from .conftest import EXAMPLES


def run(capsys, *args):
    with pytest.raises(SystemExit) as info:
        cli.main(list(args))
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def boom(*args, **kwargs):
    raise RuntimeError("something compat did not expect\nsecond line")


def test_a_bug_exits_3_with_one_line_and_no_traceback(capsys, monkeypatch):
    monkeypatch.delenv("COMPAT_DEBUG", raising=False)
    monkeypatch.setattr("compat.engine.check.check_stack", boom)
    code, _, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"))
    assert code == 3
    assert err.count("\n") == 1 and "internal error" in err and "RuntimeError" in err and "report" in err
    assert "Traceback" not in err and "second line" not in err


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_the_traceback(capsys, monkeypatch, how):
    monkeypatch.setattr("compat.engine.check.check_stack", boom)
    args = ["check", str(EXAMPLES / "h200-vllm.toml")]
    if how == "flag":
        monkeypatch.delenv("COMPAT_DEBUG", raising=False)
        args.append("--debug")
    else:
        monkeypatch.setenv("COMPAT_DEBUG", "1")
    code, _, err = run(capsys, *args)
    assert code == 3 and "Traceback" in err and "internal error" in err


def test_an_interruption_is_not_a_conflict(capsys, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("compat.engine.check.check_stack", interrupt)
    code, _, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"))
    assert code == 130 and "interrupted" in err


@pytest.mark.parametrize(
    "args",
    [["check"], ["check", "x.toml", "--format", "xml"], ["no-such-command"], ["check", "--no-such-flag", "x.toml"]],
)
def test_usage_errors_exit_2(capsys, args):
    """One line, as every input compat cannot use, with where to read more."""
    code, _, err = run(capsys, *args)
    assert code == 2 and err.count("\n") == 1 and err.startswith("compat: error: ") and "--help says more" in err


def test_the_codes_of_the_examples(capsys):
    assert run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"))[0] == 0
    assert run(capsys, "check", str(EXAMPLES / "broken-upgrade.toml"))[0] == 1
    assert run(capsys, "check", str(EXAMPLES / "no-such-stack.toml"))[0] == 2
    assert run(capsys, "--version")[0] == 0


def test_a_closed_pipe_is_not_a_conflict():
    # the reader of the output is gone before compat writes: the conflict report meets a broken pipe
    read, write = os.pipe()
    os.close(read)
    code = "import sys; from compat import cli; cli.main(['check', sys.argv[1], '--format', 'json'])"
    try:
        writer = subprocess.run([sys.executable, "-c", code, str(EXAMPLES / "broken-upgrade.toml")],
                                stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert writer.returncode == 141, writer.stderr
    assert b"Traceback" not in writer.stderr


@pytest.mark.parametrize(("example", "expected"), [("h200-vllm.toml", 0), ("broken-upgrade.toml", 1)])
def test_the_console_script_ends_with_its_code_and_its_whole_output(example, expected):
    """`run` ends the process itself once the output is flushed: nothing of it is lost."""
    result = subprocess.run([sys.executable, "-m", "compat", "check", str(EXAMPLES / example), "--format", "json"],
                            capture_output=True, text=True)
    assert result.returncode == expected, result.stderr
    assert json.loads(result.stdout)["ok"] is (expected == 0)


def test_the_console_script_on_a_closed_pipe():
    read, write = os.pipe()
    os.close(read)
    try:
        writer = subprocess.run([sys.executable, "-m", "compat", "check", str(EXAMPLES / "h200-vllm.toml")],
                                stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert writer.returncode == 141 and b"Traceback" not in writer.stderr, writer.stderr


@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
def test_a_process_started_without_an_output_stream_ends_as_it_would_with_one(closed):
    """Python gives such a process sys.stdout (or sys.stderr) None: nothing to flush, and no traceback."""
    result = subprocess.run([sys.executable, "-m", "compat", "check", str(EXAMPLES / "h200-vllm.toml")],
                            capture_output=closed == 1, preexec_fn=lambda: os.close(closed))
    assert result.returncode == 0, result
    assert b"Traceback" not in (result.stderr or b"")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_output_that_cannot_be_written_is_not_a_success():
    """A full disk under a redirection: the report is not whole, and the code says so."""
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "compat", "check", str(EXAMPLES / "h200-vllm.toml")],
                                stdout=full, stderr=subprocess.PIPE, text=True)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("compat: error: cannot write standard output (") and result.stderr.count("\n") == 1, \
        result.stderr


@pytest.mark.parametrize("pattern", ["*", "*:*", "[a-z]*", "?*", "*-*"])
def test_an_ignore_that_would_hide_every_kind_of_finding_is_bad_input(capsys, pattern):
    code, _, err = run(capsys, "check", str(EXAMPLES / "broken-upgrade.toml"), "--ignore", pattern)
    assert code == 2 and "unrelated kinds" in err and err.count("\n") == 1


@pytest.mark.parametrize("pattern", ["requires-python:*", "*:vllm==0.32.0", "vllm.*", "r*"])
def test_an_ignore_that_names_findings_is_taken(capsys, pattern):
    import fnmatch

    code, out, _ = run(capsys, "check", str(EXAMPLES / "broken-upgrade.toml"), "--ignore", pattern, "--format", "json")
    report = json.loads(out)
    shown = [f["id"] for f in report["findings"] if not f.get("suppressed")]
    hidden = [f["id"] for f in report["findings"] if f.get("suppressed")]
    assert code in (0, 1) and code == (1 if any(f["severity"] == "error" and not f.get("suppressed")
                                                 for f in report["findings"]) else 0)
    assert not any(fnmatch.fnmatchcase(i, pattern) for i in shown)
    assert hidden and all(fnmatch.fnmatchcase(i, pattern) for i in hidden)


@pytest.mark.parametrize("command", [
    ["resolve", str(EXAMPLES / "h200-vllm.toml")],
    ["graph", str(EXAMPLES / "h200-vllm.toml")],
    ["upgrade", str(EXAMPLES / "h200-vllm.toml"), "--to", "vllm==0.33.0"],
])
def test_an_output_file_that_cannot_be_written_is_exit_2(capsys, tmp_path, command):
    """-o into a place the user cannot write: one line naming it, exit 2 (not a bug, not a conflict)."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    target = blocker / "out.txt"  # a file where a folder should be
    code, _, err = run(capsys, *command, "-o", str(target))
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("compat: error: ") and str(blocker) in err and "internal" not in err


@pytest.mark.parametrize("args", [
    ["check", "{dir}"],
    ["check", "--requirements", "{dir}"],
    ["resolve", "{dir}"],
    ["matrix", "{dir}"],
    ["check", "--db", "{file}", "{file}"],
])
def test_a_folder_where_a_file_is_expected_is_one_line_exit_2(capsys, tmp_path, args):
    """As a missing file is: `compat: error: ...` naming the path, no usage text."""
    stack = tmp_path / "stack.toml"
    stack.write_text("[packages]\nvllm = \"0.32.0\"\n")
    code, _, err = run(capsys, *[a.format(dir=tmp_path, file=stack) for a in args])
    assert code == 2 and err.count("\n") == 1 and err.startswith("compat: error: ")
    assert str(tmp_path) in err and "Usage" not in err


def test_the_console_script_and_python_m_run_the_same_entry(tmp_path):
    """`python -m compat` and the installed script both go through
    `_script.run`, which imports the command line with the collector off and
    ends the process once the output is flushed."""
    from importlib.metadata import entry_points

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "compat"]
    assert script.value == "compat._script:run"
    done = subprocess.run([sys.executable, "-m", "compat", "check", str(EXAMPLES / "h200-vllm.toml")],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and "OK:" in done.stdout


def test_output_goes_where_a_shell_redirection_would_and_creates_no_folders(capsys, tmp_path):
    stack = str(EXAMPLES / "h200-vllm.toml")
    code, out, _ = run(capsys, "resolve", stack, "-o", "-")  # standard output
    assert code == 0 and out.startswith("# Resolved by compat")
    target = tmp_path / "real.toml"
    (tmp_path / "link.toml").symlink_to(target)
    code, _, _ = run(capsys, "resolve", stack, "-o", str(tmp_path / "link.toml"))
    assert code == 0 and (tmp_path / "link.toml").is_symlink() and target.read_text().startswith("# Resolved")
    code, _, err = run(capsys, "resolve", stack, "-o", str(tmp_path / "no" / "such" / "out.toml"))
    assert code == 2 and err.count("\n") == 1 and "no such folder" in err and not (tmp_path / "no").exists()
    code, _, err = run(capsys, "resolve", stack, "-o", os.devnull)  # written to, never replaced by a file
    assert code == 0 and not os.path.isfile(os.devnull)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    code, _, _ = run(capsys, "resolve", stack, "-o", str(fifo))
    reader.join(10)
    assert code == 0 and received and received[0].startswith("# Resolved") and not fifo.is_file()


def test_an_empty_python_is_bad_input_not_the_default(capsys):
    code, _, err = run(capsys, "check", str(EXAMPLES / "h200-vllm.toml"), "--python", "")
    assert code == 2 and "--python" in err and err.count("\n") == 1


@pytest.mark.parametrize("args", [[], ["db"]])
def test_a_group_alone_shows_its_help(capsys, args):
    code, _, err = run(capsys, *args)
    assert code == 2 and "Commands:" in err and "compat: error" not in err


@pytest.mark.parametrize(("command", "expected"), [
    (["check"], 1), (["resolve"], 1), (["outdated"], 0), (["graph"], 0), (["upgrade", "--to", "vllm==0.33.0"], 0)])
def test_a_failing_stack_with_a_package_the_database_does_not_hold_is_a_verdict_not_a_crash(
        capsys, tmp_path, command, expected):
    # vLLM 0.32.0 needs Python 3.11; an internal package given as a range has no release to list
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.10"\ncuda = "13.0"\n[packages]\nvllm = "0.32.0"\n'
                     'some-internal-pkg = ">=0"\n')
    code, out, err = run(capsys, command[0], str(stack), *command[1:])
    assert code == expected, err
    assert "Traceback" not in err and "AssertionError" not in err


def test_every_error_line_is_cut_to_600_characters():
    from compat.errors import LINE_LIMIT, StackError

    error = StackError("unknown group 'x'; the file has " + ", ".join(f"g{i}" for i in range(3000)),
                       file="pyproject.toml", key="dependency-groups")
    assert len(str(error)) == LINE_LIMIT == 600 and str(error).endswith("…") and "\n" not in str(error)
    assert str(StackError("a\nb", file="f")) == "f: a\\nb"
