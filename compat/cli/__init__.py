"""The command line. It maps flags to the pieces; the work is elsewhere.

One module a family of commands: `stack` (check), `resolve` (resolve, why), `db`."""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import click

from .. import __version__
from ..errors import CompatError

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT = 0, 1, 2
EXIT_INCOMPLETE = 4  # db sync: some package kept its old snapshot (docs/reliability.md)


# A group given no command raises this usage error (click 8.2 on) to show its help.
_NO_ARGS: tuple[type[Exception], ...] = tuple(
    e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e is not None)


class Seconds(click.FloatRange):
    """A positive, finite number of seconds: a range test alone lets "nan"
    through (every comparison with it is false), and "inf" waits forever."""

    name = "number"

    def __init__(self, minimum: float = 0) -> None:
        super().__init__(min=minimum, min_open=not minimum)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return number


class _OutputClosed(Exception):
    """The reader of standard output went away (``compat check x | head``)."""


def _echo(message: str = "", **kwargs: object) -> None:
    """click.echo to standard output; a closed pipe is not turned into exit 1."""
    try:
        click.echo(message, **kwargs)  # type: ignore[arg-type]
    except BrokenPipeError:
        raise _OutputClosed from None
    except OSError as exc:  # a full disk under a redirection: say which file it was
        raise CompatError(f"cannot write standard output ({exc.strerror or exc})") from None


def _deliver(text: str, output: str | None, summary: str | None = "", color: bool | None = None) -> None:
    """`text` written to `output` (atomically: a reader never sees half of
    it), saying so on standard error with `summary` (None: silently); or,
    without `output`, printed."""
    if not output or output == "-":
        _echo(text, nl=False, color=color)
        return
    from .._files import write_output

    try:
        write_output(output, text)
    except OSError as exc:
        if exc.filename:  # the system's own error (a permission): main() says it with the path
            raise
        raise CompatError(str(exc)) from None
    if summary is not None:
        click.echo(f"wrote {output}{summary}", err=True)


def _fail(error: CompatError | str) -> NoReturn:
    if isinstance(error, CompatError):
        error = _with_path_hint(error)
    click.echo(f"compat: error: {error}", err=True)
    sys.exit(EXIT_INPUT)


def _with_path_hint(error: CompatError) -> CompatError:
    """`error`, and if it is a file that does not exist because its path was
    written as Windows writes paths, the path that does: ``examples\\h200.toml``
    as ``examples/h200.toml``, and ``examplesh200.toml`` too (what a POSIX
    shell makes of the unquoted ``examples\\h200.toml``)."""
    if error.message != "no such file" or not error.file:
        return error
    path = error.file
    if "\\" in path:
        found = path.replace("\\", "/")
        hint = f"{found} exists (write / between folders, not \\)" if os.path.isfile(found) else None
    else:
        found = _unglued(path)
        hint = None if found is None else \
            f"did you mean {found}? (a POSIX shell drops the \\ of an unquoted Windows path: write / between folders)"
    if hint is None:
        return error
    import copy

    hinted = copy.copy(error)
    hinted.message = f"{error.message}; {hint}"
    hinted.args = (hinted.message,)
    return hinted


def _unglued(path: str) -> str | None:
    """The one file that `path` names once "/" is put back between folders
    that exist (``examplesh200-vllm.toml``: ``examples/h200-vllm.toml``),
    or None (none, or more than one)."""
    found: list[str] = []

    def walk(folder: str, rest: str, depth: int) -> None:
        if depth and os.path.isfile(os.path.join(folder, rest)):
            found.append(os.path.join(folder, rest))
        if depth >= 8 or len(found) > 1:
            return
        try:
            names = os.listdir(folder or ".")
        except OSError:
            return
        for name in sorted(names):
            if len(rest) > len(name) and rest.startswith(name) and os.path.isdir(os.path.join(folder, name)):
                walk(os.path.join(folder, name), rest[len(name):], depth + 1)

    folder, rest = os.path.split(path)
    if rest:
        walk(folder, rest, 0)
    return found[0] if len(found) == 1 else None


