"""The condition language of the constraint database.

A condition is a TOML table whose keys are tests, all of which must hold::

    when = { options = { quantization = "fp8-scaled-mm" }, compute_capability = "<8.9" }

Tests look at the system (``python``, ``cuda``, ``driver``, ``rocm``,
``platform``), the hardware (``compute_capability``, ``gpu``, ``gpu_arch``,
``gpu_segment``, ``gpu_count``, ``accelerator``), other packages of the stack
(``packages``), the owning package's runtime options (``options``), the model
(``model``), the environment (``env``), and combine with ``any``, ``all`` and
``not``. Evaluation is three-valued: a test of something the stack does not
say (the driver of a stack that gives none) is *unknown*, never a guess.

Conditions are data: they are parsed and checked once, never executed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Protocol, Union

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from .._record import Record
from .._names import normalize

__all__ = [
    "Condition",
    "ConditionError",
    "Facts",
    "UNKNOWN",
    "VERSION_KEYS",
    "parse_condition",
    "option_key",
]


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:  # pragma: no cover - guard against misuse
        raise TypeError("UNKNOWN has no truth value; compare with `is UNKNOWN`")


UNKNOWN: Any = _Unknown()
"""What a test returns when the stack does not say enough to decide it."""

Truth = Union[bool, Any]  # True, False or UNKNOWN

# Keys whose value is a version of something outside pip's view. The resolver
# sees each as a virtual package with one candidate: the stack's value.
VERSION_KEYS = ("python", "cuda", "driver", "rocm", "compute_capability")
_CHOICE_KEYS = ("platform", "accelerator", "gpu", "gpu_arch", "gpu_segment", "index")
_MODEL_TEXT = ("family", "checkpoint_dtype")
_MODEL_IDENTITY = ("name", "repo")  # compared by catalog identity: any alias of the same model
_MODEL_NUMBER = ("head_dim",)
_MODEL_FLAG = ("moe", "hybrid", "multimodal")
MODEL_KEYS = (*_MODEL_IDENTITY, *_MODEL_TEXT, *_MODEL_NUMBER, *_MODEL_FLAG)
_ALL_KEYS = (*VERSION_KEYS, *_CHOICE_KEYS, "gpu_count", "packages", "options", "model", "env", "any", "all", "not")

LABELS = {
    "python": "Python",
    "cuda": "CUDA",
    "driver": "NVIDIA driver",
    "rocm": "ROCm",
    "compute_capability": "compute capability",
    "platform": "platform",
    "accelerator": "accelerator",
    "gpu": "GPU",
    "gpu_arch": "GPU architecture",
    "gpu_segment": "GPU segment",
    "index": "the index the package installs from",
    "gpu_count": "GPU count",
}


class ConditionError(ValueError):
    """A condition table is malformed; `key` is the dotted path inside it."""

    def __init__(self, message: str, key: str) -> None:
        super().__init__(message)
        self.key = key


class Facts(Protocol):
    """What a condition can ask of a stack. The engine provides it."""

    def version(self, key: str) -> Version | None | Any:
        """A VERSION_KEYS value: a Version, None (absent: no CUDA, no GPU) or UNKNOWN."""

    def choice(self, key: str) -> str | None | Any:
        """A _CHOICE_KEYS value: lower-case text, None (absent) or UNKNOWN."""

    def gpu_count(self) -> int | Any: ...

    def package(self, name: str) -> Version | None | Any:
        """The version of a stack package; None if the stack lacks it."""

    def option(self, name: str) -> Any:
        """The effective value of the owning package's option (default applied), or None."""

    def model(self, key: str) -> Any:
        """A [model] property, or None.

        For ``name`` and ``repo``: the identity keys of the stack's model
        (``models.model_key`` of its name, repo and catalog aliases), or None.
        """

    def env(self, name: str) -> str | None: ...


def option_key(name: str) -> str:
    """Options are matched without regard to dashes versus underscores.

    >>> option_key("kv_cache_dtype")
    'kv-cache-dtype'
    """
    return name.strip().lstrip("-").replace("_", "-").lower()


