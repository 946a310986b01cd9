"""Every example of the docs (README.md and docs/*.md) runs, and prints what
the page shows.

How a page's examples are found (docs/README.md says the same to writers):

- **A transcript** is a fenced block (no language, ``console``, ``sh`` or
  ``shell``) whose first line starts with ``$ ``. Each ``$ `` line is a
  command; the lines up to the next ``$ `` line are what it prints, standard
  output and standard error as a terminal shows them. A command ending in
  ``<<'END'`` reads the lines that follow, up to ``END``, as its standard
  input. ``> FILE`` and ``2> FILE`` redirect, ``| grep PATTERN`` filters.
- **A command list** is a ``sh`` block without ``$ ``: every line is a
  ``compat`` command (a ``#`` comment may follow it), run for its exit code,
  which must be 0 or 1 (2 and 3 are what a wrong example gets).
- **Python**: a ``python`` block of ``>>>`` lines is a doctest; any other
  ``python`` block runs as a script, and when the line after it ends in
  "prints" (or "prints:"), the next block is what it prints.
- **What a page shows** matches what runs line by line, trailing spaces
  aside; a line that is only ``…`` (or ``...``) stands for any number of
  lines, and a ``…`` inside a line for any text.
- ``<!-- not-run: REASON -->`` on the line before a block keeps it from
  running (it needs a GPU, the network, a built environment, this very
  machine): those are counted and listed, each a skipped test.

Where they run: each page in a folder of its own, which holds a copy of
``examples/`` and ``docs/examples/`` (an example names a file by its path
from the repository's root, as a reader runs it from a clone) and, for the
few pages that still name files they do not show, that page's ``FIXTURES``;
the page's blocks run in order there, so a file one block writes, the next
can read. ``$ cat FILE`` shows a file; when it is not there and no earlier
command of the page named it, the page defines it: the lines shown are
written as FILE. ``compat`` runs in this process (``compat.cli.main``, and a
command run before on the same files is not run again), ``cat``, ``echo``
and ``grep`` are done here, and the few other commands of
``SHELL_COMMANDS`` run in a shell; any other needs a not-run marker. compat
sees the bundled database alone, the day ``DOCS_DATE`` (as
``SOURCE_DATE_EPOCH``) and no program on ``PATH`` (no GPU tool). The
examples that name one of ``SLOW`` (seconds each) run only with ``pytest -m
slow``, which runs every example of their pages.

When a page is stale, regenerate its outputs from the tool, never the other
way round: ``python tests/test_docs.py PAGE`` prints, for each example that
differs, its place and what the tool prints today.
"""

from __future__ import annotations

import contextlib
import datetime
import doctest
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))

SESSION_LANGUAGES = ("", "console", "sh", "shell")
ELLIPSIS = "…"
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(?P<reason>.*?)\s*-->$")
HEREDOC = re.compile(r"\s<<-?\s*(['\"]?)(?P<end>\w+)\1\s*$")
STDERR_TO = re.compile(r"\s2>\s*(?P<file>\S+)")

# The files the examples name are in examples/ and docs/examples/, by their
# path from the repository's root, so that a reader can run an example from a
# clone as the tests do. A few pages still name files they do not show; the
# tests give those pages alone these files, by the names the pages use.
EXAMPLE_FOLDERS = ("examples", "docs/examples")
_EXAMPLE = {name: (ROOT / "examples" / f"{name}.toml").read_text(encoding="utf-8")
            for name in ("h200-vllm", "h200-vllm-0.33")}
FIXTURES: dict[str, dict[str, str]] = {}

# The environment every example runs in: the bundled database only (COMPAT_DATA,
# the user data folder, is set to an empty one per page), no colour, and a
# PATH with no program on it (an empty folder per page): `compat detect`
# finds no GPU tool, whatever the machine. The interpreter it describes is
# the tests' own, which holds, as a fresh virtual environment does, none of
# the packages the database tracks.
ENVIRONMENT: dict[str, str | None] = {
    "COMPAT_DB": None, "COMPAT_DB_OVERLAY": None, "COMPAT_DEBUG": None,
    "NO_COLOR": "1", "FORCE_COLOR": None, "PIP_INDEX_URL": None, "COLUMNS": "80",
    "SOURCE_DATE_EPOCH": "1796256000",  # DOCS_DATE: compat counts snapshot ages to it
}

