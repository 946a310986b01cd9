"""compat._record.Record behaves as typing.NamedTuple: the same class from the same body."""

from __future__ import annotations

import copy
import pickle
from typing import NamedTuple

import pytest

from compat._record import Record


class Mine(Record):
    """A record."""

    a: int
    b: str = "x"
    c: tuple[int, ...] = ()

    def twice(self) -> int:
        return self.a * 2

    @property
    def loud(self) -> str:
        return self.b + "!"


class Theirs(NamedTuple):
    """A record."""

    a: int
    b: str = "x"
    c: tuple[int, ...] = ()


def test_a_record_is_the_named_tuple_of_its_body():
    mine, theirs = Mine(1), Theirs(1)
    assert mine == theirs == (1, "x", ()) and hash(mine) == hash(theirs)
    assert repr(mine) == repr(theirs).replace("Theirs", "Mine")
    assert Mine._fields == Theirs._fields and Mine._field_defaults == Theirs._field_defaults
    assert mine._replace(b="y") == theirs._replace(b="y") and mine._asdict() == theirs._asdict()
    assert Mine._make([1, 2, 3]) == Theirs._make([1, 2, 3]) and type(Mine._make([1, 2, 3])) is Mine
    assert Mine(c=(2,), a=3) == (3, "x", (2,)) and (mine.a, mine.b, mine.c) == tuple(mine)
    assert mine.twice() == 2 and mine.loud == "x!" and Mine.__doc__ == "A record."
    assert Mine.__qualname__ == "Mine" and Mine.__module__ == __name__ and Mine.__match_args__ == ("a", "b", "c")
    assert Mine.__annotations__ == {"a": "int", "b": "str", "c": "tuple[int, ...]"}
    assert pickle.loads(pickle.dumps(Mine(5, "q"))) == Mine(5, "q") and copy.deepcopy(mine) == mine
    match mine:
        case Mine(a, b):
            assert (a, b) == (1, "x")


@pytest.mark.parametrize(
    "call",
    [lambda r: r(), lambda r: r(1, 2, 3, 4), lambda r: r(1, d=2), lambda r: r._make([1])],
    ids=["missing", "too many", "unknown keyword", "_make of too few"],
)
def test_a_record_refuses_what_a_named_tuple_refuses_with_its_words(call):
    with pytest.raises(TypeError) as mine:
        call(Mine)
    with pytest.raises(TypeError) as theirs:
        call(Theirs)
    assert str(mine.value) == str(theirs.value).replace("Theirs", "Mine")
    with pytest.raises(ValueError, match="unexpected field names"):
        Mine(1)._replace(z=1)


def test_records_of_every_size_and_their_subclasses():
    class Empty(Record):
        pass

    class One(Record):
        v: int

    class More(One):
        def more(self) -> int:
            return self.v + 1

    assert Empty() == () and One(3) == (3,) and One(v=4).v == 4 and More(1).more() == 2 and More(1) == (1,)


def test_a_record_refuses_the_bodies_a_named_tuple_refuses():
    with pytest.raises(TypeError, match="cannot follow default field"):
        class Order(Record):
            a: int = 1
            b: int
    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):
        class Replaced(Record):
            a: int

            def _replace(self) -> None: ...


def test_a_stack_and_a_report_copy_compare_and_show_as_dataclasses_did():
    from packaging.version import Version

    from compat.engine.findings import Report
    from compat.stack import Hardware, Stack, System

    stack = Stack(System(python=Version("3.12")), text="[system]\n")
    assert stack.hardware == Hardware() and stack.packages == {} and stack.packages is not Stack(stack.system).packages
    moved = stack.replace(name="x")
    assert (moved.name, moved.system, moved.text, stack.name) == ("x", stack.system, stack.text, None)
    assert moved != stack and moved.replace(name=None) == stack == stack.replace(text=None)  # the text aside
    assert "text=" not in repr(stack) and repr(stack).startswith("Stack(system=System(")
    with pytest.raises(TypeError, match="no field 'nmae'"):
        stack.replace(nmae="x")
    report = Report(stack, [], {})
    assert report.resolved == {} and report.suggestions == [] and report.replace(strict=True).strict
    assert report.replace(strict=False) == report and report.replace(stack=moved) != report
    with pytest.raises(TypeError):
        hash(stack)


def test_a_record_longer_than_the_written_out_constructors():
    namespace = {"__annotations__": {f"f{i}": "int" for i in range(25)}, "f24": 0}
    Long = type(Record)("Long", (Record,), {"__module__": __name__, "__qualname__": "Long", **namespace})
    long = Long(*range(24))
    assert long == (*range(24), 0) and long.f23 == 23 and Long._fields[-1] == "f24"
