#!/usr/bin/env python3
"""Derive where vLLM's V0 FlashInfer attention backend needs an Ampere GPU, from its release wheels.

vLLM's V0 FlashInfer backend (``vllm/attention/backends/flashinfer.py``)
runs prefill through FlashInfer, except while the engine profiles memory:
the KV cache is then empty (``kv_cache.numel() == 0``) and the backend calls
``flash_attn_varlen_func`` from vLLM's FlashAttention 2 build instead, which
refuses a GPU below compute capability 8.0 ("FlashAttention only supports
Ampere GPUs or newer"). So ``VLLM_ATTENTION_BACKEND=FLASHINFER`` on a V0
engine fails on Turing and older before the first request.

For every vLLM release of the snapshot (``data/metadata/vllm.jsonl``) it
reads, by HTTP range requests (the zip's central directory, then only these
members), with ``ast`` (never importing or running the code):

- ``vllm/attention/backends/flashinfer.py``: a call of
  ``flash_attn_varlen_func`` under an ``if`` that tests ``kv_cache.numel() ==
  0``, and where the function is imported from;
- ``vllm/envs.py``: the default of ``VLLM_USE_V1`` (the engine a release runs
  when the variable is unset: V0 while the default is "0", and in the
  releases before the variable existed).

It writes ``data/derived/vllm.backends.toml``: per run of consecutive
releases with that call and the same V1 default, one error rule (CUDA,
``VLLM_ATTENTION_BACKEND=FLASHINFER``, the V0 engine: ``VLLM_USE_V1`` not
"1" where V0 is the default, ``VLLM_USE_V1=0`` where V1 is) requiring compute
capability 8.0, citing the newest release's wheel (the call's line, and the
default's line as ``also``).

Run (a new release: ``compat db sync`` the snapshot, then run it again)::

    python tools/derive_vllm_backends.py [--out data/derived/vllm.backends.toml] \\
        [--metadata data/metadata/vllm.jsonl] [--cache ~/.cache/derive_vllm_backends]
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from dataclasses import dataclass

import tomli_w

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _wheel_code import line_source, load_releases  # noqa: E402
from derive_engine_caps import RemoteWheel, pick_wheel, releases_text, runs, span_text  # noqa: E402

TOOL = "tools/derive_vllm_backends.py"
BACKEND = "vllm/attention/backends/flashinfer.py"
ENVS = "vllm/envs.py"
HEADER = (
    "# Written by tools/derive_vllm_backends.py from vLLM's own Python code in its release wheels on the package\n"
    "# index (vllm/attention/backends/flashinfer.py and vllm/envs.py, read by HTTP range requests): where the V0\n"
    "# FlashInfer backend profiles with FlashAttention 2; do not edit, run the script again.\n"
)


@dataclass
class Facts:
    version: str
    date: str | None
    wheel: dict
    profiling_line: int | None = None  # flash_attn_varlen_func called under `kv_cache.numel() == 0`
    imported_from: str | None = None
    v1_default: str | None = None  # "0" or "1"
    v1_line: int | None = None


def _is_empty_cache_test(test: ast.AST) -> bool:
    """``kv_cache.numel() == 0``.

    >>> _is_empty_cache_test(ast.parse("kv_cache.numel() == 0", mode="eval").body)
    True
    >>> _is_empty_cache_test(ast.parse("kv_cache is None", mode="eval").body)
    False
    """
    return (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0
            and isinstance(test.left, ast.Call) and isinstance(test.left.func, ast.Attribute)
            and test.left.func.attr == "numel" and isinstance(test.left.func.value, ast.Name)
            and test.left.func.value.id == "kv_cache")


def profiling_call(tree: ast.Module) -> int | None:
    """The line of a flash_attn_varlen_func call in the body of an ``if kv_cache.numel() == 0``.

    >>> profiling_call(ast.parse("if kv_cache.numel() == 0:\\n    out = flash_attn_varlen_func(q)\\n"))
    2
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_empty_cache_test(node.test):
            for child in (c for statement in node.body for c in ast.walk(statement)):
                if (isinstance(child, ast.Call) and isinstance(child.func, ast.Name)
                        and child.func.id == "flash_attn_varlen_func"):
                    return child.lineno
    return None


def v1_default(tree: ast.Module) -> tuple[str | None, int | None]:
    """The default of ``os.getenv("VLLM_USE_V1", ...)``.

    >>> v1_default(ast.parse('e = {"VLLM_USE_V1": lambda: bool(int(os.getenv("VLLM_USE_V1", "1")))}'))
    ('1', 1)
    """
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "getenv"
                and len(node.args) == 2 and all(isinstance(a, ast.Constant) for a in node.args)
                and node.args[0].value == "VLLM_USE_V1"):
            return str(node.args[1].value), node.lineno
    return None, None


