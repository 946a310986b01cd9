"""compat why (packages and the machine), compat.why / compat.resolve /
compat.loads_stack, and the JSON of why and db lint."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from packaging.version import Version

import compat
from compat.cli import cli

from .conftest import EXAMPLES

H200 = '[system]\npython = "3.12"\ncuda = "13.0"\n[hardware]\ngpu = "H200"\n'


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def transformers(db):
    """compat why transformers --stack examples/h200-vllm.toml, as the library returns it."""
    return compat.why("transformers", EXAMPLES / "h200-vllm.toml", database=db)


def test_constraints_are_listed_in_version_order(transformers):
    """compressed-tensors 0.3.x comes before 0.14.x, which a lexical sort reverses."""
    seen: dict[tuple[bool, bool, str, str], Version] = {}
    for constraint in transformers.ordered():
        if not constraint.versions:
            continue
        key = (bool(constraint.binds), constraint.holds is False, constraint.component, constraint.layer)
        assert seen.get(key, Version("0")) <= constraint.versions[0], constraint.origin
        seen[key] = constraint.versions[0]
    firsts = [c.versions[0] for c in transformers.ordered() if c.component == "compressed-tensors" and not c.binds]
    assert firsts.index(Version("0.3.0")) < firsts.index(Version("0.14.0"))


def test_a_range_says_which_constraint_stopped_each_newer_release(transformers):
    report = transformers
    assert (report.chosen, report.own) == ("5.19.0", "transformers>=5.16,<5.21")
    own = report.ordered()[0]
    assert (own.origin, own.requirement, own.binds, own.holds) == ("the stack", "transformers>=5.16,<5.21", True, True)
    # the check of the stack with each newer release pinned names what stops it
    assert [s.version for s in report.stopped] == ["5.20.0", "5.20.1", "5.20.2"]
    for stopped in report.stopped:
        assert [i for i, _ in stopped.errors] == ["requires:vllm==0.32.0:transformers"]
        assert f"the stack has transformers {stopped.version}" in stopped.errors[0][1]
    # and what the stack's own range keeps out, nearest first
    assert report.excluded[0] == "5.21.0" and all(Version(v) >= Version("5.21") for v in report.excluded)
    text = compat.engine.why.render(report)
    assert "Why transformers 5.19.0 and not a newer release" in text
    assert f"{report.excluded[0]} - {report.excluded[-1]} ({len(report.excluded)} releases): excluded by the " \
           "stack's own transformers>=5.16,<5.21" in text


def test_a_requirement_whose_extra_is_not_asked_for_does_not_bind(transformers):
    extras = [c for c in transformers.constraints if "extra ==" in c.conditions]
    assert extras and not any(c.binds for c in extras)


@pytest.mark.parametrize("subject, stack, origin, requirement", [
    ("python", '[system]\npython = "3.10"\ncuda = "13.0"\n[packages]\nvllm = "0.32.0"\n',
     "vllm 0.32.0 - 0.34.0 (3 releases)", "Python >=3.11,<3.15"),
    ("driver", '[system]\npython = "3.12"\ncuda = "13.0"\ndriver = "535.104.05"\n', "CUDA 13.x", "NVIDIA driver >=580"),
    ("gpu", H200.replace("H200", "A100") + '[packages]\nltx-2 = "1.5.0"\n[options.ltx-2]\nquantization = "fp8-scaled-mm"\n',
     "rule ltx-2.fp8-scaled-mm.compute-capability (requirement, ltx-2 >=1.1.7)", "compute capability >=8.9"),
    ("cuda", '[system]\npython = "3.12"\ncuda = "12.8"\n[hardware]\ngpu = "H100"\n[packages]\ntorch = "2.13.0"\n',
     "build torch.derived.2.13.0.pypi.linux-x86_64 (torch ==2.13.0)", "CUDA 13.x (the build targets CUDA 13.0)"),
])
def test_the_machine_as_a_subject_shows_the_constraint_that_fails(db, subject, stack, origin, requirement):
    report = compat.why(subject, compat.loads_stack(stack, db), database=db)
    assert report.kind == "machine"
    failing = [(c.origin, c.requirement) for c in report.constraints if c.binds and c.holds is False]
    assert (origin, requirement) in failing
    assert report.ordered()[0].origin == "the stack"


def test_why_json_and_its_error_object(tmp_path):
    result = run("why", "vllm", "--stack", EXAMPLES / "h200-vllm.toml", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["subject"], data["kind"], data["chosen"], data["stack_constraint"]) == ("vllm", "package", "0.32.0",
                                                                                       "vllm==0.32.0")
    assert data["newer"]["excluded_by_stack"][:2] == ["0.33.0", "0.34.0"] and data["newer"]["stopped"] == []
    assert {"from", "releases", "requirement", "layer", "when", "rule", "source", "binds", "holds"} <= set(
        data["constraints"][0])
    bad = run("why", "vllmm", "--format", "json")
    assert bad.exit_code == 2 and "did you mean 'vllm'" in bad.stderr
    assert "did you mean 'vllm'" in json.loads(bad.stdout)["error"]["message"]


def test_loads_stack_errors_name_the_string_and_check_accepts_it(db):
    with pytest.raises(compat.StackError) as error:
        compat.loads_stack('[system]\npython = "3.12"\n[hardware]\ngpu = "H9000"\n', db)
    assert (error.value.file, error.value.key, error.value.line) == ("<string>", "[hardware] gpu", 4)
    with pytest.raises(compat.StackError, match=r"^<string>:1:\d+: invalid TOML"):
        compat.loads_stack("[system\n", db)
    report = compat.check(compat.loads_stack(H200 + '[packages]\nvllm = "0.32.0"\ntransformers = "5.20.1"\n', db),
                          database=db)
    assert [f.id for f in report.errors] == ["requires:vllm==0.32.0:transformers"]
    assert report.location(report.errors[0]).line == 7  # the vllm line of the text


def test_resolve_pins_the_stack_or_says_why_not(db):
    pins = compat.resolve(EXAMPLES / "h200-vllm.toml", database=db)
    assert pins.ok and pins.report is None
    assert list(pins.packages) == ["vllm", "transformers", "torch"] and pins.packages["transformers"] == "5.19.0"
    assert pins.added["flashinfer-python"] == "0.7.0.post1" and list(pins.added) == sorted(pins.added)
    failed = compat.resolve(EXAMPLES / "transformers-too-new.toml", database=db)
    assert not failed.ok and failed.pins == {}
    assert [f.id for f in failed.report.errors] == ["requires:vllm==0.32.0:transformers"]
    assert failed.to_dict()["report"]["ok"] is False


@pytest.mark.parametrize("call, error", [
    (lambda: compat.why(3), TypeError),
    (lambda: compat.why("vllm", 3), TypeError),
    (lambda: compat.why("vllm", database="data"), TypeError),
    (lambda: compat.resolve(EXAMPLES / "h200-vllm.toml", pre="yes"), TypeError),
    (lambda: compat.resolve(EXAMPLES / "h200-vllm.toml", max_rounds=0), ValueError),
    (lambda: compat.loads_stack(b'[system]\npython = "3.12"\n'), TypeError),
    (lambda: compat.why("vllmm"), compat.CompatError),
])
def test_library_arguments_are_checked_at_the_boundary(call, error):
    with pytest.raises(error):
        call()


def test_db_lint_json_lists_the_problems_with_the_same_exit_code(tmp_path):
    root = tmp_path / "db"
    (root / "constraints").mkdir(parents=True)
    (root / "constraints" / "_sources.toml").write_text("")
    (root / "constraints" / "demo.toml").write_text(
        'schema = 1\n[component]\nname = "demo"\nkind = "application"\nsummary = "a demo"\n\n'
        '[[release]]\nversion = "1.0.0"\nsource = "no-such-source"\n')
    text = run("db", "lint", "--db", root)
    result = run("db", "lint", "--db", root, "--format", "json")
    assert result.exit_code == text.exit_code == 1
    problems = json.loads(result.stdout)
    assert [p["text"] for p in problems] == text.stdout.splitlines()
    cited = next(p for p in problems if "no-such-source" in p["message"])
    assert (cited["file"].endswith("demo.toml"), cited["key"]) == (True, "release 1.0.0.source")
    missing = run("db", "lint", "--db", tmp_path / "nowhere", "--format", "json")
    assert missing.exit_code == 2 and json.loads(missing.stdout)["error"]["type"] == "DatabaseError"


def test_why_takes_the_stack_after_the_name_as_check_takes_it():
    stack = EXAMPLES / "h200-vllm.toml"
    assert run("why", "vllm", stack).stdout == run("why", "vllm", "--stack", stack).stdout
    both = run("why", "vllm", stack, "--stack", EXAMPLES / "broken-upgrade.toml")
    assert both.exit_code == 2 and "two stacks" in both.output


def test_with_a_stack_why_shows_what_binds_first_and_counts_the_rest():
    """`why gpu` on an H200 stack printed 82 lines of which 5 apply: what binds
    is shown, and one line counts the rest (--all lists them, JSON has them all)."""
    from click.testing import CliRunner

    from compat.cli import cli

    from .conftest import EXAMPLES

    stack = str(EXAMPLES / "h200-vllm.toml")
    short = CliRunner().invoke(cli, ["why", "gpu", stack])
    full = CliRunner().invoke(cli, ["why", "gpu", stack, "--all"])
    data = CliRunner().invoke(cli, ["why", "gpu", stack, "-f", "json"])
    assert short.exit_code == full.exit_code == data.exit_code == 0
    import json

    constraints = json.loads(data.output)["constraints"]
    binding = [c for c in constraints if c["binds"]]
    shown = [line for line in short.output.splitlines() if line.endswith("]") and line[2:3] in "✓✗?!"]
    assert len(shown) == len(binding) and len(binding) < len(constraints)
    assert f"  and {len(constraints) - len(binding)} constraint(s) that do not bind this stack (--all lists them)" \
        in short.output
    assert len(full.output.splitlines()) > len(short.output.splitlines()) + 50
    assert "blank: does not bind this stack" in full.output and "blank:" not in short.output
    # without a stack, nothing binds or not: every constraint is listed
    alone = CliRunner().invoke(cli, ["why", "gpu"])
    assert "do not bind" not in alone.output and len(alone.output.splitlines()) > 50
