"""Property: a stack written by `compat resolve` reads back as the same stack."""

from __future__ import annotations

import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compat import Database, load_stack
from compat.formats.pinned import stack_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DB = Database.load()
GPUS = [g.name for g in DB.catalog.gpus if g.vendor == "nvidia"]
PACKAGES = {name: [str(v) for v in DB.component(name).versions()] for name in ("vllm", "transformers", "torch", "ltx-2")}


@st.composite
def stacks(draw):
    data = {
        "stack": {"name": draw(st.text("abcdefgh-", min_size=1, max_size=12))},
        "system": {
            "python": draw(st.sampled_from(["3.10", "3.11", "3.12", "3.13.1"])),
            "platform": draw(st.sampled_from(sorted(DB.platforms.names()))),
            "cuda": draw(st.sampled_from(["12.6", "12.8", "13.0"])),
            "driver": draw(st.sampled_from(["535.104.05", "580.95.05"])),
        },
        "hardware": {"gpu": draw(st.sampled_from(GPUS)), "count": draw(st.integers(1, 8))},
        "packages": {},
    }
    for name in draw(st.lists(st.sampled_from(sorted(PACKAGES)), unique=True, max_size=4)):
        data["packages"][name] = draw(st.sampled_from(PACKAGES[name]))
    if draw(st.booleans()):
        data["model"] = {"family": "wan2.2", "head_dim": draw(st.sampled_from([64, 128, 256]))}
    if draw(st.booleans()):
        data["env"] = {"FLASHINFER_DECODE_AUTO_CUDNN": draw(st.sampled_from(["0", "1"]))}
    if draw(st.booleans()):
        data["compat"] = {"ignore": ["untracked:*"], "strict": draw(st.booleans())}
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks())
def test_written_stack_reads_back_the_same(data):
    stack = load_stack(data, DB)
    pins = {name: spec.written for name, spec in stack.packages.items()}
    again = load_stack(tomllib.loads(stack_toml(stack, pins, {})), DB)
    assert again.system == stack.system
    assert again.hardware == stack.hardware
    assert again.packages == stack.packages
    assert again.model == stack.model and again.env == stack.env
    assert (again.ignore, again.strict, again.name) == (stack.ignore, stack.strict, stack.name)
