"""The pre-commit hook (.pre-commit-hooks.yaml) and the GitHub Action (action.yml).

No YAML library is a dependency: `read_yaml` is a small strict reader of the
subset these files and the workflows of docs/integrations.md use (block
mappings and sequences, flow sequences of plain words, quoted and plain
scalars, literal and folded blocks, comments). Anything else is an error, so
a file it reads has the structure the tests assert."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from compat.cli import cli

from .conftest import EXAMPLES, ROOT

_KEY = re.compile(r'^([A-Za-z0-9_][A-Za-z0-9_.${}\- ]*?|"[^"]*"|\'[^\']*\'):(?: +(.*))?$')


class YamlError(ValueError):
    pass


_QUOTED = re.compile(r"""^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*')\s+#.*$""")  # a quoted scalar, then a comment


def _scalar(text: str, number: int):
    text = text.strip()
    if quoted := _QUOTED.match(text):
        text = quoted.group(1)
    if text.startswith('"'):
        if not text.endswith('"') or len(text) < 2:
            raise YamlError(f"line {number}: unterminated string")
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if text.startswith("'"):
        if not text.endswith("'") or len(text) < 2:
            raise YamlError(f"line {number}: unterminated string")
        return text[1:-1].replace("''", "'")
    if text.startswith("["):
        if not text.endswith("]"):
            raise YamlError(f"line {number}: unterminated flow sequence")
        inner = text[1:-1].strip()
        return [_scalar(part, number) for part in inner.split(",")] if inner else []
    if text.startswith(("{", "&", "*", "!", "%", "@", "`")):
        raise YamlError(f"line {number}: unsupported YAML: {text!r}")
    return re.sub(r"\s+#.*$", "", text)


def read_yaml(text: str):
    """The document `text` holds: dicts, lists and strings."""
    lines = text.split("\n")
    position = 0

    def indent(line: str) -> int:
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise YamlError("a tab in indentation")
        return len(line) - len(line.lstrip(" "))

    def skip() -> None:
        nonlocal position
        while position < len(lines) and (not lines[position].strip() or lines[position].lstrip().startswith("#")):
            position += 1

    def block(level: int):
        skip()
        if lines[position].lstrip().startswith("- ") or lines[position].strip() == "-":
            return sequence(level)
        return mapping(level)

    def mapping(level: int) -> dict:
        nonlocal position
        result: dict = {}
        while True:
            skip()
            if position >= len(lines) or indent(lines[position]) < level:
                return result
            line = lines[position]
            if indent(line) > level:
                raise YamlError(f"line {position + 1}: unexpected indentation")
            if line.lstrip().startswith("- "):
                return result
            match = _KEY.match(line.strip())
            if match is None:
                raise YamlError(f"line {position + 1}: not a key: {line.strip()!r}")
            key = _scalar(match.group(1), position + 1)
            if key in result:
                raise YamlError(f"line {position + 1}: duplicate key {key!r}")
            position += 1
            result[key] = value(match.group(2) or "", level)

    def value(rest: str, level: int):
        rest = re.sub(r"^#.*$", "", rest)
        if rest.rstrip() in ("|", "|-", ">", ">-"):
            return literal(rest.rstrip(), level)
        if rest.strip():
            return _scalar(rest, position)
        skip()
        if position >= len(lines):
            return None
        deeper = indent(lines[position])
        if deeper > level or (deeper == level and lines[position].lstrip().startswith("- ")):
            return block(deeper)
        return None

    def literal(style: str, level: int) -> str:
        nonlocal position
        body = []
        while position < len(lines) and (not lines[position].strip() or indent(lines[position]) > level):
            body.append(lines[position])
            position += 1
        while body and not body[-1].strip():
            body.pop()
        width = min(indent(line) for line in body if line.strip())
        rows = [line[width:] for line in body]
        text = "\n".join(rows) if style.startswith("|") else " ".join(r.strip() for r in rows)
        return text if style.endswith("-") else text + "\n"

    def sequence(level: int) -> list:
        nonlocal position
        items = []
        while True:
            skip()
            if position >= len(lines) or indent(lines[position]) != level:
                return items
            line = lines[position]
            if not line.lstrip().startswith("- "):
                return items
            content = line.strip()[2:]
            if _KEY.match(content):
                lines[position] = " " * (level + 2) + content  # "- key: value" opens a mapping
                items.append(mapping(level + 2))
            else:
                items.append(_scalar(content, position + 1))
                position += 1

    document = block(0)
    skip()
    if position != len(lines):
        raise YamlError(f"line {position + 1}: not read")
    return document


