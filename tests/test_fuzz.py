"""Fuzzing the stack reader: whatever a stack file or mapping holds, the only
outcomes are a `Report` or a `CompatError` (exit 2, one line), never another
exception (docs/reliability.md, "Fuzzing").

COMPAT_FUZZ_INPUTS sets the number of mutated files (default 10,000); the
seed is fixed, so a failure repeats.
"""

from __future__ import annotations

import os
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import compat
from compat import CompatError, load_stack
from compat._toml import loads
from compat.engine.findings import Report
from compat.errors import StackError
from compat.knowledge.binding import stack_from_tables

from .conftest import EXAMPLES

INPUTS = int(os.environ.get("COMPAT_FUZZ_INPUTS", "2000"))
FULL_CHECK_EVERY = 50  # one input in this many is checked whole, not only read
SEED = 20261203
SETTINGS = settings(deadline=None, derandomize=True, max_examples=150,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# The stack files among the examples (axes files are the matrix's input: tests/test_matrix.py).
SOURCES = [p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.toml")) if not p.name.startswith("axes")]
UNICODE_DIGITS = "０１２３４５６７８９٠١٢٣٤٥٦٧٨٩۰۱۲۳۴۵۶۷۸۹०१२३४५६७८९𝟎𝟏𝟐𝟑"
NASTY = ["[", "[[", "]", "]]", "=", '"', "'", '"""', "{", "}", ",", ".", "#", "\\", "\n", "\r", "\x00", "\u2028",
         "*", "?", "inf", "nan", "true", "1979-05-27", "0x", "+", "-", "_", "~=", "==", ">=", "!=", "@", ";"]


def one_line_error(exc: CompatError) -> None:
    text = f"compat: error: {exc}"
    assert text.splitlines() == [text] and len(text) < 5000, text[:300]


def outcome(run) -> object:
    """Run; return the result, or the CompatError; any other exception fails the test."""
    try:
        return run()
    except CompatError as exc:
        one_line_error(exc)
        return exc


def mutate(text: str, rng: random.Random) -> str:
    """One to three of: flips, cuts, duplicated lines, unicode digits, deep
    nesting, huge numbers, long strings, nasty tokens."""
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(10)
        if not text:
            text = "x"
        at = rng.randrange(len(text))
        if kind == 0:  # byte flip, through UTF-8 (an invalid result is dropped, as a decoder would)
            raw = bytearray(text.encode("utf-8"))
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
            text = raw.decode("utf-8", errors=rng.choice(["replace", "ignore"]))
        elif kind == 1:  # truncation
            text = text[:at]
        elif kind == 2:  # a duplicated line
            lines = text.splitlines(keepends=True)
            i = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
            text = "".join(lines)
        elif kind == 3:  # unicode digits for ASCII ones
            text = "".join(rng.choice(UNICODE_DIGITS) if c.isdigit() and rng.random() < 0.5 else c for c in text)
        elif kind == 4:  # deep nesting of a value
            depth = rng.choice([5, 9, 50, 300, 600, 2000])
            text = text[:at] + "[" * depth + "1" + "]" * depth + text[at:]
        elif kind == 5:  # a huge number, quoted or not
            digits = "9" * rng.choice([20, 400, 4301, 5000])
            text = text[:at] + rng.choice([digits, f'"{digits}"', f'"3.{digits}"', f"0.{digits}"]) + text[at:]
        elif kind == 6:  # a long string or line
            text = text[:at] + rng.choice(["x", "[ ", "\\u0041", "1."]) * rng.choice([100, 5000, 20000]) + text[at:]
        elif kind == 7:  # a nasty token
            text = text[:at] + rng.choice(NASTY) + text[at:]
        elif kind == 8:  # swap a value for another type
            text = text.replace('"', rng.choice(["[", "{", "", "'"]), 1)
        else:  # a deleted span
            text = text[:at] + text[at + rng.randint(1, 40):]
    return text


def read(text: str, db):
    """Parse and read a stack file's text, as load_stack does for a file."""
    return stack_from_tables(loads(text, file="fuzz.toml", error=StackError), db, file="fuzz.toml", text=text,
                             path="fuzz.toml")


def test_mutated_examples_never_crash(db, tmp_path):
    rng = random.Random(SEED)
    started = time.perf_counter()
    outcomes = {"stack": 0, "error": 0, "report": 0}
    for i in range(INPUTS):
        text = mutate(rng.choice(SOURCES), rng)
        if i % FULL_CHECK_EVERY == 0:  # the whole path: the file, the reader, the engine
            path = tmp_path / "fuzz.toml"
            path.write_text(text, encoding="utf-8")
            result = outcome(lambda: compat.check(path, database=db))
            assert isinstance(result, (Report, CompatError))
            outcomes["report" if isinstance(result, Report) else "error"] += 1
        else:
            result = outcome(lambda: read(text, db))
            outcomes["error" if isinstance(result, CompatError) else "stack"] += 1
    elapsed = time.perf_counter() - started
    print(f"\n{INPUTS} mutated stack files in {elapsed:.1f} s: {outcomes}")
    assert outcomes["stack"] + outcomes["report"] > 0 and outcomes["error"] > 0


# Hypothesis: mappings of any shape through the library.

KEYS = st.one_of(st.sampled_from(["system", "python", "cuda", "platform", "packages", "vllm", "torch", "env", "hardware",
                                  "gpu", "count", "compat", "ignore", "options", "model", "head_dim", "version",
                                  "extras", "external", "stack", "schema"]), st.text(max_size=12), st.integers())
SCALARS = st.one_of(
    st.text(max_size=20),
    st.from_regex(r"[0-9٠-٩０-９]{1,4}(\.[0-9٠-٩０-９]{1,4}){0,3}", fullmatch=True),
    st.sampled_from(["3.12", "13.0", "0.32.0", ">=5.16,<5.21", "H200", "*", "sm_90", "linux-x86_64", "cu128"]),
    st.integers(), st.integers(min_value=10**30, max_value=10**40), st.floats(), st.booleans(), st.none(),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(KEYS, inner, max_size=4)), max_leaves=20)


@SETTINGS
@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_any_mapping_is_a_stack_or_a_stack_error(db, data):
    outcome(lambda: load_stack(data, db))


SYSTEM = st.fixed_dictionaries({"python": st.sampled_from(["3.12", "3.10", "3.14"])},
                               optional={"cuda": st.sampled_from(["13.0", "12.8", "１３.0"]),
                                         "platform": st.one_of(st.sampled_from(["linux-x86_64", "macos-arm64"]), VALUES)})
PACKAGES = st.dictionaries(st.sampled_from(["vllm", "torch", "transformers", "flashinfer-python", "numpy", "vllmm"]),
                           st.one_of(st.sampled_from(["0.32.0", ">=5.16", "2.13.0", "*", "٠.٣٢.٠"]), VALUES),
                           max_size=3)


@SETTINGS
@given(SYSTEM, PACKAGES, st.one_of(st.text(max_size=10), st.lists(st.text(max_size=10), max_size=3)))
def test_check_of_near_valid_mappings_is_a_report_or_an_error(db, system, packages, ignore):
    result = outcome(lambda: compat.check({"system": system, "packages": packages}, database=db, ignore=ignore))
    assert isinstance(result, (Report, CompatError))


@SETTINGS
@given(st.text(max_size=200))
def test_any_text_is_a_stack_or_a_stack_error(db, text):
    outcome(lambda: read(text, db))


@pytest.mark.parametrize("source", SOURCES)
def test_the_examples_still_read(db, source):
    assert read(source, db).system.python is not None
