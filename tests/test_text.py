"""compat/_text.py tells each shape as the pattern it stands for matches it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compat import _text


def test_the_shapes_of_common_values():
    assert _text.dotted_numbers("3.12") == ["3", "12"] and _text.dotted_numbers("3.12 ") is None
    assert _text.dotted_numbers("3.\u0663") is None and _text.dotted_numbers("3.12\n") is None  # ASCII, whole
    assert not _text.dotted_words("cp312\n") and _text.lower_words("GPU rtx-4090") == ["rtx", "4090"]
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


@pytest.mark.parametrize("text", ["name==1.0\r", "name\u00a0>=1.0", "name>=1.0\n", "name[a\u00a0]",
                                  "name; os_name=='a'\x1c", "name\u2028==1"])
def test_a_line_with_whitespace_packaging_does_not_skip_is_refused_as_packaging_refuses_it(text):
    from compat.knowledge.requires import _common, parse_requirement

    assert _common(text) is None
    with pytest.raises(ValueError):
        parse_requirement(text)
