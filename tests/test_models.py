"""The model catalog (data/models.toml): lookup by name, repo and alias, what
it fills into a stack's [model], the conditions on model traits, the note for
model conditions a stack cannot decide, and its lint."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from compat import Database, check
from compat.cli import cli
from compat.errors import StackError
from compat.knowledge.conditions import UNKNOWN, ConditionError, parse_condition
from compat.knowledge.lint import lint_database
from compat.knowledge.models import ModelCatalog, model_key
from compat.knowledge.binding import load_stack

from .conftest import ROOT, base

COMFY = {"comfyui": "0.42.0"}
MOSS_RULES = {"comfyui.moss-image.template-crash", "comfyui.moss-image.memory-budget"}


def stack(model: dict | None = None, packages: dict | None = None, gpu: str = "H100") -> dict:
    data = base(packages=packages or COMFY, hardware={"gpu": gpu})
    if model is not None:
        data["model"] = model
    return data


def ids(report) -> set[str]:
    return {f.id for f in report.findings}


def finding(report, finding_id: str):
    return next(f for f in report.findings if f.id == finding_id)


# -- lookup ---------------------------------------------------------------------


@pytest.mark.parametrize("written", ["MOSS-Image", "moss image", "MOSS_Image", "OpenMOSS-Team/MOSS-Image-Base",
                                     "openmoss-team/moss-image-sft", "MOSS-Image-SFT"])
def test_a_model_is_found_by_name_repo_or_alias(db, written):
    entry = db.model(written)
    assert entry is not None and entry.name == "MOSS-Image" and entry.family == "moss-image"


def test_an_unknown_model_is_none(db):
    assert db.model("No-Such-Model-9") is None
    assert db.model("GLM-5").name == "GLM-5" and db.model("GLM-5.1").name == "GLM-5.1"


def test_the_line_scan_agrees_with_the_full_parse(db):
    path = str(ROOT / "data" / "models.toml")
    for entry in db.models.models:
        for written in entry.names:
            assert ModelCatalog.find_in_file(path, written) == db.models.find(written) == entry


def test_model_key_ignores_case_and_separators():
    assert model_key("Qwen-Image 2.1") == model_key("qwen_image-2.1")
    assert model_key("GLM-5") != model_key("GLM-5.1")


def test_a_database_without_a_model_catalog_finds_nothing(tmp_path):
    (tmp_path / "constraints").mkdir()
    other = Database.load(tmp_path)
    assert other.model("GLM-5") is None and other.models.models == []


# -- filling [model] from the catalog --------------------------------------------


def test_the_catalog_fills_what_the_stack_leaves_out(db):
    report = check(stack({"name": "MOSS-Image"}), database=db)
    assert MOSS_RULES <= ids(report)
    assert "model:unverified" not in ids(report)


def test_a_repo_alone_is_enough(db):
    assert MOSS_RULES <= ids(check(stack({"repo": "OpenMOSS-Team/MOSS-Image-SFT"}), database=db))


def test_another_model_does_not_get_the_moss_image_rules(db):
    report = check(stack({"name": "GLM-5"}), database=db)
    assert not MOSS_RULES & ids(report)
    assert "model:unverified" not in ids(report)


def test_a_stack_value_wins_over_the_catalog(db):
    from compat.engine.facts import StackFacts

    loaded = load_stack(stack({"name": "MOSS-Image", "checkpoint_dtype": "fp8", "moe": True}), db)
    facts = StackFacts(loaded, {})
    assert facts.model("checkpoint_dtype") == "fp8" and facts.model("moe") is True
    assert facts.model("family") == "moss-image" and facts.model("multimodal") is True
    assert loaded.model.family is None  # the stack as written stays as written


def test_a_family_that_contradicts_the_catalog_is_an_input_error(db, write_stack):
    with pytest.raises(StackError) as caught:
        load_stack(stack({"name": "MOSS-Image", "family": "wan2.2"}), db)
    assert "[model] family" in str(caught.value) and "moss-image" in str(caught.value)
    path = write_stack("""
        [system]
        python = "3.12"
        cuda = "13.0"

        [packages]
        comfyui = "0.42.0"

        [model]
        name = "GLM-5"
        family = "wan2.2"
    """)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and str(path) in lines[0] and "[model] family" in lines[0]
    assert "Traceback" not in result.output


def test_a_family_the_catalog_agrees_with_is_fine(db):
    assert MOSS_RULES <= ids(check(stack({"name": "moss image", "family": "MOSS-Image"}), database=db))


def test_a_name_and_a_repo_of_two_models_are_an_input_error(db):
    with pytest.raises(StackError) as caught:
        load_stack(stack({"name": "GLM-5", "repo": "zai-org/GLM-5.1"}), db)
    assert "[model] repo" in str(caught.value)


@pytest.mark.parametrize("model, key", [({"moe": "yes"}, "moe"), ({"repo": 5}, "repo"), ({"hybird": True}, "hybird")])
def test_bad_model_keys_are_input_errors(db, model, key):
    with pytest.raises(StackError) as caught:
        load_stack(stack(model), db)
    assert key in str(caught.value)


def test_a_stack_without_model_never_reads_the_catalog(db, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the model catalog was read")

    monkeypatch.setattr(ModelCatalog, "find_in_file", refuse)
    monkeypatch.setattr(ModelCatalog, "load", refuse)
    fresh = Database.load()
    check(ROOT / "examples" / "h200-vllm.toml", database=fresh)
    check(stack({"family": "moss-image"}), database=fresh)


# -- conditions on the new keys --------------------------------------------------------


class Facts:
    def __init__(self, **model):
        self.models = model

    def model(self, key):
        return self.models.get(key)


@pytest.mark.parametrize("key", ["moe", "hybrid", "multimodal"])
def test_trait_conditions_are_three_valued(key):
    cond = parse_condition({"model": {key: True}})
    assert cond.evaluate(Facts(**{key: True})) is True
    assert cond.evaluate(Facts(**{key: False})) is False
    assert cond.evaluate(Facts()) is UNKNOWN
    assert parse_condition({"model": {key: False}}).evaluate(Facts(**{key: False})) is True
    assert cond.describe() == f"model {key} is true"


def test_a_trait_condition_wants_a_boolean():
    with pytest.raises(ConditionError) as caught:
        parse_condition({"model": {"moe": "true"}})
    assert caught.value.key == "model.moe"


def test_name_and_repo_conditions_compare_by_catalog_identity(db):
    from compat.engine.facts import StackFacts

    by_name = parse_condition({"model": {"name": "GLM-5"}})
    by_repo = parse_condition({"model": {"repo": "zai-org/GLM-5"}})
    for written in ({"name": "glm5"}, {"repo": "ZAI-org/glm-5"}, {"name": "GLM 5"}):
        facts = StackFacts(load_stack(stack(written), db), {})
        assert by_name.evaluate(facts) is True and by_repo.evaluate(facts) is True
    other = StackFacts(load_stack(stack({"name": "GLM-5.1"}), db), {})
    assert by_name.evaluate(other) is False
    unknown = StackFacts(load_stack(stack({"name": "Some-Private-Finetune"}), db), {})
    assert by_name.evaluate(unknown) is False  # named, and not GLM-5
    nameless = StackFacts(load_stack(stack({"family": "glm-5"}), db), {})
    assert by_name.evaluate(nameless) is UNKNOWN


def test_trait_conditions_see_the_catalog(db):
    from compat.engine.facts import StackFacts

    hybrid = parse_condition({"model": {"hybrid": True}})
    moe = parse_condition({"model": {"moe": True}})
    qwen = StackFacts(load_stack(stack({"repo": "Qwen/Qwen3-Next-80B-A3B-Instruct"}), db), {})
    assert hybrid.evaluate(qwen) is True and moe.evaluate(qwen) is True
    glm = StackFacts(load_stack(stack({"name": "GLM-5"}), db), {})
    assert moe.evaluate(glm) is True
    assert hybrid.evaluate(glm) is UNKNOWN  # the catalog does not say: no guess
    told = StackFacts(load_stack(stack({"name": "GLM-5", "hybrid": False}), db), {})
    assert hybrid.evaluate(told) is False


# -- the note for model conditions a stack cannot decide ----------------------------------


def test_an_unknown_model_gets_one_note_naming_the_rules(db):
    report = check(stack({"name": "Foo-Image-1"}), database=db)
    assert not MOSS_RULES & ids(report)
    note = finding(report, "model:unverified")
    assert note.severity == "info"
    assert "Foo-Image-1" in note.message and "model family is moss-image" in note.message
    for rule_id in MOSS_RULES:
        assert rule_id in note.message
    assert "[model] family" in note.message
    assert [f.id for f in report.findings].count("model:unverified") == 1


def test_a_stack_without_model_gets_the_note_too(db):
    note = finding(check(stack(), database=db), "model:unverified")
    assert "no [model]" in note.message


def test_a_decided_model_condition_gets_no_note(db):
    assert "model:unverified" not in ids(check(stack({"family": "wan2.2"}), database=db))


def test_a_rule_false_on_other_grounds_gets_no_note(db):
    # flashinfer's DeepSeek-V4 rules also want a B200/B300 or SM120: on an H100 they are false, whatever the model
    report = check(stack(packages={"flashinfer-python": "0.7.2"}, gpu="H100"), database=db)
    if "model:unverified" in ids(report):
        assert not any("deepseek-v4" in r for r in finding(report, "model:unverified").details["rules"])
    on_b200 = finding(check(stack(packages={"flashinfer-python": "0.7.2"}, gpu="B200"), database=db), "model:unverified")
    assert "flashinfer.deepseek-v4.nvfp4-sparse-mla" in on_b200.details["rules"]
    assert on_b200.source is not None and "flashinfer-python.toml" in on_b200.source.cite()


def test_the_benchmarked_example_gets_no_model_note(db):
    assert "model:unverified" not in ids(check(ROOT / "examples" / "h200-vllm.toml", database=db))


# -- lint --------------------------------------------------------------------------------


@pytest.fixture
def small_db(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    (root / "constraints").mkdir(parents=True)
    (root / "constraints" / "_sources.toml").write_text(
        'schema = 1\n\n[[source]]\nid = "card"\nproject = "Demo"\ntitle = "a model card"\nkind = "documentation"\n',
        encoding="utf-8",
    )
    shutil.copy(ROOT / "data" / "gpus.toml", root / "gpus.toml")
    return root


def lint_models(root: Path, text: str) -> list[str]:
    (root / "models.toml").write_text(text, encoding="utf-8")
    return [str(p) for p in lint_database(Database.load(root)) if "models.toml" in str(p)]


def test_lint_accepts_a_good_catalog(small_db):
    assert lint_models(small_db, 'schema = 1\n\n[[model]]\nname = "Demo-1"\nrepo = "demo/Demo-1"\n'
                                 'family = "demo"\nmoe = false\nsource = "card"\n') == []


def test_lint_reports_an_unknown_source(small_db):
    problems = lint_models(small_db, '[[model]]\nname = "Demo-1"\nfamily = "demo"\nsource = "nowhere"\n')
    assert any("unknown source 'nowhere'" in p for p in problems)


def test_lint_reports_a_duplicate_alias(small_db):
    problems = lint_models(small_db, '[[model]]\nname = "Demo-1"\naliases = ["Demo"]\nfamily = "demo"\nsource = "card"\n\n'
                                     '[[model]]\nname = "Demo-2"\naliases = ["demo"]\nfamily = "demo"\nsource = "card"\n')
    assert any("'demo' also names Demo-1" in p for p in problems)


@pytest.mark.parametrize("line, key", [('moe = "yes"', "moe"), ("head_dim = 0", "head_dim"), ('heads = 3', "heads"),
                                       ('family = "Demo"', "family"), ('repo = "not a repo"', "repo")])
def test_lint_reports_bad_keys_and_types(small_db, line, key):
    body = {"family": 'family = "demo"'}
    text = f'[[model]]\nname = "Demo-1"\nsource = "card"\n{line}\n' + ("" if key == "family" else body["family"] + "\n")
    problems = lint_models(small_db, text)
    assert problems and key in problems[0]


def test_lint_reports_a_rule_naming_a_model_the_catalog_lacks(small_db):
    (small_db / "constraints" / "demo.toml").write_text(
        '[component]\nname = "demo"\n\n[[rule]]\nid = "demo.glm"\nkind = "note"\n'
        'when = { model = { name = "Nonesuch-7" } }\nmessage = "m"\nsource = "card"\n',
        encoding="utf-8",
    )
    problems = [str(p) for p in lint_database(Database.load(small_db))]
    assert any("names model 'Nonesuch-7'" in p for p in problems)


def test_an_unknown_model_name_is_said_with_the_catalog_s_near_names():
    from compat import check

    stack = {"system": {"python": "3.12"}, "hardware": {"gpu": "H100"}, "packages": {"vllm": "0.32.0"},
             "model": {"name": "Wan2.2"}}
    finding = next(f for f in check(stack).findings if f.id == "model:unknown")
    assert finding.severity == "info" and "Wan2.2-TI2V-5B" in finding.message
    stack["model"] = {"name": "Some-Model-Nobody-Lists"}
    finding = next(f for f in check(stack).findings if f.id == "model:unknown")
    assert "did you mean" not in finding.message and "family" in finding.message
    stack["model"] = {"name": "GLM-5"}
    assert "model:unknown" not in {f.id for f in check(stack).findings}


# -- the models the seed and the issues name -----------------------------------------


@pytest.mark.parametrize("written, family", [
    ("MiniMax-H3", "h3"), ("H3", "h3"), ("MiniMaxAI/MiniMax-H3", "h3"), ("TaoMate-H3", "taomate-h3"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4"), ("Llama 4 Maverick", "llama-4"),
    ("Llama-3.3-70B-Instruct", "llama-3.3"),
])
def test_h3_taomate_and_llama_are_in_the_catalog(db, written, family):
    model = db.models.find(written)
    assert model is not None and model.family == family and model.source in db.sources


def test_h3_carries_only_the_traits_its_source_states(db):
    h3 = db.models.find("MiniMax-H3")
    assert (h3.head_dim, h3.moe, h3.multimodal) == (128, False, True)
    assert h3.hybrid is None and h3.checkpoint_dtype is None  # not stated; its checkpoints come in several dtypes
    assert db.models.find("Llama-3.3-70B-Instruct").moe is None  # its source does not say


def test_a_rule_about_h3_is_decided_by_the_model_s_name(db):
    # SGLang #44180: INT8 H3 checkpoints with FP32 AdaLN tables take the fused kernel
    named = check(stack({"name": "MiniMax-H3", "checkpoint_dtype": "int8"}, packages={"sglang": "0.5.23"}), database=db)
    assert "sglang.h3.fp32-adaln-fused" in ids(named)
    other = check(stack({"name": "Llama-4-Scout-17B-16E-Instruct", "checkpoint_dtype": "int8"},
                        packages={"sglang": "0.5.23"}), database=db)
    assert "sglang.h3.fp32-adaln-fused" not in ids(other)
