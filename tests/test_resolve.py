"""compat resolve, explanations, suggestions, compat why and the round budget."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from compat import Database, DatabaseError, ResolutionTooComplex, check, load_stack
from compat.cli import cli
from compat.engine.resolver import StackProvider, resolve

from .conftest import EXAMPLES, ROOT

VLLM_AND_SGLANG = '[system]\npython = "3.12"\ncuda = "13.0"\n[packages]\nvllm = "0.32.0"\nsglang = "0.5.22"\n'


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_resolve_pins_every_range_and_the_tracked_dependencies(tmp_path):
    result = run("resolve", EXAMPLES / "h200-vllm.toml")
    assert result.exit_code == 0, result.stderr
    assert 'transformers = "5.19.0"' in result.stdout
    assert 'flashinfer-python = "0.7.0.post1"' in result.stdout  # pulled in by vllm's pin
    out = tmp_path / "pinned.toml"
    out.write_text(result.stdout)
    report = check(out)
    assert report.ok
    assert all(not any(c in v for c in "<>=,") for v in report.packages.values())


def test_resolve_keeps_the_rest_of_the_stack(tmp_path):
    result = run("resolve", EXAMPLES / "vllm-omni-fa3-fp8.toml")
    assert result.exit_code == 0
    for text in ('gpu = "L20X"', 'diffusion-kv-cache-dtype = "fp8"', "head_dim = 128", 'family = "wan2.2"'):
        assert text in result.stdout


def test_resolve_writes_atomically_with_output(tmp_path):
    target = tmp_path / "out" / "pinned.toml"
    target.parent.mkdir()
    result = run("resolve", EXAMPLES / "h200-vllm.toml", "-o", target)
    assert result.exit_code == 0 and target.exists()
    assert sorted(p.name for p in target.parent.iterdir()) == ["pinned.toml"]
    assert check(target).ok


def test_resolve_requirements_format_comments_applications(tmp_path):
    result = run("resolve", EXAMPLES / "h200-vllm.toml", "--format", "requirements")
    assert "vllm==0.32.0" in result.stdout.splitlines()
    app = run("resolve", EXAMPLES / "ltx2-fp8-a100.toml", "--format", "requirements")
    assert app.exit_code == 1  # fp8-scaled-mm on an A100: PyTorch refuses torch._scaled_mm below 8.9
    fixed = tmp_path / "ltx2-fp8-l40s.toml"
    fixed.write_text(EXAMPLES.joinpath("ltx2-fp8-a100.toml").read_text().replace('"A100 80GB"', '"L40S"'))
    app = run("resolve", fixed, "--format", "requirements")
    assert app.exit_code == 0, app.output
    assert "# ltx-2==1.5.0  (ltx-2 is an application, not a package on the index)" in app.stdout.splitlines()


def test_resolve_failure_explains_and_writes_nothing(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text(VLLM_AND_SGLANG)
    target = tmp_path / "pinned.toml"
    result = run("resolve", stack, "-o", target)
    assert result.exit_code == 1
    assert "Why it cannot be resolved" in result.stderr
    assert "sglang 0.5.22 requires torch==2.14.1" in result.stderr
    assert not target.exists()


def test_resolve_prefers_finals_unless_asked(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nvllm-omni = ">=0.30"\n')
    assert 'vllm-omni = "0.30.0"' in run("resolve", stack).stdout
    assert 'vllm-omni = "0.32.0rc1"' in run("resolve", stack, "--pre").stdout
    stack.write_text('[system]\npython = "3.12"\n[packages]\nvllm-omni = ">=0.32.0rc1"\n')
    assert 'vllm-omni = "0.32.0rc1"' in run("resolve", stack).stdout  # the specifier names one


def test_max_rounds_budget_is_a_clear_exit_2(tmp_path):
    result = run("resolve", EXAMPLES / "h200-vllm.toml", "--max-rounds", "1")
    assert result.exit_code == 2
    assert "too complex" in result.stderr and "--max-rounds" in result.stderr
    assert run("check", EXAMPLES / "h200-vllm.toml", "--max-rounds", "1").exit_code == 2


def synthetic_database(root: Path, packages: dict[str, dict[str, list[str]]], *, gpus: bool = False) -> Database:
    """A database of snapshots alone: package -> version -> its Requires-Dist
    (with `gpus`, the bundled GPU catalog too, for stacks that name a GPU)."""
    (root / "constraints").mkdir(parents=True)
    (root / "constraints" / "_sources.toml").write_text("schema = 1\n")
    (root / "metadata").mkdir()
    if gpus:
        (root / "gpus.toml").write_text((ROOT / "data" / "gpus.toml").read_text())
    for name, releases in packages.items():
        lines = [json.dumps({"schema": 1, "name": name, "index": "synthetic", "taken": "2026-12-02"})]
        lines += [json.dumps({"version": version, "requires_dist": needs}) for version, needs in releases.items()]
        (root / "metadata" / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    return Database.load(root)


def _stack(db: Database, packages: dict[str, str]):
    return load_stack({"system": {"python": "3.12"}, "packages": packages}, db)


def _pins(resolution) -> dict[str, str]:
    return {name: str(candidate.version) for name, candidate in resolution.versions.items()}


# tool needs base 2.0; app 2.0 needs lib 2.0, which needs base 1.0: app must step back to 1.0.
STEP_BACK = {
    "app": {"1.0": [], "2.0": ["lib==2.0"]},
    "lib": {"2.0": ["base<=1.0"]},
    "base": {"1.0": [], "2.0": []},
    "tool": {"1.0": ["base==2.0"]},
}


def test_the_budget_counts_rounds(tmp_path):
    # resolvelib's own budget also sized its optimistic backjumping: this
    # stack, solved in 7 rounds, was a conflict under budgets of 7 to 49
    db = synthetic_database(tmp_path / "db", STEP_BACK)
    stack = _stack(db, {"app": ">=1", "tool": ">=1"})
    solved = resolve(stack, db)
    assert solved.ok and _pins(solved) == {"app": "1.0", "tool": "1.0", "base": "2.0"}
    rounds = solved.rounds
    for budget in (rounds, rounds + 1, 2 * rounds, 7 * rounds, 100 * rounds):
        again = resolve(stack, db, max_rounds=budget)
        assert (again.ok, _pins(again), again.rounds) == (True, _pins(solved), rounds), budget
    with pytest.raises(ResolutionTooComplex, match=f"after {rounds - 1} rounds"):
        resolve(stack, db, max_rounds=rounds - 1)


def test_a_dependency_cycle_left_behind_is_no_crash(tmp_path):
    # app 2.0 pulls in a cycle, then steps back to 1.0, which needs none of it:
    # resolvelib's own walk of what is still needed recursed without end there
    db = synthetic_database(tmp_path / "db", {
        "app": {"1.0": [], "2.0": ["plugin", "cycle-a"]},
        "plugin": {"1.0": ["app<2"]},
        "cycle-a": {"1.0": ["cycle-b"]},
        "cycle-b": {"1.0": ["cycle-a"]},
    })
    resolution = resolve(_stack(db, {"app": ">=1"}), db)
    assert resolution.ok and _pins(resolution) == {"app": "1.0"}


def test_each_requirement_is_judged_once_per_candidate(tmp_path, monkeypatch):
    # resolvelib asks every round whether each pin meets each requirement on it
    judged: dict[tuple[int, int], int] = {}
    asked = 0
    satisfies, is_satisfied_by = StackProvider._satisfies, StackProvider.is_satisfied_by

    def counting_judge(requirement, candidate):
        key = (id(requirement), id(candidate))
        judged[key] = judged.get(key, 0) + 1
        return satisfies(requirement, candidate)

    def counting_question(self, requirement, candidate):
        nonlocal asked
        asked += 1
        return is_satisfied_by(self, requirement, candidate)

    monkeypatch.setattr(StackProvider, "_satisfies", staticmethod(counting_judge))
    monkeypatch.setattr(StackProvider, "is_satisfied_by", counting_question)
    chain = {f"link-{n}": {f"{v}.0": [f"link-{n + 1}=={v}.0"] for v in (1, 2, 3)} for n in range(8)}
    chain["link-8"] = {"1.0": [], "2.0": [], "3.0": []}
    db = synthetic_database(tmp_path / "db", chain)
    # resolvelib's search (the greedy choice, tried first, asks each question once anyway)
    resolution = resolve(_stack(db, {"link-0": ">=1", "link-8": "1.0"}), db, exhaustive=True)
    assert resolution.ok and set(_pins(resolution).values()) == {"1.0"}
    assert max(judged.values()) == 1
    assert asked > 2 * len(judged)


# -- the resolver against every assignment of versions, on small random databases ----------------

OPERATORS = ("==", "!=", ">=", "<=", "<", ">")


@st.composite
def universes(draw):
    """A few packages of a few releases, each needing others at some bound, and the stack's ranges."""
    names = [f"p{i}" for i in range(draw(st.integers(2, 5)))]
    packages = {}
    for name in names:
        releases = {}
        for version in range(1, draw(st.integers(1, 4)) + 1):
            others = draw(st.lists(st.sampled_from([n for n in names if n != name]), max_size=2, unique=True))
            releases[f"{version}.0"] = [f"{o}{draw(st.sampled_from(OPERATORS))}{draw(st.integers(1, 4))}.0" for o in others]
        packages[name] = releases
    roots = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
    # ranges that admit a release (one that admits none is not judged: docs/resolve.md)
    return packages, {name: draw(st.sampled_from([">=1", f"<={len(packages[name])}.0"])) for name in roots}


