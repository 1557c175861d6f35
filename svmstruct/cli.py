"""The command line interface: the command group (each command, in svmstruct.commands, built when it runs),
signals, the standard streams, and errors. Every user error is one line on stderr and an exit code
(docs/commands.md, "Errors and exit codes"); nothing else may escape as a traceback."""
from __future__ import annotations

import os
import signal
import sys
import warnings

import click
import numpy as np

from svmstruct import __version__
from svmstruct.commands.params import printable, say
from svmstruct.errors import InputError, SvmStructError, UsageError


class Terminated(Exception):
    """SIGTERM or SIGHUP, turned into an exception so that temporary files are removed on the way out."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


# the signals that end a run cleanly (exit 128 + the signal's number) besides SIGINT (KeyboardInterrupt, 130)
ENDING_SIGNALS: dict[int, str] = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}



class _Commands(click.Group):
    """The command group, each command built when it is used: `eval` or `classify` then never imports the
    loss registry (numba, scipy) that `learn`'s generated options need."""

    def __init__(self, factories: dict, **kwargs):
        super().__init__(**kwargs)
        self.factories = factories

    def list_commands(self, ctx) -> list:
        return list(self.factories)

    def get_command(self, ctx, name):
        if name not in self.commands and name in self.factories:
            self.add_command(self.factories[name](), name)
        return self.commands.get(name)



def build_cli(extra: dict | None = None) -> click.Group:
    """The command group, with `learn`'s loss options generated from the registry as it is now; EXTRA: more
    commands, by name, each built when it is used (the entry point adds the worker's, svmstruct.worker.command)."""

    @click.group(cls=_Commands, factories={"learn": _learn, "classify": _classify, "eval": _eval, "qrels": _qrels,
                                           "div-baseline": _div_baseline, "losses": _losses, **(extra or {})},
                 context_settings={"help_option_names": ["-h", "--help"]})
    @click.version_option(version=__version__, prog_name="svmstruct")
    def cli():
        """Structural SVMs that optimise the measure you are judged by (1-slack cutting plane, OSQP, numba)."""

    return cli



def _learn() -> click.Command:
    from svmstruct.commands import learn

    return learn.command()


def _classify() -> click.Command:
    from svmstruct.commands import classify

    return classify.command()


def _eval() -> click.Command:
    from svmstruct.commands import evaluate

    return evaluate.command()


def _qrels() -> click.Command:
    from svmstruct.commands import evaluate

    return evaluate.qrels()


def _div_baseline() -> click.Command:
    from svmstruct.commands import diversity

    return diversity.command()


def _losses() -> click.Command:
    from svmstruct.commands import losses

    return losses.command()


def main(argv=None, extra: dict | None = None) -> None:
    """Run a command (EXTRA: build_cli's): user errors become one line on stderr and a non-zero exit, never a
    traceback."""
    code = 0
    previous = {number: signal.signal(number, _raise_terminated) for number in ENDING_SIGNALS
                if signal.getsignal(number) != signal.SIG_IGN}  # inherited as ignored (nohup): stays ignored
    streams = _StandardStreams()
    args = sys.argv[1:] if argv is None else [str(a) for a in argv]
    try:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):  # the commands check what they compute and
                warnings.simplefilter("ignore", RuntimeWarning)  # say it in one line: no numpy warnings besides
                code = _run(build_cli(extra), args)
            sys.stdout.flush()  # a full device fails here, not at the interpreter's exit
        except SystemError as e:  # a signal handler raised inside a numba kernel: its dispatcher wraps it
            raise (_interruption(e) or e) from None
    except UsageError as e:
        code = _error(str(e), e.exit_code)
    except SvmStructError as e:
        code = _error(str(e), e.exit_code)
    except click.exceptions.Abort:
        code = _error("interrupted", 130)
    except click.UsageError as e:
        hint = f" (see 'svmstruct {e.ctx.info_name} --help')" if e.ctx is not None and e.ctx.parent is not None \
            else " (see 'svmstruct --help')"
        code = _error(f"{e.format_message()}{hint}", 2)
    except click.ClickException as e:
        code = _error(e.format_message(), e.exit_code)
    except KeyboardInterrupt:
        code = _error("interrupted", 130)
    except Terminated as e:
        code = _error(ENDING_SIGNALS.get(e.signum, "terminated"), 128 + e.signum)
    except BrokenPipeError:
        _silence_stdout()
        code = 141
    except MemoryError:
        code = _error("out of memory", 1)
    except RuntimeError as e:
        if "cannot cache function" not in str(e):  # numba: no writable place for its cache (compute.numba_cache)
            raise
        code = _error("no writable folder for numba's compiled kernels (beside the package, ~/.cache/numba or the "
                      "temporary folder): set NUMBA_CACHE_DIR to one", 1)
    except OSError as e:  # a write to stdout that no OutputError covers (--help to a full device)
        _silence_stdout()
        code = _error(f"cannot write to the standard output: {e.strerror or e}", 4)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        streams.restore()
    if code:
        sys.exit(code)