def test_the_reader_is_strict():
    assert read_yaml("a:\n  - b: 'x'\n    c: [d, e]\n  - f\nrun: |\n  one\n    two\n") == \
        {"a": [{"b": "x", "c": ["d", "e"]}, "f"], "run": "one\n  two\n"}
    assert read_yaml('cron: "0 6 * * 1"   # weekly\nname: \'a # b\'\n') == {"cron": "0 6 * * 1", "name": "a # b"}
    for bad in ("a: {b: c}\n", "a: 1\na: 2\n", "a:\n  b: 1\n c: 2\n", "a: &x 1\n", "just words\n"):
        with pytest.raises(YamlError):
            read_yaml(bad)


# -- pre-commit ---------------------------------------------------------------------------------------

HOOKS = read_yaml((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))


def test_the_hook_manifest_has_the_keys_pre_commit_reads():
    assert [hook["id"] for hook in HOOKS] == ["compat-check"]
    hook = HOOKS[0]
    assert {"id", "name", "entry", "language", "files"} <= set(hook)
    assert (hook["language"], hook["entry"], hook["types"]) == ("python", "compat check", ["toml"])
    assert hook["require_serial"] == "true"


@pytest.mark.parametrize("path, matched", [
    ("stack.toml", True), ("deploy/stack.toml", True), ("ci/stack-h100.toml", True), ("stack.prod.toml", True),
    ("pyproject.toml", False), ("axes.toml", False), ("mystack.toml", False), ("stack.toml.bak", False),
    ("stack/other.toml", False),
])
def test_the_hook_runs_on_stack_files_only(path, matched):
    # pre-commit searches the pattern (re.search) in each staged path
    assert bool(re.search(HOOKS[0]["files"], path)) is matched


def test_the_hook_entry_checks_the_files_it_is_given(tmp_path):
    """What pre-commit runs: the entry, the hook's args, then the file names."""
    hook = HOOKS[0]
    good, bad = tmp_path / "stack.toml", tmp_path / "deploy" / "stack-broken.toml"
    bad.parent.mkdir()
    good.write_text((EXAMPLES / "h200-vllm.toml").read_text())
    bad.write_text((EXAMPLES / "transformers-too-new.toml").read_text())
    program, *command = shlex.split(hook["entry"])
    assert program == "compat"
    result = CliRunner().invoke(cli, [*command, *hook["args"], str(good), str(bad)])
    assert result.exit_code == 1  # one of them fails: the commit stops
    assert f"{bad}:" in result.stdout and "requires:vllm==0.32.0:transformers" in result.stdout
    assert "Notes" not in result.stdout  # --quiet: the errors and the verdict
    assert CliRunner().invoke(cli, [*command, *hook["args"], str(good)]).exit_code == 0


# -- the GitHub Action --------------------------------------------------------------------------------

