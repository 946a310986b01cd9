#!/usr/bin/env python3
"""Derive vLLM's GPU floors from the Python code inside its release wheels.

vLLM refuses a quantization method on a GPU below the method's floor: each
``QuantizationConfig`` subclass returns a number from ``get_min_capability()``
(major * 10 + minor, 80 for sm_80), and the engine config compares the GPU with
it and raises ``ValueError("The quantization method <m> is not supported for the
current GPU. Minimum capability: <n>. Current capability: <c>.")``. Some
attention backends refuse an FP8 KV cache below a capability the same way.

For every release of the database's snapshot (``data/metadata/vllm.jsonl``,
first line ``versions``) uploaded on or after ``--since`` (2024-01-01), it takes
the Linux x86_64 wheel that ``data/metadata/vllm.wheels.jsonl`` lists (URL,
sha256, size) and reads, by HTTP range requests (the zip's central directory,
then only these members; never the whole wheel), with ``ast`` (never importing
or running the code):

- ``vllm/model_executor/layers/quantization/__init__.py``: the method -> config
  class dict (module level, or in ``get_quantization_config`` with its local
  imports, as a CUDA machine runs them), and the values ``--quantization``
  accepts (the ``QuantizationMethods`` Literal, else the ``QUANTIZATION_METHODS``
  dict, else the ``choices=`` of ``--quantization`` in ``vllm/engine/arg_utils.py``);
- each config class's ``get_min_capability()``: a constant return, through base
  classes and ``return Other.get_min_capability()``; a computed or abstract one
  is left out (and listed in ``--summary``);
- every module of ``vllm/config*`` and ``vllm/model_executor/model_loader*``: the
  ``if <capability> < <config>.get_min_capability(): raise ValueError(...)`` and
  its message;
- every module of ``vllm/(v1/)attention/backends/``: an
  ``if ....kv_cache_dtype.startswith("fp8") and not ...has_device_capability(N):
  raise ValueError(...)`` inside the implementation class of a backend (the name
  its ``get_name()`` returns, what ``--attention-backend`` takes).

It writes ``data/derived/vllm.toml``: one requirement ``[[rule]]`` per method and
run of consecutive releases with the same floor (``when = { options = {
quantization = "<m>" }, accelerator = "cuda" }``, ``require = {
compute_capability = ">=X.Y" }``), citing the wheel of the newest release of the
run (``source``: the ``return`` line of get_min_capability; ``also``: the line
that compares and raises), and one per Triton backend and run for an FP8 KV
cache. An option value is tested only where the option catalog
(``data/options/vllm.toml``) lists it for that release; for a release the
catalog does not cover, where the release's own code lists it as a value of
``--quantization``. Every value comes from the files; nothing is per release here.

Run (a new release: ``compat db sync`` the snapshot, then run it again)::

    python tools/derive_engine_caps.py [--out data/derived/vllm.toml] \\
        [--metadata data/metadata/vllm.jsonl] [--options data/options/vllm.toml] \\
        [--cache ~/.cache/derive_engine_caps] [--summary /tmp/summary.json]
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import struct
import sys
import urllib.request
import zlib
from dataclasses import dataclass, field

# --------------------------------------------------------------------------------------
# Reading members of a remote wheel with HTTP range requests (central directory, then
# only the members asked for).


class RemoteWheel:
    """A wheel on the index read by HTTP range requests, cached on disk by member."""

    def __init__(self, url: str, size: int, cache: str | None = None) -> None:
        self.url = url
        self.size = size
        self.cache = cache
        self._members: dict[str, tuple[int, int, int, int]] | None = None  # name -> (offset, csize, usize, method)

    def _get(self, start: int, end: int) -> bytes:
        """Bytes start..end (inclusive)."""
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{end}"})
        with urllib.request.urlopen(request, timeout=120) as response:
            data = response.read()
            if response.status != 206 and len(data) != end - start + 1:
                raise OSError(f"{self.url}: the server ignored the range request")
        if response.status == 200:  # a server that sends the whole file
            data = data[start:end + 1]
        return data

    def _cached(self, key: str, fetch):
        if self.cache is None:
            return fetch()
        path = os.path.join(self.cache, hashlib.sha256(f"{self.url}\0{key}".encode()).hexdigest())
        if os.path.exists(path):
            with open(path, "rb") as handle:
                return handle.read()
        data = fetch()
        os.makedirs(self.cache, exist_ok=True)
        with open(path + ".tmp", "wb") as handle:
            handle.write(data)
        os.replace(path + ".tmp", path)
        return data

    def members(self) -> dict[str, tuple[int, int, int, int]]:
        if self._members is None:
            self._members = parse_central_directory(self._cached("cd", self._central_directory))
        return self._members

    def _central_directory(self) -> bytes:
        tail_len = min(self.size, 65536 + 22)
        tail = self._get(self.size - tail_len, self.size - 1)
        at = tail.rfind(b"PK\x05\x06")
        if at < 0:
            raise OSError(f"{self.url}: no end of central directory record")
        cd_size, cd_offset = struct.unpack("<II", tail[at + 12:at + 20])
        if cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:  # zip64
            loc = tail.rfind(b"PK\x06\x07")
            (eocd64,) = struct.unpack("<Q", tail[loc + 8:loc + 16])
            record = self._get(eocd64, eocd64 + 55)
            cd_size, cd_offset = struct.unpack("<QQ", record[40:56])
        return self._get(cd_offset, cd_offset + cd_size - 1)

    def read(self, names: list[str]) -> dict[str, bytes]:
        """The uncompressed bytes of each member named (fetched in as few ranges as reasonable)."""
        members = self.members()
        wanted = sorted((members[name][0], name) for name in names if name in members)
        out: dict[str, bytes] = {}
        missing = []
        for _, name in wanted:
            if self.cache is not None:
                key = os.path.join(self.cache, hashlib.sha256(f"{self.url}\0m:{name}".encode()).hexdigest())
                if os.path.exists(key):
                    with open(key, "rb") as handle:
                        out[name] = handle.read()
                    continue
            missing.append(name)
        # group members that lie close together into one request
        spans: list[list[str]] = []
        for name in missing:
            offset, csize, _, _ = members[name]
            if spans:
                last = members[spans[-1][-1]]
                if offset - (last[0] + last[1]) < 262144 and offset + csize - members[spans[-1][0]][0] < 16 << 20:
                    spans[-1].append(name)
                    continue
            spans.append([name])
        for span in spans:
            first = members[span[0]][0]
            last = members[span[-1]]
            blob = self._get(first, last[0] + 30 + last[1] + 65535 + 1024)
            for name in span:
                offset, csize, usize, method = members[name]
                local = blob[offset - first:]
                if local[:4] != b"PK\x03\x04":
                    raise OSError(f"{self.url}: no local header for {name}")
                name_len, extra_len = struct.unpack("<HH", local[26:30])
                raw = local[30 + name_len + extra_len:30 + name_len + extra_len + csize]
                data = zlib.decompress(raw, -15) if method == 8 else raw
                if len(data) != usize:
                    raise OSError(f"{self.url}: {name} is {len(data)} bytes, expected {usize}")
                out[name] = data
                if self.cache is not None:
                    key = os.path.join(self.cache, hashlib.sha256(f"{self.url}\0m:{name}".encode()).hexdigest())
                    os.makedirs(self.cache, exist_ok=True)
                    with open(key + ".tmp", "wb") as handle:
                        handle.write(data)
                    os.replace(key + ".tmp", key)
        return out


def parse_central_directory(data: bytes) -> dict[str, tuple[int, int, int, int]]:
    """name -> (local header offset, compressed size, size, method) of a zip's central directory."""
    members: dict[str, tuple[int, int, int, int]] = {}
    at = 0
    while at + 46 <= len(data) and data[at:at + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", data[at + 10:at + 12])
        csize, usize = struct.unpack("<II", data[at + 20:at + 28])
        name_len, extra_len, comment_len = struct.unpack("<HHH", data[at + 28:at + 34])
        offset, = struct.unpack("<I", data[at + 42:at + 46])
        name = data[at + 46:at + 46 + name_len].decode("utf-8")
        extra = data[at + 46 + name_len:at + 46 + name_len + extra_len]
        if 0xFFFFFFFF in (csize, usize, offset):  # zip64 extended information
            e = 0
            while e + 4 <= len(extra):
                tag, length = struct.unpack("<HH", extra[e:e + 4])
                if tag == 1:
                    values = extra[e + 4:e + 4 + length]
                    v = 0
                    if usize == 0xFFFFFFFF:
                        usize, = struct.unpack("<Q", values[v:v + 8]); v += 8
                    if csize == 0xFFFFFFFF:
                        csize, = struct.unpack("<Q", values[v:v + 8]); v += 8
                    if offset == 0xFFFFFFFF:
                        offset, = struct.unpack("<Q", values[v:v + 8]); v += 8
                e += 4 + length
        members[name] = (offset, csize, usize, method)
        at += 46 + name_len + extra_len + comment_len
    return members


# --------------------------------------------------------------------------------------
# Reading the Python source with ast (never importing or running it).


def module_file(members, package_dir: str, node: ast.ImportFrom) -> str | None:
    """The wheel member an ``from X import Y`` names, from the module ``package_dir`` is in."""
    if node.level:
        parts = package_dir.split("/")
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)]
        base = "/".join(parts)
        dotted = (node.module or "").replace(".", "/")
        stem = f"{base}/{dotted}" if dotted else base
    else:
        stem = (node.module or "").replace(".", "/")
    for candidate in (f"{stem}.py", f"{stem}/__init__.py"):
        if candidate in members:
            return candidate
    return None


