"""What users of pip, uv and pip-audit bring with them: their flag names
(-r/--requirement, -f, -o, --color, --debug), and the usual mistakes of a
stack file (an import name under [packages], a key in the wrong table, an
unquoted version, an index label for a version, a Windows path), each met
with the line to write instead; and SARIF locations relative to the
repository, as code scanning wants them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import click
import jsonschema
import pytest
from click.testing import CliRunner

import compat
from compat import cli
from compat._names import import_names
from compat.formats import sarif

from .conftest import EXAMPLES, ROOT
from .test_matrix import SMALL

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
ANSI = "\x1b["
STACK = '[system]\npython = "3.12"\ncuda = "13.0"\n'


def run(capsys, *args):
    """`compat ARGS` as the installed command runs it: exit code, standard output, standard error."""
    with pytest.raises(SystemExit) as info:
        cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def invoke(*args, env: dict | None = None):
    return CliRunner().invoke(cli.cli, [str(a) for a in args], env=env)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A working folder with files written from dedented text."""
    monkeypatch.chdir(tmp_path)

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write


def _commands(group: click.Group, ctx: click.Context, path: str = "compat"):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            yield from _commands(command, ctx, f"{path} {name}")
        else:
            yield f"{path} {name}", command


def _options(command: click.Command) -> dict[str, click.Option]:
    return {opt: p for p in command.params if isinstance(p, click.Option) for opt in p.opts}


# -- SARIF ---------------------------------------------------------------------


def _sarif_of(stack: Path) -> dict:
    log = json.loads(sarif.render(compat.check(str(stack))))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def _uris(log: dict) -> set[tuple[str, str | None]]:
    return {(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
             r["locations"][0]["physicalLocation"]["artifactLocation"].get("uriBaseId"))
            for r in log["runs"][0]["results"] if r["locations"]}


def test_sarif_names_a_file_of_the_repository_relative_to_its_root(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "deploy" / "prod stacks").mkdir(parents=True)
    stack = repo / "deploy" / "prod stacks" / "stack.toml"
    stack.write_text(STACK + '[packages]\nvllm = "0.32.0"\n', encoding="utf-8")
    monkeypatch.chdir(repo / "deploy")  # below the root: the URI is still the root's
    log = _sarif_of(Path("prod stacks") / "stack.toml")
    assert _uris(log) == {("deploy/prod%20stacks/stack.toml", "%SRCROOT%")}
    assert log["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(STACK + '[packages]\nvllm = "0.32.0"\n', encoding="utf-8")
    assert _uris(_sarif_of(outside)) == {(outside.as_uri(), None)}


def test_sarif_without_a_repository_is_relative_to_the_working_folder(tmp_path, monkeypatch):
    if any((parent / ".git").exists() for parent in tmp_path.parents):
        pytest.skip("the temporary folder is inside a repository")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "bad.toml").write_text("[system]\npython = 3.10\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(compat.StackError) as info:
        compat.load_stack("ci/bad.toml")
    log = json.loads(sarif.render_error(info.value))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    [note] = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"] == {"uri": "ci/bad.toml",
                                                                            "uriBaseId": "%SRCROOT%"}
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"


# -- the usual mistakes of a stack file -----------------------------------------


def _error(capsys, here, text: str, *args: str) -> str:
    here("stack.toml", text)
    code, stdout, stderr = run(capsys, "check", "stack.toml", *args)
    assert code == 2 and stdout == "" and stderr.count("\n") == 1, (code, stdout, stderr)
    return stderr


