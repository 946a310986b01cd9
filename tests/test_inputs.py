"""Inputs beside the stack file: requirements files, pyproject.toml,
pylock.toml, several stacks, and how they merge (docs/inputs.md)."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from compat import Inputs, StackError, load_inputs
from compat._toml import tomllib
from compat.cli import cli
from compat.sources.requirements import _split, logical_lines, read_requirements

from .conftest import EXAMPLES

H200 = """
[system]
python = "3.12"
cuda = "13.0"

[hardware]
gpu = "H200"
"""


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write dedented files into a fresh folder, which becomes the current one."""
    monkeypatch.chdir(tmp_path)

    def write(**contents: str) -> Path:
        for name, text in contents.items():
            path = tmp_path / name.replace("__", "/").replace("_dot_", ".")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return tmp_path

    return write


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(cli, ["check", *args], input=input)


def stack_of(db, **inputs):
    [stack] = load_inputs(Inputs(**inputs), db)
    return stack


def error_of(db, **inputs) -> StackError:
    with pytest.raises(StackError) as info:
        load_inputs(Inputs(**inputs), db)
    return info.value


# -- requirements files, as pip reads them ------------------------------------------


def test_lines_join_continuations_drop_comments_and_expand_variables(monkeypatch):
    monkeypatch.setenv("TORCH_VERSION", "2.10.0")
    text = "# header\ntorch==${TORCH_VERSION} \\\n    --hash=sha256:00  # pinned\nvllm#not-a-comment\n${UNSET_VAR}x\n"
    assert list(logical_lines(text)) == [
        (2, "torch==2.10.0     --hash=sha256:00"),
        (4, "vllm#not-a-comment"),
        (5, "${UNSET_VAR}x"),
    ]


def test_includes_are_relative_to_the_including_file_and_constraints_add_no_package(files, db):
    folder = files(
        stack_dot_toml=H200,
        reqs__base_dot_txt="-r gpu.txt\n-c ../pins.txt\ntransformers>=5.16\n",
        reqs__gpu_dot_txt="vllm==0.32.0 --hash=sha256:00 --hash=sha256:11\n",
        pins_dot_txt="transformers==5.19.0\nrequests==2.33.1\n",
    )
    stack = stack_of(db, stacks=("stack.toml",), requirements=(str(folder / "reqs/base.txt"),))
    assert {n: str(s.specifier) for n, s in stack.packages.items()} == {"vllm": "==0.32.0", "transformers": "==5.19.0"}
    assert stack.places["vllm"].file.endswith("gpu.txt") and stack.places["vllm"].line == 1


def test_an_include_cycle_names_the_chain(files, db):
    files(a_dot_txt="vllm==0.32.0\n-r b.txt\n", b_dot_txt="-r a.txt\n")
    err = error_of(db, requirements=("a.txt",))
    assert (err.file, err.line) == ("b.txt", 1)
    assert "cycle: a.txt -> b.txt -> a.txt" in err.message


def test_a_pytorch_index_url_sets_the_build_index(files, db):
    files(stack_dot_toml=H200, r_dot_txt="--extra-index-url https://download.pytorch.org/whl/cu128\ntorch==2.10.0\n")
    stack = stack_of(db, stacks=("stack.toml",), requirements=("r.txt",))
    assert stack.system.index == "cu128"
    result = run("stack.toml", "-r", "r.txt")
    assert result.exit_code == 1 and "build-cuda:torch==2.10.0" in result.output


def test_a_wheel_url_pins_the_version_its_file_name_gives(files, db):
    files(stack_dot_toml=H200, r_dot_txt=(
        "torch @ https://download.pytorch.org/whl/cu130/torch-2.10.0%2Bcu130-cp312-cp312-manylinux_2_28_x86_64.whl\n"
        "./wheels/requests-2.33.1-py3-none-any.whl\n"
    ))
    stack = stack_of(db, stacks=("stack.toml",), requirements=("r.txt",))
    assert (stack.packages["torch"].pinned, stack.packages["torch"].build) == (Version("2.10.0"), "cu130")
    assert stack.packages["requests"].pinned == Version("2.33.1")


@pytest.mark.parametrize("line, says", [
    ("git+https://github.com/vllm-project/vllm@v0.32.0#egg=vllm", "cannot tell which version a VCS checkout"),
    ("-e git+https://github.com/vllm-project/vllm#egg=vllm", "cannot tell which version a VCS checkout"),
    ("--frobnicate", "unknown option '--frobnicate'"),
    ("vllm=0.32", "not a PEP 508 requirement"),
    ("./no-such-folder", "neither a project folder nor a wheel"),
    ("-r https://example.com/r.txt", "compat reads only local files"),
])
def test_what_compat_cannot_read_is_refused_with_its_line(files, db, line, says):
    files(r_dot_txt=f"vllm==0.32.0\n{line}\n")
    err = error_of(db, requirements=("r.txt",))
    assert (err.file, err.line) == ("r.txt", 2)
    assert says in err.message