ACTION = read_yaml((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = ACTION["runs"]["steps"]


def test_the_action_is_composite_with_its_inputs_and_outputs():
    assert {"name", "description", "inputs", "outputs", "runs"} <= set(ACTION)
    assert ACTION["runs"]["using"] == "composite"
    assert {"command", "file", "format", "python-version", "upload-sarif"} <= set(ACTION["inputs"])
    assert ACTION["inputs"]["file"]["required"] == "true"
    ids = {step.get("id") for step in STEPS}
    for output in ACTION["outputs"].values():
        assert re.fullmatch(r"\$\{\{ steps\.([\w-]+)\.outputs\.[\w-]+ \}\}", output["value"]).group(1) in ids
    uses = [step["uses"] for step in STEPS if "uses" in step]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    assert any(u.startswith("actions/setup-python@") for u in uses)


def test_the_action_passes_inputs_through_the_environment_only():
    """`${{ }}` pasted into a script is a script injection: inputs reach the
    scripts as environment variables, and every input named exists."""
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    for name in re.findall(r"inputs\.([\w-]+)", text):
        assert name in ACTION["inputs"], name
    for step in STEPS:
        if "run" in step:
            assert step["shell"] == "bash" and "${{" not in step["run"]


def _run_step(tmp_path: Path, command: str, code: int, **inputs: str) -> tuple[dict, list[str], str]:
    """Run the action's `run` step with a stand-in compat that records its
    arguments and exits `code`: the outputs, the calls, the job summary."""
    fake = tmp_path / "compat"
    fake.write_text('#!/bin/sh\necho "$*" >> "$CALLS"\necho \'{"include": []}\'\nexit "$FAKE_CODE"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    step = next(s for s in STEPS if s.get("id") == "run")
    env = {"PATH": os.environ["PATH"], "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path / "output"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"), "CALLS": str(tmp_path / "calls"), "FAKE_CODE": str(code),
           "COMPAT": str(fake), "COMPAT_COMMAND": command, "COMPAT_FILE": "", "COMPAT_TO": "", "COMPAT_FORMAT": "",
           "COMPAT_ARGS": "", "COMPAT_SARIF": "false"}
    env.update({f"COMPAT_{k.upper()}": v for k, v in inputs.items()})
    for name in re.findall(r"\$\{\{ inputs\.([\w-]+) \}\}", str(step["env"])):
        assert name in ACTION["inputs"]
    # as GitHub runs a bash step: bash --noprofile --norc -eo pipefail
    subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], env=env, check=True,
                   capture_output=True, text=True)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
    calls = (tmp_path / "calls").read_text().splitlines() if (tmp_path / "calls").exists() else []
    summary = (tmp_path / "summary").read_text() if (tmp_path / "summary").exists() else ""
    return outputs, calls, summary


def test_the_action_checks_and_writes_sarif_for_code_scanning(tmp_path):
    outputs, calls, _ = _run_step(tmp_path, "check", 1, file="deploy/stack.toml ci/stack-h100.toml",
                                  args="--strict --ignore vllm.*", sarif="true")
    assert calls == ["check deploy/stack.toml ci/stack-h100.toml --format github --strict --ignore vllm.*",
                     "check deploy/stack.toml ci/stack-h100.toml --format sarif --strict --ignore vllm.*"]
    assert outputs["exit-code"] == "1" and outputs["sarif-file"] == str(tmp_path / "compat.sarif")


def test_the_action_gives_the_matrix_as_an_output(tmp_path):
    outputs, calls, _ = _run_step(tmp_path, "matrix", 0, file="ci/axes.toml", args="--pairwise")
    assert calls == ["matrix ci/axes.toml --format github --pairwise"]
    assert outputs["matrix"] == '{"include": []}' and "sarif-file" not in outputs


def test_the_action_plans_an_upgrade_into_the_job_summary(tmp_path):
    outputs, calls, summary = _run_step(tmp_path, "upgrade", 0, file="stack.toml", to="vllm==0.33.0 transformers>=5.20")
    assert calls == ["upgrade stack.toml --to vllm==0.33.0 --to transformers>=5.20 --format markdown"]
    assert summary == '{"include": []}\n' and outputs["exit-code"] == "0"


def test_the_action_refuses_an_unknown_command(tmp_path):
    outputs, calls, _ = _run_step(tmp_path, "lint", 0, file="stack.toml")
    assert outputs["exit-code"] == "2" and calls == []


# -- the workflows of the docs ------------------------------------------------------------------------

