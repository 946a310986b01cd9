"""compat matrix: the compatible cells of a product of axes, and the fewest rows that cover them."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.version import Version

import compat
from compat import cli
from compat.engine.check import check_stack
from compat.engine.covering import cover, tuples_of
from compat.engine.findings import Finding, Report
from compat.engine.matrix import build_matrix
from compat.knowledge.axes import load_axes
from compat.sources.axes import Axes, Axis
from compat.knowledge.binding import load_stack
from compat.stack import Stack, System

from .conftest import EXAMPLES

# Products small enough to check every cell of: software (12 cells, 3 compatible),
# and the machine a build must fit (24 cells, 9 compatible).
BASE = {"system": {"cuda": "13.0"}, "hardware": {"gpu": "H100"}}
VALUES = {"python": ["3.10", "3.12"], "vllm": ["0.31.0", "0.32.0"], "transformers": ["5.16.0", "5.18.0", "5.20.1"]}
PRODUCTS = {
    "software": (BASE, VALUES),
    "machine": ({"system": {"python": "3.12"}}, {"cuda": ["12.8", "13.0"], "driver": ["535.104.05", "580.95.05"],
                                                  "gpu": ["A100", "H100", "RTX 5090"], "torch": ["2.10.0", "2.13.0"]}),
}


def run(capsys, *args):
    with pytest.raises(SystemExit) as info:
        cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.fixture(scope="module")
def brute(db):
    """Every cell of each product checked one by one: cell values -> the IDs
    of its errors (none: compatible). `compat.check` adds suggestions to a
    failing report, which do not bear on whether it fails; they are left out
    here to keep the suite fast (the slow test below uses compat.check)."""
    verdicts = {}
    for base, values in PRODUCTS.values():
        axes = load_axes({"base": base, "axes": values}, db)
        for choice in itertools.product(*(range(n) for n in axes.sizes)):
            report = check_stack(load_stack(axes.tables(choice), db), db, suggest_fixes=False)
            verdicts[key(axes.values(choice))] = {f.id for f in report.errors}
    return verdicts


def key(values):
    return tuple(sorted(values.items()))


def assert_matches_brute_force(matrix, brute):
    """The matrix holds exactly the cells whose own check passes, and each cell
    it excludes fails with the finding it names."""
    compatible = {key(row.values) for row in matrix.compatible}
    cells = list(itertools.product(*(a.values for a in matrix.axes.axes)))
    expected = set()
    for values in cells:
        cell = key(dict(zip(matrix.axes.names, values)))
        if not brute[cell]:
            expected.add(cell)
    assert compatible == expected
    dropped = 0
    for values, exclusion in matrix.excluded_cells():
        assert exclusion.finding.id in brute[key(values)], (values, exclusion)
        dropped += 1
    assert dropped == sum(e.cells for e in matrix.excluded) == len(cells) - len(compatible)


# -- the full matrix is the product filtered by the check ---------------------------

@pytest.mark.parametrize("product", PRODUCTS)
def test_full_matrix_equals_the_product_filtered_by_check(db, brute, product):
    base, values = PRODUCTS[product]
    matrix = compat.matrix({"base": base, "axes": values}, database=db)
    assert_matches_brute_force(matrix, brute)
    assert len(matrix.rows) == {"software": 3, "machine": 9}[product]
    assert matrix.checked < matrix.cells  # incompatibilities learned on the way drop cells unchecked


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_sub_product_equals_its_cells_filtered_by_check(db, brute, data):
    base, values = PRODUCTS[data.draw(st.sampled_from(sorted(PRODUCTS)), label="product")]
    names = data.draw(st.permutations(list(values)), label="axis order")
    axes = {name: data.draw(st.lists(st.sampled_from(values[name]), min_size=1, unique=True), label=name)
            for name in names}
    assert_matches_brute_force(compat.matrix({"base": base, "axes": axes}, database=db), brute)


@pytest.mark.slow
def test_matrix_equals_compat_check_of_every_cell(db):
    values = {"python": ["3.10", "3.12"], "gpu": ["A100", "H100"], "vllm": ["0.31.0", "0.32.0", "0.33.0"],
              "transformers": ["5.16.0", "5.18.0", "5.20.1"]}
    axes = load_axes({"base": {"system": {"cuda": "13.0"}}, "axes": values}, db)
    verdicts = {}
    for choice in itertools.product(*(range(n) for n in axes.sizes)):
        report = compat.check(axes.tables(choice), database=db)
        verdicts[key(axes.values(choice))] = {f.id for f in report.errors}
    assert_matches_brute_force(compat.matrix(axes, database=db), verdicts)


# -- the walk, on made-up constraints ---------------------------------------------------

_NOWHERE = Stack(system=System(python=Version("3.12")))


def made_up_axes(sizes):
    return Axes(axes=tuple(Axis(f"p{a}", "packages", f"p{a}", tuple(f"{v}.0" for v in range(n)))
                           for a, n in enumerate(sizes)), base={})


def made_up_check(pairs, requirements, opaque):
    """A check whose findings are: each forbidden pair of values (a rule naming
    both), each unmet requirement ``p<a> <value> requires p<b> >= t`` (with the
    requirement, as the check gives it), and, for the cells in `opaque`, a
    finding naming a package the cell does not fix (it cannot generalize)."""

    def check(choice):
        findings = []
        for (a, x), (b, y) in pairs:
            if choice[a] == x and choice[b] == y:
                findings.append(Finding(f"pair:p{a}={x}:p{b}={y}", "error", "forbidden", (f"p{a}", f"p{b}"),
                                        "rule", "curated"))
        for (a, x, b), t in requirements.items():
            if choice[a] == x and choice[b] < t:
                findings.append(Finding(f"requires:p{a}=={x}.0:p{b}", "error", "unmet", (f"p{a}", f"p{b}"),
                                        "requirement", "metadata", details={"requirement": f"p{b}>={t}.0"}))
        if tuple(choice) in opaque:
            findings.append(Finding("conflict:resolved", "error", "opaque", ("p0", "resolved"), "rule", "curated"))
        return Report(stack=_NOWHERE, findings=findings, packages={})

    return check


@st.composite
def constrained_products(draw):
    sizes = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    k = len(sizes)
    value = lambda a: st.integers(0, sizes[a] - 1)  # noqa: E731
    pairs, requirements = [], {}
    if k >= 2:
        for _ in range(draw(st.integers(0, 4))):
            a, b = draw(st.lists(st.integers(0, k - 1), min_size=2, max_size=2, unique=True))
            pairs.append(((a, draw(value(a))), (b, draw(value(b)))))
        for _ in range(draw(st.integers(0, 3))):
            a, b = draw(st.lists(st.integers(0, k - 1), min_size=2, max_size=2, unique=True))
            requirements[(a, draw(value(a)), b)] = draw(st.integers(0, sizes[b]))
    cells = list(itertools.product(*(range(n) for n in sizes)))
    opaque = set(draw(st.lists(st.sampled_from(cells), max_size=3)))
    return sizes, pairs, requirements, opaque


@settings(max_examples=120, deadline=None)
@given(constrained_products())
def test_the_walk_keeps_exactly_the_cells_whose_check_passes(problem):
    sizes, pairs, requirements, opaque = problem
    check = made_up_check(pairs, requirements, opaque)
    matrix = build_matrix(made_up_axes(sizes), check)
    cells = list(itertools.product(*(range(n) for n in sizes)))
    assert [r.choice for r in matrix.compatible] == [c for c in cells if check(c).ok]
    for values, exclusion in matrix.excluded_cells():
        choice = tuple(int(values[f"p{a}"].split(".")[0]) for a in range(len(sizes)))
        assert exclusion.finding.id in {f.id for f in check(choice).findings}
    assert sum(e.cells for e in matrix.excluded) == len(cells) - len(matrix.compatible)
    assert matrix.checked <= len(cells)


def test_a_forbidden_pair_drops_every_cell_holding_it_unchecked():
    check = made_up_check([((0, 0), (1, 0))], {}, set())
    matrix = build_matrix(made_up_axes([3, 3, 3]), check)
    assert len(matrix.compatible) == 24 and matrix.checked == 25
    assert [(e.values, e.cells) for e in matrix.excluded] == [({"p0": ("0.0",), "p1": ("0.0",)}, 3)]


def test_an_unmet_requirement_drops_every_value_it_refuses_at_once():
    check = made_up_check([], {(0, 0, 1): 3}, set())  # p0 0.0 requires p1 >= 3.0
    matrix = build_matrix(made_up_axes([2, 5]), check)
    assert matrix.checked == 1 + 2 + 5  # one failing check, then the compatible cells
    assert [e.values for e in matrix.excluded] == [{"p0": ("0.0",), "p1": ("0.0", "1.0", "2.0")}]


def test_a_finding_on_what_the_base_fixes_drops_the_whole_product_at_once(db):
    pinned = load_stack({"system": {"python": "3.12"}, "packages": {"vllm": "0.32.0"}}, db)
    finding = Finding("requires-python:vllm==0.32.0", "error", "no cell", ("vllm", "python"), "requirement",
                      "metadata")

    def check(choice):
        return Report(stack=pinned, findings=[finding], packages={})

    matrix = build_matrix(made_up_axes([3, 4]), check)
    assert matrix.checked == 1 and matrix.compatible == []
    assert [(e.values, e.cells) for e in matrix.excluded] == [({}, 12)]


def test_values_that_make_no_stack_together_exclude_their_cell_with_the_readers_error():
    def check(choice):
        if choice == (1, 1):
            raise compat.StackError("the MI300X is an AMD GPU", file="<axes>", key="[axes] p1")
        return made_up_check([], {}, set())(choice)

    matrix = build_matrix(made_up_axes([2, 2]), check)
    assert len(matrix.compatible) == 3 and matrix.checked == 3
    [exclusion] = matrix.excluded
    assert (exclusion.finding.id, exclusion.finding.message) == (
        "invalid-stack", "not a valid stack: [axes] p1: the MI300X is an AMD GPU")


def test_a_finding_naming_what_the_cell_does_not_fix_stays_with_its_cell():
    check = made_up_check([], {}, {(0, 0), (1, 1)})
    matrix = build_matrix(made_up_axes([2, 2]), check)
    assert matrix.checked == 4 and [e.cells for e in matrix.excluded] == [1, 1]


# -- covering arrays -----------------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(constrained_products(), st.integers(1, 3), st.integers(0, 5))
def test_a_covering_array_holds_every_coverable_tuple_and_only_compatible_rows(problem, strength, seed):
    sizes, pairs, requirements, opaque = problem
    strength = min(strength, len(sizes))
    rows = [c for c in itertools.product(*(range(n) for n in sizes))
            if made_up_check(pairs, requirements, opaque)(c).ok]
    result = cover(rows, sizes, strength=strength, seed=seed)
    kept = [rows[i] for i in result.rows]
    coverable = {t for row in rows for t in tuples_of(row, strength)}
    assert {t for row in kept for t in tuples_of(row, strength)} == coverable
    assert result.covered == len(coverable)
    assert result.tuples == len(coverable) + len(result.uncoverable)
    assert len(set(result.rows)) == len(result.rows)
    assert cover(rows, sizes, strength=strength, seed=seed) == result  # deterministic


def test_pairwise_covers_every_compatible_pair_with_compatible_rows(db, brute):
    matrix = compat.matrix({"base": BASE, "axes": VALUES}, database=db, strength=2)
    for row in matrix.rows:
        assert not brute[key(row.values)]
    compatible_pairs = {pair for cell, errors in brute.items() if not errors and dict(cell).keys() == VALUES.keys()
                        for pair in itertools.combinations(cell, 2)}
    covered = {pair for row in matrix.rows for pair in itertools.combinations(key(row.values), 2)}
    assert covered == compatible_pairs
    coverage = matrix.to_dict()["coverage"]
    assert coverage["covered"] == len(compatible_pairs)
    assert coverage["tuples"] == 2 * 2 + 2 * 3 + 2 * 3
    assert {"python": "3.10", "vllm": "0.32.0"} in coverage["uncoverable"]


# -- the command line ------------------------------------------------------------------

def write_axes(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "axes.toml"
    path.write_text(text, encoding="utf-8")
    return path


SMALL = """
[base.system]
cuda = "13.0"
[base.hardware]
gpu = "H100"
[axes]
python = ["3.10", "3.12"]
vllm = ["0.32.0"]
torch = ["2.13.0"]
transformers = ">=5.19,<5.20"
"""


def test_github_output_is_one_line_of_json_for_fromjson(capsys, tmp_path):
    code, out, err = run(capsys, "matrix", write_axes(tmp_path, SMALL))
    assert code == 0
    assert out.count("\n") == 1  # a job output is one line: matrix=<this>
    matrix = json.loads(out)
    assert matrix == {"include": [{"python": "3.12", "vllm": "0.32.0", "torch": "2.13.0",
                                   "transformers": "5.19.0"}]}
    assert "1 of 2 combinations work" in err


def test_json_output_has_each_rows_warnings_and_the_excluded_combinations(capsys, tmp_path):
    code, out, _ = run(capsys, "matrix", write_axes(tmp_path, SMALL), "--format", "json", "--explain-excluded")
    data = json.loads(out)
    assert code == 0 and data["summary"] == {"cells": 2, "compatible": 1, "rows": 1, "checked": 2, "excluded": 1}
    assert data["rows"][0]["resolved"]["flashinfer-python"] == "0.7.0.post1"
    assert all(w["severity"] == "warning" for w in data["rows"][0]["warnings"])
    [excluded] = data["excluded"]
    assert excluded["values"] == {"python": ["3.10"], "vllm": ["0.32.0"]}
    assert excluded["finding"]["id"] == "requires-python:vllm==0.32.0"


def test_markdown_is_a_support_table_with_the_reasons(capsys, tmp_path):
    code, out, _ = run(capsys, "matrix", write_axes(tmp_path, SMALL), "--format", "markdown",
                       "--rows", "vllm", "--columns", "python")
    assert code == 0
    assert out.splitlines()[:3] == ["| vllm \\ python | 3.10 | 3.12 |", "| --- | --- | --- |",
                                    "| 0.32.0 | ✗<sup>1</sup> | ✓ |"]
    # the reasons are escaped as in `check --format markdown`: "<3.15" would otherwise open an HTML tag
    assert "1. vllm 0.32.0 requires Python \\>=3.11,\\<3.15; the stack has 3.10 (`requires-python:vllm==0.32.0`)" in out


def test_no_compatible_combination_exits_1_with_an_empty_matrix(capsys, tmp_path):
    path = write_axes(tmp_path, SMALL.replace('"3.10", "3.12"', '"3.10"'))
    code, out, _ = run(capsys, "matrix", path)
    assert (code, json.loads(out)) == (1, {"include": []})


@pytest.mark.parametrize(("text", "key", "says"), [
    ('[axes]\nvllmm = ["0.32.0"]\n', "[axes] vllmm", "did you mean 'vllm'?"),
    ('[axes]\ngpu = ["H1000"]\n[base.system]\npython = "3.12"\n', "[axes] gpu", "unknown GPU 'H1000'"),
    ('[axes]\npython = [3.12]\n', "[axes] python", "quote it"),
    ('[axes]\nvllm = ["0.3.20"]\n[base.system]\npython = "3.12"\n', "[axes] vllm", "no release 0.3.20"),
    ('[axes]\nvllm = "=>0.32"\n[base.system]\npython = "3.12"\n', "[axes] vllm", "not a PEP 440 specifier"),
    ('[axes]\npython = ">=3.10"\n', "[axes] python", "give a list"),
    ('[axes]\npython = []\n', "[axes] python", "non-empty list"),
    ('[axes]\npython = ["3.12", "3.12"]\n', "[axes] python", "twice"),
    ('[axes]\npython = ["3.12", "3.12.0"]\n', "[axes] python", "which are the same python"),
    ('[axes]\ngpu = ["H100", "NVIDIA H100"]\n[base.system]\npython = "3.12"\n', "[axes] gpu", "which are the same gpu"),
    ('[axis]\npython = ["3.12"]\n', "axis", "did you mean 'axes'?"),
    ('[base.system]\npython = "3.12"\n', "axes", "missing the [axes] table"),
    ('[axes]\npython = ["3.12"]\n[base.system]\ncuda = 13.0\n', "[base.system] cuda", "quote it"),
    ('[axes]\npython = ["3.12"]\n[base.packages]\nvllmm = "1"\n', "[base.packages] vllmm", "did you mean 'vllm'?"),
])
def test_bad_axes_exit_2_with_one_line_naming_the_file_and_key(capsys, tmp_path, text, key, says):
    path = write_axes(tmp_path, text)
    code, out, err = run(capsys, "matrix", path)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"compat: error: {path}:")
    assert f": {key}: " in err and says in err


def test_strength_beyond_the_axes_exits_2(capsys, tmp_path):
    code, _, err = run(capsys, "matrix", write_axes(tmp_path, SMALL), "--strength", "5")
    assert code == 2 and "has 4 axes" in err


def test_the_library_returns_rows_excluded_and_the_github_object(db, tmp_path):
    matrix = compat.matrix(write_axes(tmp_path, SMALL), database=db, strength=2)
    assert isinstance(matrix, compat.Matrix)
    assert matrix.to_github() == {"include": [row.cell for row in matrix.rows]}
    assert [row.report.ok for row in matrix.rows] == [True]
    assert [e.finding.id for e in matrix.excluded] == ["requires-python:vllm==0.32.0"]
    with pytest.raises(TypeError, match="axes must be"):
        compat.matrix(3)
    with pytest.raises(compat.StackError, match=r"\[axes\] gpu"):
        compat.matrix({"axes": {"gpu": ["nope"], "python": ["3.12"]}}, database=db)


def test_the_example_axes_file_reads(db):
    axes = load_axes(EXAMPLES / "axes.toml", db)
    assert axes.names == ("python", "gpu", "vllm", "transformers")
    assert axes.axes[3].values == ("5.16.0", "5.16.1", "5.17.0", "5.18.0", "5.19.0", "5.20.0", "5.20.1", "5.20.2")


def test_a_matrix_past_its_deadline_stops_with_exit_2(capsys, tmp_path):
    """A matrix is all its cells or none: one that would run on past its
    deadline says so, rather than hold a CI job for hours."""
    with pytest.raises(compat.CompatError, match="did not finish within"):
        compat.matrix(write_axes(tmp_path, SMALL), deadline=1e-9)
    code, out, err = run(capsys, "matrix", write_axes(tmp_path, SMALL), "--deadline", "0.000000001")
    assert (code, out) == (2, "") and "did not finish within" in err and err.count("\n") == 1
    assert run(capsys, "matrix", write_axes(tmp_path, SMALL), "--deadline", "nan")[0] == 2
    with pytest.raises(ValueError, match="deadline"):
        compat.matrix(write_axes(tmp_path, SMALL), deadline=float("inf"))