def solvable(packages: dict[str, dict[str, list[str]]], stack: dict[str, str]) -> bool:
    """Whether some choice (a release, or nothing) for each package meets the
    stack and the requirements of every release chosen. A requirement that no
    release in the database meets is a gap, which binds nothing, unless the
    stack names the package (docs/resolve.md)."""
    releases = {n: [Version(v) for v in r] for n, r in packages.items()}
    bindings = {(n, v): [b for t in packages[n][str(v)] if (b := _binding(t, releases, stack))]
                for n in packages for v in releases[n]}
    roots = [(n, SpecifierSet(s)) for n, s in stack.items()]
    names = sorted(packages)
    for choice in itertools.product(*[[None, *releases[n]] for n in names]):
        chosen = dict(zip(names, choice))
        needs = roots + [b for n, v in chosen.items() if v is not None for b in bindings[n, v]]
        if all(chosen[n] is not None and s.contains(chosen[n]) for n, s in needs):
            return True
    return False


def _binding(text: str, releases: dict[str, list[Version]], stack: dict[str, str]) -> tuple[str, SpecifierSet] | None:
    requirement = Requirement(text)
    met = any(requirement.specifier.contains(v) for v in releases[requirement.name])
    return (requirement.name, requirement.specifier) if met or requirement.name in stack else None