def _workflows(page: str) -> list[dict]:
    doc = (ROOT / "docs" / page).read_text(encoding="utf-8")
    return [document for block in re.findall(r"```yaml\n(.*?)```", doc, re.S)
            if isinstance(document := read_yaml(block), dict) and "jobs" in document]


def _run_steps(page: str) -> list[dict]:
    return [step for workflow in _workflows(page) for job in workflow["jobs"].values()
            for step in job.get("steps", []) if "run" in step]


def test_every_workflow_of_the_docs_reads_and_gives_the_action_only_its_inputs():
    workflows = _workflows("integrations.md")
    assert len(workflows) >= 3
    used = 0
    for workflow in workflows:
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                if step.get("uses", "").startswith("compat-dev/compat@"):
                    used += 1
                    assert set(step.get("with", {})) <= set(ACTION["inputs"]), step
                    assert "file" in step["with"]
    assert used >= 3


def _github_bash(script: str, tmp_path: Path, compat: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run a workflow's `run` script as GitHub runs one without a `shell:`
    (bash -e), with a stand-in `compat` first on PATH; the process and what
    the script appended to $GITHUB_OUTPUT."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    fake = folder / "compat"
    fake.write_text("#!/bin/sh\n" + compat)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    output = tmp_path / "output"
    output.write_text("")
    env = {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(output)}
    done = subprocess.run(["bash", "--noprofile", "--norc", "-e", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=30)
    return done, output.read_text()


NO_COMBINATION = """echo 'compat matrix: 0 of 96 combinations work' >&2\necho '{"include": []}'\nexit 1\n"""
SOME_COMBINATIONS = """echo '{"include": [{"python": "3.12"}]}'\n"""


def test_the_matrix_workflow_of_the_docs_fails_its_step_when_compat_fails(tmp_path):
    """docs/matrix.md: "exit 1 (no combination works) fails this step". Under
    bash -e the step stops at compat's exit 1 and gives no matrix."""
    (step,) = [step for step in _run_steps("matrix.md") if step.get("id") == "compat"]
    assert "shell" not in step  # GitHub's default: bash -e
    done, output = _github_bash(step["run"], tmp_path, NO_COMBINATION)
    assert done.returncode == 1, done
    assert "matrix=" not in output
    done, output = _github_bash(step["run"], tmp_path, SOME_COMBINATIONS)
    assert done.returncode == 0, done
    assert output == 'matrix={"include": [{"python": "3.12"}]}\n'


def test_a_command_substitution_would_lose_the_exit_code(tmp_path):
    """Why the docs write the matrix to a file first: `echo "matrix=$(compat …)"`
    passes under bash -e whatever compat exits with."""
    done, output = _github_bash('echo "matrix=$(compat matrix ci/axes.toml)" >> "$GITHUB_OUTPUT"', tmp_path,
                                NO_COMBINATION)
    assert done.returncode == 0 and output == 'matrix={"include": []}\n'


def test_no_workflow_of_the_docs_runs_compat_inside_a_command_substitution():
    steps = _run_steps("matrix.md") + _run_steps("integrations.md")
    assert steps
    for step in steps:
        assert not re.search(r"\$\(\s*compat\b", step["run"]), step["run"]


def test_the_action_fails_the_matrix_job_when_no_combination_works(tmp_path):
    """docs/integrations.md: the action gives the empty matrix as its output,
    then fails with compat's exit code, so the next job does not run."""
    outputs, calls, _ = _run_step(tmp_path, "matrix", 1, file="ci/axes.toml", args="--pairwise")
    assert outputs["exit-code"] == "1" and outputs["matrix"] == '{"include": []}'
    last = STEPS[-1]
    assert last.get("if") == "always()" and last["shell"] == "bash"
    assert re.fullmatch(r"\$\{\{ steps\.run\.outputs\.exit-code \}\}", last["env"]["CODE"])
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", last["run"]],
                          env={"PATH": os.environ["PATH"], "CODE": outputs["exit-code"]}, capture_output=True)
    assert done.returncode == 1
