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
    """A data file for reading (`-`: stdin; gzip recognised by its magic bytes, on stdin too)."""
    if path == STDIO:
        stdin = sys.stdin.buffer
        if hasattr(stdin, "peek") and stdin.peek(2)[:2] == b"\x1f\x8b":
            return gzip.GzipFile(fileobj=stdin, mode="rb")  # type: ignore[return-value]
        return stdin
    try:
        if os.path.isdir(path):
            raise InputError("is a directory", path)
        f = open(path, "rb")
        if f.peek(2)[:2] != b"\x1f\x8b":  # peek: a pipe (/dev/fd/63 of a process substitution) cannot seek back
            return f
        if not f.seekable():
            return gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
        f.close()
        return gzip.open(path, "rb")  # type: ignore[return-value]
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror or e}", path) from None


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
        try:
            sys.stdout.fileno()  # a closed stdout (svmstruct.cli) raises its OutputError here
        except OutputError:
            raise
        except (AttributeError, OSError, ValueError):  # not a real file (a test runner's buffer): writable
            pass
        return
    target = os.path.realpath(path)
    if os.path.isdir(target):
        raise OutputError("is a directory", path)
    if path.endswith(os.sep):  # `learn data newdir/`: a directory was meant, and there is none
        raise OutputError("cannot write: Not a directory", path)
    if os.path.exists(target) and not _is_regular(target):
        if not os.access(target, os.W_OK):
            raise OutputError("cannot write: permission denied", path)
        return
    directory = os.path.dirname(target) or "."
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write: no directory {os.path.dirname(path) or '.'}", path)
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputError("cannot write: permission denied", path)


def same_file(output: str, other: str, other_is_input: bool = True) -> bool:
    """OUTPUT and OTHER are one regular file (the same path, a hard link or a symlink to it, or the file the
    standard input or output is redirected from or to: `-`), or two spellings of one path that does not exist
    yet. Devices and FIFOs are not files an output could destroy: never the same."""
    if output == STDIO and other == STDIO:
        return False
    try:
        first = os.fstat(1) if output == STDIO else os.stat(output)
        second = os.fstat(0 if other_is_input else 1) if other == STDIO else os.stat(other)
    except OSError:
        return STDIO not in (output, other) and os.path.realpath(output) == os.path.realpath(other)
    return stat.S_ISREG(first.st_mode) and (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def check_distinct(outputs: list, inputs: list) -> None:
    """Refuse, before anything is read or written, an output that is one of the command's inputs or another
    of its outputs (lists of (what it is, path); None paths are absent): UsageError naming both."""
    from svmstruct.errors import UsageError

    outputs = [(name, path) for name, path in outputs if path is not None]
    inputs = [(name, path) for name, path in inputs if path is not None]
    for i, (out_name, out) in enumerate(outputs):
        for kind, others in (("input", inputs), ("output", outputs[i + 1:])):
            for other_name, other in others:
                if same_file(out, other, kind == "input"):
                    raise UsageError(f"{out_name} '{out}' is the same file as {other_name} '{other}': refusing to "
                                     f"overwrite an {kind}")


def check_regular_or_absent(path: str, what: str) -> None:
    """A file the command will create, replace and remove (learn's checkpoint) must be a regular file or not
    exist: never a device, FIFO, directory or symlink, which removing or replacing would destroy (UsageError)."""
    from svmstruct.errors import UsageError

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as e:
        raise UsageError(f"{what} '{path}': {e.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = ("a symlink" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode) else "a FIFO"
                if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")
        raise UsageError(f"{what} '{path}' is {kind}: it must be a regular file or a new path")


def remove_regular(path: str) -> None:
    """Remove path if it is (still) a regular file; anything else is left alone."""
    try:
        if stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
    except OSError:
        pass


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
            _keep_mode_and_owner(f.fileno(), path, shown)
        os.replace(tmp, path)
    except OSError as e:
        _remove(tmp)
        raise OutputError(f"cannot write: {e.strerror}", shown) from None
    except BaseException:
        _remove(tmp)
        raise


def _keep_mode_and_owner(fd: int, path: str, shown: str) -> None:
    """The new file of PATH gets the mode and owner of the file it replaces (as cp and editors keep them), or the
    usual mode (mkstemp creates 0600) for a new one. A file of another user is not replaced unless its owner can
    be kept (root): OutputError."""
    try:
        old = os.stat(path)
    except FileNotFoundError:
        os.fchmod(fd, 0o666 & ~_umask())
        return
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
    if old.st_uid != os.geteuid():
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            raise OutputError(f"is a file of user {old.st_uid}: not replaced by one of user {os.geteuid()} (remove "
                              "it first, or write elsewhere)", shown) from None
    elif old.st_gid != os.getegid():
        try:
            os.fchown(fd, -1, old.st_gid)
        except PermissionError:  # a group this user is not in: the file takes the user's
            pass


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
