"""compat/_text.py tells each shape as the pattern it stands for matches it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat import _text

# the characters the patterns turn on, and some they must refuse (non-ASCII digits and letters, other spaces)
TEXT = st.text(alphabet=st.sampled_from('0123456789azAZ_.-" \t\n\\uU\u0663\u00e9\u2028\u00a0[],=\''), max_size=24)


@settings(max_examples=400, deadline=None)
@given(TEXT)
def test_each_shape_is_its_pattern(text):
    numbers = re.fullmatch(r"[0-9]+(\.[0-9]+)*", text, re.ASCII)
    assert _text.dotted_numbers(text) == (text.split(".") if numbers else None)
    assert _text.dotted_words(text) == bool(re.match(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*\Z", text))
    assert _text.dotted_identifiers(text) == bool(re.match(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\Z", text))
    assert _text.lower_words(text) == re.findall(r"[a-z0-9]+", text)
    assert _text.quoted(text) == re.findall(r'"([^"]+)"', text)
    assert _text.has_joining_escape(text) == bool(re.search(r"\\[uU\s]", text))


def test_the_shapes_of_common_values():
    assert _text.dotted_numbers("3.12") == ["3", "12"] and _text.dotted_numbers("3.12 ") is None
    assert _text.dotted_words("manylinux_2_28_x86_64.manylinux2014_x86_64") and not _text.dotted_words("cp312.")
    assert _text.dotted_identifiers("cp311.cp312") and not _text.dotted_identifiers("3cp")
    assert _text.quoted('a = ["", "b"]') == [", "]  # as the pattern reads it
    assert _text.has_joining_escape("a\\\nb") and not _text.has_joining_escape("a\\\\b")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789-T :.Z+\u0663"), max_size=22))
def test_an_upload_time_is_what_its_pattern_and_the_calendar_say(text):
    from compat.knowledge.snapshot import _UPLOADED, _is_timestamp

    match = re.match(_UPLOADED, text)
    expected = False
    if match is not None:
        try:
            import datetime

            datetime.date.fromisoformat(match.group(1))
            expected = True
        except ValueError:
            pass
    assert _is_timestamp(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('{}"versionyankd:, tru1.0\\'), max_size=40))
def test_the_head_of_a_release_line_is_read_as_its_pattern_reads_it(text):
    """`_head` reads the prefix db sync writes without a pattern; every line,
    that prefix or not, gives what reading it with the pattern (or, past
    it, decoding the line) gives."""
    from compat.knowledge.snapshot import _DECODER, _head

    def by_pattern(line: str) -> tuple[str, bool] | None:
        match = re.match(r'\{"version": "([^"\\]+)"(, "yanked": true)?', line)
        if match is not None:
            rest = line[match.end():]
            if '"version"' not in rest and '"yanked"' not in rest and "\\u" not in rest:
                return match.group(1), match.group(2) is not None
        try:
            entry = _DECODER.decode(line)
        except (ValueError, RecursionError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("version"), str):
            return None
        return entry["version"], entry.get("yanked") is True

    for line in ('{"version": "' + text, text, '{"version": "' + text + '"}', '{"version": "1.0", "yanked": ' + text):
        assert _head(line) == by_pattern(line), line


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("0123456789.af \u0663x"), max_size=8))
def test_an_architecture_is_what_its_pattern_says(text):
    from compat.knowledge.model import _arch

    match = re.match(r"([0-9]+)\.([0-9]+)([af]?)\Z", text.strip())
    assert _arch(text) == (match.groups() if match else None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('namesli =\t\u00a0"x[],\r'), max_size=24))
def test_a_names_line_is_read_as_its_pattern_reads_it(text):
    from compat.knowledge.catalog import _names_value

    match = re.match(r"(?:name|aliases)\s*=\s*(.*)$", text)
    assert _names_value(text) == (match.group(1) if match else None)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("abz09.AZ_-\u0663 "), max_size=10))
def test_a_build_label_is_what_its_pattern_says(text):
    from compat.knowledge.database import _is_label

    assert _is_label(text) == bool(re.fullmatch(r"[a-z0-9]+(?:[.][a-z0-9]+)*", text))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('id= "x\t\n'), max_size=24))
def test_a_source_id_is_read_from_its_line(text):
    from compat.knowledge.database import _source_id

    lines = [re.match(r'id[^\S\n]*=[^\S\n]*"([^"\n]+)"', line) for line in text.split("\n")]
    first = next((m.group(1) for m in lines if m), None)
    assert _source_id(text) == first


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(['[[source]]', '  [[source]] ', 'id = "a"', 'id = "b"', 'id="a"', 'title = "x"',
                                 '[other]', ' [x]', '', 'url = "[y]"', 'id = "a" # again', 'id = "b"\r',
                                 'title = "x\u2028[y]"', '[[source]]\r']), max_size=12),
       st.sampled_from(["a", "b"]), st.booleans())
def test_a_source_block_is_the_one_indexing_every_block_finds(lines, source_id, newline):
    from compat import _toml
    from compat.knowledge.database import _source_block, _source_id

    text = "\n".join(lines) + ("\n" if newline else "")
    index = {}
    for _, block in _toml.blocks(text, "source"):
        found = _source_id(block)
        if found is not None:
            index[found] = block
    assert _source_block(text, source_id) == index.get(source_id)


@pytest.mark.parametrize("text", ["name==1.0\r", "name\u00a0>=1.0", "name>=1.0\n", "name[a\u00a0]",
                                  "name; os_name=='a'\x1c", "name\u2028==1"])
def test_a_line_with_whitespace_packaging_does_not_skip_is_refused_as_packaging_refuses_it(text):
    from compat.knowledge.requires import _common, parse_requirement

    assert _common(text) is None
    with pytest.raises(ValueError):
        parse_requirement(text)