# The day the pages' outputs were taken. A check says how old the database's
# snapshot is when it is older than 30 days, so on a later day every example
# would print one more note: the examples run on this day.
DOCS_DATE = datetime.date(2026, 12, 3)

# What runs only with `pytest -m slow`, which runs every example of a page:
# the examples that name one of these take seconds each, past the default
# run's budget (a lint of every line of every snapshot; a matrix over the
# 96 cells of examples/axes.toml, or the 10,800 of axes-wide.toml).
SLOW = ("compat db lint", "examples/axes")
# (each as a word of its own: examples/axes.toml is slow, the small
# docs/examples/axes-small.toml is not)
_SLOW = re.compile("|".join(rf"(?<![^\s'\"]){re.escape(expensive)}" for expensive in SLOW))

# The other commands an example may run (in a shell): quick ones on files.
SHELL_COMMANDS = ("sed", "head", "tail", "sort", "wc", "diff", "ls", "mkdir", "cp", "mv", "rm", "touch", "printf")


@dataclass
class Block:
    """One fenced block of a page."""

    page: str
    line: int  # of the opening fence, counted from 1
    language: str
    lines: list[str]
    not_run: str | None = None  # the reason, when marked
    next_line: str = ""  # the first non-blank line after the block

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def kind(self) -> str | None:
        """transcript, commands, python, or None (a block that shows something: TOML, YAML, output)."""
        if self.language in SESSION_LANGUAGES and self.lines and self.lines[0].startswith("$ "):
            return "transcript"
        if self.language in ("sh", "shell"):
            return "commands"
        if self.language == "python":
            return "python"
        return None