@pytest.mark.parametrize("line, says", [
    ("transformers[torch]==5.19.0", "constraints cannot have extras"),
    ("-e .", "editable requirements are not allowed as constraints"),
])
def test_constraints_refuse_what_pip_refuses(files, db, line, says):
    files(r_dot_txt="-c c.txt\n", c_dot_txt=f"{line}\n")
    assert says in error_of(db, requirements=("r.txt",)).message


def test_a_local_project_stands_for_its_pyproject_requirements(files, db):
    files(stack_dot_toml=H200, r_dot_txt="-e ./service[gpu]\n", service__pyproject_dot_toml="""
        [project]
        name = "service"
        version = "1.0"
        dependencies = ["vllm==0.32.0"]
        [project.optional-dependencies]
        gpu = ["flashinfer-python==0.7.0.post1"]
    """)
    stack = stack_of(db, stacks=("stack.toml",), requirements=("r.txt",))
    assert sorted(stack.packages) == ["flashinfer-python", "vllm"]
    assert stack.places["vllm"] == ("service/pyproject.toml", 4)


def test_a_requirement_whose_marker_excludes_the_stack_is_left_out(files, db):
    files(stack_dot_toml=H200, r_dot_txt='vllm==0.32.0\npywin32==311; sys_platform == "win32"\n')
    assert list(stack_of(db, stacks=("stack.toml",), requirements=("r.txt",)).packages) == ["vllm"]


# -- merging ---------------------------------------------------------------------------


def test_a_package_given_twice_with_different_versions_names_both_places(files):
    files(stack_dot_toml=H200 + '[packages]\nvllm = "0.31.0"\n', r_dot_txt="transformers>=5\nvllm==0.32.0\n")
    result = run("stack.toml", "-r", "r.txt")
    assert result.exit_code == 2
    assert result.output.strip() == ("compat: error: r.txt:2: vllm: 0.32.0 here disagrees with 0.31.0 at "
                                     "stack.toml:8: a package given twice must allow a common version")


def test_versions_that_agree_merge_into_the_narrowest(files, db):
    files(stack_dot_toml=H200 + '[packages]\ntorch = "2.10.0+cu130"\ntransformers = ">=5.16"\n',
          r_dot_txt="torch==2.10.0\ntransformers<5.21\ntransformers==5.19.0\n")
    stack = stack_of(db, stacks=("stack.toml",), requirements=("r.txt",))
    assert (str(stack.packages["torch"].specifier), stack.packages["torch"].build) == ("==2.10.0", "cu130")
    assert stack.packages["transformers"].pinned == Version("5.19.0")