def read_facts(version: str, date: str | None, wheel: dict, cache: str | None) -> Facts:
    facts = Facts(version, date, wheel)
    remote = RemoteWheel(wheel["url"], wheel["size"], cache)
    members = remote.members()
    wanted = [name for name in (BACKEND, ENVS) if name in members]
    texts = {name: data.decode("utf-8") for name, data in remote.read(wanted).items()}
    if BACKEND in texts:
        tree = ast.parse(texts[BACKEND])
        facts.profiling_line = profiling_call(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(a.name == "flash_attn_varlen_func" for a in node.names):
                facts.imported_from = node.module
                break
    if ENVS in texts:
        facts.v1_default, facts.v1_line = v1_default(ast.parse(texts[ENVS]))
        if facts.v1_default is None:
            facts.v1_default = "0"  # no VLLM_USE_V1 at all: V0 is the only engine
    return facts


def _source(facts: Facts, member: str, line: int, what: str) -> dict:
    return line_source("vllm", "vLLM", facts.version, facts.date, facts.wheel, member, line, what)


def derive(releases: list[Facts]) -> tuple[list[dict], list[dict]]:
    sources: dict[str, dict] = {}
    rules = []

    def cite(facts: Facts, member: str, line: int, what: str) -> str:
        source = _source(facts, member, line, what)
        sources[source["id"]] = source
        return source["id"]

    def fact(f: Facts):
        return f.v1_default if f.profiling_line and f.v1_default in ("0", "1") else None

    for default, run in runs(releases, fact):
        newest, span = run[-1], span_text([f.version for f in run])
        engine = ({"not": {"env": {"VLLM_USE_V1": "1"}}} if default == "0" else {"env": {"VLLM_USE_V1": "0"}})
        when = {"accelerator": "cuda", "env": {"VLLM_ATTENTION_BACKEND": "FLASHINFER"}}
        if "env" in engine:
            when["env"] = {**when["env"], **engine["env"]}
        else:
            when.update(engine)
        v0 = ("the only engine" if newest.v1_line is None else "the default engine") if default == "0" \
            else "VLLM_USE_V1=0"
        rules.append({
            "id": f"vllm.derived.{newest.version}.flashinfer-backend.profiling-fa2",
            "kind": "requirement",
            "releases": releases_text([f.version for f in run]),
            "when": when,
            "require": {"compute_capability": ">=8.0"},
            "message": (f"vLLM {span}: with VLLM_ATTENTION_BACKEND=FLASHINFER on the V0 engine ({v0}), the "
                        "FlashInfer backend profiles memory with an empty KV cache and runs that prefill through "
                        f"FlashAttention 2 ({newest.imported_from}.flash_attn_varlen_func), which refuses a GPU "
                        "below compute capability 8.0 (\"FlashAttention only supports Ampere GPUs or newer\"); "
                        "on Turing or older, use XFORMERS"),
            "source": cite(newest, BACKEND, newest.profiling_line, "flash_attn_varlen_func when kv_cache.numel() "
                           "== 0"),
        })
        if newest.v1_line is not None:
            rules[-1]["also"] = [cite(newest, ENVS, newest.v1_line, f"VLLM_USE_V1 defaults to \"{default}\"")]
    return sorted(sources.values(), key=lambda s: s["id"]), sorted(rules, key=lambda r: r["id"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metadata", default="data/metadata/vllm.jsonl")
    parser.add_argument("--out", default="data/derived/vllm.backends.toml")
    parser.add_argument("--since", default="0.4.0", help="the first release read")
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "derive_vllm_backends"))
    args = parser.parse_args(argv)
    releases = []
    for version, date, wheel in load_releases(args.metadata, args.since, pick_wheel):
        if wheel is None:
            print(f"{version}: no Linux x86_64 wheel in the snapshot", file=sys.stderr)
            continue
        facts = read_facts(version, date, wheel, args.cache)
        print(f"{version}: profiling FA2 line {facts.profiling_line} ({facts.imported_from}), "
              f"VLLM_USE_V1 default {facts.v1_default}", file=sys.stderr)
        releases.append(facts)
    sources, rules = derive(releases)
    data = {"schema": 1, "package": "vllm", "tool": TOOL, "source": sources, "rule": rules}
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(HEADER + tomli_w.dumps(data))
    print(f"{len(releases)} releases read; {len(rules)} rules, {len(sources)} sources -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
