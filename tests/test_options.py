"""Engine flags release by release (data/options/<component>.toml), tested on
a copy of the database with a small catalog of vLLM's flags written here."""

from __future__ import annotations


import pytest

from compat import Database, DatabaseError, StackError, check
from compat.knowledge.lint import lint_database

from .conftest import copy_database

CATALOG = """
schema = 1
component = "vllm"
covers = ">=0.30.0"

[[option]]
name = "tensor-parallel-size"
aliases = ["tp"]
type = "int"
default = 1
source = "vllm-0.32.0"

[[option]]
name = "kv-cache-dtype"
type = "choice"
values = ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]
releases = "<0.32.0"
source = "vllm-0.32.0"

[[option]]
name = "kv-cache-dtype"
type = "choice"
values = ["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4"]
releases = ">=0.32.0"
source = "vllm-0.32.0"

[[option]]
name = "old-cache-flag"
type = "bool"
releases = "<0.32.0"
renamed_to = "new-cache-flag"
source = "vllm-0.32.0"

[[option]]
name = "new-cache-flag"
type = "bool"
releases = ">=0.32.0"
source = "vllm-0.32.0"

[[option]]
name = "gone-flag"
type = "string"
releases = "<0.32.0"
source = "vllm-0.32.0"

[[option]]
name = "attention-backend"
type = "string"
source = "vllm-0.32.0"

[[option]]
name = "quantization"
type = "string"
source = "vllm-0.32.0"
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = copy_database(tmp_path_factory.mktemp("options") / "data")
    (root / "options").mkdir(exist_ok=True)
    # vLLM's bundled engine file gives way to this small one; the other engines keep theirs (their rules test them)
    (root / "options" / "vllm.toml").write_text(CATALOG)
    # the derived vLLM rules test flags (--quantization) the small catalog leaves out: not this module's subject
    (root / "derived" / "vllm.toml").unlink()
    return root


def run(data, options, vllm="0.32.0", **extra):
    stack = {
        "system": {"python": "3.12", "cuda": "13.0", "driver": "580.95.05"},
        "hardware": {"gpu": "H200"},
        "packages": {"vllm": vllm},
        "options": {"vllm": options},
        **extra,
    }
    return check(stack, database=Database.load(data))


def ids(report):
    return {f.id: f for f in report.findings}


def test_an_alias_is_the_flag_itself_and_known(data):
    report = run(data, {"tp": 8})
    assert not any(i.startswith("unknown-option") for i in ids(report))
    assert report.stack.options["vllm"] == {"tensor-parallel-size": 8}


def test_a_flag_given_twice_under_two_spellings_is_bad_input(data):
    with pytest.raises(StackError) as info:
        run(data, {"tp": 8, "tensor_parallel_size": 4})
    assert "given twice, as 'tp' and as 'tensor_parallel_size'" in str(info.value)


def test_a_value_outside_the_closed_set_is_an_error_naming_the_allowed_values(data):
    report = run(data, {"kv-cache-dtype": "fp9"})
    finding = ids(report)["option-value:vllm:kv-cache-dtype"]
    assert finding.severity == "error" and report.exit_code == 1
    assert "fp9" in finding.message and "fp8_e5m2" in finding.message and "vllm 0.32.0" in finding.message


def test_the_value_set_is_the_release_s_own(data):
    assert "option-value:vllm:kv-cache-dtype" not in ids(run(data, {"kv-cache-dtype": "nvfp4"}, "0.32.0"))
    older = ids(run(data, {"kv-cache-dtype": "nvfp4"}, "0.31.0"))
    assert "nvfp4" in older["option-value:vllm:kv-cache-dtype"].message
    assert "option-value:vllm:kv-cache-dtype" not in ids(run(data, {"kv-cache-dtype": "fp8"}, "0.31.0"))


def test_a_typed_value_of_the_wrong_type_is_an_error(data):
    finding = ids(run(data, {"tensor-parallel-size": "eight"}))["option-value:vllm:tensor-parallel-size"]
    assert "integer" in finding.message
    assert "option-value:vllm:tensor-parallel-size" not in ids(run(data, {"tensor-parallel-size": "8"}))
    assert "option-value:vllm:tensor-parallel-size" not in ids(run(data, {"tensor-parallel-size": 8}))


def test_a_renamed_flag_is_an_error_on_the_release_that_renamed_it(data):
    found = ids(run(data, {"old-cache-flag": True}, "0.32.0"))
    assert "renamed --new-cache-flag" in found["option-removed:vllm:old-cache-flag"].message
    assert "option-removed:vllm:old-cache-flag" not in ids(run(data, {"old-cache-flag": True}, "0.31.0"))


def test_a_removed_flag_and_a_flag_not_yet_added(data):
    assert "removed" in ids(run(data, {"gone-flag": "x"}, "0.32.0"))["option-removed:vllm:gone-flag"].message
    assert "added later: releases >=0.32.0" in ids(run(data, {"new-cache-flag": True}, "0.31.0"))["option-removed:vllm:new-cache-flag"].message


def test_a_release_the_catalog_does_not_cover_is_not_judged(data):
    found = ids(run(data, {"new-cache-flag": True, "kv-cache-dtype": "fp9"}, "0.23.0"))
    assert "option-removed:vllm:new-cache-flag" not in found
    # its value is still judged against every definition: fp9 is in none
    assert found["option-value:vllm:kv-cache-dtype"].severity == "error"


def test_an_unlisted_flag_is_an_error_on_a_covered_release_and_a_warning_elsewhere(data):
    finding = ids(run(data, {"some-flag-nobody-lists": 1}))["option-unknown:vllm:some-flag-nobody-lists"]
    assert finding.severity == "error"
    finding = ids(run(data, {"some-flag-nobody-lists": 1}, "0.23.0"))["unknown-option:vllm:some-flag-nobody-lists"]
    assert finding.severity == "warning"


def test_rules_see_the_canonical_flag(data):
    # vllm.glm-5.sm100.fp8-kv-default tests kv-cache-dtype; it must still parse and lint with the flag in the catalog
    problems = lint_database(Database.load(data))
    assert not [p for p in problems if "option" in p.message or (p.file or "").endswith("vllm.toml")]


@pytest.mark.parametrize(
    ("edit", "key", "message"),
    [
        ('name = "gone-flag"', "option[5].name", "without dashes"),
        ('type = "bool"\nreleases = "<0.32.0"\nrenamed', "option[3].type", None),
        ('values = ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]\nreleases', "option[1].values", None),
        ('covers = ">=0.30.0"', "covers", "specifier"),
    ],
)
def test_a_malformed_catalog_names_file_and_key(data, tmp_path, edit, key, message):
    bad = {
        'name = "gone-flag"': 'name = "--gone-flag"',
        'type = "bool"\nreleases = "<0.32.0"\nrenamed': 'type = "boolean"\nreleases = "<0.32.0"\nrenamed',
        'values = ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"]\nreleases': 'values = "auto"\nreleases',
        'covers = ">=0.30.0"': 'covers = "=>0.30"',
    }[edit]
    root = tmp_path / "data"
    (root / "options").mkdir(parents=True)
    path = root / "options" / "vllm.toml"
    assert edit in CATALOG
    path.write_text(CATALOG.replace(edit, bad, 1))
    from compat.knowledge.options import OptionCatalog

    with pytest.raises(DatabaseError) as info:  # a definition is read when its flag is looked up; lint reads all
        OptionCatalog.load(str(path), "vllm").options
    assert info.value.file == str(path) and info.value.key == key
    if message:
        assert message in info.value.message


def test_lint_reports_overlaps_aliases_and_renames(data, tmp_path):
    from compat.knowledge.options import OptionCatalog

    path = tmp_path / "vllm.toml"
    path.write_text(CATALOG.replace('releases = ">=0.32.0"\nsource', 'releases = ">=0.31.0"\nsource', 1)
                    .replace('aliases = ["tp"]', 'aliases = ["tp", "kv-cache-dtype"]')
                    .replace('renamed_to = "new-cache-flag"', 'renamed_to = "newer-cache-flag"'))
    problems = [m for _, m in OptionCatalog.load(str(path), "vllm").problems()]
    assert any("defined twice" in m for m in problems)
    assert any("alias 'kv-cache-dtype'" in m for m in problems)
    assert any("newer-cache-flag" in m for m in problems)


REALISTIC = {
    "system": {"python": "3.12", "platform": "linux-x86_64", "cuda": "13.0", "driver": "580.95.05", "glibc": "2.35"},
    "hardware": {"gpu": "NVIDIA H200", "count": 8},
    "packages": {"vllm": "0.32.0"},
    "options": {"vllm": {
        "tensor-parallel-size": 8, "pipeline-parallel-size": 1, "dtype": "bfloat16", "max-model-len": 32768,
        "gpu-memory-utilization": 0.9, "max-num-seqs": 256, "max-num-batched-tokens": 8192,
        "enable-prefix-caching": True, "enable-chunked-prefill": True, "kv-cache-dtype": "fp8",
        "quantization": "fp8", "served-model-name": "llm", "trust-remote-code": True,
        "attention-backend": "flashinfer", "port": 8000,
    }},
}


def test_strict_passes_a_realistic_vllm_configuration():
    report = check(REALISTIC, strict=True)
    assert report.exit_code == 0, [(f.id, f.message) for f in report.findings if f.severity != "info"]


def test_the_bundled_flags_refuse_a_value_the_release_lacks():
    options = {**REALISTIC["options"]["vllm"], "kv-cache-dtype": "fp9"}
    report = check({**REALISTIC, "options": {"vllm": options}})
    finding = ids(report)["option-value:vllm:kv-cache-dtype"]
    assert report.exit_code == 1 and "nvfp4" in finding.message and "vllm 0.32.0" in finding.message
    assert "arg_utils" in finding.source.title


def test_the_attention_backend_is_compared_without_case_as_vllm_does():
    for value in ("FLASHINFER", "flashinfer", "FlashInfer"):
        options = {**REALISTIC["options"]["vllm"], "attention-backend": value}
        assert "option-value:vllm:attention-backend" not in ids(check({**REALISTIC, "options": {"vllm": options}}))


def test_a_flag_a_covered_release_lacks_is_an_error_with_a_suggestion():
    options = {"num-scheduler-steps": 8, "tenser-parallel-size": 8}  # removed before 0.20; a typo
    report = check({**REALISTIC, "options": {"vllm": options}})
    found = ids(report)
    assert found["option-unknown:vllm:num-scheduler-steps"].severity == "error"
    assert "did you mean --tensor-parallel-size" in found["option-unknown:vllm:tenser-parallel-size"].message
    assert not any(i.startswith("unknown-option:") for i in found) and report.exit_code == 1


def test_a_flag_of_a_release_the_flags_do_not_cover_stays_a_warning():
    stack = {**REALISTIC, "packages": {"vllm": "0.11.0"}, "options": {"vllm": {"num-scheduler-steps": 8}}}
    found = ids(check(stack))
    assert found["unknown-option:vllm:num-scheduler-steps"].severity == "warning"
    assert "option-unknown:vllm:num-scheduler-steps" not in found


def test_ranges_read_lower_bound_first(data):
    message = ids(run(data, {"gone-flag": "x"}, "0.32.0"))["option-removed:vllm:gone-flag"].message
    assert "releases <0.32.0 have it" in message
    from compat.knowledge.options import range_text
    from packaging.specifiers import SpecifierSet

    assert range_text(SpecifierSet("<0.30.0,>=0.26.0")) == ">=0.26.0,<0.30.0"


# -- vLLM-Omni's served pipeline: a real flag, and a stack-level setting ---------------------

OMNI = {
    "system": {"python": "3.12", "cuda": "13.0", "driver": "580.95.05"},
    "hardware": {"gpu": "H100"},
    "packages": {"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"},
}
AUDIO_RULES = {"vllm-omni.ltx2-audio.recipe", "vllm-omni.ltx2-audio.tensor-parallel"}


def test_the_audio_pipeline_rules_follow_the_real_flag():
    # vLLM-Omni's parser has --model-class-name ("Override the diffusion pipeline class name"), no --pipeline
    flags = Database.load().option_catalog("vllm-omni")
    assert flags.knows("model-class-name") and not flags.knows("pipeline")
    options = {"model-class-name": "LTX2TextToAudioPipeline", "tensor-parallel-size": 2}
    found = ids(check({**OMNI, "hardware": {"gpu": "H100", "count": 2}, "options": {"vllm-omni": options}}))
    assert AUDIO_RULES <= set(found) and not any(i.startswith(("option-", "unknown-option")) for i in found)
    other = {"model-class-name": "LTX2ImageToVideoPipeline", "tensor-parallel-size": 2}
    assert not AUDIO_RULES & set(ids(check({**OMNI, "hardware": {"gpu": "H100", "count": 2},
                                            "options": {"vllm-omni": other}})))


def test_pipeline_is_a_stack_level_setting_not_an_unknown_flag():
    found = ids(check({**OMNI, "options": {"vllm-omni": {"pipeline": "LTX2TextToAudioPipeline"}}}))
    assert "vllm-omni.ltx2-audio.recipe" in found
    assert "option-unknown:vllm-omni:pipeline" not in found and "unknown-option:vllm-omni:pipeline" not in found


# -- parallel sizes against the GPUs of the node ----------------------------------------------


@pytest.mark.parametrize("options, count, severity", [
    ({"tensor-parallel-size": 8, "pipeline-parallel-size": 2}, 8, "error"),
    ({"tensor-parallel-size": 8, "pipeline-parallel-size": 2, "nnodes": 2}, 8, None),  # one server over two nodes
    ({"tp": 4, "dp": 4}, 8, "error"),                                                    # vLLM multiplies DP in
    ({"tp": 4, "dp": 2}, 8, None),
    ({"tp": 4, "dp": 4, "data-parallel-size-local": 2}, 8, None),                       # two replicas on this node
    ({"tp": 16, "distributed-executor-backend": "ray"}, 8, None),                       # Ray's cluster: nodes unknown
    ({"tp": 2}, None, "warning"),                                                        # count not given: 1
])
def test_vllm_parallel_sizes_against_the_gpu_count(options, count, severity):
    hardware = {"gpu": "H200", **({"count": count} if count else {})}
    report = check({**REALISTIC, "hardware": hardware, "options": {"vllm": options}})
    finding = ids(report).get("parallel:vllm")
    assert (finding.severity if finding else None) == severity
    if finding is not None:
        assert "[hardware] count is" in finding.message and finding.source.id.startswith("vllm-docs-")


@pytest.mark.parametrize("options, severity", [
    ({"tp-size": 8, "dp-size": 2}, "error"),
    ({"tp-size": 8, "dp-size": 8, "enable-dp-attention": True}, None),  # DP attention runs inside the TP group
])
def test_sglang_parallel_sizes_against_the_gpu_count(options, severity):
    stack = {**REALISTIC, "packages": {"sglang": "0.5.23"}, "options": {"sglang": options}}
    finding = ids(check(stack)).get("parallel:sglang")
    assert (finding.severity if finding else None) == severity


def test_a_broken_table_is_reported_at_its_own_line_when_its_flag_is_looked_up(tmp_path):
    from compat.knowledge.options import OptionCatalog

    path = tmp_path / "vllm.toml"
    broken = CATALOG.replace('name = "kv-cache-dtype"\n', 'name = "kv-cache-dtype"\ntype = \n', 1)
    path.write_text(broken)
    line = broken[: broken.index("type = \n")].count("\n") + 1
    with pytest.raises(DatabaseError) as info:
        OptionCatalog.load(str(path), "vllm").definitions("kv-cache-dtype")
    assert info.value.line == line


def test_a_table_with_a_number_too_long_to_compare_is_a_database_error(tmp_path):
    """As a full parse says it: never a ValueError from packaging in a check."""
    from compat.knowledge.options import OptionCatalog
    from packaging.version import Version

    path = tmp_path / "vllm.toml"
    path.write_text('schema = 1\ncomponent = "vllm"\ncovers = ">=0.30.0"\n\n'
                    '[[option]]\nname = "kv-cache-dtype"\ntype = "choice"\nvalues = ["auto"]\n'
                    f'releases = ">=0.30.{"1" * 5000}"\ndefault = "auto"\nsource = "vllm-0.32.0"\n')
    with pytest.raises(DatabaseError, match=r"option\[0\]\.releases: a number of more than 100 digits"):
        OptionCatalog.load(str(path), "vllm").at("kv-cache-dtype", Version("0.32.0"))


def test_sglang_takes_an_unambiguous_prefix_of_a_flag_as_argparse_does():
    """SGLang's docs write --tp and --dp: its parser (plain argparse) takes an
    unambiguous prefix of a long flag for the flag; vLLM's catalog says no
    such thing, so its flags are matched whole."""
    stack = {**REALISTIC, "hardware": {"gpu": "H200", "count": 8}, "packages": {"sglang": "0.5.19"},
             "options": {"sglang": {"tp": 8, "dp": 8, "enable-dp-attention": True, "mem-frac": 0.9}}}
    report = check(stack)
    assert not [f.id for f in report.findings if f.id.startswith(("option-unknown", "unknown-option", "parallel"))]
    ambiguous = {**stack, "options": {"sglang": {"en": True}}}  # --enable-... : many flags
    assert "option-unknown:sglang:en" in ids(check(ambiguous))
    vllm = {**REALISTIC, "packages": {"vllm": "0.32.0"}, "options": {"vllm": {"max-model": 4096}}}
    assert "option-unknown:vllm:max-model" in ids(check(vllm))
