"""What users of pip, uv and pip-audit bring with them: the usual mistakes
of a stack file (an import name under [packages], a key in the wrong table,
an unquoted version, an index label for a version), each met with the line
to write instead; and SARIF locations relative to the repository, as code
scanning wants them."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest

import compat
from compat import cli
from compat._names import import_names
from compat.formats import sarif

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
STACK = '[system]\npython = "3.12"\ncuda = "13.0"\n'


def run(capsys, *args):
    """`compat ARGS` as the installed command runs it: exit code, standard output, standard error."""
    with pytest.raises(SystemExit) as info:
        cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


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
    stderr = _error(capsys, here, STACK + '[packages]\nflashinfer = "0.7.2"\n')
    assert stderr.startswith("compat: error: stack.toml:5: [packages] flashinfer: unknown package 'flashinfer'; "
                             "did you mean 'flashinfer-python'?")
    # the way out, when the name is right
    here("stack.toml", STACK + '[packages]\nflashinfer = { version = "0.7.2", external = true }\n')
    assert run(capsys, "check", "stack.toml")[0] == 0


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