@settings(deadline=None, derandomize=True, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(universes())
def test_the_resolver_finds_a_solution_exactly_when_one_exists_under_any_budget(tmp_path_factory, universe):
    packages, stack_packages = universe
    db = synthetic_database(tmp_path_factory.mktemp("db"), packages)
    stack = _stack(db, stack_packages)
    resolution = resolve(stack, db, max_rounds=100_000)
    assert resolution.ok == solvable(packages, stack_packages)
    if resolution.ok:  # and the answer is one
        pins = _pins(resolution)
        releases = {n: [Version(v) for v in r] for n, r in packages.items()}
        for name, version in pins.items():
            for binding in filter(None, (_binding(text, releases, stack_packages) for text in packages[name][version])):
                assert binding[0] in pins and binding[1].contains(pins[binding[0]]), (pins, name, binding)
    again = resolve(stack, db, max_rounds=max(resolution.rounds, 1))
    assert (again.ok, again.rounds, _pins(again)) == (resolution.ok, resolution.rounds, _pins(resolution))
    if resolution.rounds > 1:
        # below it, the search runs out of rounds; its second attempt, which
        # passes over releases whose requirements nothing installable meets,
        # may still answer: then the same, within the budget
        try:
            below = resolve(stack, db, max_rounds=resolution.rounds - 1)
        except ResolutionTooComplex:
            pass
        else:
            assert (below.ok, _pins(below)) == (resolution.ok, _pins(resolution))
            assert below.rounds <= resolution.rounds - 1


def test_explanation_is_a_derivation_in_text_and_json(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text(VLLM_AND_SGLANG)
    data = json.loads(run("check", stack, "--format", "json").stdout)
    explanation = data["explanation"]
    # vllm 0.32.0 and sglang 0.5.22 pin different torch, xgrammar, flashinfer-python...: one of them is the explanation
    assert explanation["conclusion"].startswith("no version of ")
    whos = [[step["who"] for step in chain] for chain in explanation["chains"]]
    assert ["the stack", "sglang 0.5.22"] in whos and ["the stack", "vllm 0.32.0"] in whos
    assert explanation["text"].startswith("Because the stack requires")


def test_explanation_reads_virtual_packages_as_machine_facts():
    report = check({"system": {"python": "3.12", "cuda": "13.0"}, "hardware": {"gpu": "V100"}, "packages": {"torch": "2.15.0"}})
    text = report.explanation.text()
    assert "the V100's compute capability is 7.0" in text
    assert "torch 2.15.0 requires compute capability >=7.5 when CUDA >=13 (rule torch.cuda-13.architectures)" in text


def test_no_explanation_for_a_stack_that_resolves():
    assert check(EXAMPLES / "h200-vllm.toml").explanation is None


def test_suggestions_are_verified_and_smallest_first():
    report = check({"system": {"python": "3.12", "cuda": "13.0"}, "packages": {"vllm": "0.32.0", "transformers": "5.20.1"}})
    # one component each; vllm moves one release, transformers two (5.20.1 -> 5.20.0 -> 5.19.0)
    assert [(c.name, c.new, s.distance) for s in report.suggestions for c in s.changes] == [
        ("vllm", "0.33.0", 1),
        ("transformers", "5.19.0", 2),
    ]
    for suggestion in report.suggestions:
        assert check(suggestion.stack).errors == []


def test_suggestion_can_change_python():
    report = check({"system": {"python": "3.10"}, "hardware": {"gpu": "H100"}, "packages": {"vllm": "0.32.0"}})
    assert any(c.name == "python" and c.new == "3.11" for s in report.suggestions for c in s.changes)


def test_upgrade_suggestion_says_what_else_moves():
    report = check({"system": {"python": "3.12", "cuda": "13.0"}, "packages": {"vllm": "0.32.0", "transformers": "5.20.1"}})
    texts = [s.text() for s in report.suggestions]
    upgrade = next(t for t in texts if t.startswith("use vllm 0.33.0 (upgrade from 0.32.0)"))
    assert "which also moves" in upgrade and "torch to 2.14.0" in upgrade
    # one release away ranks before two releases away
    assert texts.index(upgrade) < texts.index("use transformers 5.19.0 (downgrade from 5.20.1)")


def test_why_lists_every_constraint_with_its_origin():
    result = run("why", "transformers")
    assert result.exit_code == 0
    assert "vllm 0.32.0: transformers>=5.16.1,<5.20.0 [metadata]" in result.stdout


def test_why_with_a_stack_marks_what_binds(tmp_path):
    stack = tmp_path / "stack.toml"
    stack.write_text('[system]\npython = "3.12"\n[packages]\nvllm = "0.32.0"\ntransformers = "5.20.1"\n')
    out = run("why", "transformers", "--stack", stack).stdout
    assert " ✗ vllm 0.32.0: transformers>=5.16.1,<5.20.0 [metadata]" in out


def test_why_rules_of_the_component_itself():
    out = run("why", "ltx-2").stdout
    assert "rule ltx-2.fp8-scaled-mm.compute-capability" in out


def test_why_unknown_name_exits_2():
    result = run("why", "vllmm")
    assert result.exit_code == 2 and "did you mean 'vllm'" in result.stderr


@pytest.mark.parametrize("name", ["vllm==0.32.0", "../x", "vllm>=0.30"])
def test_why_of_what_is_not_a_name_says_so_as_written(name):
    result = run("why", name)
    assert result.exit_code == 2 and f"{name!r} is not a name" in result.stderr


# -- what a check reads --------------------------------------------------------------------------


def test_a_pinned_check_lists_no_release_of_what_it_pins(tmp_path, monkeypatch):
    # a check of a pinned stack (a lock file's) costs the same however many releases the snapshots hold
    from compat.engine.check import check_stack
    from compat.knowledge.database import Releases

    listed: list[str] = []
    every = Releases._every

    def listing(self):
        if self._all is None:
            listed.append(self._package)
        return every(self)

    monkeypatch.setattr(Releases, "_every", listing)
    packages = {"app": {f"{v}.0": [f"lib>={v}.0"] for v in range(1, 40)}, "lib": {f"{v}.0": [] for v in range(1, 40)}}
    db = synthetic_database(tmp_path / "db", packages)
    assert check_stack(_stack(db, {"app": "39.0", "lib": "39.0"}), db).ok
    assert listed == []
    # a range is chosen from the releases newest first, drawn as far as they are read: none is listed
    # whole, and only the group of the release taken (39.x) is parsed
    import compat.knowledge.database as database

    parsed: list[str] = []
    release_version = database._release_version

    def parsing(text, path, number, seen):
        parsed.append(text)
        return release_version(text, path, number, seen)

    monkeypatch.setattr(database, "_release_version", parsing)
    report = check_stack(_stack(db, {"app": "39.0", "lib": ">=2"}), db)
    assert report.ok and report.packages["lib"] == "39.0"
    assert listed == [] and parsed == ["39.0"]


VERSION_TEXTS = st.sampled_from(["0.32.0", "0.32.1", "0.32.1rc1", "0.4", "0.4.0.post1", "1", "1.0.0", "1!0.1", "v2.0",
                                 "2.0.0+cu128", "2.0.0.dev1", "10.0", "2.10.0a1", "1.post2", "4rc1", "0.32.10"])


@settings(max_examples=150, deadline=None)
@given(st.lists(VERSION_TEXTS, max_size=10), st.lists(VERSION_TEXTS, max_size=3))
def test_releases_newest_first_are_the_sorted_releases(tmp_path_factory, texts, curated):
    """`Releases.newest_first` parses a group of releases only when reached,
    and gives what sorting them all gives; curated releases take their place."""
    from compat.knowledge.database import Releases

    unique: dict[Version, str] = {}
    for text in texts:  # each release once, written as given (v2.0, 1!0.1: parsed at once)
        unique.setdefault(Version(text), text)
    lines = {text: (number, False, lambda: {}) for number, text in enumerate(unique.values(), start=2)}
    made = {Version(t): None for t in curated}
    releases = Releases("lib", str(tmp_path_factory.mktemp("r") / "lib.jsonl"), lines, made)  # type: ignore[arg-type]
    assert list(releases.newest_first()) == sorted(set(unique) | set(made), reverse=True)


def test_a_curated_release_keeps_its_own_spelling_and_a_broken_list_stays_broken(tmp_path):
    """A release the curated file writes 2.13 and the snapshot 2.13.0 is the
    curated one, as `_every` gives it; a line that cannot be parsed is the
    same error every time the list is read past it."""
    from compat.knowledge.database import Drawn, Releases

    lines = {text: (number, False, lambda: {}) for number, text in enumerate(["2.12.0", "2.13.0", "2.14.0"], start=2)}
    releases = Releases("lib", str(tmp_path / "lib.jsonl"), lines, {Version("2.13"): None})  # type: ignore[dict-item]
    assert [str(v) for v in releases.newest_first()] == ["2.14.0", "2.13", "2.12.0"]
    twice = {text: (number, False, lambda: {}) for number, text in enumerate(["1.0", "1.0.0", "2.0"], start=2)}
    drawn = Drawn(Releases("lib", str(tmp_path / "lib.jsonl"), twice, {}).newest_first())
    assert drawn[0] == Version("2.0")
    for _ in range(2):
        with pytest.raises(DatabaseError, match="listed twice"):
            list(drawn)


def test_releases_are_found_as_pep_440_compares_them(tmp_path):
    db = synthetic_database(tmp_path / "db", {"lib": {"1.0.0": [], "2.0rc1": [], "2.0.0": []}})
    releases = db.component("lib").releases
    assert releases[Version("1")].version == Version("1.0.0") and Version("2.0") in releases
    assert Version("3.0") not in releases and releases.get(Version("3.0")) is None
    assert list(releases) == [Version("1.0.0"), Version("2.0rc1"), Version("2.0.0")]  # file order
    assert [r.is_prerelease for r in releases.values()] == [False, True, False]


def test_a_package_no_release_of_which_can_be_installed_is_a_conflict_not_too_complex(tmp_path):
    """Every release of `leaf` is yanked: each of the many releases of `top`
    needs `mid`, which needs `leaf`. Tried one by one, they outrun any budget;
    the second attempt passes over them, and the check says why, down the chain."""
    packages = {
        "top": {f"1.{i}": ["mid>=1"] for i in range(60)},
        "mid": {f"1.{i}": ["leaf>=1"] for i in range(30)},
        "leaf": {"1.0": [], "1.1": []},
    }
    synthetic_database(tmp_path / "db", packages)
    leaf = tmp_path / "db" / "metadata" / "leaf.jsonl"
    header, *releases = leaf.read_text().splitlines()
    leaf.write_text("\n".join([header, *(line[:-1] + ', "yanked": true}' for line in releases)]) + "\n")
    db = Database.load(tmp_path / "db")
    stack = _stack(db, {"top": ">=1"})
    resolution = resolve(stack, db, max_rounds=50)
    assert not resolution.ok
    from compat.engine.check import check_stack

    report = check_stack(stack, db, max_rounds=50, suggest_fixes=False)
    (finding,) = [f for f in report.errors if f.id.startswith("requires:top==1.59:")]
    assert finding.id == "requires:top==1.59:leaf" and report.exit_code == 1
    assert "top 1.59 requires mid>=1; mid 1.29, the newest it admits, requires leaf>=1" in finding.message


_BOUNDS = st.sampled_from(["", ">=", ">", "<", "<=", "==", "!=", "~="])
_VERSIONS = st.sampled_from(["0", "1.0", "2.0rc1", "2.2", "2.2.post1", "4.57.0", "5.16", "5.19.0", "5.21.0.dev0",
                             "5.21", "5.99", "2.13.0", "0.32.0", "2.5"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.tuples(_BOUNDS, _VERSIONS), min_size=0, max_size=3),
       name=st.sampled_from(["transformers", "numpy", "torch", "vllm", "aiohttp"]))
def test_the_releases_a_range_admits_are_those_it_contains(parts, name):
    """`_admitted` stops at the first release under the range's lower bound
    (the list is newest first): it must keep what contains() keeps."""
    from compat.engine.resolver import StackProvider

    specifier = SpecifierSet(",".join(f"{op}{v}" for op, v in parts if op and not (op == "~=" and "." not in v)))
    db = Database.load()
    provider = StackProvider(load_stack({"system": {"python": "3.12"}, "packages": {"vllm": "0.32.0"}}, db), db)
    everything = list(provider._admitted(name, SpecifierSet()))
    releases = db.component(name).releases
    assert everything == sorted((v for v in releases if not releases[v].is_yanked), reverse=True)
    assert list(provider._admitted(name, specifier)) == [v for v in everything if specifier.contains(v, prereleases=True)]
