"""The GPUs a server's parallel flags start on a node are data: the [gpus]
table of each engine's option file (data/options/<engine>.toml), cited,
read strictly, linted, and judged against [hardware] count."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from compat import Database, DatabaseError, check
from compat.knowledge.options import OptionCatalog

SYSTEM = {"python": "3.12", "platform": "linux-x86_64", "cuda": "13.0", "driver": "580.95.05", "glibc": "2.35"}
ENGINES = {
    "vllm": {"vllm": "0.32.0"},
    "sglang": {"sglang": "0.5.23"},
    "vllm-omni": {"vllm-omni": "0.32.0rc1", "transformers": "5.19.0"},
}


def parallel(engine: str, options: dict, count: int):
    """The parallel:<engine> finding of a stack with these flags on `count` H200s, or None."""
    stack = {"system": SYSTEM, "hardware": {"gpu": "NVIDIA H200", "count": count},
             "packages": ENGINES[engine], "options": {engine: options}}
    return next((f for f in check(stack).findings if f.id == f"parallel:{engine}"), None)


# -- each engine, just inside and just outside the GPU count -----------------------------------


@pytest.mark.parametrize("engine, options, gpus, source", [
    # "Eight GPUs total" for TP 4 x PP 2 (vLLM, Parallelism and Scaling)
    ("vllm", {"tensor-parallel-size": 4, "pipeline-parallel-size": 2}, 8, "vllm-docs-parallelism-scaling"),
    # DP 4 x TP 2 "would require 8 GPUs" (vLLM, Data Parallel Deployment)
    ("vllm", {"data-parallel-size": 4, "tensor-parallel-size": 2}, 8, "vllm-docs-data-parallel"),
    # two of the four DP ranks on this node, TP 2 each
    ("vllm", {"data-parallel-size": 4, "data-parallel-size-local": 2, "tp": 2}, 4, "vllm-docs-data-parallel"),
    # TP 8 x PP 2 over two nodes: 8 a node
    ("vllm", {"tensor-parallel-size": 8, "pipeline-parallel-size": 2, "nnodes": 2}, 8, "vllm-docs-parallelism-scaling"),
    # tp_size x dp_size (SGLang, TP/DP/DP-attention)
    ("sglang", {"tp-size": 4, "dp-size": 2}, 8, "sglang-docs-tp-dp-attention"),
    # DP attention: tp_size GPUs in all
    ("sglang", {"tp-size": 4, "dp-size": 4, "enable-dp-attention": True}, 4, "sglang-docs-tp-dp-attention"),
    # TP over --nnodes 2: half of it a node (SGLang, Server Arguments: TP 4 over two nodes of two GPUs)
    ("sglang", {"tp-size": 8, "nnodes": 2}, 4, "sglang-docs-server-arguments"),
    # --num-gpus: "Number of GPUs to use for diffusion model inference" (the parser's help)
    ("vllm-omni", {"num-gpus": 4}, 4, "vllm-omni-cli-0.21.0rc1"),
])
def test_a_server_fits_its_gpus_and_not_one_fewer(engine, options, gpus, source):
    assert parallel(engine, options, gpus) is None
    finding = parallel(engine, options, gpus - 1)
    assert finding is not None and finding.severity == "error" and finding.basis is None
    assert finding.source.id == source
    assert f"start {gpus} GPU workers" in finding.message and f"[hardware] count is {gpus - 1}" in finding.message


@pytest.mark.parametrize("engine, options", [
    ("vllm", {"tensor-parallel-size": 16, "distributed-executor-backend": "ray"}),  # the Ray cluster's GPUs
    ("vllm", {"data-parallel-size": 16, "data-parallel-backend": "ray"}),            # remote ranks on Ray's nodes
])
def test_ray_places_the_workers_over_a_cluster_the_stack_does_not_describe(engine, options):
    assert parallel(engine, options, 8) is None
    without_ray = {k: v for k, v in options.items() if not k.endswith("backend")}
    assert parallel(engine, without_ray, 8).severity == "error"


def test_dp_attention_keeps_the_replicas_inside_the_tensor_parallel_gpus():
    options = {"tp-size": 8, "dp-size": 8}
    assert parallel("sglang", {**options, "enable-dp-attention": True}, 8) is None
    assert "start 64 GPU workers" in parallel("sglang", options, 8).message


@pytest.mark.parametrize("engine, options, gpus, flag", [
    ("sglang", {"tp-size": 4, "pp-size": 2}, 8, "pp-size"),                 # SGLang's docs count pp_size 1 only
    ("vllm-omni", {"tensor-parallel-size": 4}, 4, "tensor-parallel-size"),  # vLLM's count, not vLLM-Omni's docs
])
def test_a_count_resting_on_an_inferred_flag_is_a_warning_that_says_so(engine, options, gpus, flag):
    assert parallel(engine, options, gpus) is None
    finding = parallel(engine, options, gpus - 1)
    assert finding.severity == "warning" and f"--{flag} counts is inferred" in finding.message
    basis = Database.load().option_catalog(engine).gpus.basis
    assert finding.basis == basis and basis


# -- the [gpus] table, read strictly and linted ------------------------------------------------

CATALOG = """
schema = 1
component = "vllm"
covers = ">=0.30.0"

