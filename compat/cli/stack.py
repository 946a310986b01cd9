"""`compat check`: the command that judges stacks (`resolve` and `why` are in resolve.py)."""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, NoReturn

import click

from ..errors import CompatError
from . import (_color_option, _colored, _db_option, _deliver, _fail, _format_option, _output_option, _with_path_hint,
               cli, collector_back)

if TYPE_CHECKING:
    from ..engine.findings import Report
    from ..knowledge.database import Database
    from ..stack import Stack

# --format NAME: the module of compat/formats that writes it.
_FORMATS = {"text": "text", "json": "json", "sarif": "sarif", "github": "github", "markdown": "markdown_report"}


@cli.command()
@click.argument("stacks", metavar="[STACK]...", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-r", "--requirement", "--requirements", "requirements", multiple=True, type=click.Path(dir_okay=False),
              metavar="FILE", help="Packages from a requirements (or constraints) file, as pip reads it (repeatable; - "
                                   "for stdin).")
@click.option("--pyproject", type=click.Path(dir_okay=False), metavar="FILE",
              help="Packages from a pyproject.toml: [project] dependencies, and the --extra and --group asked for.")
@click.option("--pylock", type=click.Path(dir_okay=False), metavar="FILE",
              help="Packages from a PEP 751 lock file (pylock.toml), as selected for the stack's machine.")
@click.option("--extra", "extras", multiple=True, metavar="NAME",
              help="An extra of the --pyproject project or of the --pylock lock (repeatable).")
@click.option("--group", "groups", multiple=True, metavar="NAME",
              help="A dependency group of the --pyproject project or of the --pylock lock (repeatable).")
@click.option("--env", "env", is_flag=True,
              help="Check the installed environment: its distributions against their own metadata (as pip check), "
                   "and as packages of the stack.")
@click.option("--python", "python", metavar="PATH",
              help="The interpreter whose Python, platform and glibc (and, with --env, distributions) are read "
                   "(default: the one running compat).")
@_format_option(list(_FORMATS), "text", help="text for people; json; sarif for code scanning; github for workflow "
                "annotations; markdown for a pull-request comment or job summary.")
@_output_option("the report", "atomically; the exit code is the same")
@_color_option
@click.option("-q", "--quiet", is_flag=True, help="Show only what fails the stack (its errors; with --strict, its "
              "warnings too) and the verdict.")
@click.option("--min-severity", type=click.Choice(["error", "warning", "note"]), default="note", show_default=True,
              help="Leave out the findings below this severity (the exit code does not change).")
@click.option("--strict", is_flag=True,
              help="Warnings fail the check too: exit 1 on a warning as on an error. Not pip-audit's -S/--strict, "
                   "which fails on packages it could not audit (the nearest here: --require-known).")
@click.option("--require-known", is_flag=True,
              help="A release or build the database does not hold is an error, not a warning.")
@click.option("--only-binary", is_flag=True,
              help="A release with no wheel for the machine is an error, not a build from its sdist (pip's "
                   "--only-binary :all:; [compat] only_binary = true in a stack file).")
@click.option("--ignore", "ignore", multiple=True, metavar="ID", help="Suppress a finding by ID (repeatable; * and ? allowed).")
@click.option("--max-rounds", type=click.IntRange(min=1), default=2000, show_default=True, help="The resolver's budget.")
@_db_option
def check(stacks: tuple[str, ...], requirements: tuple[str, ...], pyproject: str | None, pylock: str | None,
          extras: tuple[str, ...], groups: tuple[str, ...], env: bool, python: str | None, fmt: str,
          output: str | None, color: str, quiet: bool, min_severity: str, strict: bool, require_known: bool,
          only_binary: bool, ignore: tuple[str, ...], max_rounds: int, db_path: str | None) -> None:
    """Check each STACK (a stack.toml; - reads standard input), with the
    packages of -r/--requirement, --pyproject, --pylock and --env merged
    into each (docs/inputs.md): exit 0 if every stack works, 1 if one does
    not, 2 if an input is bad."""
    import gc

    # A check's objects all live until it ends: the cyclic collector would
    # only walk them (about a tenth of a short run's time). It is on again
    # when the check ends in a caller's process that goes on (compat.cli.main
    # from Python, a test), not when the process ends with it.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _check(stacks, requirements, pyproject, pylock, extras, groups, env, python, fmt, output, color, quiet,
               min_severity, strict, require_known, only_binary, ignore, max_rounds, db_path)
    finally:
        collector_back(was_enabled)