def parse(page: str, text: str) -> list[Block]:
    """The fenced blocks of a markdown page, in order."""
    blocks: list[Block] = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = re.match(r"^(`{3,})(\S*)\s*$", lines[index])
        if not opening:
            index += 1
            continue
        fence, start = opening.group(1), index
        end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == fence), len(lines))
        before = next((lines[i].strip() for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        marker = NOT_RUN.match(before)
        after = next((lines[i].strip() for i in range(end + 1, len(lines)) if lines[i].strip()), "")
        blocks.append(Block(page, start + 1, opening.group(2), lines[start + 1:end],
                            marker.group("reason") if marker else None, after))
        index = end + 1
    return blocks


@lru_cache(maxsize=None)
def page_blocks(page: str) -> tuple[Block, ...]:
    return tuple(parse(page, (ROOT / page).read_text(encoding="utf-8")))


# -- matching what a page shows ----------------------------------------------


def _line_pattern(expected: str) -> re.Pattern[str]:
    return re.compile(".*".join(re.escape(part) for part in expected.split(ELLIPSIS)) + r"\Z")


def matches(shown: str, printed: str) -> bool:
    """Whether `printed` is what `shown` shows: line by line, trailing spaces
    and blank lines at the end aside, with ``…`` standing for what is left out."""
    expected = [line.rstrip() for line in shown.rstrip("\n").splitlines()]
    actual = [line.rstrip() for line in printed.rstrip("\n").splitlines()]
    while expected and not expected[-1]:
        expected.pop()
    while actual and not actual[-1]:
        actual.pop()

    @lru_cache(maxsize=None)
    def match(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i].strip() in (ELLIPSIS, "..."):
            return any(match(i + 1, k) for k in range(j, len(actual) + 1))
        if j == len(actual):
            return False
        if ELLIPSIS in expected[i]:
            return bool(_line_pattern(expected[i]).match(actual[j])) and match(i + 1, j + 1)
        return expected[i] == actual[j] and match(i + 1, j + 1)

    return match(0, 0)


# -- running a page ----------------------------------------------------------


@dataclass
class Step:
    """One ``$`` command of a transcript: its text, its standard input and what the page shows."""

    command: str
    stdin: str | None
    shown: str
    line: int


def steps(block: Block) -> list[Step]:
    found: list[Step] = []
    index = 0
    while index < len(block.lines):
        command, line = block.lines[index][2:], block.line + 1 + index
        index += 1
        stdin = None
        heredoc = HEREDOC.search(command)
        if heredoc:
            command = command[:heredoc.start()]
            body: list[str] = []
            while index < len(block.lines) and block.lines[index] != heredoc.group("end"):
                body.append(block.lines[index])
                index += 1
            index += 1
            stdin = "\n".join(body) + "\n"
        start = index
        while index < len(block.lines) and not block.lines[index].startswith("$ "):
            index += 1
        found.append(Step(command, stdin, "\n".join(block.lines[start:index]), line))
    return found


@dataclass
class Printed:
    stdout: str
    stderr: str
    output: str  # both, as a terminal shows them
    code: int


_RUNS: dict[tuple[object, ...], Printed] = {}  # what a command printed, by its arguments, input and folder


def run_compat(args: list[str], stdin: str | None, root: Path) -> Printed:
    """compat's command line, in this process, in the folder `root` (the
    current one) on the day DOCS_DATE. The same command on the same input
    and files, which several pages run, runs once."""
    key = (tuple(args), stdin, _digest(root))
    if key in _RUNS:
        return _RUNS[key]
    from compat.cli import main

    with _isolated(root, stdin) as (out, err, both):
        try:
            main(args)
            code = 0
        except SystemExit as exit_:
            # as the interpreter exits: None is 0, a number itself, anything else (a message) 1
            code = 0 if exit_.code is None else exit_.code if isinstance(exit_.code, int) else 1
    printed = Printed(out.getvalue().decode(), err.getvalue().decode(), both.getvalue().decode(), code)
    if not {"-o", "--output"} & set(args):
        _RUNS[key] = printed
    return printed


@contextlib.contextmanager
def _isolated(root: Path, stdin: str | None = None):
    """Standard streams of their own (click's runner), the ENVIRONMENT, and the day DOCS_DATE."""
    environment = {**ENVIRONMENT, "COMPAT_DATA": str(root / ".compat-data"), "PATH": str(root / ".no-programs")}
    with CliRunner().isolation(input=stdin, env=environment) as streams:
        yield streams


def _digest(root: Path) -> str:
    """The names and contents of the files under `root`: what a command may read."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class NotRunnable(Exception):
    """An example whose command the tests cannot run."""


@dataclass
class Workspace:
    """The folder a page runs in, and what its commands have done so far."""

    root: Path
    named: set[str] = field(default_factory=set)  # every word of the commands run so far
    code: int = 0  # of the last command
    subprocesses: int = 0
    skipped: int = 0  # slow commands left to `pytest -m slow`

    def run(self, step: Step) -> str:
        """Run one command line; return what a terminal would show."""
        command = step.command.split(" #", 1)[0] if step.command.startswith("compat ") else step.command
        stderr_to = STDERR_TO.search(command)
        if stderr_to:
            command = command[:stderr_to.start()] + command[stderr_to.end():]
        words = shlex.split(command)
        stdout_to = None
        if ">" in words:
            at = words.index(">")
            stdout_to, words = words[at + 1], words[:at]
        pipeline = [list(part) for part in _split(words, "|")]
        shown = self._run_one(pipeline[0], step)
        for filter_ in pipeline[1:]:
            if filter_[:1] != ["grep"] or len(filter_) != 2:
                raise NotRunnable(f"`{step.command}`: of the commands after a |, the tests run `grep PATTERN` only")
            lines = [line for line in shown.stdout.splitlines() if re.search(filter_[1], line)]
            shown = Printed("".join(f"{line}\n" for line in lines), shown.stderr, "", shown.code)
            shown.output = shown.stdout + shown.stderr
        self.named.update(words)
        self.code = shown.code
        if stdout_to is not None:
            self._write(stdout_to, shown.stdout)
            return "" if stderr_to else shown.stderr
        if stderr_to is not None:
            self._write(stderr_to.group("file"), shown.stderr)
            return shown.stdout
        return shown.output

    def _run_one(self, words: list[str], step: Step) -> Printed:
        if words[0] == "compat":
            if words[1:3] == ["db", "sync"]:
                raise NotRunnable(f"`{step.command}` reads the package index: mark its block <!-- not-run: REASON -->")
            return run_compat(words[1:], step.stdin, self.root)
        if words == ["echo", "$?"]:
            return _printed(f"{self.code}\n")
        if words[0] == "echo":
            return _printed(" ".join(words[1:]) + "\n")
        if words[0] == "cat" and len(words) == 2:
            path = self.root / words[1]
            if not path.exists() and words[1] not in self.named:
                self._write(words[1], step.shown + "\n")  # the page defines the file
            return _printed(path.read_text(encoding="utf-8"))
        if words[0] not in SHELL_COMMANDS:
            raise NotRunnable(f"`{step.command}` is not a command the tests run: mark its block "
                              "<!-- not-run: REASON -->")
        self.subprocesses += 1
        done = subprocess.run(shlex.join(words), shell=True, cwd=self.root, input=step.stdin, text=True,
                              capture_output=True, timeout=60)
        return Printed(done.stdout, done.stderr, done.stdout + done.stderr, done.returncode)

    def _write(self, name: str, text: str) -> None:
        if name == "/dev/null":
            return
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _printed(text: str) -> Printed:
    return Printed(text, "", text, 0)


def _split(words: list[str], separator: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for word in words:
        if word == separator:
            parts.append([])
        else:
            parts[-1].append(word)
    return parts


def python_output(block: Block, blocks: tuple[Block, ...]) -> Block | None:
    """The block that shows what a python block prints, if the page gives one."""
    if not re.search(r"\bprints:?$", block.next_line):
        return None
    later = [b for b in blocks if b.line > block.line]
    return later[0] if later else None


def run_python(block: Block, blocks: tuple[Block, ...], namespace: dict[str, object], root: Path) -> list[str]:
    """Run a python block in the folder `root`, as the commands run; return
    its problems. The doctests of a page share `namespace`, as the examples of
    one doctest file do."""
    with _isolated(root):
        return _run_python(block, blocks, namespace)


def _run_python(block: Block, blocks: tuple[Block, ...], namespace: dict[str, object]) -> list[str]:
    text = "\n".join(block.lines) + "\n"
    if text.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(text, namespace, block.where, block.page, block.line)
        report = io.StringIO()
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        runner.run(test, out=report.write, clear_globs=False)
        namespace.update(test.globs)  # (a DocTest runs on a copy)
        return [report.getvalue()] if runner.failures else []
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):  # (inside the runner's streams: what the block prints alone)
        exec(compile(text, block.where, "exec"), {"__name__": "__docs__"})  # noqa: S102 - the page's own example
    shown = python_output(block, blocks)
    if shown is not None and not matches("\n".join(shown.lines), printed.getvalue()):
        return [_stale(shown.where, "the python block above it", "\n".join(shown.lines), printed.getvalue())]
    return []


def _stale(where: str, command: str, shown: str, printed: str) -> str:
    return f"{where}: `{command}` prints, today:\n{printed}\n--- the page shows:\n{shown}\n"


def slow(text: str) -> bool:
    return bool(_SLOW.search(text))


def run_page(page: str, root: Path, *, everything: bool = True) -> tuple[list[str], Workspace]:
    """Run the examples of `page` in the folder `root` (all of them, or with
    `everything` false all but the slow commands); return the problems found."""
    for folder in EXAMPLE_FOLDERS:
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, root / folder)
    for name, text in FIXTURES.get(page, {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / ".no-programs").mkdir()
    workspace = Workspace(root)
    blocks = page_blocks(page)
    shown_by_python = {id(b) for b in filter(None, (python_output(b, blocks) for b in blocks if b.kind == "python"))}
    problems: list[str] = []
    namespace: dict[str, object] = {"__name__": "__docs__"}
    previous = Path.cwd()
    os.chdir(root)
    try:
        for block in blocks:
            if block.not_run is not None or id(block) in shown_by_python:
                continue
            if block.kind == "transcript":
                problems += _run_transcript(block, workspace, everything)
            elif block.kind == "commands":
                problems += _run_commands(block, workspace, everything)
            elif block.kind == "python" and not everything and slow("\n".join(block.lines)):
                workspace.skipped += 1
            elif block.kind == "python":
                problems += run_python(block, blocks, namespace, root)
    finally:
        os.chdir(previous)
    return problems, workspace


def _run_transcript(block: Block, workspace: Workspace, everything: bool) -> list[str]:
    problems = []
    skipped = False
    for step in steps(block):
        # `echo $?` after a command left out has no exit code to show
        skipped = not everything and (slow(step.command) or (skipped and step.command == "echo $?"))
        if skipped:
            workspace.skipped += 1
            continue
        try:
            printed = workspace.run(step)
        except NotRunnable as error:
            problems.append(f"{block.page}:{step.line}: {error}")
            continue
        if not matches(step.shown, printed):
            problems.append(_stale(f"{block.page}:{step.line}", step.command, step.shown, printed))
    return problems


def _run_commands(block: Block, workspace: Workspace, everything: bool) -> list[str]:
    problems = []
    for offset, line in enumerate(block.lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not everything and slow(line):
            workspace.skipped += 1
            continue
        if not line.startswith("compat "):
            problems.append(f"{block.page}:{block.line + offset}: `{line}` is not a compat command: mark its "
                            "block <!-- not-run: REASON -->")
            continue
        try:
            workspace.run(Step(line, None, "", block.line + offset))
        except NotRunnable as error:
            problems.append(f"{block.page}:{block.line + offset}: {error}")
            continue
        if workspace.code not in (0, 1):
            problems.append(f"{block.where}: `{line}` exits {workspace.code}")
    return problems


# -- the tests ---------------------------------------------------------------


def _assert_current(page: str, problems: list[str]) -> None:
    assert not problems, (f"{len(problems)} example(s) of {page} differ from what compat prints today; "
                          f"`python tests/test_docs.py {page}` prints them all\n\n" + "\n".join(problems))


@pytest.mark.parametrize("page", PAGES)
def test_the_examples_of_the_page_print_what_it_shows(page, tmp_path):
    problems, _ = run_page(page, tmp_path, everything=False)
    _assert_current(page, problems)


def _has_slow_examples(page: str) -> bool:
    return any(block.kind is not None and block.not_run is None and slow("\n".join(block.lines))
               for block in page_blocks(page))


@pytest.mark.slow
@pytest.mark.parametrize("page", [page for page in PAGES if _has_slow_examples(page)])
def test_the_slow_examples_of_the_page_print_what_it_shows_too(page, tmp_path):
    problems, ran = run_page(page, tmp_path, everything=True)
    assert ran.skipped == 0
    _assert_current(page, problems)


def test_the_readme_shows_what_compat_prints_today():
    """The README's outputs are compared in the default run, all of them."""
    assert not _has_slow_examples("README.md")
    assert sum(block.kind == "transcript" for block in page_blocks("README.md")) >= 4


def test_the_cli_reference_is_what_the_commands_say():
    from compat.cli._reference import COMMAND, reference

    assert (ROOT / "docs" / "cli.md").read_text(encoding="utf-8") == reference(), (
        f"docs/cli.md is stale: regenerate it with `{COMMAND}`")


_SYNOPSIS = re.compile(r"^compat (?P<command>[a-z]+(?: [a-z]+)?) .*?--format (?P<choices>[a-z]+(?:\|[a-z]+)+)")


def test_every_synopsis_lists_every_format_of_its_command():
    """A synopsis (`compat check STACK... [--format text|json|...]`) names each
    format the command takes, in the order its --help gives them."""
    import click

    from compat.cli import cli

    context = click.Context(cli)
    seen = []
    for page in PAGES:
        for block in page_blocks(page):
            for line in block.lines if block.kind is None else ():
                synopsis = _SYNOPSIS.match(line)
                if synopsis is None:
                    continue
                command = cli
                for word in synopsis.group("command").split():
                    command = command.get_command(context, word) if isinstance(command, click.Group) else command
                (option,) = [param for param in command.params if "--format" in param.opts]
                assert synopsis.group("choices").split("|") == list(option.type.choices), f"{block.where}: {line}"
                seen.append(synopsis.group("command"))
    assert {"check", "matrix", "resolve", "why"} <= set(seen)


def test_the_matrix_page_shows_a_support_table_the_default_run_compares():
    """The markdown of `compat matrix` escapes what Markdown would read as
    markup: an example of it runs in the default run, not only under -m slow."""
    shown = [step for block in page_blocks("docs/matrix.md") if block.kind == "transcript" and block.not_run is None
             for step in steps(block) if "--format markdown" in step.command and not slow(step.command)]
    assert shown and any("\\>=" in step.shown and "\\<" in step.shown for step in shown)


def test_every_file_of_docs_examples_is_one_a_page_names():
    """docs/examples/ holds the files the pages name, each by the path a
    reader types at the repository's root (or stands in for a fixture)."""
    text = "\n".join((ROOT / page).read_text(encoding="utf-8") for page in PAGES)
    fixtures = {content for files in FIXTURES.values() for content in files.values()}
    for path in sorted(p for p in (ROOT / "docs" / "examples").rglob("*") if p.is_file()):
        name = path.relative_to(ROOT).as_posix()
        assert name in text or path.read_text(encoding="utf-8") in fixtures, f"{name}: no page names it"


NOT_RUN_BLOCKS = [block for page in PAGES for block in page_blocks(page) if block.not_run is not None]


@pytest.mark.parametrize("block", NOT_RUN_BLOCKS, ids=lambda block: block.where)
def test_an_example_marked_not_run_says_why(block):
    assert block.not_run, f"{block.where}: <!-- not-run: --> needs a reason"
    assert block.kind is not None, f"{block.where}: marks a block that is not an example"
    pytest.skip(f"not run: {block.not_run}")


def test_few_examples_are_not_run():
    examples = [b for page in PAGES for b in page_blocks(page) if b.kind is not None]
    assert len(NOT_RUN_BLOCKS) * 5 <= len(examples), (
        f"{len(NOT_RUN_BLOCKS)} of {len(examples)} examples are not run: "
        + ", ".join(b.where for b in NOT_RUN_BLOCKS))


_HEADING = re.compile(r"^#{1,6}\s+(?P<title>.+?)\s*$")
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")


def _anchor(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _prose(page: Path) -> list[tuple[int, str]]:
    """The lines of a page outside its fenced blocks, with their numbers."""
    lines, fence = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            lines.append((number, line))
    return lines


def test_every_link_between_the_pages_leads_to_a_page_and_a_heading():
    anchors: dict[Path, set[str]] = {}
    broken = []
    for page in PAGES:
        path = ROOT / page
        for number, line in _prose(path):
            for link in _LINK.finditer(line):
                target = link.group("target")
                if re.match(r"^[a-z]+:", target) or target.startswith("<"):
                    continue  # a URL
                name, _, anchor = target.partition("#")
                linked = (path.parent / name).resolve() if name else path
                if not linked.exists():
                    broken.append(f"{page}:{number}: {target}: no such file")
                elif anchor and linked.suffix == ".md":
                    if linked not in anchors:
                        anchors[linked] = {_anchor(m.group("title")) for _, l in _prose(linked)
                                           if (m := _HEADING.match(l))}
                    if anchor not in anchors[linked]:
                        broken.append(f"{page}:{number}: {target}: no such heading")
    assert not broken, "\n".join(broken)


def test_the_cli_reference_shows_each_option_with_its_default_choices_and_variable():
    import click

    from compat.cli._reference import reference

    @click.group()
    def tool() -> None:
        """A tool."""

    @tool.command()
    @click.argument("stack")
    @click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
                  help="How to print.")
    @click.option("--db", envvar="TOOL_DB", help="A database.")
    def show(stack: str, fmt: str, db: str | None) -> None:
        """Show STACK.

        More about it."""

    page = reference(tool)
    assert "## `compat show`\n\n```\ncompat show [OPTIONS] STACK\n```\n\nShow STACK.\n\nMore about it." in page
    assert "| `--format [text\\|json]` | How to print.  [default: text] |" in page
    assert "| `--db TEXT` | A database. [env: TOOL_DB] |" in page
    assert "| [`show`](#compat-show) | Show STACK. |" in page


# -- the matcher and the reader themselves -----------------------------------


def test_an_ellipsis_line_stands_for_any_lines_and_in_a_line_for_any_text():
    printed = "a\nb\nc\nd\n"
    assert matches("a\n…\nd", printed)
    assert matches("a\nb\n…\nc\nd", printed)
    assert matches("a\nb…\n…", printed)
    assert not matches("a\n…\nc", printed)
    assert not matches("a\nc\n…", printed)
    assert not matches("a\nb\nc", printed)
    assert matches("x … z", "x and y z\n")
    assert not matches("x … z", "x y\n")


def test_a_transcript_splits_into_commands_with_their_input_and_output():
    text = "\n".join(["```", "$ compat check - <<'TOML'", "[system]", "TOML", "out 1", "$ echo $?", "1", "```"])
    (block,) = parse("page.md", "intro\n" + text + "\n")
    assert block.kind == "transcript" and block.line == 2
    first, second = steps(block)
    assert (first.command, first.stdin, first.shown) == ("compat check -", "[system]\n", "out 1")
    assert (second.command, second.shown, second.line) == ("echo $?", "1", 7)


def test_a_marked_block_is_not_run_and_keeps_its_reason():
    (block,) = parse("page.md", "<!-- not-run: needs nvidia-smi -->\n```sh\ncompat detect\n```\n")
    assert block.not_run == "needs nvidia-smi" and block.kind == "commands"


@pytest.fixture
def run_text(tmp_path, monkeypatch):
    """Run the examples of a page of the given text; return the problems found."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)

    def run(text: str) -> list[str]:
        (tmp_path / "page.md").write_text(text, encoding="utf-8")
        page_blocks.cache_clear()
        try:
            return run_page("page.md", Path(tempfile.mkdtemp(dir=tmp_path)))[0]
        finally:
            page_blocks.cache_clear()

    return run


def test_a_stale_output_is_reported_with_its_place(run_text):
    problems = run_text("```\n$ compat --version\ncompat, version 0.0.0\n```\n")
    assert len(problems) == 1 and problems[0].startswith("page.md:2: `compat --version` prints, today:")


def test_a_command_the_tests_cannot_run_asks_for_a_marker(run_text):
    problems = run_text("```\n$ python benchmarks/matrix.py\nfast\n```\n\n```sh\ncompat db sync\n```\n")
    assert [p.split(": ", 1)[0] for p in problems] == ["page.md:2", "page.md:7"]
    assert all("<!-- not-run: REASON -->" in p for p in problems)


def test_cat_defines_a_file_the_page_shows_and_compares_one_a_command_wrote(run_text):
    assert run_text("```\n$ cat a.txt\none\n$ cat a.txt\none\n$ echo $?\n0\n```\n") == []
    problems = run_text("```\n$ echo 'two' > b.txt\n$ cat b.txt\nthree\n```\n")
    assert len(problems) == 1 and problems[0].startswith("page.md:3: `cat b.txt` prints, today:\ntwo\n")


if __name__ == "__main__":
    for name in sys.argv[1:] or PAGES:
        with tempfile.TemporaryDirectory() as folder:
            found, ran = run_page(name, Path(folder))
        print(f"{name}: {len(found)} stale, {ran.subprocesses} subprocess(es)", file=sys.stderr)
        print("\n".join(found))
