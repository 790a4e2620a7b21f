"""The ``logscan`` application: its help and ``--version``, the guard that turns errors into one line
and an exit code, and the entry point. The commands are in modules of their own, registered in
``cli/__init__.py``."""

from __future__ import annotations

import functools
import gc
import os
import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from typer.core import TyperGroup

import omlx_logscan
from omlx_logscan.errors import EXIT_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED, LogscanError, did_you_mean

F = TypeVar("F", bound=Callable[..., Any])


def _suggesting(choice: Any) -> None:
    """An enumerated option's values (typer's choice type): a mistyped one is answered with the
    closest, as every other enumerated value is (``cli/values.py``)."""
    plain = choice.get_invalid_choice_message
    names = [str(getattr(name, "value", name)) for name in choice.choices]

    def message(value: Any, ctx: Any) -> str:  # ctx: click's Context, which typer does not export
        return str(plain(value, ctx)).removesuffix(".") + did_you_mean([str(value)], names)

    choice.get_invalid_choice_message = message  # this one instance's method


class LogscanGroup(TyperGroup):
    """The app's group: usage errors as one line and a hint (not click's usage block), a mistyped
    enumerated value with the closest suggested. The options' defaults from configuration files,
    which every command reads as its ``--config`` option is processed, before its other options
    (``cli/config.py``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from omlx_logscan.cli.config import config_option

        for command in self.commands.values():
            command.params.append(config_option())
            for param in command.params:
                if param.type.name == "choice":
                    _suggesting(param.type)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        run = functools.partial(
            super().main, args, prog_name or "logscan", complete_var, windows_expand_args=windows_expand_args, **extra
        )
        if not standalone_mode:
            return run(standalone_mode=False)
        try:
            code = run(standalone_mode=False)
        except typer.TyperException as exc:  # typer's public base of its parser's (click's) exceptions
            _parser_error(exc)
        except typer.Abort:
            _say("interrupted")
            sys.exit(EXIT_INTERRUPTED)
        except LogscanError as exc:  # the configuration, read before the command's guard runs
            _say(str(exc))
            sys.exit(exc.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


def _parser_error(exc: typer.TyperException) -> NoReturn:
    """A usage error (it has a ``ctx``, maybe None): one line saying what is wrong, one saying where the
    help is; a command given no arguments: its help, as it is; any other: its one line and exit code."""
    message = exc.format_message()
    if not hasattr(exc, "ctx"):
        _say(message)
        sys.exit(exc.exit_code)
    ctx: typer.Context | None = exc.ctx
    if ctx is not None and message == ctx.get_help():  # no arguments, and the command says to show help then
        typer.echo(message, err=True, color=ctx.color)
        sys.exit(exc.exit_code)
    _say(message)
    sys.stderr.write(f"logscan: hint: see '{ctx.command_path if ctx is not None else 'logscan'} --help'\n")
    sys.exit(EXIT_INPUT)


app = typer.Typer(
    cls=LogscanGroup,
    name="logscan",
    help=(
        "Turn oMLX server logs into incident timelines: GPU faults, the driver's penalty box, "
        "dead-engine windows, and what the log can and cannot show.\n\n"
        "PATH may be a log file (server.log, a rotated server.log.YYYY-MM-DD, crash.log, the app's or "
        "Homebrew's omlx.log capture; gzip, bzip2, xz or zstd data, whatever its name), a folder of them, "
        "or - for stdin.\n\n"
        "Without PATH a command reads stdin when it is a pipe or a file, else <base>/logs/.\n\n"
        "Exit codes: 0 ok (watch: also when stopped by Ctrl-C or SIGTERM); 1 findings (check only, "
        "--fail-on-empty included); 2 input or usage error; 3 dead engine (watch --exit-on-dead); "
        "70 internal error; 130 interrupted (Ctrl-C in a batch command)."
    ),
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,  # plain help and plain usage errors: no boxes, nothing read as markup
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"logscan {omlx_logscan.__version__}")
        from omlx_logscan.parsing.native import scanner_name

        typer.echo(f"scanner: {scanner_name()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Global options."""


def _say(message: str) -> None:
    sys.stderr.write(f"logscan: error: {message}\n")


def _fail(message: str, code: int) -> NoReturn:
    _say(message)
    raise typer.Exit(code)


def guarded(func: F) -> F:
    """Turn user mistakes into one-line errors and internal bugs into a pointer to --debug."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise
        except LogscanError as exc:
            _fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", EXIT_INTERRUPTED)
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(0) from None
        except Exception as exc:
            if kwargs.get("debug"):
                raise
            _fail(
                f"internal error ({type(exc).__name__}: {exc}); rerun with --debug for the traceback",
                EXIT_INTERNAL,
            )
        return None

    return wrapper  # type: ignore[return-value]


# polars' allocator keeps one arena per thread and holds on to freed memory for seconds; one
# shared arena that hands freed pages back within a quarter second keeps a gigabyte scan about
# 150 MB smaller at the same speed, and its peak nearly flat in the size of the log. Set before
# polars loads (commands import it lazily); a user's own setting wins.
ALLOCATOR_SETTINGS = ("_RJEM_MALLOC_CONF", "narenas:1,dirty_decay_ms:250,muzzy_decay_ms:0")


# numpy does whole-column sums and comparisons here, never linear algebra: the BLAS thread pool it
# starts on import would only spin on the cores the scan uses. A user's own setting wins.
BLAS_SETTINGS = ("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    """Console-script entry point."""
    os.environ.setdefault(*ALLOCATOR_SETTINGS)
    os.environ.setdefault(*BLAS_SETTINGS)
    # A one-shot run makes few reference cycles and exits within seconds: Python's cycle collector
    # would only walk the objects of polars' import and of the analysis again and again.
    gc.disable()
    try:
        app()
    except SystemExit as exc:
        if isinstance(exc.code, int | None):
            _leave(exc.code or 0)
        raise
    except KeyboardInterrupt:  # Ctrl-C before a command's own guard runs (while loading, say)
        _say("interrupted")
        raise SystemExit(EXIT_INTERRUPTED) from None
    except Exception as exc:  # a bug outside any command's own guard
        if "--debug" in sys.argv[1:] or os.environ.get("LOGSCAN_DEBUG"):
            raise
        sys.stderr.write(f"logscan: error: internal error ({type(exc).__name__}: {exc})\n")
        raise SystemExit(EXIT_INTERNAL) from None


def _leave(code: int) -> None:
    """Exit once the output is out, without tearing the interpreter down: freeing a big scan's
    objects one by one and unloading polars takes a tenth of a second that nobody waits for."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe or stream: let the normal exit report it
        return
    os._exit(code)
