"""Derive the GPU floors stated by the Python sources of triton's and torch's wheels.

What it reads
    For each release of ``triton`` and ``torch`` the database knows (the
    first line of ``data/metadata/<name>.jsonl``) uploaded on or after
    ``--since`` (default 2023-01-01: 2024 on, and the 2023 releases the snapshot has wheels for), one Linux x86_64 wheel listed in
    ``data/metadata/<name>.wheels.jsonl`` (CPython 3.12 when there is one).
    The wheel is never downloaded whole: HTTP range requests read the zip's
    central directory at the end of the file, then only the members below.

    triton  ``triton/backends/nvidia/{compiler,driver}.py`` (3.x),
            ``triton/compiler/compiler.py``, ``triton/common/backend.py``
            (2.x), ``triton/language/{core,semantic,_semantic}.py``:
            * a GPU floor: a ``raise`` guarded by nothing but
              ``<capability> < N`` (or ``assert <capability> >= N``) in the
              NVIDIA backend or the compiler. None of the releases read so
              far has one (reported, nothing written).
            * the fp8e4nv (float8_e4m3fn) floor: ``capability >= N`` that
              adds "fp8e4nv" to the supported fp8 dtypes or sets
              ``allow_fp8e4nv`` (3.x), or ``capability < N`` guarding the
              assert "fp8e4nv data type is not supported on CUDA arch < N"
              (2.x); and the error users see (the raise in language/core.py
              or the assert in language/semantic.py).
    torch   ``torch/_inductor/scheduler.py`` (``<props>.major < N`` guarding
            the raise of "Found <GPU> which is too old to be supported by
            the triton GPU compiler ..."), ``torch/_inductor/exc.py`` (the
            message, once it moved into ``GPUTooOldForTriton``),
            ``torch/utils/_triton.py`` and ``torch/_dynamo/device_interface.py``
            (``.major >= N``: has_triton() is False below it, which is what
            lets the scheduler's check fire).

    Sources are parsed with ``ast``; nothing read is executed.

What it writes
    ``data/derived/triton.toml`` and ``data/derived/torch.toml``: one
    ``[[rule]]`` per run of consecutive releases that state the same fact,
    citing the newest release's wheel (kind "artifact": path = the wheel
    file, sha256 = its sha256, url = its URL; the member and line in the
    title and ``line``).

    torch's Inductor floor bites only when torch.compile (Inductor) runs;
    no condition of the database can say so, so the rule is inferred (a
    warning at most) under ``accelerator = "cuda"``. triton's fp8e4nv floor
    bites only for kernels that use that dtype: it is a note on GPUs below
    the floor.

A new release
    Refresh the metadata snapshot (it must list the release and its wheels),
    then run ``python tools/derive_gpu_floors.py`` (add ``--cache DIR`` to
    keep the members read, ``--package triton`` for one package). The
    summary on stderr lists what each release states.
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
import time
import urllib.error
import urllib.request
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from packaging.version import Version

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = "tools/derive_gpu_floors.py"
PROJECTS = {"triton": "Triton", "torch": "PyTorch"}

TRITON_MEMBERS = (
    "triton/backends/nvidia/compiler.py",
    "triton/backends/nvidia/driver.py",
    "triton/compiler/compiler.py",
    "triton/compiler/backends/cuda.py",
    "triton/compiler/code_generator.py",
    "triton/common/backend.py",
    "triton/language/core.py",
    "triton/language/semantic.py",
    "triton/language/_semantic.py",
)
TORCH_MEMBERS = (
    "torch/_inductor/scheduler.py",
    "torch/_inductor/exc.py",
    "torch/utils/_triton.py",
    "torch/_dynamo/device_interface.py",
)
NVIDIA_BACKENDS = ("triton/backends/nvidia/", "triton/compiler/backends/cuda.py")
TOO_OLD = "too old to be supported by the triton GPU compiler"


# -- reading one member of a remote wheel ------------------------------------------------

class RangeZip:
    """A zip file on a server that honours Range requests: the central
    directory, then single members, each by its own request."""

    def __init__(self, url: str, size: int) -> None:
        self.url = url
        self.size = size
        self._entries: dict[str, tuple[int, int, int]] | None = None

    def _get(self, start: int, end: int) -> bytes:
        if end < start:
            return b""
        for attempt in range(5):
            req = urllib.request.Request(self.url, headers={"Range": f"bytes={start}-{end}"})
            try:
                with urllib.request.urlopen(req, timeout=120) as resp:
                    if resp.status != 206:  # never read a whole wheel
                        raise RuntimeError(f"{self.url}: the server ignored the range ({resp.status})")
                    return resp.read()
            except (urllib.error.URLError, TimeoutError, ConnectionError):
                if attempt == 4:
                    raise
                time.sleep(2 * (attempt + 1))
        raise AssertionError("unreachable")

    def entries(self) -> dict[str, tuple[int, int, int]]:
        if self._entries is None:
            tail_len = min(self.size, 65536 + 22)
            tail = self._get(self.size - tail_len, self.size - 1)
            at = tail.rfind(b"PK\x05\x06")
            if at < 0:
                raise RuntimeError(f"{self.url}: no end of central directory")
            count, cd_size, cd_off = struct.unpack("<HII", tail[at + 10:at + 20])
            if cd_off == 0xFFFFFFFF or count == 0xFFFF or cd_size == 0xFFFFFFFF:
                loc = tail.rfind(b"PK\x06\x07")
                z64_off = struct.unpack("<Q", tail[loc + 8:loc + 16])[0]
                z64 = self._get(z64_off, z64_off + 55)
                count, cd_size, cd_off = struct.unpack("<QQQ", z64[32:56])
            cd = self._get(cd_off, cd_off + cd_size - 1)
            entries: dict[str, tuple[int, int, int]] = {}
            pos = 0
            while cd[pos:pos + 4] == b"PK\x01\x02":
                method = struct.unpack("<H", cd[pos + 10:pos + 12])[0]
                csize = struct.unpack("<I", cd[pos + 20:pos + 24])[0]
                nlen, xlen, clen = struct.unpack("<HHH", cd[pos + 28:pos + 34])
                offset = struct.unpack("<I", cd[pos + 42:pos + 46])[0]
                name = cd[pos + 46:pos + 46 + nlen].decode("utf-8")
                entries[name] = (method, csize, offset)
                pos += 46 + nlen + xlen + clen
            self._entries = entries
        return self._entries

    def read(self, name: str) -> str:
        method, csize, offset = self.entries()[name]
        head = self._get(offset, offset + 29)
        nlen, xlen = struct.unpack("<HH", head[26:30])
        start = offset + 30 + nlen + xlen
        data = self._get(start, start + csize - 1)
        if method == 8:
            data = zlib.decompress(data, -15)
        elif method != 0:
            raise RuntimeError(f"{name}: compression method {method}")
        return data.decode("utf-8")


# -- the parsers (pure: text in, facts out) -----------------------------------------------

@dataclass(frozen=True)
class Fact:
    """What a release states: the floor and the message, and where (member, line)."""

    floor: str                      # "7.0"
    message: str                    # the error text as the code writes it
    path: str                       # the member stating the check
    line: int
    also: tuple[tuple[str, int], ...] = field(default=())  # other (member, line) it rests on

    def key(self) -> tuple[str, str]:
        return (self.floor, self.message)


def _dotted(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except Exception:  # pragma: no cover
        return ""


def _capability(node: ast.AST) -> bool:
    text = _dotted(node).lower()
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)) and (
        "capability" in text or re.search(r"\barch\b", text) is not None)


def _int(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _compare(node: ast.AST, op: type, pred) -> int | None:
    """N when `node` is exactly `<x> op N` with pred(x)."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], op) and pred(node.left):
        return _int(node.comparators[0])
    return None


