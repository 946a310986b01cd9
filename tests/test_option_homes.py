"""One home for each engine flag: the catalogs (data/options/<engine>.toml)
hold what each release's parser says of a flag; a component file's
[options.<flag>] holds only what no catalog can (a flag of a component no
catalog covers, compat's own name for a choice, or `unset`: what the engine's
code does with a flag its parser leaves without a default), each cited."""

from __future__ import annotations

import pytest
from packaging.version import Version

from compat import Database, check
from compat.engine.facts import StackFacts
from compat.errors import DatabaseError
from compat.knowledge._schema import Table
from compat.knowledge.database import _option_spec
from compat.knowledge.binding import load_stack

from .conftest import stack_table

OMNI = {"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"}
AUDIO = {"model-class-name": "LTX2TextToAudioPipeline"}
RULE = "vllm-omni.ltx2-audio.tensor-parallel"


@pytest.fixture(scope="module")
def db():
    return Database.load()


def _engine_tables(db):
    """(component, flag, spec, catalog) for every [options.*] of a component with a catalog."""
    for name in sorted(db.curated()):
        catalog = db.option_catalog(name)
        component = db.component(name)
        if catalog is None or component is None:
            continue
        for flag, spec in sorted(component.options.items()):
            yield name, flag, spec, catalog


def test_no_flag_is_described_in_both_places(db):
    """A component-file table for a flag the engine's catalog defines states
    only `unset`, for a flag some release's parser leaves without a default,
    and agrees with every parser that does give one; a name of compat's own
    must not be a flag of the engine (a stack's value would be judged twice)."""
    problems = []
    for name, flag, spec, catalog in _engine_tables(db):
        if not catalog.knows(flag):
            if not spec.own:
                problems.append(f"{name}: [options.{flag}] is no flag of {name}: mark it own = true")
            continue
        if spec.own:
            problems.append(f"{name}: own name {flag!r} is a flag of {name}'s catalog")
        elif spec.summary or spec.values or spec.default is not None or spec.unset is None:
            problems.append(f"{name}: [options.{flag}] describes a flag data/options/{name}.toml defines")
        else:
            defaults = [d.default for d in catalog.definitions(flag)]
            if None not in defaults:
                problems.append(f"{name}: [options.{flag}] unset: every release's parser gives a default")
            if any(d is not None and d != spec.unset for d in defaults):
                problems.append(f"{name}: [options.{flag}] unset = {spec.unset!r} disagrees with a parser default")
    assert not problems, "\n".join(problems)


def test_every_unset_cites_code(db):
    for name, flag, spec, _ in _engine_tables(db):
        if spec.unset is not None:
            source = db.source(spec.source)
            assert source is not None and source.kind == "code", f"{name} --{flag}: {spec.source}"


def test_the_example_is_no_longer_stated_in_a_component_file(db):
    """--cache-backend, --kv-cache-dtype and SGLang's --dcp-size now come from the catalogs alone."""
    assert "cache-backend" not in db.component("vllm-omni").options
    assert "kv-cache-dtype" not in db.component("vllm").options
    assert "dcp-size" not in db.component("sglang").options


@pytest.mark.parametrize(("table", "key"), [
    ({"unset": 1, "summary": "x", "source": "s"}, "summary"),
    ({"unset": 1, "default": 1, "source": "s"}, "default"),
    ({"unset": 1}, "source"),
    ({"unset": [1], "source": "s"}, "unset"),
])
def test_a_table_with_unset_holds_nothing_else(table, key):
    with pytest.raises(DatabaseError) as caught:
        _option_spec(Table(table, "x.toml", "options.flag"), "flag")
    assert key in str(caught.value)


def _facts(db, version, options=None):
    stack = load_stack(stack_table({"vllm-omni": version, "transformers": "5.19.0"}, "H100",
                                        options={"vllm-omni": options} if options else None), database=db)
    return StackFacts(stack, {"vllm-omni": Version(version)}, db.component("vllm-omni"))


def test_a_flag_left_out_takes_what_the_sources_say(db):
    facts = _facts(db, "0.32.0rc1")
    assert facts.option("ulysses-degree") == 1  # the code's default: the parser gives None
    assert facts.option("ring-degree") == 1
    assert facts.option("tensor-parallel-size") == 1  # the 0.32.0rc1 parser's own default
    assert facts.option("cache-backend") == "none"  # the parser's
    assert facts.option("max-num-seqs") is None  # no source gives one
    assert facts.option("diffusion-kv-cache-dtype") is None
    assert _facts(db, "0.21.0rc1").option("tensor-parallel-size") == 1  # that parser gives none: the code's
    assert _facts(db, "0.32.0rc1", {"ulysses-degree": 2}).option("ulysses-degree") == 2


def test_the_parser_default_is_the_installed_release_s(db):
    sglang = db.component("sglang")
    stack = load_stack(stack_table({"sglang": "0.5.22"}, "H100"), database=db)
    assert StackFacts(stack, {"sglang": Version("0.5.22")}, sglang).option("dcp-size") == 1
    assert StackFacts(stack, {"sglang": Version("0.5.14")}, sglang).option("dcp-size") is None  # 0.5.15 added it
    assert StackFacts(stack, {"sglang": Version("0.5.22")}, sglang).option("speculative-algorithm") == "none"


@pytest.mark.parametrize(("options", "shown"), [
    ({}, False),  # ulysses and ring left out: 1, as vLLM-Omni's code makes them
    ({"ulysses-degree": 1, "ring-degree": 1}, False),
    ({"ulysses-degree": 2}, True),
    ({"usp": 2}, True),  # the alias is the flag
    ({"ring-degree": 2}, True),
    ({"tensor-parallel-size": 2}, True),
])
def test_the_audio_recipe_rule_follows_the_sequence_parallel_degrees(db, options, shown):
    stack = stack_table(OMNI, "H100", count=4, options={"vllm-omni": {**AUDIO, **options}})
    found = {f.id: f for f in check(stack, database=db).findings}
    assert (RULE in found) is shown
    if shown:
        assert found[RULE].severity == "error"  # the 0.32.0rc1 runtime raises ValueError