def _interruption(error: BaseException) -> BaseException | None:
    """The KeyboardInterrupt or Terminated that a SystemError (numba's 'returned a result with an exception
    set') wraps, if any."""
    seen = 0
    cause = error.__cause__ or error.__context__
    while cause is not None and seen < 10:
        if isinstance(cause, (KeyboardInterrupt, Terminated)):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


class _Closed:
    """sys.stdin / sys.stdout when the process started with that descriptor closed (`<&-`, `>&-`): using it
    is one clear error (InputError / OutputError) instead of an AttributeError on None."""

    def __init__(self, error: Exception):
        self.error = error

    def _fail(self, *args, **kwargs):
        raise self.error

    write = read = readline = readlines = flush = fileno = __iter__ = __next__ = __enter__ = _fail

    def __exit__(self, *exc) -> None:
        return None

    @property
    def buffer(self):
        raise self.error

    def isatty(self) -> bool:
        return False


class _StandardStreams:
    """The process's standard streams made safe for the run: a closed descriptor 0-2 is opened on /dev/null
    (so that no file the run opens takes its number) and its Python stream fails clearly when used;
    restore() puts back what was there."""

    def __init__(self):
        from svmstruct.errors import OutputError

        self.saved = (sys.stdin, sys.stdout, sys.stderr)
        for fd in (0, 1, 2):
            try:
                os.fstat(fd)
            except OSError:
                try:
                    null = os.open(os.devnull, os.O_RDWR)
                    if null != fd:
                        os.dup2(null, fd)
                        os.close(null)
                except OSError:
                    pass
        if sys.stdin is None:
            sys.stdin = _Closed(InputError("the standard input is closed", "<stdin>"))
        if sys.stdout is None:
            sys.stdout = _Closed(OutputError("the standard output is closed", "<stdout>"))
        if sys.stderr is None:
            sys.stderr = open(os.devnull, "w")

    def restore(self) -> None:
        sys.stdin, sys.stdout, sys.stderr = self.saved


def _run(group: click.Group, args: list) -> int:
    """Parse and run a command. click's own `main` is not used: it turns a broken pipe into exit 1 and
    prints a blank line on Ctrl-C; here both reach main's handlers."""
    try:
        with group.make_context("svmstruct", args) as ctx:
            group.invoke(ctx)
    except click.exceptions.Exit as e:  # --help, --version
        return e.exit_code
    except click.exceptions.NoArgsIsHelpError as e:  # `svmstruct` alone: the help, and a usage error's code
        click.echo(e.ctx.get_help())
        return 2
    return 0


def _error(message: str, code: int) -> int:
    say(f"svmstruct: error: {printable(message)}")
    return code


def _raise_terminated(signum, frame):
    raise Terminated(signum)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so that the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass

