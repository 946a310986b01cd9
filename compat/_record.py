"""`Record`: typing.NamedTuple, made at import for a fraction of its cost.

At class creation, typing.NamedTuple turns each field's annotation into a
ForwardRef, and a ForwardRef compiles its string (every annotation in compat
is a string: ``from __future__ import annotations``). For the record classes
a check imports, that was about a third of compat's own import time, spent
on annotations nothing evaluates at run time. `Record` builds the same class
from the same body with collections.namedtuple, as typing does, and keeps
the annotations as written. Type checkers see typing.NamedTuple itself.

    class Need(Record):
        name: str
        extras: frozenset[str] = frozenset()

        def describe(self) -> str: ...
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

__all__ = ["Record"]

if TYPE_CHECKING:
    from typing import NamedTuple as Record
else:
    # What typing.NamedTuple refuses to let a class body define, and what it
    # does not copy onto the class (namedtuple sets them itself).
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                             "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _RecordMeta(type):
        def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> Any:
            if namespace.get("_record_root"):
                return super().__new__(mcs, name, bases, namespace)
            annotations = namespace.get("__annotations__", {})
            fields = list(annotations)
            defaulted = [field for field in fields if field in namespace]
            for field in fields[fields.index(defaulted[0]):] if defaulted else ():
                if field not in namespace:  # as typing.NamedTuple says it
                    raise TypeError(f"Non-default namedtuple field {field} cannot follow default field"
                                    f"{'s' if len(defaulted) > 1 else ''} {', '.join(defaulted)}")
            defaults = [namespace[field] for field in defaulted]
            record = collections.namedtuple(name, fields, defaults=defaults, module=namespace["__module__"])
            record.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError(f"Cannot overwrite NamedTuple attribute {key}")
                if key not in _SPECIAL and key not in record._fields:
                    setattr(record, key, value)
            return record

    class Record(metaclass=_RecordMeta):
        """Subclass it as typing.NamedTuple."""

        _record_root = True