def _text(node: ast.AST, names: dict[str, str] | None = None) -> str | None:
    """A string literal or f-string as written ({expr} for its fields)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                expr = _dotted(part.value)
                out.append((names or {}).get(expr, "{" + expr + "}"))
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left, names), _text(node.right, names)
        if left is not None and right is not None:
            return left + right
    return None


def _cc(value: int) -> str:
    """A capability as the code compares it (89, or a major such as 7) as "8.9"."""
    return f"{value}.0" if value < 10 else f"{value // 10}.{value % 10}"


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def triton_floor(files: dict[str, str]) -> list[tuple[str, int, int, str]]:
    """GPU floors in triton's NVIDIA backend/compiler: (member, line, N, message)
    for each raise guarded by nothing but `<capability> < N`, and each
    `assert <capability> >= N`. A guard with `and` (a feature's, such as
    clc or num_ctas) is not a floor."""
    found = []
    for path in sorted(files):
        if not (path.startswith("triton/backends/nvidia/") or path.startswith("triton/compiler/")
                or path.startswith("triton/common/")):
            continue
        tree = _parse(files[path])
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.If):
                n = _compare(node.test, ast.Lt, _capability)
                if n is None:
                    continue
                for stmt in node.body:
                    if isinstance(stmt, ast.Raise) and stmt.exc is not None:
                        args = stmt.exc.args if isinstance(stmt.exc, ast.Call) else []
                        message = _text(args[0]) if args else None
                        if message is not None and "fp8" not in message:
                            found.append((path, stmt.lineno, n, message))
            elif isinstance(node, ast.Assert) and node.msg is not None:
                n = _compare(node.test, ast.GtE, _capability)
                message = _text(node.msg)
                if n is not None and message is not None and "fp8" not in message:
                    found.append((path, node.lineno, n, message))
    return found


def triton_fp8e4nv(files: dict[str, str]) -> Fact | None:
    """The capability below which triton refuses fp8e4nv, and its error."""
    gate: tuple[str, int, int] | None = None       # (member, line, N)
    message: tuple[str, int, str] | None = None    # (member, line, text)
    for path in sorted(files):
        tree = _parse(files[path])
        if tree is None:
            continue
        parents = _parents(tree)
        for node in ast.walk(tree):
            # 3.2+: if <capability> >= N: supported_fp8_dtypes.add("fp8e4nv")
            if isinstance(node, ast.If) and path.startswith(NVIDIA_BACKENDS):
                n = _compare(node.test, ast.GtE, _capability)
                if n is not None and any(
                        isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "add"
                        and c.args and _text(c.args[0]) == "fp8e4nv"
                        for stmt in node.body for c in ast.walk(stmt)):
                    gate = (path, node.test.lineno, n)
            # 3.0-3.1: args["allow_fp8e4nv"] = <capability> >= N
            if isinstance(node, ast.Assign) and path.startswith(NVIDIA_BACKENDS):
                target = node.targets[0]
                if isinstance(target, ast.Subscript) and _text(target.slice) == "allow_fp8e4nv":
                    n = _compare(node.value, ast.GtE, _capability)
                    if n is not None:
                        gate = (path, node.lineno, n)
            # the error: 2.x/3.0-3.1 assert message, 3.2+ raise in core.py
            if isinstance(node, ast.Assert) and node.msg is not None:
                text = _text(node.msg)
                if text and text.startswith("fp8e4nv data type is not supported"):
                    message = (path, node.lineno, text)
                    # 2.x: if ... <capability> < N and (... is_fp8e4nv ...): assert False, "..."
                    guard = parents.get(node)
                    if isinstance(guard, ast.If) and gate is None:
                        for sub in ast.walk(guard.test):
                            n = _compare(sub, ast.Lt, _capability)
                            if n is not None:
                                gate = (path, sub.lineno, n)
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args:
                guard = parents.get(node)
                if isinstance(guard, ast.If) and "supported_fp8_dtypes" in _dotted(guard.test):
                    text = _text(node.exc.args[0], {"self": "fp8e4nv"})
                    if text:
                        message = (path, node.lineno, text)
    if gate is None or message is None:
        return None
    also = () if (message[0], message[1]) == (gate[0], gate[1]) else ((message[0], message[1]),)
    return Fact(_cc(gate[2]), message[2], gate[0], gate[1], also)


def torch_inductor_floor(files: dict[str, str]) -> Fact | None:
    """The capability below which torch's Inductor scheduler refuses a CUDA GPU."""
    sched = files.get("torch/_inductor/scheduler.py")
    tree = _parse(sched) if sched else None
    if tree is None:
        return None
    exc_messages: dict[str, tuple[int, str]] = {}
    exc_tree = _parse(files.get("torch/_inductor/exc.py", ""))
    if exc_tree is not None:
        for cls in exc_tree.body:
            if isinstance(cls, ast.ClassDef):
                for node in ast.walk(cls):
                    if isinstance(node, ast.Call) and node.args:
                        text = _text(node.args[0])
                        if text and TOO_OLD in text:
                            exc_messages[cls.name] = (node.args[0].lineno, text)
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        n = line = None
        for sub in ast.walk(node.test):
            if isinstance(sub, ast.Compare) and len(sub.ops) == 1 and isinstance(sub.ops[0], ast.Lt):
                left = sub.left.target if isinstance(sub.left, ast.NamedExpr) else sub.left
                left_text = _dotted(sub.left)
                if (isinstance(left, ast.Attribute) and left.attr == "major") or left_text.endswith(").major"):
                    n = _int(sub.comparators[0])
                    line = sub.lineno
        if n is None:
            continue
        for stmt in node.body:
            if not (isinstance(stmt, ast.Raise) and isinstance(stmt.exc, ast.Call)):
                continue
            func = _dotted(stmt.exc.func)
            if stmt.exc.args and (_text(stmt.exc.args[0]) or "").find(TOO_OLD) >= 0:
                return Fact(_cc(n), _text(stmt.exc.args[0]) or "", "torch/_inductor/scheduler.py", line,
                            _has_triton_lines(files, n))
            if func in exc_messages:
                msg_line, text = exc_messages[func]
                return Fact(_cc(n), text, "torch/_inductor/scheduler.py", line,
                            (("torch/_inductor/exc.py", msg_line),) + _has_triton_lines(files, n))
    return None