def _isatty(stream: Any) -> bool:
    """Whether `stream` is a terminal: not one the process was started
    without (Python gives it None) nor one that is closed."""
    try:
        return stream is not None and bool(stream.isatty())
    except (ValueError, OSError):
        return False


def _use_color(stream_isatty: bool) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return stream_isatty


def _colored(choice: str, stream: Any, output: str | None = None) -> bool:
    """Whether to colour what goes to `stream` (or to the file `output`), as
    --color says: always, never, or auto: on a terminal, unless NO_COLOR is
    set; FORCE_COLOR colours elsewhere too (a file written with -o: never)."""
    if choice != "auto":
        return choice == "always"
    return not (output and output != "-") and _use_color(_isatty(stream))


def _format_option(choices: list[str], default: str, help: str | None = None) -> Callable[..., Any]:
    """-f/--format, with `choices` (the first ones are the default)."""
    return click.option("-f", "--format", "fmt", type=click.Choice(choices), default=default, show_default=True,
                        help=help)


def _output_option(what: str, how: str = "atomically") -> Callable[..., Any]:
    """-o/--output FILE: write `what` there instead of printing it."""
    return click.option("-o", "--output", type=click.Path(dir_okay=False), metavar="FILE",
                        help=f"Write {what} here ({how}) instead of printing it.")


_color_option = click.option(
    "--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
    help="Colour the text for people: always, never, or auto (on a terminal, unless NO_COLOR is set; FORCE_COLOR: "
         "elsewhere too).")


class _Commands(click.Group):
    """The commands, each family's module imported when one of its commands
    is asked for (run, or listed by --help): a check does not load the code
    of the others. A module registers its commands on `cli` when imported."""

    modules = {
        "check": "stack", "resolve": "resolve", "why": "resolve", "db": "db", "detect": "detect", "graph": "graph",
        "matrix": "matrix", "upgrade": "upgrade", "diff": "upgrade", "outdated": "upgrade",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.modules, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = self.modules.get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            importlib.import_module(f".{module}", __package__)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="compat")
@click.option("--debug", is_flag=True, expose_value=False,
              help="On an internal error (exit 3), print its traceback (anywhere on the command line; or "
                   "COMPAT_DEBUG=1).")
def cli() -> None:
    """Check AI-inference deployment stacks against the constraints of their
    packages, hardware and options before an upgrade."""


_db_path_option = click.option(
    "--db",
    "db_path",
    type=click.Path(file_okay=False),
    envvar="COMPAT_DB",
    help="A whole constraint database folder (default: the bundled one, with the user data folder's snapshots "
         "over it).",
)
_overlay_option = click.option(
    "--db-overlay",
    "db_overlay",
    type=click.Path(exists=True, file_okay=False),
    metavar="DIR",
    help="A folder of your own facts laid over the database (default: COMPAT_DB_OVERLAY; docs/database.md, Layers).",
)


