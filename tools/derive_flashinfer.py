"""Derive FlashInfer's GPU facts from its own repository, release by release.

What it reads
    A bare git mirror of https://github.com/flashinfer-ai/flashinfer (``--repo``),
    at the tag ``v<version>`` of every release of flashinfer-python the database
    knows (the ``versions`` of the first line of
    ``data/metadata/flashinfer-python.jsonl``). At each tag:

    * ``flashinfer/compilation_context.py``: ``CompilationContext``, which turns
      the GPUs torch reports into the JIT's target architectures. Each branch of
      ``_normalize_cuda_arch`` that tests ``is_cuda_version_at_least("X")`` and
      otherwise raises (``raise RuntimeError("SM 12.x requires CUDA >= 12.9")``)
      refuses that GPU generation with an older CUDA. ``__init__`` calls it
      inside ``try: ... except Exception as e: logger.warning(...)`` unless
      ``FLASHINFER_CUDA_ARCH_LIST`` is set: the refusal is logged, the GPU is
      left out of the targets, and the refusal the user sees is the one below.
    * ``flashinfer/jit/core.py``: ``check_cuda_arch`` (called by ``gen_jit_spec``
      for every JIT module) and the message it raises when no target is sm75 or
      newer ("FlashInfer requires GPUs with sm75 or higher").
    * the release workflow (``.github/workflows/release.yml`` or
      ``release-flashinfer-jit-cache-wheel.yml``): the ``FLASHINFER_CUDA_ARCH_LIST``
      expression of the flashinfer-jit-cache build matrix, evaluated per
      (CUDA, CPU architecture). flashinfer-jit-cache has no snapshot in the
      database (FlashInfer's own index serves it), so these lists are printed
      with ``--summary`` and not written.

What it writes
    ``data/derived/flashinfer-python.toml`` (``--out``): one ``[[rule]]`` per run
    of consecutive releases whose tags state the same refusal, citing the exact
    file, commit and line of the newest and the first tag of the run. A
    release whose tag the mirror lacks breaks a run and is listed on standard
    error; its facts are not copied from a neighbour.

    The sm75 floor of ``check_cuda_arch`` is not written: the hand-written rule
    ``flashinfer.jit.sm75-floor`` (data/constraints/flashinfer-python.toml)
    states it. flashinfer-cubin gets no file: its wheel (py3-none-any) is a
    cache of cubins FlashInfer otherwise downloads at run time, built with no
    architecture list (the ``build-flashinfer-cubin`` job of the release
    workflow), so it has no ``archs`` to state.

How to run it for a new release
    Refresh the mirror and the snapshot (``compat db sync``), then::

        python tools/derive_flashinfer.py --repo /path/to/flashinfer.git \\
            --out data/derived/flashinfer-python.toml [--summary]

    Standard library and ``packaging`` only; the output is deterministic.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from packaging.version import InvalidVersion, Version

PACKAGE = "flashinfer-python"
TOOL = "tools/derive_flashinfer.py"
REPOSITORY = "flashinfer-ai/flashinfer"
PROJECT = "FlashInfer"
CONTEXT_PATH = "flashinfer/compilation_context.py"
CORE_PATH = "flashinfer/jit/core.py"
WORKFLOW_PATHS = (".github/workflows/release.yml", ".github/workflows/release-flashinfer-jit-cache-wheel.yml")

HEADER = (f"# Written by {TOOL} from {REPOSITORY} at each release's tag; do not edit, run the script again.\n")


# -- reading the files ----------------------------------------------------------------


@dataclass(frozen=True)
class Located:
    """A piece of text and the 1-based line of the file it is on."""
    text: str
    line: int


@dataclass(frozen=True)
class CudaFloor:
    """A branch of _normalize_cuda_arch: GPUs of `majors` need CUDA >= `cuda`, else `message` is raised."""
    majors: str             # a compute-capability specifier: ">=12.0,<13.0"
    label: str              # how the code names them: "12" or "10+"
    cuda: str               # "12.9"
    message: Located        # the raise
    caught: Located | None  # the except's logger.warning when the caller catches it (its text)
    env_bypass: bool        # FLASHINFER_CUDA_ARCH_LIST replaces the detection


@dataclass(frozen=True)
class ArchCheck:
    """check_cuda_arch: its message, and whether it raises when no target is left (an empty set)."""
    message: Located
    raises_when_empty: bool
    call: Located | None    # gen_jit_spec's call of it


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _function_body(text: str, name: str) -> tuple[str, int] | None:
    """The text of function `name` (up to the next line at the same or a lower indent) and its offset."""
    match = re.search(rf"^([ \t]*)def {re.escape(name)}\(", text, re.M)
    if match is None:
        return None
    indent = len(match.group(1))
    first = text.find("\n", match.end())
    first = len(text) if first < 0 else first + 1
    end = len(text)
    for following in re.finditer(r"^([ \t]*)(\S)", text[first:], re.M):
        if len(following.group(1)) <= indent and following.group(2) not in ")#":
            end = first + following.start()
            break
    return text[match.start():end], match.start()


_BRANCH = re.compile(r"^[ \t]*(?:el)?if major (==|>=) (\d+):", re.M)
_AT_LEAST = re.compile(r"is_cuda_version_at_least\(\s*[\"'](\d+\.\d+)[\"']\s*\)")
_RAISE = re.compile(r"raise RuntimeError\(\s*(?:f?)\"((?:[^\"\\]|\\.)*)\"\s*\)")


def parse_cuda_floors(text: str) -> list[CudaFloor]:
    """The CUDA floors _normalize_cuda_arch of compilation_context.py states, in file order."""
    found = _function_body(text, "_normalize_cuda_arch")
    if found is None:
        return []
    body, start = found
    branches = list(_BRANCH.finditer(body))
    caught = _caught_warning(text)
    env_bypass = bool(re.search(r"[\"']FLASHINFER_CUDA_ARCH_LIST[\"'] in os\.environ", text))
    floors = []
    for index, branch in enumerate(branches):
        end = branches[index + 1].start() if index + 1 < len(branches) else len(body)
        chunk = body[branch.start():end]
        at_least = _AT_LEAST.search(chunk)
        raised = _RAISE.search(chunk)
        if at_least is None or raised is None:
            continue
        major = int(branch.group(2))
        if branch.group(1) == "==":
            majors, label = f">={major}.0,<{major + 1}.0", str(major)
        else:
            majors, label = f">={major}.0", f"{major}+"
        line = _line_of(text, start + branch.start() + raised.start())
        floors.append(CudaFloor(majors, label, at_least.group(1), Located(raised.group(1), line), caught, env_bypass))
    return floors


def _caught_warning(text: str) -> Located | None:
    """The warning __init__ logs when _normalize_cuda_arch raises inside its try (None when it is not caught)."""
    found = _function_body(text, "__init__")
    if found is None:
        return None
    body, start = found
    match = re.search(r"try:\s*\n(?:(?!\n[ \t]*except)[\s\S])*?_normalize_cuda_arch\([\s\S]*?"
                      r"except Exception as e:\s*\n[ \t]*logger\.warning\(\s*f?\"((?:[^\"\\]|\\.)*)\"", body)
    if match is None:
        return None
    return Located(match.group(1), _line_of(text, start + match.start(1)))


def parse_arch_check(text: str) -> ArchCheck | None:
    """check_cuda_arch of jit/core.py: its message and whether it raises on an empty target set."""
    found = _function_body(text, "check_cuda_arch")
    if found is None:
        return None
    body, start = found
    raised = _RAISE.search(body)
    if raised is None:
        return None
    raises_when_empty = bool(re.search(r"eligible = False", body) and re.search(r"if not eligible:", body))
    call = None
    spec = _function_body(text, "gen_jit_spec")
    if spec is not None:
        called = re.search(r"^[ \t]*check_cuda_arch\(\)", spec[0], re.M)
        if called is not None:
            call = Located("check_cuda_arch()", _line_of(text, spec[1] + called.start()))
    return ArchCheck(Located(raised.group(1), _line_of(text, start + raised.start())), raises_when_empty, call)


# -- the jit-cache workflow's architecture lists ----------------------------------------


def _matrix_values(text: str, key: str) -> list[str]:
    match = re.search(rf"^[ \t]*{key}:\s*\[([^\]]*)\]", text, re.M)
    if match is None:
        return []
    return [v.strip().strip("'\"") for v in match.group(1).split(",") if v.strip()]


_TOKEN = re.compile(r"\s*(\(|\)|&&|\|\||==|!=|<=|>=|<|>|'[^']*'|matrix\.[A-Za-z_]+)")


def evaluate(expression: str, matrix: dict[str, str]) -> str | None:
    """Evaluate a GitHub Actions expression of `&&`, `||`, parentheses, comparisons of
    matrix values with string literals (compared as versions) and literals.
    Returns the string it yields, or None when it yields a false value."""
    tokens, pos = [], 0
    while pos < len(expression.rstrip()):
        match = _TOKEN.match(expression, pos)
        if match is None:
            raise ValueError(f"cannot read {expression[pos:]!r}")
        tokens.append(match.group(1))
        pos = match.end()
    index = 0

    def peek() -> str | None:
        return tokens[index] if index < len(tokens) else None

    def take() -> str:
        nonlocal index
        index += 1
        return tokens[index - 1]

    def value(token: str) -> object:
        if token.startswith("matrix."):
            return matrix[token[len("matrix."):]]
        return token[1:-1]

    def primary() -> object:
        token = take()
        if token == "(":
            result = either()
            if take() != ")":
                raise ValueError("unbalanced parentheses")
            return result
        left = value(token)
        if peek() in ("==", "!=", "<", "<=", ">", ">="):
            op = take()
            right = value(take())
            try:
                a, b = Version(str(left)), Version(str(right))
            except InvalidVersion:
                a, b = str(left), str(right)  # type: ignore[assignment]
            return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        return left

    def both() -> object:
        result = primary()
        while peek() == "&&":
            take()
            right = primary()
            result = right if result else result
        return result

    def either() -> object:
        result = both()
        while peek() == "||":
            take()
            right = both()
            result = result if result else right
        return result

    result = either()
    if index != len(tokens):
        raise ValueError(f"unread tokens {tokens[index:]}")
    return result if isinstance(result, str) and result else None


def parse_jit_cache_archs(text: str) -> tuple[int, dict[tuple[str, str], list[str]]] | None:
    """The FLASHINFER_CUDA_ARCH_LIST of each (CUDA, CPU architecture) of a release workflow's
    jit-cache matrix, and the line of the expression; None when the file has none."""
    match = re.search(r"^[ \t]*FLASHINFER_CUDA_ARCH_LIST:\s*\$\{\{(.*)\}\}\s*$", text, re.M)
    if match is None:
        return None
    cudas = _matrix_values(text, "cuda")
    cpus = _matrix_values(text, "arch") or ["x86_64"]
    lists = {}
    for cuda in cudas:
        for cpu in cpus:
            result = evaluate(match.group(1), {"cuda": cuda, "arch": cpu})
            if result:
                lists[(cuda, cpu)] = result.split()
    return _line_of(text, match.start()), lists


# -- the repository ---------------------------------------------------------------------


class Repo:
    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir

    def _git(self, *args: str) -> str | None:
        done = subprocess.run(["git", "--git-dir", self.git_dir, *args], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else None

    def commit(self, tag: str) -> tuple[str, str] | None:
        out = self._git("log", "-1", "--format=%H %cs", f"refs/tags/{tag}")
        if not out:
            return None
        commit, date = out.split()
        return commit, date

    def show(self, tag: str, path: str) -> str | None:
        return self._git("show", f"refs/tags/{tag}:{path}")


@dataclass
class Release:
    version: str
    tag: str
    commit: str
    date: str
    floors: list[CudaFloor] = field(default_factory=list)
    arch_check: ArchCheck | None = None
    jit_cache: tuple[str, int, dict[tuple[str, str], list[str]]] | None = None


def read_release(repo: Repo, version: str) -> Release | None:
    tag = f"v{version}"
    found = repo.commit(tag)
    if found is None:
        return None
    release = Release(version, tag, *found)
    context = repo.show(tag, CONTEXT_PATH)
    if context is not None:
        release.floors = parse_cuda_floors(context)
    core = repo.show(tag, CORE_PATH)
    if core is not None:
        release.arch_check = parse_arch_check(core)
    for path in WORKFLOW_PATHS:
        text = repo.show(tag, path)
        parsed = parse_jit_cache_archs(text) if text is not None else None
        if parsed is not None:
            release.jit_cache = (path, *parsed)
            break
    return release


def versions_of(metadata: str) -> list[str]:
    with open(metadata, encoding="utf-8") as handle:
        header = json.loads(handle.readline())
    return sorted(header["versions"], key=Version)


# -- the facts --------------------------------------------------------------------------


def _key(floor: CudaFloor, check: ArchCheck | None) -> tuple:
    """What a run of releases must share: the fact and what the user sees (not the line numbers)."""
    seen = check.message.text if (check and floor.caught and check.raises_when_empty) else None
    return (floor.majors, floor.cuda, floor.message.text, floor.caught.text if floor.caught else None,
            floor.env_bypass, seen)


def runs(releases: list[Release | None]) -> list[tuple[CudaFloor, list[Release]]]:
    """Consecutive releases (in version order) that state the same CUDA floor; a release
    without a tag, or without the fact, ends a run."""
    out: list[tuple[CudaFloor, list[Release]]] = []
    open_runs: dict[tuple, list[Release]] = {}
    for release in releases:
        keys = {}
        if release is not None:
            keys = {_key(f, release.arch_check): f for f in release.floors}
        for key in list(open_runs):
            if key not in keys:
                del open_runs[key]
        for key, floor in keys.items():
            if key in open_runs:
                open_runs[key].append(release)  # type: ignore[arg-type]
            else:
                open_runs[key] = [release]  # type: ignore[list-item]
                out.append((floor, open_runs[key]))
    return out


def _source(release: Release, path: str, line: int, what: str) -> dict:
    return {
        "id": f"flashinfer@{release.tag}:{path}#L{line}",
        "project": PROJECT,
        "title": f"{PROJECT} {release.tag}, {path} line {line} ({what})",
        "kind": "code",
        "url": f"https://github.com/{REPOSITORY}/blob/{release.commit}/{path}#L{line}",
        "ref": release.tag,
        "commit": release.commit,
        "path": path,
        "line": line,
        "date": release.date,
    }


def _releases_spec(run: list[Release]) -> str:
    if len(run) == 1:
        return f"=={run[0].version}"
    return f">={run[0].version},<={run[-1].version}"


def facts(releases: list[Release | None]) -> tuple[list[dict], list[dict]]:
    sources: dict[str, dict] = {}
    rules = []
    for floor, run in runs(releases):
        first, last = run[0], run[-1]
        last_floor = next(f for f in last.floors if _key(f, last.arch_check) == _key(floor, first.arch_check))
        what = f"_normalize_cuda_arch raises for SM {floor.label} below CUDA {floor.cuda}"
        cited = [_source(last, CONTEXT_PATH, last_floor.message.line, what)]
        also = []
        if first is not last:
            also.append(_source(first, CONTEXT_PATH, floor.message.line,
                                "the same raise, at the first release of the range"))
        check = last.arch_check
        caught = last_floor.caught is not None and check is not None and check.raises_when_empty
        if last_floor.caught is not None:
            also.append(_source(last, CONTEXT_PATH, last_floor.caught.line,
                                "CompilationContext.__init__ logs the refusal, leaving the GPU out of the JIT targets"))
        if caught:
            assert check is not None
            also.append(_source(last, CORE_PATH, check.message.line,
                                "check_cuda_arch raises when no JIT target is left"))
            if check.call is not None:
                also.append(_source(last, CORE_PATH, check.call.line,
                                    "gen_jit_spec calls check_cuda_arch for every JIT module"))
        for source in cited + also:
            sources[source["id"]] = source
        span = first.version if first is last else f"{first.version} to {last.version}"
        refusal = floor.message.text
        if caught:
            assert check is not None and last_floor.caught is not None
            logged = last_floor.caught.text.replace("{e}", refusal)
            seen = (f"it logs \"{logged}\", leaves the GPU out of the JIT's targets, and every FlashInfer "
                    f"JIT module then fails with \"{check.message.text}\"")
        else:
            seen = f"it raises \"{refusal}\""
        message = (f"flashinfer-python {span}: on a GPU of compute capability {floor.label}.x FlashInfer's JIT "
                   f"needs CUDA {floor.cuda} or newer (the CUDA of nvcc, else PyTorch's); with an older one {seen}")
        if floor.env_bypass:
            message += " (FLASHINFER_CUDA_ARCH_LIST, when set, replaces this detection)"
        when: dict = {"accelerator": "cuda", "compute_capability": floor.majors}
        if floor.env_bypass:
            when["not"] = {"env": {"FLASHINFER_CUDA_ARCH_LIST": True}}
        rule = {
            "id": f"flashinfer-python.derived.{first.version}.sm{floor.label.rstrip('+')}x-cuda-floor",
            "kind": "requirement",
            "releases": _releases_spec(run),
            "when": when,
            "require": {"cuda": f">={floor.cuda}"},
            "message": message,
            "source": cited[0]["id"],
        }
        if also:
            rule["also"] = [s["id"] for s in also]
        rules.append(rule)
    ordered = [sources[k] for k in sorted(sources)]
    rules.sort(key=lambda r: (Version(r["releases"].split(",")[0].lstrip("=<>")), r["id"]))
    return ordered, rules


# -- writing TOML -----------------------------------------------------------------------


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            return value
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def render(sources: list[dict], rules: list[dict], covered: list[str], skipped: list[str]) -> str:
    out = [HEADER]
    out.append(f"# Releases read (tag v<version>): {', '.join(covered) if covered else 'none'}.\n")
    if skipped:
        out.append(f"# Releases of the snapshot whose tag the mirror lacks (no facts): {', '.join(skipped)}.\n")
    out.append(f"schema = 1\npackage = {_toml_value(PACKAGE)}\ntool = {_toml_value(TOOL)}\n")
    for table, items in (("source", sources), ("rule", rules)):
        for item in items:
            out.append(f"\n[[{table}]]\n")
            for key, value in item.items():
                out.append(f"{key} = {_toml_value(value)}\n")
    return "".join(out)


def summary(releases: list[Release | None], versions: list[str]) -> str:
    lines = []
    for version, release in zip(versions, releases):
        if release is None:
            lines.append(f"{version}: no tag v{version} in the mirror: skipped")
            continue
        parts = []
        if release.arch_check is not None:
            parts.append(f"check_cuda_arch {CORE_PATH}#L{release.arch_check.message.line} "
                         f"{release.arch_check.message.text!r} (hand-written: flashinfer.jit.sm75-floor)")
        for floor in release.floors:
            parts.append(f"SM {floor.label} needs CUDA >= {floor.cuda} ({CONTEXT_PATH}#L{floor.message.line})")
        if release.jit_cache is not None:
            path, line, lists = release.jit_cache
            shown = "; ".join(f"cu{c} {a}: {' '.join(v)}" for (c, a), v in sorted(lists.items()))
            parts.append(f"jit-cache archs ({path}#L{line}, not written: no snapshot): {shown}")
        lines.append(f"{version} ({release.commit[:10]} {release.date}): " + (" | ".join(parts) or "nothing read"))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", required=True, help="a git directory of flashinfer-ai/flashinfer (bare is fine)")
    parser.add_argument("--out", default=os.path.join(here, "data", "derived", f"{PACKAGE}.toml"))
    parser.add_argument("--metadata", default=os.path.join(here, "data", "metadata", f"{PACKAGE}.jsonl"),
                        help="the snapshot whose versions are read")
    parser.add_argument("--summary", action="store_true", help="print what each tag states to standard output")
    args = parser.parse_args(argv)
    repo = Repo(args.repo)
    versions = versions_of(args.metadata)
    releases = [read_release(repo, v) for v in versions]
    covered = [v for v, r in zip(versions, releases) if r is not None]
    skipped = [v for v, r in zip(versions, releases) if r is None]
    sources, rules = facts(releases)
    text = render(sources, rules, covered, skipped)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(text)
    if skipped:
        print(f"skipped (no tag in the mirror): {', '.join(skipped)}", file=sys.stderr)
    print(f"{args.out}: {len(rules)} rule(s), {len(sources)} source(s) from {len(covered)} release tag(s)",
          file=sys.stderr)
    if args.summary:
        sys.stdout.write(summary(releases, versions))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
