"""User-facing errors: the CLI prints each as one line on stderr and exits with its code (docs/commands.md,
"Errors and exit codes"). Anything else escaping the CLI is a bug."""


class SvmStructError(Exception):
    """Base of the errors reported as ``svmstruct: error: [path:line: ]message``."""

    exit_code = 1

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)


class InputError(SvmStructError, ValueError):
    """A problem with the user's input (data, model, qrels, predictions, options), exit 1; a ValueError
    to Python callers."""

    exit_code = 1


class UsageError(InputError):
    """An option that is malformed, out of range or does not apply (the CLI exits 2)."""

    exit_code = 2


class NumericalError(SvmStructError):
    """Training cannot proceed in floating point (overflow, a QP the solver cannot solve), exit 3."""

    exit_code = 3


class OutputError(SvmStructError):
    """An output could not be written (disk full, permissions, closed stream), exit 4."""

    exit_code = 4