def _check(stacks: tuple[str, ...], requirements: tuple[str, ...], pyproject: str | None, pylock: str | None,
           extras: tuple[str, ...], groups: tuple[str, ...], env: bool, python: str | None, fmt: str,
           output: str | None, color: str, quiet: bool, min_severity: str, strict: bool, require_known: bool,
           only_binary: bool, ignore: tuple[str, ...], max_rounds: int, db_path: str | None) -> None:
    if python is not None and not python.strip():
        raise click.UsageError("--python: give an interpreter (a path, or a name on PATH), not an empty string")
    if not (stacks or requirements or pyproject or pylock or env):
        raise click.UsageError("give a stack file (STACK), or the packages to check: -r/--requirement, --pyproject, "
                               "--pylock or --env")
    # One stack file alone (the common case in CI) needs none of the readers
    # of other inputs: it is read as `compat.load_stack` reads it.
    alone = len(stacks) == 1 and not (requirements or pyproject or pylock or env or extras or groups)
    pending = None
    if not alone:
        from ..knowledge.inputs import Inputs, start_environment

        inputs = Inputs(stacks, requirements, pyproject, pylock, extras, groups, env, python)
        pending = start_environment(inputs)  # the interpreter lists its distributions while compat loads
    from ..engine.check import check_stack
    from ..knowledge.database import Database
    from ..knowledge.binding import load_stack
    from ..sources.stack import check_ignore

    try:
        db = Database.load(db_path)
        if alone:
            loaded = [load_stack(stacks[0], db)]
        else:
            from ..knowledge.inputs import load_inputs

            loaded = load_inputs(inputs, db, pending)
        ignore = check_ignore(ignore)
        if only_binary:
            loaded = [stack.replace(only_binary=True) for stack in loaded]
        reports = [check_stack(stack, db, strict=strict or None, ignore=ignore, max_rounds=max_rounds,
                               require_known=require_known or None) for stack in loaded]
        if env:
            from ..engine.installed import with_installed

            reports = [with_installed(report, ignore) for report in reports]
    except CompatError as exc:
        _fail_as(fmt, exc, output)
    colored = fmt == "text" and _colored(color, sys.stdout, output)
    text = _render_all(reports, fmt, quiet, "info" if min_severity == "note" else min_severity, colored)
    errors, warnings = (sum(len(getattr(r, kind)) for r in reports) for kind in ("errors", "warnings"))
    _deliver(text, output, f": {len(reports)} stack{'s' if len(reports) > 1 else ''}, {errors} error(s), "
                           f"{warnings} warning(s)", color=colored)
    sys.exit(max(report.exit_code for report in reports))  # the worst stack's


def _render_all(reports: list[Report], fmt: str, quiet: bool, min_severity: str, color: bool) -> str:
    """The reports of several stacks, in the order given: the text,
    markdown and github forms one after another; JSON an array of the
    report objects (one stack: the object alone); SARIF one log with one
    run for them all (code scanning refuses several runs of one tool in a
    file)."""
    if len(reports) == 1 or fmt not in ("json", "sarif"):
        parts = []
        for number, report in enumerate(reports):
            if number and fmt in ("text", "markdown"):
                parts.append("\n")
            if quiet and fmt == "text" and len(reports) > 1:
                parts.append(f"{report.stack.path or '<stack>'}:\n")  # --quiet leaves out the heading that says which
            parts.append(_render(report, fmt, quiet, min_severity, color))
        return "".join(parts)
    import json

    module = importlib.import_module(f"..formats.{_FORMATS[fmt]}", __package__)
    if fmt == "sarif":
        failing = "warning" if any(r.strict for r in reports) else "error"
        return str(module.render(reports, min_severity=failing if quiet else min_severity))
    logs = [json.loads(module.render(r, min_severity=r.failing if quiet else min_severity)) for r in reports]
    return json.dumps(logs, indent=2) + "\n"


def _render(report: Report, fmt: str, quiet: bool, min_severity: str, color: bool) -> str:
    """`report` in `fmt`. --quiet keeps the errors and the verdict: the
    text and markdown reports drop the rest, the others show errors alone."""
    module = importlib.import_module(f"..formats.{_FORMATS[fmt]}", __package__)
    if fmt == "text":
        return str(module.render(report, quiet=quiet, min_severity=min_severity, color=color))
    if fmt == "markdown":
        return str(module.render(report, quiet=quiet, min_severity=min_severity))
    return str(module.render(report, min_severity=report.failing if quiet else min_severity))


def _stack_overlay(database: Database, stack: Stack | None) -> Database:
    """`database` with the overlay the stack's [compat] overlay names (check_stack lays it itself)."""
    if stack is None or stack.overlay is None:
        return database
    from ..knowledge.layers import with_overlay

    return with_overlay(database, stack.overlay)


def _fail_as(fmt: str, error: CompatError, output: str | None = None) -> NoReturn:
    """Exit 2 with the one line on standard error; a format other than text
    also prints its form of the error on standard output, or writes it to
    `output` (JSON an error object, SARIF a failed run, github an
    annotation on the line), so that the next step of a pipeline has
    something to read."""
    error = _with_path_hint(error)
    if fmt != "text":
        module = importlib.import_module(f"..formats.{_FORMATS[fmt]}", __package__)
        _deliver(module.render_error(error), output, None)  # the error's one line says the rest
    _fail(error)