def test_an_import_name_under_packages_suggests_the_distribution(capsys, here):
    """An import name may also be a project of its own (multipart and python-multipart, dotenv and
    python-dotenv are both on the index): not an error, the untracked warning says what it may mean."""
    here("stack.toml", STACK + '[packages]\nflashinfer = "0.7.2"\n')
    code, stdout, _ = run(capsys, "check", "stack.toml")
    assert code == 0
    assert ("flashinfer is not tracked by the database; it is checked only against the requirements of other "
            "packages; did you mean 'flashinfer-python'?") in stdout
    here("stack.toml", STACK + '[packages]\nmultipart = "1.2.0"\n')
    code, stdout, _ = run(capsys, "check", "stack.toml")
    assert code == 0 and "did you mean 'python-multipart'?" in stdout
    # cpuinfo is near py-cpuinfo as a typo would be (a near name is an error): as an import name it is not
    here("stack.toml", STACK + '[packages]\ncpuinfo = "9.0.0"\n')
    code, stdout, _ = run(capsys, "check", "stack.toml")
    assert code == 0 and "did you mean 'py-cpuinfo'?" in stdout
    # --strict, where a warning fails: exit 1, the hint in the report
    here("stack.toml", STACK + '[packages]\nflashinfer = "0.7.2"\n')
    assert run(capsys, "check", "stack.toml", "--strict")[0] == 1


def test_import_names_come_from_the_tracked_names_by_their_affixes(db):
    names = import_names(db.names())
    assert names["flashinfer"] == "flashinfer-python" and names["dateutil"] == "python-dateutil"
    assert names["cpuinfo"] == "py-cpuinfo" and "pydantic" not in names.values()
    assert not set(names) & set(db.names())


def test_a_machine_key_under_packages_names_its_table(capsys, here):
    stderr = _error(capsys, here, '[system]\npython = "3.12"\n[packages]\ncuda = "12.8"\n')
    assert "[packages] cuda: cuda is not a package but a key of [system]: write it under [system]" in stderr


@pytest.mark.parametrize(("text", "said"), [
    ('[system]\npython = "3.12"\ngpu = "H200"\n',
     'stack.toml:3: [system] gpu: unknown key: gpu is a key of [hardware]; write it under [hardware]'),
    ('[system]\npython = "3.12"\n[hardware]\npython = "3.12"\n',
     "[hardware] python: unknown key: python is a key of [system]; write it under [system]"),
    ('[system]\npython = "3.12"\ngpus = "H200"\n', "[system] gpus: unknown key; did you mean [hardware] gpu?"),
    ('[system]\npython = "3.12"\npyhton = "3.12"\n', "[system] pyhton: unknown key; did you mean 'python'?"),
    ('python = "3.12"\n[system]\npython = "3.12"\n',
     "stack.toml:1: python: unknown table: python is a key of [system]; write it under [system]"),
])
def test_a_key_in_the_wrong_table_names_the_right_one(capsys, here, text, said):
    assert said in _error(capsys, here, text)


@pytest.mark.parametrize(("text", "said"), [
    ("[system]\npython = 3.10\n", 'TOML reads 3.10 as the number 3.1; quote it: python = "3.10"'),
    ("[system]\npython = 3.12  # the image's\n", 'TOML reads 3.12 as a number; quote it: python = "3.12"'),
    (STACK + "driver = 580\n", 'TOML reads 580 as a number; quote it: driver = "580"'),
    (STACK + "[packages]\nvllm = 0.10\n", 'TOML reads 0.10 as the number 0.1; quote it: vllm = "0.10"'),
    (STACK + "[packages]\nvllm = { version = 0.10 }\n", 'quote it: version = "0.10"'),
    (STACK + "[hardware]\ncompute_capability = 12.0\n", 'quote it: compute_capability = "12.0"'),
    (STACK + "[env]\nNCCL_TIMEOUT = 1.50\n", 'quote it: NCCL_TIMEOUT = "1.50"'),
])
def test_an_unquoted_version_is_quoted_as_written(capsys, here, text, said):
    assert said in _error(capsys, here, text)


@pytest.mark.parametrize(("text", "said"), [
    ('[system]\npython = "3.12"\ncuda = "cu128"\n',
     '[system] cuda: \'cu128\' is the label of a PyTorch index, not a version: cuda takes the version, '
     'cuda = "12.8"; the label goes in [system] index = "cu128"'),
    ('[system]\npython = "3.12"\nrocm = "rocm6.4"\n', 'rocm = "6.4"; the label goes in [system] index = "rocm6.4"'),
    ('[system]\npython = "3.12"\ncuda = "cpu"\n', 'a stack without CUDA leaves cuda out; the label goes in [system] '
                                                  'index = "cpu"'),
])
def test_an_index_label_for_a_version_says_where_each_goes(capsys, here, text, said):
    assert said in _error(capsys, here, text)


def test_a_windows_path_is_shown_with_slashes(capsys, here):
    here("examples/h200.toml", STACK)
    code, _, stderr = run(capsys, "check", "examples\\h200.toml")
    assert code == 2 and stderr == ("compat: error: examples\\h200.toml: no such file; examples/h200.toml exists "
                                    "(write / between folders, not \\)\n")
    # as a POSIX shell passes the unquoted examples\h200.toml: the backslash is gone
    code, _, stderr = run(capsys, "check", "examplesh200.toml")
    assert code == 2 and "no such file; did you mean examples/h200.toml? (a POSIX shell drops the \\" in stderr
    code, stdout, stderr = run(capsys, "check", "-f", "json", "examples\\h200.toml")
    assert code == 2 and "examples/h200.toml exists" in json.loads(stdout)["error"]["text"]
    # other inputs too, and no hint where no such file exists either way
    assert "did you mean examples/h200.toml?" in run(capsys, "matrix", "examplesh200.toml")[2]
    assert run(capsys, "check", "nowhere\\h200.toml")[2] == "compat: error: nowhere\\h200.toml: no such file\n"


# -- flag names ------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["-r", "--requirement", "--requirements"])
def test_a_requirements_file_is_given_as_pip_gives_it(here, flag):
    here("stack.toml", '[system]\npython = "3.12"\ncuda = "13.0"\n[hardware]\ngpu = "H200"\n')
    here("r.txt", "vllm==0.32.0\n")
    result = invoke("check", "stack.toml", flag, "r.txt")
    assert result.exit_code == 0, result.output
    assert "vllm 0.32.0" in result.output


def test_f_is_format_and_o_is_output_on_every_command_outside_db():
    root = click.Context(cli.cli, info_name="compat")
    commands = dict(_commands(cli.cli, root))
    with_format = {path for path, command in commands.items() if "--format" in _options(command)}
    assert {"compat check", "compat matrix", "compat resolve", "compat why", "compat graph", "compat upgrade",
            "compat diff", "compat outdated"} <= with_format
    for path in with_format - {p for p in with_format if p.startswith("compat db ")}:
        assert _options(commands[path])["--format"] is _options(commands[path]).get("-f"), path
    for path in ("compat check", "compat matrix", "compat resolve", "compat graph", "compat upgrade", "compat diff",
                 "compat outdated", "compat detect"):
        assert _options(commands[path])["--output"] is _options(commands[path]).get("-o"), path
    for path in ("compat check", "compat resolve", "compat upgrade", "compat diff", "compat outdated"):
        assert list(_options(commands[path])["--color"].type.choices) == ["auto", "always", "never"], path


def test_check_writes_its_report_with_o_and_keeps_its_exit_code(capsys, tmp_path):
    out = tmp_path / "report.json"
    code, stdout, stderr = run(capsys, "check", EXAMPLES / "broken-upgrade.toml", "-f", "json", "-o", out)
    assert code == 1 and stdout == ""
    assert stderr == f"wrote {out}: 1 stack, 3 error(s), 0 warning(s)\n"
    assert json.loads(out.read_text(encoding="utf-8"))["ok"] is False
    code, stdout, _ = run(capsys, "check", EXAMPLES / "h200-vllm.toml", "-o", "-")  # "-": standard output
    assert code == 0 and "OK: 0 error(s)" in stdout


