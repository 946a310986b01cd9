"""`Record`: typing.NamedTuple, made at import for a fraction of its cost.

A check imports about thirty record classes, and making them was the
largest part of compat's own import time: typing.NamedTuple compiles each
field's annotation into a ForwardRef (every annotation in compat is a
string: ``from __future__ import annotations``), and collections.namedtuple
compiles a ``__new__`` for each class. `Record` makes the same class from
the same body with neither compile: the ``__new__`` of each number of fields
is written out below, and each class takes a copy of its code with its own
field names for the parameters (so that keywords, defaults and the errors
for a missing argument are namedtuple's). Annotations stay as written.
Type checkers see typing.NamedTuple itself.

    class Need(Record):
        name: str
        extras: frozenset[str] = frozenset()

        def describe(self) -> str: ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

__all__ = ["Record", "Fields"]

_F = TypeVar("_F", bound="Fields")


class Fields:
    """What a dataclass gives a mutable class, for one whose constructor is
    written out: `replace` (a copy with some fields changed, as
    dataclasses.replace), equality and a repr over its `_fields`, less the
    `_unshown` ones; unhashable, as a dataclass with mutable fields is.
    (Making a dataclass's methods at import cost a check more than the
    module that declares it: Stack and Report.)
    """

    _fields: tuple[str, ...] = ()
    _unshown: frozenset[str] = frozenset()

    def replace(self: _F, **changes: Any) -> _F:
        unknown = set(changes) - set(self._fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {sorted(unknown)[0]!r}")
        return type(self)(**{**{f: getattr(self, f) for f in self._fields}, **changes})

    def _shown(self) -> list[tuple[str, Any]]:
        return [(f, getattr(self, f)) for f in self._fields if f not in self._unshown]

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._shown() == other._shown()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={v!r}' for f, v in self._shown())})"

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    import sys
    import types
    from operator import itemgetter

    try:
        from _collections import _tuplegetter
    except ImportError:  # pragma: no cover - another interpreter

        def _tuplegetter(index: int, doc: str) -> property:
            return property(itemgetter(index), doc=doc)

    # What typing.NamedTuple refuses to let a class body define, and what it
    # does not copy onto the class.
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                             "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__", "__qualname__"})
    _tuple_new = tuple.__new__
    # The __new__ of a record of 0, 1, 2... fields, written out rather than
    # compiled at import (compiling one cost more than making the class).
    _NEW: list[Any] = [
        lambda _cls: _tuple_new(_cls, ()),
        lambda _cls, f0: _tuple_new(_cls, (f0,)),
        lambda _cls, f0, f1: _tuple_new(_cls, (f0, f1)),
        lambda _cls, f0, f1, f2: _tuple_new(_cls, (f0, f1, f2)),
        lambda _cls, f0, f1, f2, f3: _tuple_new(_cls, (f0, f1, f2, f3)),
        lambda _cls, f0, f1, f2, f3, f4: _tuple_new(_cls, (f0, f1, f2, f3, f4)),
        lambda _cls, f0, f1, f2, f3, f4, f5: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18)),
        lambda _cls, f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19: _tuple_new(_cls, (f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19)),
    ]

    def _new(qualname: str, fields: tuple[str, ...], defaults: tuple[Any, ...]) -> Any:
        if len(fields) >= len(_NEW):  # a longer record than any here: compiled
            names = ", ".join(f"f{i}" for i in range(len(fields)))
            code = eval(f"lambda _cls, {names}: _tuple_new(_cls, ({names},))", {"_tuple_new": _tuple_new}).__code__
        else:
            code = _NEW[len(fields)].__code__
        new = types.FunctionType(code.replace(co_varnames=("_cls", *fields), co_name="__new__"),
                                 {"_tuple_new": _tuple_new, "__builtins__": {}}, "__new__", defaults or None)
        new.__qualname__ = f"{qualname}.__new__"
        return new

    def _make(cls: type, iterable: Any) -> Any:
        result = tuple.__new__(cls, iterable)
        if len(result) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(result)}")
        return result

    def _replace(self: Any, /, **changes: Any) -> Any:
        result = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return result

    def _repr(self: Any) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={v!r}' for n, v in zip(self._fields, self))})"

    def _asdict(self: Any) -> dict[str, Any]:
        return dict(zip(self._fields, self))

    def _getnewargs(self: Any) -> tuple[Any, ...]:
        return tuple(self)

    class _RecordMeta(type):
        def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
            if namespace.get("_record_root"):
                return super().__new__(mcs, name, bases, namespace)
            annotations = namespace.get("__annotations__", {})
            fields = tuple(annotations)
            for field in fields:
                if field.startswith("_"):
                    raise ValueError(f"Field names cannot start with an underscore: {field!r}")
            defaulted = [field for field in fields if field in namespace]
            for field in fields[fields.index(defaulted[0]):] if defaulted else ():
                if field not in namespace:  # as typing.NamedTuple says it
                    raise TypeError(f"Non-default namedtuple field {field} cannot follow default field"
                                    f"{'s' if len(defaulted) > 1 else ''} {', '.join(defaulted)}")
            defaults = tuple(namespace[field] for field in defaulted)
            body: dict[str, Any] = {
                "__doc__": f"{name}({', '.join(fields)})",
                "__slots__": (),
                "_fields": fields,
                "_field_defaults": dict(zip(defaulted, defaults)),
                "__new__": _new(namespace.get("__qualname__", name), fields, defaults),
                "_make": classmethod(_make),
                "_replace": _replace,
                "__repr__": _repr,
                "_asdict": _asdict,
                "__getnewargs__": _getnewargs,
                "__match_args__": fields,
                "__module__": namespace["__module__"],
                "__qualname__": namespace.get("__qualname__", name),
            }
            for index, field in enumerate(fields):
                body[field] = _tuplegetter(index, sys.intern(f"Alias for field number {index}"))
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
                if key not in _SPECIAL and key not in fields:
                    body[key] = value
            record = type.__new__(type, name, (tuple,), body)
            record.__annotations__ = dict(annotations)
            return record

    class Record(metaclass=_RecordMeta):
        """Subclass it as typing.NamedTuple."""

        _record_root = True