def _db_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--db and --db-overlay. The overlay is not handed to the command: it holds
    while the command runs (knowledge/layers.py), for every Database.load in it."""

    @functools.wraps(command)
    def run(*args: Any, db_overlay: str | None = None, **kwargs: Any) -> Any:
        from ..knowledge.layers import overlay_chosen

        with overlay_chosen(db_overlay):
            return command(*args, **kwargs)

    return _db_path_option(_overlay_option(run))


EXIT_INTERNAL = 3


def main(argv: list[str] | None = None) -> None:
    """Run the command line; exit 0 (no conflict), 1 (conflict), 2 (input
    compat cannot use), 3 (compat itself failed: a bug) or, for `db sync`
    only, 4 (some package kept its old snapshot).

    Exit 1 means a conflict and nothing else, so nothing else may exit 1:
    not an interruption, a usage error, nor an unexpected exception, which
    prints one line (the traceback only with --debug or COMPAT_DEBUG=1).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("COMPAT_DEBUG", "") not in ("", "0")
    args = [a for a in args if a != "--debug"]
    try:
        code = cli.main(args=args, prog_name="compat", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except _NO_ARGS as exc:  # `compat` or `compat db` alone: the help, as before any command
        exc.show()
        sys.exit(EXIT_INPUT)
    except click.UsageError as exc:  # a bad option, argument or value: input compat cannot use, said in one line
        command = exc.ctx.command_path if exc.ctx is not None else "compat"
        _fail(f"{' '.join(exc.format_message().split())} ({command} --help says more)")
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_INPUT)
    except (click.Abort, KeyboardInterrupt):
        click.echo("compat: interrupted", err=True)
        sys.exit(130)
    except (_OutputClosed, BrokenPipeError):  # the reader went away (| head): not compat's failure, not a conflict
        _quiet_stdout()
        sys.exit(141)
    except CompatError as exc:
        _fail(exc)
    except OSError as exc:  # a file the user named cannot be written (or read): their machine's answer, not a bug
        name = exc.filename if isinstance(exc.filename, str) else None
        if name and os.path.basename(name).startswith("."):  # the temporary file of an atomic write
            _fail(f"{os.path.dirname(name) or '.'}: cannot write a file there ({exc.strerror or exc})")
        _fail(f"{name or 'a file'}: {exc.strerror or exc}")
    except Exception as exc:  # noqa: BLE001 - the one place that turns a bug into exit 3
        if debug:
            import traceback

            traceback.print_exc()
        summary = f"{type(exc).__name__}: {exc}".splitlines()[0][:300] if str(exc) else type(exc).__name__
        # No address: compat names none it does not own. What a report needs is said instead.
        how = "the traceback above" if debug else \
            "the traceback of the same command run with --debug (or COMPAT_DEBUG=1)"
        click.echo(f"compat: internal error ({summary}); this is a bug in compat: to report it, send {how} "
                   "and the input files it read", err=True)
        sys.exit(EXIT_INTERNAL)
    sys.exit(code if isinstance(code, int) else EXIT_OK)  # --help and --version return their code


_ENDING = False  # set by `run`: the process ends with the command


def collector_back(was_enabled: bool) -> None:
    """Turn the cyclic garbage collector back on after a command that turned
    it off, where it was on: in a caller's process that goes on (`main`
    called from Python, a test), not in one that ends with the command
    (`run`), where turning it on would walk every object of the run once
    more just before the process ends."""
    if was_enabled and not _ENDING:
        import gc

        gc.enable()


def run() -> NoReturn:
    """`main` in a process that ends with it: the console script's and
    ``python -m compat``'s (through compat._script, which imports this
    module with the collector off).

    Once `main` is done and the output flushed, the process ends at once
    (os._exit). The interpreter's own shutdown would collect garbage once
    more, walking every object the run made (after a check, tens of
    thousands, kept with the collector off), then free each object and tear
    down each module: a few percent of a check's time (measured: 2 to 3 ms
    of about 100), spent on memory the end of the process frees anyway. compat registers no exit handler, and every
    file it writes is closed before `main` returns. (Not in `main`, which
    the tests call in a process that goes on.)
    """
    global _ENDING
    _ENDING = True
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if code is not None and not isinstance(code, int):
            raise  # a message: the interpreter prints it (main never exits so)
        _end(code or 0)
    _end(EXIT_OK)


def _end(code: int) -> NoReturn:
    """Flush standard output and error, and end the process with `code`
    (a stream the process was started without is None: nothing to flush)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (| head), as main says it
        _quiet_stdout()
        code = 141
    except (OSError, ValueError) as exc:  # a full disk under a redirection: the output is not whole
        click.echo(f"compat: error: cannot write standard output ({getattr(exc, 'strerror', None) or exc})", err=True)
        code = EXIT_INPUT
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