def test_check_writes_the_error_form_of_bad_input_to_its_output(capsys, here):
    here("bad.toml", "[system]\npython = 3.10\n")
    code, stdout, stderr = run(capsys, "check", "bad.toml", "-f", "sarif", "-o", "compat.sarif")
    assert code == 2 and stdout == "" and stderr.count("\n") == 1 and stderr.startswith("compat: error: bad.toml:2:")
    log = json.loads(Path("compat.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False


def test_matrix_writes_its_rows_with_o(capsys, here):
    here("axes.toml", SMALL)
    code, stdout, stderr = run(capsys, "matrix", "axes.toml", "-f", "json", "--output", "rows.json")
    assert code == 0 and stdout == "" and "wrote rows.json: 1 row" in stderr
    rows = json.loads(Path("rows.json").read_text(encoding="utf-8"))["rows"]
    assert [row["cell"]["python"] for row in rows] == ["3.12"]


@pytest.mark.parametrize(("args", "env", "coloured"), [
    (["--color", "always"], {}, True),
    (["--color", "always"], {"NO_COLOR": "1"}, True),  # what the command line says wins
    (["--color", "never"], {"FORCE_COLOR": "1"}, False),
    ([], {"FORCE_COLOR": "1"}, True),  # auto: as before
    ([], {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
    ([], {}, False),  # not a terminal
])
def test_color_is_chosen_as_uv_chooses_it(args, env, coloured):
    result = invoke("check", EXAMPLES / "broken-upgrade.toml", *args,
                    env={"NO_COLOR": None, "FORCE_COLOR": None, **env})
    assert result.exit_code == 1 and (ANSI in result.stdout) is coloured


def test_resolve_colours_the_report_of_a_failure_on_standard_error_as_asked():
    result = invoke("resolve", EXAMPLES / "broken-upgrade.toml", "--color", "always")
    assert result.exit_code == 1 and ANSI in result.stderr
    assert ANSI not in invoke("resolve", EXAMPLES / "broken-upgrade.toml", "--color", "never",
                              env={"FORCE_COLOR": "1"}).stderr


def test_a_file_written_with_o_is_not_coloured_unless_asked(tmp_path):
    out = tmp_path / "report.txt"
    assert invoke("check", EXAMPLES / "broken-upgrade.toml", "-o", out, env={"FORCE_COLOR": "1"}).exit_code == 1
    assert ANSI not in out.read_text(encoding="utf-8")


def test_the_help_lists_debug_and_says_what_strict_means():
    top = invoke("--help").output
    assert "--debug" in top and "COMPAT_DEBUG=1" in top
    strict = " ".join(invoke("check", "--help").output.split())
    assert "--strict Warnings fail the check too: exit 1 on a warning as on an error." in strict
    assert "Not pip-audit's -S/--strict, which fails on packages it could not audit" in strict
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "| `--debug` |" in page and "| `-f, --format [text\\|json\\|sarif\\|github\\|markdown]` |" in page


def test_debug_before_the_command_is_taken_by_the_group_too():
    result = invoke("--debug", "check", EXAMPLES / "h200-vllm.toml")
    assert result.exit_code == 0, result.output


def test_a_word_as_the_cuda_version_is_a_plain_stack_error():
    """Neither a version nor a PyTorch index label: the reader's error, as a plain StackError (the JSON
    report names its type; a caller may pickle it), not the reader's internal subclass."""
    import pickle

    from compat.errors import StackError

    with pytest.raises(StackError) as caught:
        compat.loads_stack('[system]\npython = "3.12"\ncuda = "banana"\n')
    assert type(caught.value) is StackError and caught.value.key == "[system] cuda"
    again = pickle.loads(pickle.dumps(caught.value))
    assert str(again) == str(caught.value)


def test_options_of_one_package_under_two_spellings_are_refused():
    """[options.vllm] and [options.VLLM] name one package: the second no longer replaces the first unsaid."""
    from compat.errors import StackError

    with pytest.raises(StackError) as caught:
        compat.loads_stack('[system]\npython = "3.12"\n[packages]\nvllm = "0.32.0"\n[options.vllm]\ndtype = "half"\n'
                           '[options.VLLM]\ndtype = "bfloat16"\n')
    assert "given twice" in str(caught.value) and caught.value.key == "[options] VLLM"