def _mentions(node: ast.AST, text: str) -> bool:
    return text in ast.unparse(node)


def cuda_view(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The statements a CUDA machine runs, flattened: of an ``if`` that tests
    ``is_cuda()``, its body; of another ``if``, both branches (in order)."""
    out: list[ast.stmt] = []
    for statement in statements:
        if isinstance(statement, ast.If):
            if _mentions(statement.test, "is_cuda("):
                out.extend(cuda_view(statement.body))
            else:
                out.extend(cuda_view(statement.body))
                out.extend(cuda_view(statement.orelse))
        elif isinstance(statement, ast.Try):
            out.extend(cuda_view(statement.body))
        else:
            out.append(statement)
    return out


@dataclass
class Scope:
    """The names a block of code binds: imports (name -> (module member, name)) and aliases."""

    imports: dict[str, tuple[str, str]] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def bind(self, statements: list[ast.stmt], members, package_dir: str) -> None:
        for statement in cuda_view(statements):
            if isinstance(statement, ast.ImportFrom):
                target = module_file(members, package_dir, statement)
                if target is None:
                    continue
                for alias in statement.names:
                    self.imports[alias.asname or alias.name] = (target, alias.name)
            elif isinstance(statement, (ast.Assign, ast.AnnAssign)) and isinstance(statement.value, ast.Name):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target_node in targets:
                    if isinstance(target_node, ast.Name):
                        self.aliases[target_node.id] = statement.value.id

    def lookup(self, name: str) -> tuple[str, str] | None:
        seen = set()
        while name in self.aliases and name not in seen:
            seen.add(name)
            name = self.aliases[name]
        return self.imports.get(name)


@dataclass
class Registry:
    """How ``--quantization <method>`` maps to a QuantizationConfig class."""

    path: str
    line: int  # the dict literal's first line
    methods: dict[str, tuple[str, str] | None]  # method -> (member, class name), None when not resolved
    lines: dict[str, int]  # method -> line of its entry


def read_registry(path: str, text: str, members) -> Registry | None:
    """The method -> config class dict of quantization/__init__.py: the dict literal with
    the most "name": Class entries, read in its own scope (module level, or the function
    that holds it, as a CUDA machine runs it)."""
    tree = ast.parse(text)
    package_dir = path.rsplit("/", 1)[0]
    best: tuple[int, ast.Dict, ast.FunctionDef | None] | None = None

    def visit(node: ast.AST, function: ast.FunctionDef | None) -> None:
        nonlocal best
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef) else function
            if isinstance(child, ast.Dict) and child.keys and all(
                isinstance(k, ast.Constant) and isinstance(k.value, str) for k in child.keys
            ) and all(isinstance(v, ast.Name) for v in child.values):
                if best is None or len(child.keys) > best[0]:
                    best = (len(child.keys), child, function)
            visit(child, inner)

    visit(tree, None)
    if best is None:
        return None
    _, literal, function = best
    scope = Scope()
    scope.bind(tree.body, members, package_dir)
    if function is not None:
        scope.bind(function.body, members, package_dir)
    methods: dict[str, tuple[str, str] | None] = {}
    lines: dict[str, int] = {}
    for key, value in zip(literal.keys, literal.values):
        method = key.value  # type: ignore[union-attr]
        methods[method] = scope.lookup(value.id)  # type: ignore[union-attr]
        lines[method] = key.lineno
    return Registry(path, literal.lineno, methods, lines)


@dataclass(frozen=True)
class Floor:
    """A config class's get_min_capability(): the value and where it is returned."""

    value: int
    path: str
    line: int
    cls: str


class SourceTree:
    """The wheel's Python members, parsed on demand."""

    def __init__(self, members, reader) -> None:
        self.members = members
        self._reader = reader  # list[str] -> dict[str, bytes]
        self._text: dict[str, str] = {}
        self._tree: dict[str, ast.Module] = {}

    def prefetch(self, names: list[str]) -> None:
        wanted = [n for n in names if n in self.members and n not in self._text]
        if wanted:
            for name, data in self._reader(wanted).items():
                self._text[name] = data.decode("utf-8")

    def text(self, name: str) -> str:
        if name not in self._text:
            self.prefetch([name])
        return self._text[name]

    def tree(self, name: str) -> ast.Module:
        if name not in self._tree:
            self._tree[name] = ast.parse(self.text(name))
        return self._tree[name]


def find_class(source: SourceTree, path: str, name: str, depth: int = 0) -> tuple[str, ast.ClassDef] | None:
    """The class ``name`` as module ``path`` binds it (defined there, or imported into it)."""
    if depth > 8 or path not in source.members:
        return None
    tree = source.tree(path)
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return path, node
    scope = Scope()
    scope.bind(tree.body, source.members, path.rsplit("/", 1)[0])
    found = scope.lookup(name)
    if found is None:
        return None
    return find_class(source, found[0], found[1], depth + 1)


def min_capability(source: SourceTree, path: str, cls: ast.ClassDef, depth: int = 0) -> Floor | str:
    """What ``cls.get_min_capability()`` returns, read from the code: a Floor, or a
    string saying why it cannot be read (computed, abstract, not found)."""
    if depth > 8:
        return "inheritance too deep"
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "get_min_capability":
            body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
            if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
                if body and isinstance(body[0], ast.Raise):
                    return f"{cls.name}.get_min_capability is abstract"
                return f"{cls.name}.get_min_capability computes its value ({path} line {node.lineno})"
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, int) and not isinstance(value.value, bool):
                return Floor(value.value, path, body[0].lineno, cls.name)
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
                return Floor(-int(value.operand.value), path, body[0].lineno, cls.name)
            if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "get_min_capability" and isinstance(value.func.value, ast.Name)):
                other = find_class(source, path, value.func.value.id)
                if other is None:
                    return f"{cls.name}.get_min_capability calls {value.func.value.id}'s, not found"
                return min_capability(source, other[0], other[1], depth + 1)
            return f"{cls.name}.get_min_capability returns {ast.unparse(value)} ({path} line {body[0].lineno})"
    for base in cls.bases:
        base_name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
        if base_name is None:
            continue
        found = find_class(source, path, base_name)
        if found is None:
            continue
        result = min_capability(source, found[0], found[1], depth + 1)
        if isinstance(result, Floor) or "abstract" not in result:
            return result
    return f"{cls.name} defines no get_min_capability of its own"


