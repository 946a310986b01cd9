#!/usr/bin/env python3
"""Derive where SGLang's FP8 checkpoints fail below compute capability 8.9, from its release wheels.

A GPU below sm_89 has no FP8 tensor cores. SGLang runs an FP8 checkpoint
(``--quantization fp8``, the ``fp8`` format DeepSeek-V3, Qwen3-FP8 and
MiniMax-M2 ship) there only through Marlin, a weight-only kernel; every other
path it takes below SM90 refuses such a GPU:

- the linear layers of a block-wise checkpoint run Triton's
  ``w8a8_block_fp8_matmul``, and Triton refuses FP8 operands below sm_89
  (``data/derived/triton.toml``); those of a per-tensor checkpoint run
  ``torch._scaled_mm`` (in ``apply_fp8_linear``), which PyTorch refuses below
  8.9;
- the experts of a mixture-of-experts checkpoint run Triton's fused MoE with
  ``use_fp8_w8a8=True``, unless ``Fp8MoEMethod`` has a Marlin path.

For every SGLang release of the snapshot (``data/metadata/sglang.jsonl``) it
reads, by HTTP range requests (the zip's central directory, then only these
two members), with ``ast`` (never importing or running the code),
``sglang/srt/layers/quantization/fp8.py`` and ``fp8_utils.py`` and records:

- how ``Fp8LinearMethod`` turns Marlin on: only when ``SGLANG_FORCE_FP8_MARLIN``
  is set (``env``), or also by itself through ``can_auto_enable_marlin_fp8()``
  (``auto``) on the capabilities that function's comparison admits
  (``80 <= sm < 89``);
- the module ``apply_fp8_marlin_linear`` is imported from: vLLM's (Marlin
  then works only where vLLM is installed: the import is in a ``try`` that
  turns Marlin off when it fails) or SGLang's own;
- whether ``Fp8MoEMethod`` mentions Marlin at all, and the line where it asks
  for ``use_fp8_w8a8=True``;
- the lines of ``w8a8_block_fp8_matmul`` and of ``torch._scaled_mm`` in
  ``apply_fp8_linear``, and what ``Fp8LinearMethod.apply`` calls: a linear
  rule needs both lines, and an ``apply`` whose only routes are Marlin, the
  block-wise kernel and ``apply_fp8_linear`` (``ROUTES``). From 0.5.9 it also
  calls MXFP8 and FlashInfer GEMM branches, which this script does not
  follow, so those releases get no linear rule.

It writes ``data/derived/sglang.fp8.toml``: for each run of consecutive
releases with the same facts, the rules below, each citing the newest
release's wheel (the file, the member and the line) and the lines it rests
on (``also``):

- ``fp8-moe.triton``: a mixture-of-experts FP8 checkpoint needs compute
  capability 8.9 where ``Fp8MoEMethod`` has no Marlin path;
- ``fp8-linear.no-marlin``: any FP8 checkpoint needs 8.9 where Marlin is only
  turned on by ``SGLANG_FORCE_FP8_MARLIN`` (the rule holds while it is unset);
- ``fp8-linear.below-marlin``: needs the lower end of the automatic Marlin
  range (8.0) where Marlin turns on by itself, while the variable is unset;
- ``fp8-linear.marlin-needs-vllm``: in the automatic range, needs vLLM where
  the Marlin functions come from vLLM. The stack not naming vLLM does not
  prove it absent, so this one is a warning ("cannot verify") or holds; it
  is never an error, so that the resolution does not add vLLM.

Each comes twice: an error under ``options = { quantization = "fp8" }`` (the
code read is the one that flag selects), and an inferred warning where the
flag is not set (SGLang then takes the method from the checkpoint's own
config, which the stack's ``checkpoint_dtype = "fp8"`` does not name:
compressed-tensors and ModelOpt FP8 checkpoints take other classes).

Run (a new release: ``compat db sync`` the snapshot, then run it again)::

    python tools/derive_sglang_fp8.py [--out data/derived/sglang.fp8.toml] \\
        [--metadata data/metadata/sglang.jsonl] [--cache ~/.cache/derive_sglang_fp8]
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from dataclasses import dataclass, field

import tomli_w

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _wheel_code import line_source, load_releases  # noqa: E402
from derive_engine_caps import RemoteWheel, releases_text, runs, span_text  # noqa: E402

TOOL = "tools/derive_sglang_fp8.py"
QUANT = "sglang/srt/layers/quantization"
FP8 = f"{QUANT}/fp8.py"
UTILS = f"{QUANT}/fp8_utils.py"
FORCE = "SGLANG_FORCE_FP8_MARLIN"
# What Fp8LinearMethod.apply calls where its only routes are Marlin, the block-wise kernel and
# apply_fp8_linear (and the CPU's AMX kernel); a release whose apply calls anything else (the MXFP8 and
# FlashInfer GEMM branches from 0.5.9) has routes this script does not follow: no linear rule for it.
ROUTES = {"apply_fp8_marlin_linear", "apply_w8a8_block_fp8_linear", "w8a8_block_fp8_linear", "apply_fp8_linear",
          "fp8_scaled_mm_cpu", "use_intel_amx_backend", "isinstance"}
HEADER = (
    "# Written by tools/derive_sglang_fp8.py from SGLang's own Python code in its release wheels on the package\n"
    "# index (sglang/srt/layers/quantization/fp8.py and fp8_utils.py, read by HTTP range requests): how each\n"
    "# release's FP8 linear and MoE methods run on a GPU below compute capability 8.9; do not edit, run the\n"
    "# script again.\n"
)


@dataclass
class Facts:
    """What one release's code says (line numbers are those of the wheel's files)."""

    version: str
    date: str | None
    wheel: dict
    linear_marlin: str | None = None  # "env", "auto", or None (Fp8LinearMethod never uses Marlin)
    linear_line: int | None = None  # the assignment of self.use_marlin that decides
    marlin_module: str | None = None  # where apply_fp8_marlin_linear is imported from
    marlin_import_line: int | None = None
    auto_range: tuple[int, int] | None = None  # can_auto_enable_marlin_fp8: low <= sm < high
    auto_line: int | None = None
    moe_marlin: bool | None = None  # None: no Fp8MoEMethod
    moe_fp8_line: int | None = None  # use_fp8_w8a8=True inside Fp8MoEMethod
    block_line: int | None = None  # the call of Triton's w8a8_block_fp8_matmul in fp8_utils.py
    scaled_mm_line: int | None = None  # torch._scaled_mm in apply_fp8_linear
    other_calls: list[str] = field(default_factory=list)  # calls in Fp8LinearMethod.apply beyond ROUTES
    problems: list[str] = field(default_factory=list)


def _class(tree: ast.Module, name: str) -> ast.ClassDef | None:
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name), None)


def _function(tree: ast.AST, name: str) -> ast.FunctionDef | None:
    return next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _names(node: ast.AST) -> set[str]:
    """Every name, attribute and string constant in `node`."""
    out: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name):
            out.add(child.id)
        elif isinstance(child, ast.Attribute):
            out.add(child.attr)
        elif isinstance(child, ast.Constant) and isinstance(child.value, str):
            out.add(child.value)
    return out


def linear_marlin(cls: ast.ClassDef) -> tuple[str | None, int | None]:
    """How Fp8LinearMethod.__init__ sets self.use_marlin: from can_auto_enable_marlin_fp8 ("auto"), from
    the environment variable alone ("env"), or never to anything but a constant (None).

    >>> tree = ast.parse("class Fp8LinearMethod:\\n def __init__(self):\\n  self.use_marlin = False\\n"
    ...                  "  auto = can_auto_enable_marlin_fp8()\\n  if x:\\n   self.use_marlin = force or auto\\n")
    >>> linear_marlin(tree.body[0])
    ('auto', 6)
    """
    init = _function(cls, "__init__")
    if init is None:
        return None, None
    local = {t.id: n.value for n in ast.walk(init) if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)}  # auto_enable = can_auto_enable_marlin_fp8(): followed once
    found: tuple[str | None, int | None] = (None, None)
    for node in ast.walk(init):
        if not isinstance(node, ast.Assign) or isinstance(node.value, ast.Constant):
            continue
        if not any(isinstance(t, ast.Attribute) and t.attr == "use_marlin" for t in node.targets):
            continue
        names = _names(node.value)
        names |= {m for n in list(names) if n in local for m in _names(local[n])}
        if "can_auto_enable_marlin_fp8" in names:
            return "auto", node.lineno
        if FORCE in names and found[0] is None:
            found = ("env", node.lineno)
    return found


def auto_range(function: ast.FunctionDef) -> tuple[tuple[int, int] | None, int | None]:
    """The `low <= sm < high` comparison of can_auto_enable_marlin_fp8.

    >>> auto_range(ast.parse("def f():\\n sm = 1\\n return 80 <= sm < 89\\n").body[0])
    ((80, 89), 3)
    """
    for node in ast.walk(function):
        if (isinstance(node, ast.Compare) and len(node.ops) == 2 and isinstance(node.ops[0], ast.LtE)
                and isinstance(node.ops[1], ast.Lt) and isinstance(node.left, ast.Constant)
                and isinstance(node.comparators[1], ast.Constant)):
            return (int(node.left.value), int(node.comparators[1].value)), node.lineno
    return None, None


def read_facts(version: str, date: str | None, wheel: dict, cache: str | None) -> Facts:
    facts = Facts(version, date, wheel)
    remote = RemoteWheel(wheel["url"], wheel["size"], cache)
    members = remote.members()
    if FP8 not in members or UTILS not in members:
        facts.problems.append(f"{FP8} or {UTILS} is not in the wheel")
        return facts
    texts = {name: data.decode("utf-8") for name, data in remote.read([FP8, UTILS]).items()}
    fp8, utils = ast.parse(texts[FP8]), ast.parse(texts[UTILS])
    linear = _class(fp8, "Fp8LinearMethod")
    if linear is None:
        facts.problems.append("no Fp8LinearMethod")
    else:
        facts.linear_marlin, facts.linear_line = linear_marlin(linear)
        apply = _function(linear, "apply")
        called = {c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", "?")
                  for c in ast.walk(apply) if isinstance(c, ast.Call)} if apply is not None else {"?"}
        facts.other_calls = sorted(called - ROUTES)
    for node in ast.walk(fp8):
        if isinstance(node, ast.ImportFrom) and any(a.name == "apply_fp8_marlin_linear" for a in node.names):
            facts.marlin_module, facts.marlin_import_line = node.module, node.lineno
            break
    auto = _function(utils, "can_auto_enable_marlin_fp8")
    if auto is not None:
        facts.auto_range, facts.auto_line = auto_range(auto)
    moe = _class(fp8, "Fp8MoEMethod")
    if moe is not None:
        facts.moe_marlin = any("marlin" in name.lower() for name in _names(moe))
        for node in ast.walk(moe):
            if (isinstance(node, ast.keyword) and node.arg == "use_fp8_w8a8"
                    and isinstance(node.value, ast.Constant) and node.value.value is True):
                facts.moe_fp8_line = node.value.lineno
                break
    for node in ast.walk(utils):  # the Triton kernel's call (named ..._triton from 0.4.7)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("w8a8_block_fp8_matmul", "w8a8_block_fp8_matmul_triton")):
            facts.block_line = node.lineno
            break
    apply = _function(utils, "apply_fp8_linear")
    if apply is not None:
        for node in ast.walk(apply):
            if (isinstance(node, ast.Attribute) and node.attr == "_scaled_mm"
                    and isinstance(node.value, ast.Name) and node.value.id == "torch"):
                facts.scaled_mm_line = node.lineno
                break
    return facts


# -- the rules ---------------------------------------------------------------------------------------


def _source(facts: Facts, member: str, line: int, what: str) -> dict:
    return line_source("sglang", "SGLang", facts.version, facts.date, facts.wheel, member, line, what)


def _capability(value: int) -> str:
    return f"{value // 10}.{value % 10}"


def _twice(rule: dict, basis: str) -> list[dict]:
    """The rule under --quantization fp8 (an error unless it says otherwise), and as an inferred warning
    with the flag unset."""
    when = rule.pop("when")
    stated = {**rule, "when": {**when, "options": {"quantization": "fp8"}}}
    inferred = {**rule, "id": rule["id"] + ".checkpoint", "severity": "warning",
                "when": {**when, "options": {"quantization": {"set": False}}}, "inferred": True, "basis": basis}
    return [stated, inferred]


BASIS = ("read for --quantization fp8 (Fp8Config); with the flag unset SGLang takes the method from the "
         "checkpoint's config, and the stack's checkpoint_dtype = \"fp8\" does not say it is the fp8 format "
         "(a compressed-tensors or ModelOpt FP8 checkpoint takes other classes)")


def derive(releases: list[Facts]) -> tuple[list[dict], list[dict]]:
    sources: dict[str, dict] = {}
    rules: list[dict] = []

    def cite(facts: Facts, member: str, line: int, what: str) -> str:
        source = _source(facts, member, line, what)
        sources[source["id"]] = source
        return source["id"]

    def linear_paths(f: Facts) -> bool:
        return f.block_line is not None and f.scaled_mm_line is not None and not f.other_calls

    def paths(newest: Facts) -> list[str]:
        return [cite(newest, UTILS, newest.block_line, "w8a8_block_fp8_matmul: the Triton kernel a block-wise "
                     "checkpoint's linear layers run below SM90"),
                cite(newest, UTILS, newest.scaled_mm_line, "apply_fp8_linear calls torch._scaled_mm: a per-tensor "
                     "checkpoint's linear layers without CUTLASS FP8, which needs 8.9")]

    # Mixture-of-experts checkpoints: no Marlin in Fp8MoEMethod.
    for _, run in runs(releases, lambda f: True if f.moe_marlin is False and f.moe_fp8_line else None):
        newest, span = run[-1], span_text([f.version for f in run])
        rules += _twice({
            "id": f"sglang.derived.{newest.version}.fp8-moe.triton",
            "kind": "requirement",
            "releases": releases_text([f.version for f in run]),
            "when": {"accelerator": "cuda", "model": {"moe": True, "checkpoint_dtype": "fp8"}},
            "require": {"compute_capability": ">=8.9"},
            "message": (f"SGLang {span}: Fp8MoEMethod has no Marlin path, so an FP8 mixture-of-experts checkpoint "
                        "runs its experts on Triton's fused MoE with FP8 operands (use_fp8_w8a8=True) below SM90, "
                        "which Triton refuses below compute capability 8.9 (\"type fp8e4nv not supported in this "
                        "architecture\"); serve a BF16 or INT4 checkpoint there"),
            "source": cite(newest, FP8, newest.moe_fp8_line, "Fp8MoEMethod runs the fused MoE with "
                           "use_fp8_w8a8=True; the class has no Marlin path"),
        }, BASIS)

    # Linear layers, Marlin only on demand.
    for _, run in runs(releases, lambda f: True if f.linear_marlin == "env" and linear_paths(f) else None):
        newest, span = run[-1], span_text([f.version for f in run])
        rules += _twice({
            "id": f"sglang.derived.{newest.version}.fp8-linear.no-marlin",
            "kind": "requirement",
            "releases": releases_text([f.version for f in run]),
            "when": {"accelerator": "cuda", "model": {"checkpoint_dtype": "fp8"}, "env": {FORCE: False}},
            "require": {"compute_capability": ">=8.9"},
            "message": (f"SGLang {span}: Fp8LinearMethod uses Marlin only when {FORCE} is set, so an FP8 "
                        "checkpoint's linear layers run Triton's w8a8_block_fp8_matmul (block-wise) or "
                        "torch._scaled_mm (per-tensor), which Triton and PyTorch refuse below compute capability "
                        "8.9"),
            "source": cite(newest, FP8, newest.linear_line, f"Fp8LinearMethod: use_marlin only from {FORCE}"),
            "also": paths(newest),
        }, BASIS)

    # Linear layers, Marlin by itself in a range of capabilities.
    def auto(f: Facts):
        return f.auto_range if f.linear_marlin == "auto" and f.auto_range and linear_paths(f) else None

    for low_high, run in runs(releases, auto):
        low, high = low_high
        newest, span = run[-1], span_text([f.version for f in run])
        rules += _twice({
            "id": f"sglang.derived.{newest.version}.fp8-linear.below-marlin",
            "kind": "requirement",
            "releases": releases_text([f.version for f in run]),
            "when": {"accelerator": "cuda", "model": {"checkpoint_dtype": "fp8"}, "env": {FORCE: False}},
            "require": {"compute_capability": f">={_capability(low)}"},
            "message": (f"SGLang {span}: Fp8LinearMethod turns Marlin on by itself only from compute capability "
                        f"{_capability(low)} to {_capability(high)} (can_auto_enable_marlin_fp8); below "
                        f"{_capability(low)} an FP8 checkpoint's linear layers run Triton's w8a8_block_fp8_matmul "
                        "or torch._scaled_mm, which Triton and PyTorch refuse below 8.9"),
            "source": cite(newest, UTILS, newest.auto_line, f"can_auto_enable_marlin_fp8: "
                           f"{low} <= sm < {high}"),
            "also": [cite(newest, FP8, newest.linear_line, "Fp8LinearMethod: use_marlin from "
                          "can_auto_enable_marlin_fp8"), *paths(newest)],
        }, BASIS)

    def from_vllm(f: Facts):
        return auto(f) if auto(f) and f.marlin_module and f.marlin_module.startswith("vllm.") else None

    for low_high, run in runs(releases, from_vllm):
        low, high = low_high
        newest, span = run[-1], span_text([f.version for f in run])
        rules += _twice({
            "id": f"sglang.derived.{newest.version}.fp8-linear.marlin-needs-vllm",
            "kind": "requirement",
            "releases": releases_text([f.version for f in run]),
            "when": {"accelerator": "cuda", "model": {"checkpoint_dtype": "fp8"}, "env": {FORCE: False},
                     "compute_capability": f">={_capability(low)},<{_capability(high)}"},
            # vLLM as a condition of the install, never as a requirement the resolution would add: a
            # warning, which says "cannot verify" while the stack does not show vLLM installed
            "require": {"packages": {"vllm": ">=0"}},
            "severity": "warning",
            "message": (f"SGLang {span}: from compute capability {_capability(low)} to {_capability(high)} an FP8 "
                        "checkpoint's linear layers need Marlin, and these releases import Marlin's functions from "
                        "vLLM: without vLLM installed, Marlin is off and the layers run Triton's "
                        "w8a8_block_fp8_matmul or torch._scaled_mm, which Triton and PyTorch refuse below 8.9"),
            "source": cite(newest, FP8, newest.marlin_import_line, "apply_fp8_marlin_linear imported from "
                           f"{newest.marlin_module}, in a try that turns Marlin off without it"),
            "also": [cite(newest, UTILS, newest.auto_line, f"can_auto_enable_marlin_fp8: {low} <= sm < {high}"),
                     *paths(newest)],
        }, BASIS)
    return sorted(sources.values(), key=lambda s: s["id"]), sorted(rules, key=lambda r: r["id"])


def pick_wheel(wheels: list[dict]) -> dict | None:
    """A wheel whose Python code is the release's: the Linux x86_64 one, else a pure-Python one, else any."""
    def rank(wheel: dict) -> tuple:
        name = wheel["file"]
        return ("linux" in name and "x86_64" in name, name.endswith("-none-any.whl"), name)
    candidates = [w for w in wheels if w["file"].endswith(".whl")]
    return max(candidates, key=rank) if candidates else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metadata", default="data/metadata/sglang.jsonl")
    parser.add_argument("--out", default="data/derived/sglang.fp8.toml")
    parser.add_argument("--since", default="0.4.0", help="the first release read")
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "derive_sglang_fp8"))
    args = parser.parse_args(argv)
    releases = []
    for version, date, wheel in load_releases(args.metadata, args.since, pick_wheel):
        if wheel is None:
            print(f"{version}: no wheel in the snapshot", file=sys.stderr)
            continue
        facts = read_facts(version, date, wheel, args.cache)
        print(f"{version}: linear {facts.linear_marlin} ({facts.marlin_module}, {facts.auto_range}), "
              f"other routes {facts.other_calls}, moe marlin {facts.moe_marlin} {'; '.join(facts.problems)}",
              file=sys.stderr)
        releases.append(facts)
    sources, rules = derive(releases)
    data = {"schema": 1, "package": "sglang", "tool": TOOL, "source": sources, "rule": rules}
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(HEADER + tomli_w.dumps(data))
    print(f"{len(releases)} releases read; {len(rules)} rules, {len(sources)} sources -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