def _has_triton_lines(files: dict[str, str], n: int) -> tuple[tuple[str, int], ...]:
    """Where has_triton() answers False below major N (utils/_triton.py or device_interface.py)."""
    out = []
    for path in ("torch/utils/_triton.py", "torch/_dynamo/device_interface.py"):
        tree = _parse(files.get(path, ""))
        if tree is None:
            continue
        for sub in ast.walk(tree):
            if (isinstance(sub, ast.Compare) and len(sub.ops) == 1 and isinstance(sub.ops[0], ast.GtE)
                    and isinstance(sub.left, ast.Attribute) and sub.left.attr == "major"
                    and "get_device_properties" in _dotted(sub.left) and _int(sub.comparators[0]) == n):
                out.append((path, sub.lineno))
                break
    return tuple(out)


# -- releases, wheels, output --------------------------------------------------------------

@dataclass
class Release:
    version: str
    uploaded: str
    wheel: dict


def releases(metadata: str, name: str, since: str) -> list[Release]:
    with open(os.path.join(metadata, f"{name}.jsonl"), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    known = json.loads(lines[0])["versions"]
    uploaded = {}
    for line in lines[1:]:
        row = json.loads(line)
        uploaded.setdefault(row["version"], row.get("uploaded") or "")
        uploaded[row["version"]] = min(uploaded[row["version"]], row.get("uploaded") or uploaded[row["version"]])
    wheels = {}
    with open(os.path.join(metadata, f"{name}.wheels.jsonl"), encoding="utf-8") as handle:
        for line in handle.read().splitlines()[1:]:
            row = json.loads(line)
            wheels[row["version"]] = row["wheels"]
    out = []
    for version in known:
        if not uploaded.get(version) or uploaded[version] < since or version not in wheels:
            continue
        candidates = sorted((w for w in wheels[version] if "linux" in w["file"] and "x86_64" in w["file"]),
                            key=lambda w: ("-cp312-" not in w["file"], w["file"]))
        if candidates:
            out.append(Release(version, uploaded[version], candidates[0]))
    return sorted(out, key=lambda r: Version(r.version))


def read_members(release: Release, members: tuple[str, ...], cache: str | None) -> dict[str, str]:
    wheel = release.wheel
    if cache:
        cached = os.path.join(cache, f"{wheel['sha256']}.json")
        if os.path.exists(cached):
            with open(cached, encoding="utf-8") as handle:
                return json.load(handle)
    zipf = RangeZip(wheel["url"], wheel["size"])
    names = [m for m in members if m in zipf.entries()]
    with ThreadPoolExecutor(8) as pool:
        texts = dict(zip(names, pool.map(zipf.read, names)))
    if cache:
        os.makedirs(cache, exist_ok=True)
        with open(cached, "w", encoding="utf-8") as handle:
            json.dump(texts, handle, sort_keys=True)
    return texts


def _q(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def source_id(name: str, version: str, path: str, line: int) -> str:
    return f"{name}@{version}:{path}#L{line}"


def source_table(name: str, release: Release, path: str, line: int) -> str:
    wheel = release.wheel
    title = f"{PROJECTS[name]} {release.version} wheel {wheel['file']}, {path} line {line}"
    return "\n".join([
        "[[source]]",
        f"id = {_q(source_id(name, release.version, path, line))}",
        f"project = {_q(PROJECTS[name])}",
        f"title = {_q(title)}",
        'kind = "artifact"',
        f"url = {_q(wheel['url'])}",
        f"ref = {_q(release.version)}",
        f"path = {_q(wheel['file'])}",
        f"line = {line}",
        f"sha256 = {_q(wheel['sha256'])}",
        f"date = {release.uploaded}",
        "",
    ])


def releases_range(group: list[Release], following: Release | None) -> str:
    if len(group) == 1:
        return f"=={group[0].version}"
    upper = f",<{following.version}" if following else f",<={group[-1].version}"
    return f">={group[0].version}{upper}"


def group_runs(rows: list[tuple[Release, Fact | None]]) -> list[tuple[list[Release], Fact, Release | None]]:
    """Consecutive releases with the same fact: (releases, the newest's fact, the next release)."""
    runs: list[tuple[list[Release], Fact, Release | None]] = []
    current: list[tuple[Release, Fact]] = []
    for index, (release, fact) in enumerate(rows):
        if fact is not None and current and current[-1][1].key() == fact.key():
            current.append((release, fact))
            continue
        if current:
            runs.append(([r for r, _ in current], current[-1][1], release))
        current = [(release, fact)] if fact is not None else []
    if current:
        runs.append(([r for r, _ in current], current[-1][1], None))
    return runs


def _span(group: list[Release]) -> str:
    return group[0].version if len(group) == 1 else f"{group[0].version}-{group[-1].version}"


def render(name: str, runs, rule_writer) -> str:
    out = [
        f"# Written by {TOOL} from the Python sources of {name}'s wheels on the package index, "
        "one per release; do not edit, run the script again.",
        "schema = 1",
        f"package = {_q(name)}",
        f"tool = {_q(TOOL)}",
        "",
    ]
    sources: dict[str, str] = {}
    rules = []
    for group, fact, following in runs:
        newest = group[-1]
        for path, line in ((fact.path, fact.line),) + fact.also:
            sources[source_id(name, newest.version, path, line)] = source_table(name, newest, path, line)
        rules.append(rule_writer(group, fact, following))
    out.extend(sources[k] for k in sorted(sources))
    out.extend(rules)
    return "\n".join(out).rstrip("\n") + "\n"


def triton_rule(group: list[Release], fact: Fact, following: Release | None) -> str:
    newest = group[-1]
    sm = fact.floor.replace(".", "")
    shown = fact.message.replace("{builder.options.supported_fp8_dtypes}", "(…)")
    also = [source_id("triton", newest.version, p, ln) for p, ln in fact.also]
    lines = [
        "[[rule]]",
        f"id = {_q(f'triton.derived.{newest.version}.fp8e4nv-sm{sm}')}",
        'kind = "note"',
        f"releases = {_q(releases_range(group, following))}",
        # the refusal is of kernels that use the dtype: shown where the stack runs an FP8 checkpoint, not to every
        # stack on an older GPU (which no kernel of that dtype may ever reach)
        f"when = {{ accelerator = \"cuda\", compute_capability = \"<{fact.floor}\", model = {{ checkpoint_dtype = \"fp8\" }} }}",
        f"message = {_q(f'Triton ({_span(group)}) compiles no kernel that uses fp8e4nv (torch.float8_e4m3fn) for a GPU below sm_{sm}: it fails with ' + chr(34) + shown + chr(34) + ' (an FP8 checkpoint whose kernels run through Triton hits it; Triton itself states no general floor)')}",
        f"source = {_q(source_id('triton', newest.version, fact.path, fact.line))}",
    ]
    if also:
        lines.append(f"also = [{', '.join(_q(a) for a in also)}]")
    return "\n".join(lines) + "\n"


def torch_rule(group: list[Release], fact: Fact, following: Release | None) -> str:
    newest = group[-1]
    also = [source_id("torch", newest.version, p, ln) for p, ln in fact.also]
    shown = fact.message.replace("{device_props.name}", "<GPU>").replace(
        "{device_props.major}.{device_props.minor}", "<major>.<minor>")
    floor_id = fact.floor.replace(".", "")
    lines = [
        "[[rule]]",
        f"id = {_q(f'torch.derived.{newest.version}.inductor-sm{floor_id}-floor')}",
        'kind = "requirement"',
        f"releases = {_q(releases_range(group, following))}",
        'when = { accelerator = "cuda" }',
        f"require = {{ compute_capability = \">={fact.floor}\" }}",
        f"message = {_q(f'torch.compile{chr(39)}s default backend, Inductor, which generates Triton kernels, refuses GPUs below compute capability {fact.floor} ({_span(group)}): ' + chr(34) + shown + chr(34) + '. Eager PyTorch is not affected: this bites only where torch.compile runs (an engine that compiles by default, or a user call)')}",
        f"source = {_q(source_id('torch', newest.version, fact.path, fact.line))}",
    ]
    if also:
        lines.append(f"also = [{', '.join(_q(a) for a in also)}]")
    lines += [
        "inferred = true",
        f"basis = {_q('the check is in torch._inductor (Scheduler.create_backend): it runs only when torch.compile compiles a graph with Inductor on a CUDA device; no condition of the database can say that Inductor is used, so the floor is stated for every CUDA stack with torch, as a warning')}",
    ]
    return "\n".join(lines) + "\n"


def derive(name: str, metadata: str, since: str, cache: str | None, log) -> str:
    rows = []
    if name == "triton":
        for release in releases(metadata, name, since):
            files = read_members(release, TRITON_MEMBERS, cache)
            floors = triton_floor(files)
            fact = triton_fp8e4nv(files)
            log(f"triton {release.version} ({release.wheel['file']}): general floor "
                f"{[f'{p}#L{ln} <{_cc(n)}: {m}' for p, ln, n, m in floors] or 'none stated'}; fp8e4nv "
                f"{f'<{fact.floor} refused ({fact.path}#L{fact.line})' if fact else 'not found'}")
            rows.append((release, fact))
        return render(name, group_runs(rows), triton_rule)
    for release in releases(metadata, name, since):
        files = read_members(release, TORCH_MEMBERS, cache)
        fact = torch_inductor_floor(files)
        log(f"torch {release.version} ({release.wheel['file']}): Inductor floor "
            f"{f'>={fact.floor} ({fact.path}#L{fact.line}, also {list(fact.also)})' if fact else 'not found'}")
        rows.append((release, fact))
    return render(name, group_runs(rows), torch_rule)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", choices=["triton", "torch", "all"], default="all")
    parser.add_argument("--metadata", default=os.path.join(ROOT, "data", "metadata"))
    parser.add_argument("--out-dir", default=os.path.join(ROOT, "data", "derived"))
    parser.add_argument("--since", default="2023-01-01", help="first upload date of the releases read")
    parser.add_argument("--cache", help="a directory keeping the members read, by wheel sha256")
    args = parser.parse_args(argv)
    names = ["triton", "torch"] if args.package == "all" else [args.package]
    for name in names:
        text = derive(name, args.metadata, args.since, args.cache, lambda m: print(m, file=sys.stderr))
        path = os.path.join(args.out_dir, f"{name}.toml")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        print(f"wrote {path} ({hashlib.sha256(text.encode()).hexdigest()[:12]})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