@dataclass(frozen=True)
class Refusal:
    """Where the code compares the GPU with a floor and raises: path, line of the test, the message."""

    path: str
    line: int
    parts: tuple[tuple[str, str], ...]  # ("text", s) or ("expr", unparsed expression)


def _message_parts(node: ast.AST) -> tuple[tuple[str, str], ...]:
    """A raise's message, as literal text and the expressions formatted into it."""
    parts: list[tuple[str, str]] = []

    def add(value: ast.AST) -> None:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            parts.append(("text", value.value))
        elif isinstance(value, ast.JoinedStr):
            for piece in value.values:
                if isinstance(piece, ast.Constant):
                    parts.append(("text", piece.value))
                elif isinstance(piece, ast.FormattedValue):
                    parts.append(("expr", ast.unparse(piece.value)))
        elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
            add(value.left)
            add(value.right)

    add(node)
    return tuple(parts)


def _raised_message(statements: list[ast.stmt]) -> tuple[tuple[str, str], ...] | None:
    for statement in statements:
        for node in ast.walk(statement):
            if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args
                    and isinstance(node.exc.func, ast.Name) and node.exc.func.id.endswith("Error")):
                return _message_parts(node.exc.args[0])
    return None


def find_quantization_refusals(path: str, text: str) -> list[Refusal]:
    """``if <capability> < <config>.get_min_capability(): raise ValueError(...)`` in a module."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and any(
            isinstance(op, ast.Lt) for op in node.test.ops
        ) and any(
            isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "get_min_capability"
            for c in [node.test.left, *node.test.comparators]
        ):
            message = _raised_message(node.body)
            if message is not None:
                out.append(Refusal(path, node.lineno, message))
    return out


@dataclass(frozen=True)
class KvRefusal:
    """An attention backend that refuses an FP8 KV cache below a capability."""

    backend: str  # the name get_name() gives (what --attention-backend takes)
    floor: int
    path: str
    line: int
    parts: tuple[tuple[str, str], ...]


def _has_capability_floor(test: ast.AST) -> int | None:
    """N of ``not <platform>.has_device_capability(N)`` in a test."""
    for node in ast.walk(test):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            for call in ast.walk(node.operand):
                if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                        and call.func.attr == "has_device_capability" and call.args
                        and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, int)):
                    return call.args[0].value
    return None


def _tests_fp8_kv(test: ast.AST) -> bool:
    for node in ast.walk(test):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "startswith"
                and "kv_cache_dtype" in ast.unparse(node.func.value) and node.args
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "fp8"):
            return True
    return False


def _returned_constant(function: ast.FunctionDef) -> object:
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
            return node.value.value
    return None


def _returned_name(function: ast.FunctionDef) -> str | None:
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Name):
            return node.value.id
    return None


def find_kv_refusals(path: str, text: str) -> list[KvRefusal]:
    """``if <...>.kv_cache_dtype.startswith("fp8") and not <platform>.has_device_capability(N):
    raise ValueError(...)`` inside an attention implementation class, with the name of the
    backend class whose get_impl_cls() returns that class (its get_name())."""
    tree = ast.parse(text)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    backend_of: dict[str, str] = {}
    for cls in classes:
        methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
        if "get_name" in methods and "get_impl_cls" in methods:
            name = _returned_constant(methods["get_name"])
            impl = _returned_name(methods["get_impl_cls"])
            if isinstance(name, str) and impl:
                backend_of[impl] = name
    out = []
    for cls in classes:
        if cls.name not in backend_of:
            continue
        for node in ast.walk(cls):
            if isinstance(node, ast.If) and _tests_fp8_kv(node.test):
                floor = _has_capability_floor(node.test)
                message = _raised_message(node.body)
                if floor is not None and message is not None:
                    out.append(KvRefusal(backend_of[cls.name], floor, path, node.lineno, message))
    return out


def cli_methods(init_text: str, arg_utils_text: str | None) -> tuple[list[str], str] | None:
    """The values --quantization accepts, and where they were read: the QuantizationMethods
    Literal, else the QUANTIZATION_METHODS dict or list of quantization/__init__.py, else the
    choices= list of the --quantization argument in engine/arg_utils.py."""
    tree = ast.parse(init_text)
    found: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if not isinstance(target, ast.Name):
                    continue
                value = node.value
                if target.id == "QuantizationMethods" and isinstance(value, ast.Subscript):
                    elements = value.slice.elts if isinstance(value.slice, ast.Tuple) else [value.slice]
                    found["literal"] = [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                elif target.id == "QUANTIZATION_METHODS" and isinstance(value, ast.Dict):
                    found["dict"] = [k.value for k in value.keys if isinstance(k, ast.Constant)]
                elif target.id == "QUANTIZATION_METHODS" and isinstance(value, ast.List):
                    found["dict"] = [e.value for e in value.elts if isinstance(e, ast.Constant)]
    if "literal" in found:
        return found["literal"], "QuantizationMethods"
    if "dict" in found:
        return found["dict"], "QUANTIZATION_METHODS"
    if arg_utils_text is not None:
        for node in ast.walk(ast.parse(arg_utils_text)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
                    and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == "--quantization"):
                for keyword in node.keywords:
                    if keyword.arg == "choices" and isinstance(keyword.value, ast.List):
                        return [e.value for e in keyword.value.elts
                                if isinstance(e, ast.Constant) and isinstance(e.value, str)], "--quantization choices"
    return None


def render(parts: tuple[tuple[str, str], ...], values: dict[str, str]) -> str:
    """A message with the expressions the caller knows replaced (matched by a word they
    contain), the others left as {expression}."""
    out = []
    for kind, value in parts:
        if kind == "text":
            out.append(value)
            continue
        for word, replacement in values.items():
            if word in value:
                out.append(replacement)
                break
        else:
            out.append("{" + value + "}")
    return "".join(out)


# --------------------------------------------------------------------------------------
# One release: its wheel, its registry, each method's floor, the code that refuses.

QUANT_DIR = "vllm/model_executor/layers/quantization"
# where vLLM compares the GPU with get_min_capability(): the model loader up to 0.6, the
# engine config after (vllm/config.py, vllm/config/vllm.py); every module of these is read
CHECK_MODULES = re.compile(r"^vllm/(config|model_executor/model_loader)(/[^/]+)*\.py$|^vllm/config\.py$")
KV_MODULES = re.compile(r"^vllm/(v1/)?attention/backends/.*\.py$")


@dataclass
class Release:
    version: str
    date: str
    wheel: dict
    floors: dict[str, Floor] = field(default_factory=dict)  # method -> floor
    unread: dict[str, str] = field(default_factory=dict)  # method -> why no floor was read
    refusal: Refusal | None = None
    kv: list[KvRefusal] = field(default_factory=list)
    registry: Registry | None = None
    cli: list[str] | None = None  # the values --quantization accepts, as the release's own code lists them
    problem: str | None = None


def pick_wheel(wheels: list[dict]) -> dict | None:
    """The Linux x86_64 wheel pip installs (highest build tag), by file name."""
    def key(wheel: dict) -> tuple:
        parts = wheel["file"][:-4].split("-")
        build = int(re.match(r"\d*", parts[2]).group() or 0) if len(parts) == 6 else -1
        return (build, wheel["file"])
    candidates = [w for w in wheels if w["file"].endswith(".whl") and "x86_64" in w["file"] and "linux" in w["file"]]
    return max(candidates, key=key) if candidates else None


def read_release(version: str, date: str, wheel: dict, cache: str | None) -> Release:
    release = Release(version, date, wheel)
    remote = RemoteWheel(wheel["url"], wheel["size"], cache)
    members = remote.members()
    source = SourceTree(members, remote.read)
    init = f"{QUANT_DIR}/__init__.py"
    if init not in members:
        release.problem = f"{init} is not in the wheel"
        return release
    source.prefetch(sorted(n for n in members if n.startswith(QUANT_DIR + "/") and n.endswith(".py")))
    registry = read_registry(init, source.text(init), members)
    release.registry = registry
    if registry is None:
        release.problem = f"no method -> config dict in {init}"
        return release
    arg_utils = "vllm/engine/arg_utils.py"
    listed = cli_methods(source.text(init), source.text(arg_utils) if arg_utils in members else None)
    release.cli = listed[0] if listed else None
    for method, target in sorted(registry.methods.items()):
        if target is None:
            release.unread[method] = "its config class is bound by no import the code makes on CUDA"
            continue
        found = find_class(source, target[0], target[1])
        if found is None:
            release.unread[method] = f"class {target[1]} not found in {target[0]}"
            continue
        floor = min_capability(source, found[0], found[1])
        if isinstance(floor, Floor):
            release.floors[method] = floor
        else:
            release.unread[method] = floor
    checks = sorted(n for n in members if CHECK_MODULES.match(n))
    source.prefetch(checks)
    refusals = [r for name in checks for r in find_quantization_refusals(name, source.text(name))]
    if refusals:
        release.refusal = refusals[0]
    kv_modules = sorted(n for n in members if KV_MODULES.match(n))
    source.prefetch(kv_modules)
    for name in kv_modules:
        release.kv.extend(find_kv_refusals(name, source.text(name)))
    return release


# --------------------------------------------------------------------------------------
# The option catalog (data/options/vllm.toml): which values a release's flag takes.


class Catalog:
    def __init__(self, path: str) -> None:
        import tomllib
        from packaging.specifiers import SpecifierSet

        with open(path, "rb") as handle:
            data = tomllib.load(handle)
        self.covers = SpecifierSet(data.get("covers", ""))
        self.options = [
            (o["name"], SpecifierSet(o.get("releases", data.get("covers", ""))), o.get("values"))
            for o in data.get("option", [])
        ]

    def values(self, flag: str, version: str) -> list[str] | None:
        """The values the catalog lists for --flag of this release; None where it does not cover it."""
        if version not in self.covers:
            return None
        for name, releases, values in self.options:
            if name == flag and version in releases:
                return list(values or [])
        return []


# --------------------------------------------------------------------------------------
# Facts to TOML.


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key_text(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def key_text(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else toml_string(key)


def capability_text(value: int) -> str:
    """vLLM's integer capability (major * 10 + minor) as compat writes it: 89 -> "8.9"."""
    return f"{value // 10}.{value % 10}"