def value_text(value: Any) -> str:
    """How option and property values compare: lower-case text, booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip().lower()


def _late(test: Any) -> bool:
    """Whether a test may read a catalog: such tests are tried last."""
    return test.kind == "option" or test.kind.startswith("model")


def _and(results: list[Truth]) -> Truth:
    if any(r is False for r in results):
        return False
    if any(r is UNKNOWN for r in results):
        return UNKNOWN
    return True


def _or(results: list[Truth]) -> Truth:
    if any(r is True for r in results):
        return True
    if any(r is UNKNOWN for r in results):
        return UNKNOWN
    return False


class NumberBound(Record):
    """An integer test: an exact value, a list of values, or min / max / multiple_of."""

    values: tuple[int, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    multiple_of: int | None = None

    def holds(self, number: int) -> bool:
        if self.values and number not in self.values:
            return False
        if self.minimum is not None and number < self.minimum:
            return False
        if self.maximum is not None and number > self.maximum:
            return False
        if self.multiple_of is not None and number % self.multiple_of:
            return False
        return True

    def describe(self) -> str:
        parts = []
        if self.values:
            parts.append(" or ".join(str(v) for v in self.values))
        if self.multiple_of is not None:
            parts.append(f"a multiple of {self.multiple_of}")
        if self.minimum is not None:
            parts.append(f"at least {self.minimum}")
        if self.maximum is not None:
            parts.append(f"at most {self.maximum}")
        return ", ".join(parts)


class Test(Record):
    """One test of a condition. `kind` picks the rule, `key` the subject."""

    kind: str  # version, choice, count, package, option, model-text, model-identity, model-number, model-flag, env, any, all, not
    key: str
    specifier: SpecifierSet | None = None
    choices: tuple[str, ...] = ()
    number: NumberBound | None = None
    expect: Any = None  # env, option: True (set) or False (unset), env also a string; model-flag: a bool;
    # model-identity: the names as written
    children: tuple[Condition, ...] = ()

    def evaluate(self, facts: Facts) -> Truth:
        kind = self.kind
        if kind == "version":
            value = facts.version(self.key)
            if value is UNKNOWN:
                return UNKNOWN
            if value is None:
                return False
            assert self.specifier is not None
            return self.specifier.contains(value, prereleases=True)
        if kind == "choice":
            value = facts.choice(self.key)
            if value is UNKNOWN:
                return UNKNOWN
            return value is not None and value.lower() in self.choices
        if kind == "count":
            count = facts.gpu_count()
            if count is UNKNOWN:
                return UNKNOWN
            assert self.number is not None
            return self.number.holds(count)
        if kind == "package":
            version = facts.package(self.key)
            if version is UNKNOWN:
                return UNKNOWN
            if version is None:
                return False
            assert self.specifier is not None
            return self.specifier.contains(version, prereleases=True)
        if kind == "option":
            value = facts.option(self.key)
            if self.expect is not None:  # { set = true/false }
                return (value is not None) is self.expect
            if value is None:
                return False
            return value_text(value) in self.choices
        if kind == "model-text":
            value = facts.model(self.key)
            if value is None:
                return UNKNOWN
            return value_text(value) in self.choices
        if kind == "model-number":
            value = facts.model(self.key)
            if value is None:
                return UNKNOWN
            assert self.number is not None
            return self.number.holds(int(value))
        if kind == "model-identity":
            value = facts.model(self.key)
            if value is None:
                return UNKNOWN
            identities = {value} if isinstance(value, str) else set(value)
            return any(choice in identities for choice in self.choices)
        if kind == "model-flag":
            value = facts.model(self.key)
            if value is None:
                return UNKNOWN
            return bool(value) is self.expect
        if kind == "env":
            value = facts.env(self.key)
            if self.expect is True:
                return value is not None
            if self.expect is False:
                return value is None
            return value == self.expect
        if kind == "any":
            return _or([c.evaluate(facts) for c in self.children])
        if kind == "all":
            return _and([c.evaluate(facts) for c in self.children])
        if kind == "not":
            inner = self.children[0].evaluate(facts)
            return inner if inner is UNKNOWN else not inner
        raise AssertionError(kind)  # pragma: no cover

    def describe(self) -> str:
        kind = self.kind
        if kind == "version":
            return f"{LABELS[self.key]} {_spec_text(self.specifier)}"
        if kind == "choice":
            return f"{LABELS[self.key]} is {' or '.join(self.choices)}"
        if kind == "count":
            assert self.number is not None
            return f"GPU count is {self.number.describe()}"
        if kind == "package":
            return f"{self.key} {_spec_text(self.specifier)}"
        if kind == "option":
            if self.expect is not None:
                return f"option {self.key} is {'set' if self.expect else 'not set'}"
            return f"option {self.key} = {' or '.join(self.choices)}"
        if kind == "model-text":
            return f"model {self.key} is {' or '.join(self.choices)}"
        if kind == "model-identity":
            return f"model {self.key} is {' or '.join(self.expect)}"
        if kind == "model-flag":
            return f"model {self.key} is {'true' if self.expect else 'false'}"
        if kind == "model-number":
            assert self.number is not None
            return f"model {self.key} is {self.number.describe()}"
        if kind == "env":
            if self.expect is True:
                return f"{self.key} is set"
            if self.expect is False:
                return f"{self.key} is not set"
            return f"{self.key}={self.expect}"
        if kind == "any":
            return "(" + " or ".join(c.describe() for c in self.children) + ")"
        if kind == "all":
            return "(" + " and ".join(c.describe() for c in self.children) + ")"
        return f"not ({self.children[0].describe()})"


def _spec_text(spec: SpecifierSet | None) -> str:
    from .._versions import spec_text

    return spec_text(spec) or "(any)"


class Condition(Record):
    """All of `tests` hold. The empty condition always holds."""

    tests: tuple[Test, ...] = ()

    def evaluate(self, facts: Facts) -> Truth:
        """All tests, the stack's own facts first: the first that fails
        decides (an option's default or a model's traits, which may have to
        be read from a catalog, are then never looked up)."""
        unknown = False
        for test in sorted(self.tests, key=_late):
            result = test.evaluate(facts)
            if result is False:
                return False
            unknown = unknown or result is UNKNOWN
        return UNKNOWN if unknown else True

    def describe(self) -> str:
        return " and ".join(t.describe() for t in self.tests) or "always"

    def failing(self, facts: Facts) -> list[Test]:
        """The tests that do not hold (False), for messages."""
        return [t for t in self.tests if t.evaluate(facts) is False]

    def walk(self) -> Iterator[Test]:
        for test in self.tests:
            yield test
            for child in test.children:
                yield from child.walk()

    def version_bounds(self) -> dict[str, SpecifierSet] | None:
        """The condition as version requirements, if it is nothing else.

        A condition made only of version and package tests is exactly a set
        of requirements on (virtual) packages, which the resolver can use.
        Keys: the VERSION_KEYS, or ``package:NAME``.
        """
        bounds: dict[str, SpecifierSet] = {}
        for test in self.tests:
            if test.kind == "version":
                key = test.key
            elif test.kind == "package":
                key = f"package:{test.key}"
            else:
                return None
            assert test.specifier is not None
            bounds[key] = bounds.get(key, SpecifierSet()) & test.specifier
        return bounds

    @property
    def is_empty(self) -> bool:
        return not self.tests

    def mentions_packages(self) -> bool:
        return any(t.kind == "package" for t in self.walk())


def _specifier(value: Any, key: str) -> SpecifierSet:
    if not isinstance(value, str):
        raise ConditionError(f"expected a version specifier string such as \">=8.9\", got {value!r}", key)
    try:
        return SpecifierSet(value)
    except InvalidSpecifier:
        raise ConditionError(f"invalid version specifier {value!r}", key) from None


def _choices(value: Any, key: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, (str, bool, int)) for v in items):
        raise ConditionError("expected a value or a non-empty list of values", key)
    return tuple(value_text(v) for v in items)


def _number(value: Any, key: str) -> NumberBound:
    if isinstance(value, bool):
        raise ConditionError("expected an integer, a list of integers or a {min, max, multiple_of} table", key)
    if isinstance(value, int):
        return NumberBound(values=(value,))
    if isinstance(value, list) and value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return NumberBound(values=tuple(value))
    if isinstance(value, dict) and value:
        unknown = set(value) - {"min", "max", "multiple_of"}
        if unknown:
            raise ConditionError(f"unknown key {sorted(unknown)[0]!r} (expected min, max, multiple_of)", key)
        for k, v in value.items():
            if not isinstance(v, int) or isinstance(v, bool):
                raise ConditionError("expected an integer", f"{key}.{k}")
        return NumberBound(minimum=value.get("min"), maximum=value.get("max"), multiple_of=value.get("multiple_of"))
    raise ConditionError("expected an integer, a list of integers or a {min, max, multiple_of} table", key)


def parse_condition(table: Any, key: str = "") -> Condition:
    """Parse a condition table; raises ConditionError naming the bad key.

    >>> c = parse_condition({"compute_capability": ">=8.9", "options": {"quantization": "fp8-scaled-mm"}})
    >>> c.describe()
    'compute capability >=8.9 and option quantization = fp8-scaled-mm'
    """
    if not isinstance(table, Mapping):
        raise ConditionError("expected a table of tests", key)
    tests: list[Test] = []
    for name, value in table.items():
        where = f"{key}.{name}" if key else name
        if name in VERSION_KEYS:
            tests.append(Test("version", name, specifier=_specifier(value, where)))
        elif name == "gpu":
            from .catalog import lookup_key

            tests.append(Test("choice", name, choices=tuple(lookup_key(v) for v in _choices(value, where))))
        elif name in _CHOICE_KEYS:
            tests.append(Test("choice", name, choices=_choices(value, where)))
        elif name == "gpu_count":
            tests.append(Test("count", name, number=_number(value, where)))
        elif name == "packages":
            if not isinstance(value, Mapping) or not value:
                raise ConditionError("expected a table of package = specifier", where)
            for package, spec in value.items():
                tests.append(Test("package", normalize(package), specifier=_specifier(spec, f"{where}.{package}")))
        elif name == "options":
            if not isinstance(value, Mapping) or not value:
                raise ConditionError("expected a table of option = value", where)
            for option, expected in value.items():
                if isinstance(expected, Mapping):  # { set = false }: the stack gives no value for the flag
                    if set(expected) != {"set"} or not isinstance(expected["set"], bool):
                        raise ConditionError("expected a value, a list of values, or { set = true/false }",
                                             f"{where}.{option}")
                    tests.append(Test("option", option_key(option), expect=expected["set"]))
                    continue
                tests.append(Test("option", option_key(option), choices=_choices(expected, f"{where}.{option}")))
        elif name == "model":
            if not isinstance(value, Mapping) or not value:
                raise ConditionError("expected a table of model properties", where)
            for prop, expected in value.items():
                if prop in _MODEL_TEXT:
                    tests.append(Test("model-text", prop, choices=_choices(expected, f"{where}.{prop}")))
                elif prop in _MODEL_IDENTITY:
                    from .models import model_key

                    written = expected if isinstance(expected, list) else [expected]
                    if not written or not all(isinstance(v, str) and v.strip() for v in written):
                        raise ConditionError("expected a model name or a non-empty list of names", f"{where}.{prop}")
                    tests.append(Test("model-identity", prop, choices=tuple(model_key(v) for v in written),
                                      expect=tuple(v.strip() for v in written)))
                elif prop in _MODEL_NUMBER:
                    tests.append(Test("model-number", prop, number=_number(expected, f"{where}.{prop}")))
                elif prop in _MODEL_FLAG:
                    if not isinstance(expected, bool):
                        raise ConditionError("expected true or false", f"{where}.{prop}")
                    tests.append(Test("model-flag", prop, expect=expected))
                else:
                    raise ConditionError(
                        f"unknown model property {prop!r} (expected one of {', '.join(MODEL_KEYS)})",
                        f"{where}.{prop}",
                    )
        elif name == "env":
            if not isinstance(value, Mapping) or not value:
                raise ConditionError("expected a table of VARIABLE = value", where)
            for variable, expected in value.items():
                if not isinstance(expected, (str, bool)):
                    raise ConditionError("expected a string, or true (set) / false (unset)", f"{where}.{variable}")
                tests.append(Test("env", variable, expect=expected))
        elif name in ("any", "all"):
            if not isinstance(value, list) or not value:
                raise ConditionError("expected a non-empty list of condition tables", where)
            children = tuple(parse_condition(c, f"{where}[{i}]") for i, c in enumerate(value))
            tests.append(Test(name, name, children=children))
        elif name == "not":
            tests.append(Test("not", name, children=(parse_condition(value, where),)))
        else:
            from .._names import did_you_mean

            raise ConditionError(f"unknown test {name!r}{did_you_mean(name, _ALL_KEYS)}", where)
    return Condition(tuple(tests))
