"""Opening inputs and writing outputs, so that nothing is lost or half-written.

`-` is stdin or stdout. Outputs to regular files are written atomically (a temporary file in the same
directory, then a rename): an interrupted or failed run leaves no partial file and no temporary file.
An output that is not a regular file (a device such as /dev/null, a FIFO, /dev/stdout) is written in
place; a symlink is followed and its target replaced. Write errors (disk full, permissions) raise
OutputError; stdout is written with its return count checked, so an unbuffered pipe is never silently
truncated.
"""
from __future__ import annotations

import gzip
import os
import stat
import sys
import tempfile
from typing import BinaryIO

from svmstruct.errors import InputError, OutputError

STDIO = "-"


def open_binary(path: str) -> BinaryIO:
    """A data file for reading (`-`: stdin; gzip recognised by its magic bytes)."""
    if path == STDIO:
        return sys.stdin.buffer
    try:
        if os.path.isdir(path):
            raise InputError("is a directory", path)
        f = open(path, "rb")
        if f.read(2) == b"\x1f\x8b":
            f.close()
            return gzip.open(path, "rb")  # type: ignore[return-value]
        f.seek(0)
        return f
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path) from None


def open_text(path: str, what: str = "file"):
    """A text file for reading (`-`: stdin), undecodable bytes replaced."""
    if path == STDIO:
        return sys.stdin
    try:
        if os.path.isdir(path):
            raise InputError("is a directory", path)
        return open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"cannot open {what}: {e.strerror}", path) from None


def display_name(path: str) -> str:
    return "<stdin>" if path == STDIO else path


def check_writable(path: str) -> None:
    """Fail now, before any work, if `path` cannot be written (OutputError)."""
    if path == STDIO:
        return
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise OutputError("is a directory", path)
    if os.path.exists(target) and not _is_regular(target):
        if not os.access(target, os.W_OK):
            raise OutputError("cannot write: permission denied", path)
        return
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write: no directory {os.path.dirname(path) or '.'}", path)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError("cannot write: permission denied", path)


def write_output(path: str, text: str) -> None:
    """Write text to `path` (`-`: stdout) without ever leaving a partial file (see the module docstring)."""
    if path == STDIO:
        write_stdout(text)
        return
    target = os.path.realpath(path)
    if os.path.exists(target) and not _is_regular(target):
        try:
            with open(target, "w", encoding="utf-8", errors="surrogateescape") as f:
                f.write(text)
        except OSError as e:
            raise OutputError(f"cannot write: {e.strerror}", path) from None
        return
    atomic_write(target, text, shown=path)


def atomic_write(path: str, text: str, shown: str | None = None) -> None:
    """Write text to the regular file `path` through a temporary file in its directory and a rename."""
    shown = shown or path
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".svmstruct-", dir=directory)
    except OSError as e:
        raise OutputError(f"cannot write: {e.strerror}", shown) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp creates 0600; give the file the usual permissions
        os.replace(tmp, path)
    except OSError as e:
        _remove(tmp)
        raise OutputError(f"cannot write: {e.strerror}", shown) from None
    except BaseException:
        _remove(tmp)
        raise


def write_stdout(text: str) -> None:
    """Write all of text to stdout, checking what each write took (BrokenPipeError propagates)."""
    stream = sys.stdout
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (e.g. click's test runner)
        try:
            stream.write(text)
            stream.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(f"cannot write: {e.strerror}", "<stdout>") from None
        return
    try:
        stream.flush()
        view = memoryview(text.encode("utf-8", errors="surrogateescape"))
        while len(view):
            view = view[os.write(fd, view):]
    except BrokenPipeError:
        raise
    except OSError as e:
        raise OutputError(f"cannot write: {e.strerror}", "<stdout>") from None


def _is_regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
