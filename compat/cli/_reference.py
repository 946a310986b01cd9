"""The command-line reference, docs/cli.md, written from the click commands
themselves, so that it says what `compat COMMAND --help` says and cannot
drift from it (tests/test_docs.py fails when the page is stale).

    python -m compat.cli._reference > docs/cli.md
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator

import click

COMMAND = "python -m compat.cli._reference > docs/cli.md"

_INTRO = f"""\
# Command-line reference

<!-- Generated from the click commands by `{COMMAND}`: edit the commands' help, not this page. -->

Every command of `compat`, with its usage, what it does and its options, as
`compat COMMAND --help` prints them. The exit codes mean the same for every
command: 0 when it did what it was asked (for a check: no conflict), 1 for a
conflict (or, for `db lint`, a problem in the database) and nothing else, 2
for input compat cannot use, 3 when compat itself failed, and for `db sync`
alone 4 when some package kept its old snapshot
([reliability.md](reliability.md#exit-codes)). `-h` is `--help` everywhere,
`-f` is `--format` and `-o` is `--output` wherever a command has them.
The first table lists the commands; `compat db` has commands of its own.
"""


def reference(group: click.Group | None = None) -> str:
    """The Markdown page of every command under `group` (default: `compat`), depth first, by name."""
    if group is None:
        from . import cli as group
    root = click.Context(group, info_name="compat", **group.context_settings)
    return _INTRO + "".join(_section(command, ctx) for command, ctx in _walk(group, root))


def _walk(command: click.Command, ctx: click.Context) -> Iterator[tuple[click.Command, click.Context]]:
    """Each command with its context, the group before what it holds."""
    yield command, ctx
    for name, sub in _subcommands(command, ctx):
        yield from _walk(sub, click.Context(sub, info_name=name, parent=ctx))


def _subcommands(command: click.Command, ctx: click.Context) -> list[tuple[str, click.Command]]:
    """The commands a group holds that --help lists, by name (none for a command)."""
    if not isinstance(command, click.Group):
        return []
    found = ((name, command.get_command(ctx, name)) for name in sorted(command.list_commands(ctx)))
    return [(name, sub) for name, sub in found if sub is not None and not sub.hidden]


def _anchor(ctx: click.Context) -> str:
    """GitHub's anchor of a heading `` `compat db show` ``."""
    return ctx.command_path.replace(" ", "-")


def _help(command: click.Command) -> str:
    """The command's help as click shows it: up to a form feed, without click's \\b markers."""
    text = inspect.cleandoc(command.help or "").split("\f", 1)[0]
    return "\n".join(line for line in text.splitlines() if line.strip() != "\b").strip()


def _summary(command: click.Command) -> str:
    """The first sentence of the help, unshortened."""
    first = _help(command).split("\n\n", 1)[0].replace("\n", " ")
    return first.split(". ", 1)[0].rstrip(".") + "."


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _section(command: click.Command, ctx: click.Context) -> str:
    """A command's heading, usage, help, the commands it holds and its options."""
    usage = f"{ctx.command_path} {' '.join(command.collect_usage_pieces(ctx))}".rstrip()
    lines = [f"\n## `{ctx.command_path}`\n", "```", usage, "```", "", _help(command), ""]
    subcommands = _subcommands(command, ctx)
    if subcommands:
        lines += ["| command | what it does |", "| --- | --- |"]
        lines += [f"| [`{name}`](#{_anchor(ctx)}-{name}) | {_cell(_summary(sub))} |" for name, sub in subcommands]
        lines.append("")
    options = [_option(param, ctx) for param in command.get_params(ctx) if isinstance(param, click.Option)]
    options = [row for row in options if row]
    if options:
        lines += ["| option | meaning |", "| --- | --- |", *options, ""]
    return "\n".join(lines)


def _option(param: click.Option, ctx: click.Context) -> str | None:
    """One row of the options table: the flags with their value, and the help
    with what click adds to it (default, range, required) and the environment
    variable the option reads."""
    if param.hidden:
        return None
    record = param.get_help_record(ctx)
    if record is None:
        return None
    flags, help_text = record
    if param.envvar and isinstance(param.envvar, str):
        help_text = f"{help_text} [env: {param.envvar}]".strip()
    return f"| `{_cell(flags)}` | {_cell(help_text)} |"


def main() -> None:
    sys.stdout.write(reference())


if __name__ == "__main__":
    main()