[gpus]
{gpus}

[[option]]
name = "tensor-parallel-size"
aliases = ["tp"]
type = "int"
default = 1
source = "vllm-0.32.0"
"""
GOOD = 'multiply = ["tensor-parallel-size"]\nsource = "vllm-docs-parallelism-scaling"'


def load(tmp_path: Path, gpus: str) -> OptionCatalog:
    path = tmp_path / "vllm.toml"
    path.write_text(CATALOG.format(gpus=textwrap.dedent(gpus)))
    return OptionCatalog.load(str(path), "vllm")


@pytest.mark.parametrize("gpus, key, words", [
    (GOOD + '\nworld = 8', "gpus.world", "unknown key"),
    ('multiply = "tensor-parallel-size"\nsource = "s"', "gpus.multiply", "expected a list of strings"),
    ('multiply = []\nsource = "s"', "gpus.multiply", "list the flags"),
    ('multiply = ["--tensor-parallel-size"]\nsource = "s"', "gpus.multiply", "without dashes"),
    ('multiply = ["tensor-parallel-size"]', "gpus.source", "missing"),
    (GOOD + '\ninferred = ["tensor-parallel-size"]', "gpus.basis", "what it is inferred from"),
    (GOOD + '\nbasis = "a guess"', "gpus.basis", "basis is for inferred flags"),
    (GOOD + '\ninferred = ["nnodes"]\nbasis = "b"', "gpus.inferred", "no other key of [gpus] names"),
    (GOOD + '\nelsewhere = { distributed-executor-backend = 1 }', "gpus.elsewhere.distributed-executor-backend",
     "expected a non-empty string"),
])
def test_a_malformed_gpus_table_is_one_line_naming_file_and_key(tmp_path, gpus, key, words):
    with pytest.raises(DatabaseError) as info:
        load(tmp_path, gpus)
    text = str(info.value)
    assert "\n" not in text and "vllm.toml" in text and key in text and words in text


def test_a_flag_the_file_does_not_define_is_a_lint_problem(tmp_path):
    catalog = load(tmp_path, GOOD.replace('["tensor-parallel-size"]', '["tensor-parallel-size", "pipeline-parallel-size"]')
                   + '\nreplicas = "tp"')
    assert sorted(catalog.problems()) == [
        ("gpus", "names --pipeline-parallel-size, which this file does not define"),
        ("gpus", "names --tp, an alias: write the flag's name --tensor-parallel-size"),
    ]
    assert list(load(tmp_path, GOOD).problems()) == []


def test_every_engine_file_has_a_cited_gpus_table_that_lints_clean():
    db = Database.load()
    for engine in ENGINES:
        catalog = db.option_catalog(engine)
        assert catalog.gpus is not None and db.source(catalog.gpus.source) is not None
        assert all(db.source(source) is not None for _, source in catalog.gpus.sources)
        assert list(catalog.problems()) == []


def test_no_parallel_flag_is_written_in_the_check_code():
    engine = Path(__file__).parent.parent / "compat" / "engine"
    code = "".join((engine / name).read_text(encoding="utf-8") for name in ("judge.py", "check.py"))
    flags = {f for engine in ENGINES for f in Database.load().option_catalog(engine).gpus.flags()}
    assert len(flags) >= 10
    assert not [f for f in sorted(flags) if re.search(rf"[\"'-]{re.escape(f)}[\"']", code)]
    assert "_PARALLELISM" not in code and "tensor-parallel-size" not in code


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -1.5])
def test_a_size_that_is_no_count_is_not_a_crash(value):
    """TOML's inf and nan are floats int() refuses in two ways; neither may end the check."""
    import compat

    stack = {"system": {"python": "3.12", "cuda": "13.0"}, "hardware": {"gpu": "H200", "count": 8},
             "packages": {"vllm": "0.32.0"}, "options": {"vllm": {"tensor-parallel-size": value}}}
    report = compat.check(stack)
    assert not any(f.id == "parallel:vllm" for f in report.findings)