def test_options_may_name_a_package_another_input_gives(files):
    files(stack_dot_toml=H200 + '[options.vllm]\nkv-cache-dtype = "fp8"\n', r_dot_txt="vllm==0.32.0\n")
    result = run("stack.toml", "-r", "r.txt", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["stack"]["packages"] == {"vllm": "0.32.0"}


def test_an_untracked_package_of_a_file_is_external_without_a_warning(files, db):
    files(stack_dot_toml=H200, r_dot_txt="vllm==0.32.0\nsome-internal-lib==1.0\n")
    stack = stack_of(db, stacks=("stack.toml",), requirements=("r.txt",))
    assert stack.packages["some-internal-lib"].external and stack.untracked == ()


def test_a_bad_value_of_another_input_is_reported_at_its_line(files):
    files(stack_dot_toml=H200, r_dot_txt="vllm==0.32.0\n\nnumpy>3,<2\n")
    result = run("stack.toml", "-r", "r.txt")
    assert result.exit_code == 2
    assert result.output.startswith("compat: error: r.txt:3: [packages] numpy: '<2,>3' admits no version at all")


def test_without_a_stack_file_the_machine_is_the_running_interpreter(files, db):
    files(r_dot_txt="requests==2.33.1\n")
    stack = stack_of(db, requirements=("r.txt",))
    assert stack.system.python == Version(".".join(map(str, sys.version_info[:3])))
    assert stack.path == "r.txt" and stack.hardware.accelerator == "cpu"


# -- pyproject.toml ------------------------------------------------------------------------

PYPROJECT = """
[project]
name = "my-service"
version = "1.0"
dependencies = [
    "vllm==0.32.0",
    'transformers>=5.16; python_version >= "3.11"',
]

[project.optional-dependencies]
gpu = ["flashinfer-python==0.7.0.post1"]
all = ["my-service[gpu]"]

[dependency-groups]
test = ["pytest>=8", {include-group = "lint"}]
lint = ["ruff"]
loop-a = [{include-group = "loop-b"}]
loop-b = [{include-group = "loop-a"}]
"""


def test_pyproject_gives_dependencies_extras_and_groups(files, db):
    files(stack_dot_toml=H200, pyproject_dot_toml=PYPROJECT)
    stack = stack_of(db, stacks=("stack.toml",), pyproject="pyproject.toml", extras=("all",), groups=("test",))
    assert sorted(stack.packages) == ["flashinfer-python", "pytest", "ruff", "transformers", "vllm"]
    assert stack.places["transformers"] == ("pyproject.toml", 6)


@pytest.mark.parametrize("extra, group, says", [
    ("gpus", None, "no extra 'gpus'; did you mean 'gpu'? (the extras: all, gpu)"),
    (None, "tests", "no dependency group 'tests'; did you mean 'test'?"),
    (None, "loop-a", "the groups include one another in a cycle: loop-a -> loop-b -> loop-a"),
])
def test_pyproject_refuses_unknown_extras_groups_and_cycles(files, db, extra, group, says):
    files(pyproject_dot_toml=PYPROJECT)
    err = error_of(db, pyproject="pyproject.toml", extras=(extra,) if extra else (), groups=(group,) if group else ())
    assert err.file == "pyproject.toml" and says in err.message


def test_pyproject_with_dynamic_dependencies_is_refused(files, db):
    files(pyproject_dot_toml='[project]\nname = "x"\ndynamic = ["dependencies", "version"]\n')
    err = error_of(db, pyproject="pyproject.toml")
    assert (err.line, err.key) == (3, "[project] dynamic") and "dynamic" in err.message


@pytest.mark.parametrize("dynamic", ['"dependencies"', '[1]', '{dependencies = true}'])
def test_a_dynamic_field_that_is_not_a_list_of_names_is_refused(files, db, dynamic):
    # read as "none", dynamic dependencies would pass for a project that has none
    files(pyproject_dot_toml=f'[project]\nname = "x"\ndynamic = {dynamic}\ndependencies = ["vllm"]\n')
    err = error_of(db, pyproject="pyproject.toml")
    assert (err.line, err.key) == (3, "[project] dynamic") and "list of field names" in err.message


# -- pylock.toml ------------------------------------------------------------------------------


def test_a_lock_that_resolve_wrote_checks_as_the_stack_it_locks(files, db):
    folder = files(stack_dot_toml=H200 + '[packages]\ntorch = "2.13.0"\n', machine_dot_toml=H200)
    written = CliRunner().invoke(cli, ["resolve", "stack.toml", "--format", "pylock", "-o", "pylock.toml"])
    assert written.exit_code == 0, written.output
    stack = stack_of(db, stacks=("machine.toml",), pylock="pylock.toml")
    # torch requires cuda-toolkit[cublas,...]: a flat lock installs the extras its pins meet
    assert "cublas" in stack.packages["cuda-toolkit"].extras and stack.packages["torch"].pinned == Version("2.13.0")
    result = run("machine.toml", "--pylock", "pylock.toml", "--format", "json")
    assert result.exit_code == 0 and not [f for f in json.loads(result.output)["findings"] if f["severity"] != "info"]
    # without the package the cublas extra brings in, the extra is missing, and said so
    lock = tomllib.loads((folder / "pylock.toml").read_text(encoding="utf-8"))
    lock["packages"] = [p for p in lock["packages"] if p["name"] != "nvidia-cublas"]
    (folder / "pylock.toml").write_text(tomli_w.dumps(lock), encoding="utf-8")
    ids = [f["id"] for f in json.loads(run("machine.toml", "--pylock", "pylock.toml", "--format", "json").output)["findings"]]
    assert "extras:torch==2.13.0:cuda-toolkit" in ids


UV_LOCK = """
# written by uv pip compile -o pylock.toml: its wheels have a url and no name, as PEP 751 allows
lock-version = "1.0"
created-by = "uv"
requires-python = ">=3.12"

[[packages]]
name = "six"
version = "1.17.0"
sdist = { url = "https://files.pythonhosted.org/packages/94/e7/b2c673351809dca68a0e064b6af791aa332cf192da575fd474ed7d6f16a2/six-1.17.0.tar.gz", size = 34031, hashes = { sha256 = "ff70335d468e7eb6ec65b95b99d3a2836546063f63acc5171de367e834932a81" } }
wheels = [{ url = "https://files.pythonhosted.org/packages/b7/ce/149a00dd41f10bc29e5921b496af8b574d8413afcd5e30dfa0ed46c2cc5e/six-1.17.0-py2.py3-none-any.whl", size = 11050, hashes = { sha256 = "4721f391ed90541fddacab5acf947aa0d3dc7d27b2e1e8eda2be8970586c3274" } }]

[[packages]]
name = "numpy"
version = "2.3.5"
wheels = [{ path = "wheels/numpy-2.3.5-cp312-cp312-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl", hashes = { sha256 = "00" } }]
"""


def test_a_lock_whose_wheels_have_no_name_reads_their_file_names_from_url_or_path(files, db):
    files(machine_dot_toml='[system]\npython = "3.12"\n', pylock_dot_toml=UV_LOCK)
    stack = stack_of(db, stacks=("machine.toml",), pylock="pylock.toml")
    assert stack.packages["six"].pinned == Version("1.17.0")
    from compat.sources.pylock import read_pylock

    tags = {str(t) for t in read_pylock("pylock.toml")._tags()}
    assert {"py2-none-any", "py3-none-any", "cp312-cp312-manylinux_2_28_x86_64"} <= tags
    result = run("machine.toml", "--pylock", "pylock.toml")
    assert result.exit_code == 0, result.output


LOCK = """
lock-version = "1.0"
created-by = "hand"
requires-python = ">=3.10"

[[packages]]
name = "vllm"
version = "0.32.0"
sdist = {{ url = "https://example.com/vllm-0.32.0.tar.gz", hashes = {{ sha256 = "00" }} }}

[[packages]]
name = "pywin32"
version = "311"
marker = 'sys_platform == "win32"'
sdist = {{ url = "https://example.com/pywin32-311.tar.gz", hashes = {{ sha256 = "00" }} }}

[[packages]]
name = "my-service"
directory = {{ path = "." }}
{extra}
"""


def test_a_lock_selects_for_the_stacks_machine_and_skips_the_local_project(files, db):
    files(stack_dot_toml=H200, pylock_dot_toml=LOCK.format(extra=""))
    stack = stack_of(db, stacks=("stack.toml",), pylock="pylock.toml")
    assert list(stack.packages) == ["vllm"] and stack.places["vllm"] == ("pylock.toml", 5)


def test_an_invalid_lock_names_the_key_and_line(files, db):
    files(pylock_dot_toml=LOCK.format(extra="").replace('version = "311"', 'version = "not a version"'))
    err = error_of(db, pylock="pylock.toml")
    assert (err.key, err.line) == ("packages[1].version", 10) and "not a version" in err.message


# -- several stacks, standard input, and what the command refuses ------------------------------------


def test_several_stacks_report_each_and_exit_with_the_worst(files):
    files(ok_dot_toml=H200, broken_dot_toml=H200.replace("3.12", "3.10"), r_dot_txt="vllm==0.32.0\n")
    result = run("ok.toml", "broken.toml", "-r", "r.txt", "--format", "json")
    reports = json.loads(result.output)
    assert result.exit_code == 1
    assert [(r["stack"]["path"], r["ok"]) for r in reports] == [("ok.toml", True), ("broken.toml", False)]
    text = run("ok.toml", "broken.toml", "-r", "r.txt").output
    assert text.index("ok.toml") < text.index("OK:") < text.index("broken.toml") < text.index("FAIL:")


def test_a_stack_from_standard_input(files):
    result = run("-", input=(EXAMPLES / "h200-vllm.toml").read_text(encoding="utf-8"))
    assert result.exit_code == 0 and result.output.startswith("- (h200-vllm)")
    assert run("-", "-r", "-", input="").exit_code == 2


@pytest.mark.parametrize("args, says", [
    ((), "give a stack file (STACK), or the packages to check"),
    (("stack.toml", "--extra", "gpu"), "--extra and --group name extras"),
])
def test_the_command_refuses_inputs_that_say_nothing(files, args, says):
    files(stack_dot_toml=H200)
    result = run(*args)
    assert result.exit_code == 2 and says in result.output


def test_read_requirements_is_usable_alone(files):
    files(r_dot_txt="vllm==0.32.0\n-c c.txt\n", c_dot_txt="torch==2.13.0\n")
    found = read_requirements("r.txt")
    assert [(str(e.requirement), e.constraint, str(e.place)) for e in found.entries] == [
        ("vllm==0.32.0", False, "r.txt:1"), ("torch==2.13.0", True, "c.txt:1")]


# -- pip's own reading, as the reference ------------------------------------------------------

_PIECES = st.sampled_from(["vllm==0.32.0", "torch", " ", "  ", "\t", "#", " # note", "\\", "--hash=sha256:00", "-r x",
                           "${HOME}", "${NO_SUCH_VARIABLE}", "a#b", ";", 'python_version >= "3.11"'])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=5).map("".join), max_size=8).map("\n".join))
def test_lines_are_read_as_pip_reads_them(text):
    from pip._internal.req.req_file import break_args_options, preprocess

    assert list(logical_lines(text)) == list(preprocess(text))
    for _, line in logical_lines(text):
        assert _split(line) == break_args_options(line)
