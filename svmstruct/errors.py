"""The one exception type for user errors: the CLI prints it as a single line and exits non-zero."""


class InputError(Exception):
    """A problem with the user's input, reported as ``path:line: message`` (or ``path: message``)."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None):
        self.message = message
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