def releases_text(versions: list[str]) -> str:
    return f"=={versions[0]}" if len(versions) == 1 else f">={versions[0]},<={versions[-1]}"


def span_text(versions: list[str]) -> str:
    return versions[0] if len(versions) == 1 else f"{versions[0]} to {versions[-1]}"


def source_table(release: Release, path: str, line: int, what: str) -> dict:
    wheel = release.wheel
    return {
        "id": f"vllm@{release.version}:{path}#L{line}",
        "project": "vLLM",
        "title": f"vllm {release.version} wheel, {path} line {line} ({what})",
        "kind": "artifact",
        "url": wheel["url"],
        "ref": release.version,
        "path": wheel["file"],
        "sha256": wheel["sha256"],
        "date": release.date,
    }


def runs(releases: list[Release], fact) -> list[tuple[object, list[Release]]]:
    """Consecutive releases (in version order) whose fact(release) is the same and not None."""
    out: list[tuple[object, list[Release]]] = []
    previous = None
    for release in releases:
        value = fact(release)
        if value is not None and out and value == previous:
            out[-1][1].append(release)
        elif value is not None:
            out.append((value, [release]))
        previous = value
    return out


def derive(releases: list[Release], catalog: Catalog | None) -> tuple[list[dict], list[dict], dict]:
    """The [[source]] and [[rule]] tables, and what was left out (for the report)."""
    sources: dict[str, dict] = {}
    rules: list[dict] = []
    left_out: dict[str, list[str]] = {"not in catalog": [], "no floor": [], "no refusal": []}

    def cite(table: dict) -> str:
        sources[table["id"]] = table
        return table["id"]

    def allowed(release: Release, flag: str, value: str) -> bool:
        if catalog is None:
            return True
        values = catalog.values(flag, release.version)
        if values is None:  # a release the catalog does not cover: the values its own code lists
            return flag == "quantization" and release.cli is not None and value in release.cli
        return value in values

    methods = sorted({m for r in releases for m in r.floors})
    for release in releases:
        if release.refusal is None and release.problem is None:
            left_out["no refusal"].append(release.version)
        for method, why in sorted(release.unread.items()):
            left_out["no floor"].append(f"{release.version} {method}: {why}")
        for method in sorted(release.floors):
            if not allowed(release, "quantization", method):
                where = "catalog" if catalog and catalog.values("quantization", release.version) is not None else "release's own list"
                left_out["not in catalog"].append(f"{release.version} --quantization {method} (not in the {where})")

    for method in methods:
        def fact(release: Release, method=method):
            floor = release.floors.get(method)
            if floor is None or floor.value <= 0 or release.refusal is None:
                return None
            if not allowed(release, "quantization", method):
                return None
            return floor.value

        for value, run in runs(releases, fact):
            newest = run[-1]
            floor = newest.floors[method]
            versions = [r.version for r in run]
            refusal = newest.refusal
            assert refusal is not None
            quoted = render(refusal.parts, {"quantization": method, "get_min_capability": str(value)})
            source = cite(source_table(newest, floor.path, floor.line, f"{floor.cls}.get_min_capability returns {value}"))
            also = cite(source_table(newest, refusal.path, refusal.line,
                                     "capability < quant_config.get_min_capability(): raise ValueError"))
            rules.append({
                "id": f"vllm.derived.{newest.version}.quantization.{method}.min-capability",
                "kind": "requirement",
                "releases": releases_text(versions),
                "when": {"options": {"quantization": method}, "accelerator": "cuda"},
                "require": {"compute_capability": f">={capability_text(value)}"},
                "message": (
                    f"vLLM {span_text(versions)}: --quantization {method} loads {floor.cls}, whose "
                    f"get_min_capability() is {value}: on a GPU below compute capability {capability_text(value)} "
                    f"vLLM refuses to start with \"{quoted}\""
                ),
                "source": source,
                "also": [also],
            })

    backends = sorted({k.backend for r in releases for k in r.kv})
    for backend in backends:
        def kv_fact(release: Release, backend=backend):
            found = [k for k in release.kv if k.backend == backend]
            if not found or catalog is None:
                return None
            values = catalog.values("kv-cache-dtype", release.version)
            backends_listed = catalog.values("attention-backend", release.version)
            if not values or not backends_listed or backend not in backends_listed:
                left_out["not in catalog"].append(f"{release.version} --attention-backend {backend} / --kv-cache-dtype fp8*")
                return None
            fp8 = tuple(sorted(v for v in values if v.startswith("fp8")))
            return (found[0].floor, fp8) if fp8 else None

        for (floor_value, fp8), run in runs(releases, kv_fact):
            newest = run[-1]
            check = [k for k in newest.kv if k.backend == backend][0]
            versions = [r.version for r in run]
            cc = capability_text(floor_value)
            quoted = render(check.parts, {"kv_cache_dtype": "fp8", "dev": "{device}", "cap_str": "{capability}",
                                          "suggested": "{float16 or bfloat16}"})
            source = cite(source_table(newest, check.path, check.line,
                                       f"kv_cache_dtype.startswith('fp8') and not has_device_capability({floor_value})"))
            rules.append({
                "id": f"vllm.derived.{newest.version}.kv-cache-fp8.{backend.lower().replace('_', '-')}",
                "kind": "requirement",
                "releases": releases_text(versions),
                "when": {"options": {"kv-cache-dtype": list(fp8), "attention-backend": backend},
                         "accelerator": "cuda"},
                "require": {"compute_capability": f">={cc}"},
                "message": (
                    f"vLLM {span_text(versions)}: the {backend} attention backend refuses an FP8 KV cache "
                    f"(any --kv-cache-dtype starting with fp8) below compute capability {cc}: \"{quoted}\""
                ),
                "source": source,
            })
    return sorted(sources.values(), key=lambda s: s["id"]), sorted(rules, key=lambda r: r["id"]), left_out


RULE_KEYS = ("id", "kind", "releases", "when", "require", "severity", "message", "source", "also", "inferred", "basis")
SOURCE_KEYS = ("id", "project", "title", "kind", "url", "ref", "path", "sha256", "date")


def write_toml(sources: list[dict], rules: list[dict], header: list[str]) -> str:
    lines = [f"# {h}" if h else "#" for h in header]
    lines += ["schema = 1", 'package = "vllm"', 'tool = "tools/derive_engine_caps.py"', ""]
    for source in sources:
        lines.append("[[source]]")
        for key in SOURCE_KEYS:
            if key in source:
                value = source[key]
                lines.append(f"{key} = {value}" if key == "date" else f"{key} = {toml_value(value)}")
        lines.append("")
    for rule in rules:
        lines.append("[[rule]]")
        for key in RULE_KEYS:
            if key in rule:
                lines.append(f"{key} = {toml_value(rule[key])}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def load_releases(metadata: str, since: str) -> list[tuple[str, str, dict]]:
    """(version, upload date, wheel) of each release the snapshot knows, uploaded on or after `since`."""
    from packaging.version import Version

    with open(metadata, encoding="utf-8") as handle:
        head = json.loads(handle.readline())
        dates = {}
        for line in handle:
            record = json.loads(line)
            if "version" in record:
                dates[record["version"]] = record.get("uploaded")
    wheels_path = metadata[: -len(".jsonl")] + ".wheels.jsonl"
    wheels = {}
    with open(wheels_path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if "version" in record:
                wheels[record["version"]] = record["wheels"]
    out = []
    for version in sorted(head["versions"], key=Version):
        date = dates.get(version)
        if date is None or date < since:
            continue
        wheel = pick_wheel(wheels.get(version, []))
        out.append((version, date, wheel))
    return out


HEADER = [
    "Written by tools/derive_engine_caps.py from vLLM's own Python code in its release wheels on the package",
    "index (the files of data/metadata/vllm.wheels.jsonl, read by HTTP range requests: quantization/__init__.py's",
    "method -> config registry, each config's get_min_capability(), the check that raises when the GPU is below it,",
    "and the attention backends that refuse an FP8 KV cache below a capability); do not edit, run the script again.",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metadata", default="data/metadata/vllm.jsonl")
    parser.add_argument("--options", default="data/options/vllm.toml")
    parser.add_argument("--out", default="data/derived/vllm.toml")
    parser.add_argument("--since", default="2024-01-01", help="first upload date of the releases read")
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "derive_engine_caps"))
    parser.add_argument("--summary", help="write what was read and left out, as JSON, here")
    args = parser.parse_args(argv)
    catalog = Catalog(args.options) if args.options else None
    releases: list[Release] = []
    skipped: dict[str, str] = {}
    for version, date, wheel in load_releases(args.metadata, args.since):
        if wheel is None:
            skipped[version] = "no Linux x86_64 wheel in the snapshot"
            continue
        try:
            release = read_release(version, date, wheel, args.cache)
        except (OSError, SyntaxError, UnicodeDecodeError) as error:
            skipped[version] = f"not read: {error}"
            continue
        if release.problem:
            skipped[version] = release.problem
        releases.append(release)
        print(f"{version}: {len(release.floors)} floors, refusal "
              f"{release.refusal.path + ':' + str(release.refusal.line) if release.refusal else None}, "
              f"kv {[(k.backend, k.floor) for k in release.kv]}", file=sys.stderr)
    sources, rules, left_out = derive(releases, catalog)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(write_toml(sources, rules, HEADER))
    if args.summary:
        summary = {
            "releases": [
                {"version": r.version, "wheel": r.wheel["file"], "floors": {m: f.value for m, f in sorted(r.floors.items())},
                 "refusal": r.refusal and f"{r.refusal.path}:{r.refusal.line}",
                 "kv": [f"{k.backend}>={k.floor} {k.path}:{k.line}" for k in r.kv]}
                for r in releases
            ],
            "skipped": skipped,
            "left_out": left_out,
        }
        with open(args.summary, "w", encoding="utf-8") as handle:
            json.dump(summary, handle, indent=1, sort_keys=True)
    print(f"{len(releases)} releases read, {len(skipped)} skipped; {len(rules)} rules, {len(sources)} sources "
          f"-> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
