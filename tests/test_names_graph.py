"""The names graph (knowledge/graph.py): which packages a check resolves.

An edge that only an extra brings belongs to that extra's node, so a
package whose extra alone reaches a tracked package is resolved only when
something asks for that extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compat.knowledge.graph import (_edges, _extras_under, build_graph, read_graph, relevant, requirers,
                                   requirers_first)


def snapshot(folder: Path, name: str, lines: list[list[str]], tracked: bool = False) -> None:
    header = {"schema": 1, "name": name, "index": "https://index.example/simple/", "taken": "2026-12-01",
              "tracked": tracked}
    releases = [{"version": f"1.{n}.0", "requires_dist": requires} for n, requires in enumerate(lines)]
    (folder / f"{name}.jsonl").write_text("\n".join(json.dumps(x) for x in [header, *releases]) + "\n")


@pytest.fixture
def graph(tmp_path):
    snapshot(tmp_path, "hub", [[]], tracked=True)
    snapshot(tmp_path, "sdk", [["urllib3"], ["urllib3", "hub>=0.1; extra == 'hub'"]])  # hub only under [hub]
    snapshot(tmp_path, "web", [["sdk>=1"]])  # needs sdk, not sdk[hub]
    snapshot(tmp_path, "app", [["sdk[hub]>=1"]])  # asks for the extra
    snapshot(tmp_path, "cli", [["web; python_version >= '3.10'"]])
    snapshot(tmp_path, "either", [["hub; extra == 'a' or python_version < '3.11'"]])  # holds without an extra
    snapshot(tmp_path, "urllib3", [[]])
    return build_graph(str(tmp_path))


def test_an_extra_s_requirement_is_an_edge_of_the_extra(graph):
    assert graph["schema"] == 2
    assert graph["required_by"]["hub"] == "either sdk[hub]"
    assert requirers(graph, "sdk[hub]") == ["app"] and requirers(graph, "sdk") == ["app", "web"]


def test_only_the_packages_through_which_a_target_can_be_reached_are_resolved(graph, tmp_path):
    # app asks for sdk[hub], whose line reaches hub: app, and what bounds sdk (web, and cli through it)
    assert relevant(graph, []) == {"hub", "sdk", "app", "either", "web", "cli"}
    # nobody asks for sdk[hub]: sdk's own lines reach nothing, and web and cli cannot reach hub through it
    (tmp_path / "app.jsonl").unlink()
    assert relevant(build_graph(str(tmp_path)), []) == {"hub", "either"}
    assert relevant(build_graph(str(tmp_path)), ["web"]) == {"hub", "either", "web", "cli"}


def test_a_graph_without_extra_nodes_is_read_as_it_is():
    old = {"schema": 1, "packages": ["a", "b", "c"], "tracked": ["a"], "required_by": {"a": ["b"], "b": ["c"]}}
    assert relevant(old, []) == {"a", "b", "c"}


@pytest.mark.parametrize("line, under, targets", [
    ("hub>=1", (), ("hub",)),
    ("hub[cli,fast]>=1", (), ("hub", "hub[cli]", "hub[fast]")),
    ("hub; extra == 'hf'", ("[hf]",), ("hub",)),
    ("hub; extra == 'Hf_X' and python_version >= '3.10'", ("[hf-x]",), ("hub",)),
    ("hub; (extra == 'a' or extra == 'b') and sys_platform == 'linux'", ("[a]", "[b]"), ("hub",)),
    ("hub; extra == 'a' or extra == 'b'", ("[a]", "[b]"), ("hub",)),
    ("hub; extra == 'a' or python_version < '3.11'", (), ("hub",)),
    ("hub; extra != 'a'", (), ("hub",)),
    ("hub; 'a' == extra", ("[a]",), ("hub",)),
    ("hub[", (), ("hub",)),  # does not parse: its leading name, on the package (a superset)
])
def test_the_edges_of_one_line(line, under, targets):
    assert _edges(line) == (under, targets)


def test_the_bundled_graph_is_the_one_its_snapshots_give():
    from compat.knowledge.paths import default_data_dir

    metadata = Path(default_data_dir()) / "metadata"
    assert read_graph(str(metadata)) == build_graph(str(metadata))


def test_extras_under_refuses_what_it_cannot_read():
    assert _extras_under(None) is None and _extras_under("x") is None


def test_what_bounds_a_package_counts_when_its_extra_reaches_a_target(tmp_path):
    """sdk 1.0's [hub] needs hub<1, sdk 2.0's hub>=2: web's sdk<2 decides
    which applies once app asks for sdk[hub], so web is resolved too."""
    snapshot(tmp_path, "hub", [[]], tracked=True)
    snapshot(tmp_path, "sdk", [["hub<1; extra == 'hub'"], ["hub>=2; extra == 'hub'"]])
    snapshot(tmp_path, "app", [["sdk[hub]"]])
    snapshot(tmp_path, "web", [["sdk<2"]])
    snapshot(tmp_path, "tool", [["web", "app"]])
    graph = build_graph(str(tmp_path))
    assert relevant(graph, ["tool"]) == {"hub", "sdk", "app", "web", "tool"}
    # nobody asks for the extra: sdk is installed without it, and neither it nor its requirers reach hub
    (tmp_path / "app.jsonl").unlink()
    snapshot(tmp_path, "tool", [["web"]])
    assert relevant(build_graph(str(tmp_path)), ["tool"]) == {"hub", "tool"}


def test_a_graph_without_extra_nodes_merged_with_one_that_has_them_loses_no_edge(graph):
    from compat.knowledge.layers import _merge_graphs

    old = {"schema": 1, "packages": ["app2", "sdk"], "tracked": [], "required_by": {"sdk": ["app2"]}}
    merged = _merge_graphs([graph, old])
    assert merged["schema"] == 1 and not any("[" in n for n in (*merged["required_by"], *" ".join(
        merged["required_by"].values()).split()))
    assert "app2" in relevant(merged, []) and "app" in relevant(merged, [])


def test_why_lists_the_requirers_that_need_the_target_through_an_extra():
    import compat

    report = compat.why("huggingface-hub")
    assert any(c.component == "sentry-sdk" and "extra" in c.conditions + c.requirement for c in report.constraints)


def test_the_walk_written_in_the_graph_answers_as_a_walk_would():
    """`reach` (the nodes that reach a tracked package, walked by db sync)
    answers a check whose packages it holds; one naming another package
    walks the graph: both give what the walk gives."""
    from .conftest import ROOT

    written = read_graph(str(ROOT / "data" / "metadata"))
    assert written is not None
    walked = {k: v for k, v in written.items() if k != "reach"}
    assert written["reach"] and set(written["tracked"]) <= set(written["reach"])
    names = sorted(written["packages"])
    for named in ({"vllm", "torch", "transformers"}, {"sglang"}, set(), {"numpy", "vllm"}, {"requests"},
                  set(names[::37]), {"no-such-package"}):
        assert relevant(written, named) == relevant(walked, named), named


def test_a_graph_without_reach_is_walked_from_both_its_lines(tmp_path):
    from compat import Database

    from .test_db_readers import small_database

    data = small_database(tmp_path / "data")
    graph = data / "metadata" / "_graph.json"
    head, edges = graph.read_text().splitlines()
    written = json.loads(head)
    del written["reach"]
    graph.write_text(json.dumps(written) + "\n" + edges + "\n")
    db = Database.load(data)
    whole = read_graph(str(data / "metadata"))
    assert "reach" not in whole and db.relevant([]) == relevant(whole, []) and db.relevant(["vllm"]) == relevant(whole, ["vllm"])


def test_the_closure_order_puts_every_requirer_first_and_an_unasked_extra_ties_no_cycle(graph):
    order = requirers_first(graph)
    # app and web require sdk, cli requires web, sdk requires urllib3; sdk[hub] requires hub
    assert order["cli"] < order["web"] < order["sdk"] < order["urllib3"]
    assert order["app"] < order["sdk"] < order["hub"]  # app asks for sdk[hub]
    assert order["either"] < order["hub"]
    assert set(order) == {"hub", "sdk", "web", "app", "cli", "either", "urllib3"}  # packages only, extras' out


def test_the_closure_order_of_the_bundled_graph_breaks_only_real_cycles(db):
    graph = db.graph()
    order = requirers_first(graph)
    assert order == requirers_first(json.loads(json.dumps(graph)))  # the same from the same file
    late = {(name, by) for name in order for by in requirers(graph, name)
            if "[" not in by and by in order and order[by] > order[name]}
    # each is a cycle of requirements (fastapi and fastapi-cli require each other, some through an
    # extra someone asks for): the rest are in order
    assert len(late) <= 6, late
