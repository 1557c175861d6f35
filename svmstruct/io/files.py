"""Opening inputs and writing outputs, so that nothing is lost or half-written.

`-` is stdin or stdout; /dev/stdout, /dev/stderr and /dev/fd/N are written through their descriptors, at their
offsets (`classify t m /dev/stdout >> all.pred` appends). Outputs to regular files are written atomically (an
unnamed file in the same directory, linked in place when complete): an interrupted or failed run leaves no
partial file and no temporary file. An output that is not a regular file (a device such as /dev/null, a FIFO) is
written in place. A symlink is followed and its target replaced, where the kernel's fs.protected_symlinks would
follow it (not another user's link in a sticky world-writable directory such as /tmp). In such a directory an
existing entry of another user (a file, FIFO or device that is neither the writer's nor the directory owner's) is
never written, replaced or given our data, root's outputs included: the kernel's fs.protected_regular and
protected_fifos rule (may_create_in_sticky), whatever the sysctls say. Write errors (disk full, permissions) raise
OutputError; every write's count is checked, so an unbuffered pipe is never silently truncated.
"""
from __future__ import annotations

import errno
import gzip
import os
import stat
import sys
from typing import BinaryIO

from svmstruct.errors import InputError, OutputError

STDIO = "-"


def open_binary(path: str, what: str = "") -> BinaryIO:
    """A data file for reading (`-`: stdin; gzip recognised by its magic bytes, on stdin too); WHAT names it in the
    message of a file that cannot be opened (InputError)."""
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
        raise InputError(f"cannot open{' ' + what if what else ''}: {e.strerror or e}", path) from None


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
    if path == STDIO or descriptor_of(path) is not None:
        number = 1 if path == STDIO else descriptor_of(path)
        try:
            if path == STDIO:
                sys.stdout.fileno()  # a closed stdout (svmstruct.cli) raises its OutputError here
            else:
                os.fstat(number)  # type: ignore[arg-type]
        except OutputError:
            raise
        except OSError as e:
            raise OutputError(f"cannot write: {e.strerror}", path) from None
        except (AttributeError, ValueError):  # not a real file (a test runner's buffer): writable
            pass
        return
    if path.endswith(os.sep):  # `learn data newdir/`: a directory was meant, and there is none
        if os.path.isdir(path):
            raise OutputError("is a directory", path)
        raise OutputError("cannot write: Not a directory", path)
    directory, name = resolve(path)
    try:
        try:
            info = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise OutputError("is a directory", path)
        if info is not None:
            _check_sticky_entry(info, os.fstat(directory), path)
        if info is not None and not stat.S_ISREG(info.st_mode):
            if not os.access(name, os.W_OK, dir_fd=directory):
                raise OutputError("cannot write: permission denied", path)
            return
        if not os.access(".", os.W_OK | os.X_OK, dir_fd=directory):
            raise OutputError("cannot write: permission denied", path)
    finally:
        os.close(directory)


def descriptor_of(path: str) -> int | None:
    """The descriptor an output path names (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), or None: such an
    output is written through the descriptor, at its offset (`>> all.pred` appends), as a shell writes to it."""
    names = {"/dev/stdout": 1, "/dev/stderr": 2}
    if path in names:
        return names[path]
    for prefix in ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/"):
        rest = path[len(prefix):] if path.startswith(prefix) else ""
        if rest.isdigit() and rest.isascii():
            return int(rest)
    return None


MAX_SYMLINKS = 40  # as the kernel's path walk (ELOOP beyond)


def resolve(path: str) -> tuple:
    """(a descriptor of the directory an output's entry is in, the entry's name), the symlinks on the way followed
    only where the kernel's fs.protected_symlinks would follow them: a link in a sticky world-writable directory
    (/tmp) whose owner is neither this user nor the directory's is refused (OutputError). Every step goes through
    the descriptor of the one before, so that nothing renamed meanwhile redirects the output; the caller closes the
    descriptor."""
    directory = os.open("/" if path.startswith("/") else ".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    pending = [part for part in path.split("/") if part not in ("", ".")]
    links = 0
    try:
        while pending:
            part = pending.pop(0)
            try:
                info = os.stat(part, dir_fd=directory, follow_symlinks=False)
            except FileNotFoundError:
                if not pending:
                    return directory, part
                raise OutputError(f"cannot write: no directory {os.path.dirname(path) or '.'}", path) from None
            if stat.S_ISLNK(info.st_mode):
                _check_link(info, os.fstat(directory), path)
                links += 1
                if links > MAX_SYMLINKS:
                    raise OutputError("cannot write: too many levels of symbolic links", path)
                target = os.readlink(part, dir_fd=directory)
                if target.startswith("/"):
                    directory = _step(directory, "/")
                pending[:0] = [p for p in target.split("/") if p not in ("", ".")] or ([] if pending else ["."])
                continue
            if not pending and not stat.S_ISDIR(info.st_mode):
                return directory, part
            if not stat.S_ISDIR(info.st_mode):
                raise OutputError(f"cannot write: no directory {os.path.dirname(path) or '.'}", path)
            if not pending:
                return directory, part
            directory = _step(directory, part)
        return directory, "."
    except OSError as e:
        os.close(directory)
        raise OutputError(f"cannot write: {e.strerror}", path) from None
    except BaseException:
        os.close(directory)
        raise


def _step(directory: int, name: str) -> int:
    """The descriptor of directory NAME in DIRECTORY (or of /); the old one is closed once the new one is open."""
    found = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                    dir_fd=None if name == "/" else directory)
    os.close(directory)
    return found


def _check_link(link: os.stat_result, directory: os.stat_result, path: str) -> None:
    """The kernel's fs.protected_symlinks rule (may_follow_link), whatever the sysctl says: a symlink in a sticky
    world-writable directory is followed only by its owner, or when the directory's owner owns it too."""
    shared = directory.st_mode & stat.S_ISVTX and directory.st_mode & stat.S_IWOTH
    if shared and link.st_uid != os.geteuid() and link.st_uid != directory.st_uid:
        raise OutputError(f"cannot write: it is a symlink of user {link.st_uid} in a shared sticky directory, which "
                          "is not followed (as the kernel's fs.protected_symlinks does not)", path)


def _check_sticky_entry(entry: os.stat_result, directory: os.stat_result, path: str) -> None:
    """The kernel's fs.protected_regular and fs.protected_fifos rule (may_create_in_sticky), for every user and
    whatever the sysctls say: in a sticky world-writable directory an existing entry (a file, FIFO, device or link)
    that is neither this user's nor the directory owner's is not written: its owner planted it to read what we
    write, or to make us write into a file of theirs."""
    shared = directory.st_mode & stat.S_ISVTX and directory.st_mode & stat.S_IWOTH
    if shared and entry.st_uid != os.geteuid() and entry.st_uid != directory.st_uid:
        kind = ("FIFO" if stat.S_ISFIFO(entry.st_mode) else "device" if stat.S_ISCHR(entry.st_mode)
                or stat.S_ISBLK(entry.st_mode) else "symlink" if stat.S_ISLNK(entry.st_mode) else "file")
        raise OutputError(f"cannot write: it is a {kind} of user {entry.st_uid} in a shared sticky directory, which "
                          "is not written (as the kernel's fs.protected_regular and protected_fifos do not); remove "
                          "it or write elsewhere", path)


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
    number = descriptor_of(path)
    if number is not None:
        if number in (1, 2):
            _flush(sys.stdout if number == 1 else sys.stderr)
        write_descriptor(number, text, path)
        return
    directory, name = resolve(path)
    try:
        try:
            info = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise OutputError("is a directory", path)
        if info is not None:
            _check_sticky_entry(info, os.fstat(directory), path)
        if info is not None and not stat.S_ISREG(info.st_mode):  # a device, a FIFO: written in place
            try:
                fd = os.open(name, os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)
            except OSError as e:
                raise OutputError(f"cannot write: {e.strerror}", path) from None
            try:  # what was opened, not what was looked at: an entry swapped meanwhile is judged too
                opened = os.fstat(fd)
                _check_sticky_entry(opened, os.fstat(directory), path)
                if stat.S_ISREG(opened.st_mode):
                    raise OutputError("cannot write: it became a regular file while it was opened", path)
            except BaseException:
                os.close(fd)
                raise
            write_descriptor(fd, text, path, close=True)
            return
        _replace(directory, name, lambda f: f.write(text.encode("utf-8", errors="surrogateescape")), path)
    finally:
        os.close(directory)


def atomic_write(path: str, text: str) -> None:
    """Write text to the file `path` through an unnamed file in its directory, linked in place at the end."""
    atomic_save(path, lambda f: f.write(text.encode("utf-8", errors="surrogateescape")))


def atomic_save(path: str, write, what: str = "") -> None:
    """write(binary file) into a new file that replaces `path` once complete (OutputError when it cannot: `what`
    names the output in the message, e.g. 'the checkpoint')."""
    directory, name = resolve(path)
    try:
        _replace(directory, name, write, path, what)
    finally:
        os.close(directory)


def _replace(directory: int, name: str, write, shown: str, what: str = "") -> None:
    """write(f) into a file of DIRECTORY that becomes NAME when complete. The file has no name while it is written
    (O_TMPFILE): an interrupted run, even by SIGKILL, leaves nothing, but in the instant between the file's link
    under a temporary name and its rename; where the file system cannot (O_TMPFILE unsupported) it has a temporary
    name (.svmstruct-*) from the start, removed on every error or signal that can be caught."""
    cannot = f"cannot write{' ' + what if what else ''}"
    temporary = f".svmstruct-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        fd, named = _new_file(directory, temporary)
    except OSError as e:
        raise OutputError(f"{cannot}: {e.strerror}", shown) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
            _keep_mode_and_owner(f.fileno(), directory, name, shown)
            if not named:
                os.link(f"/proc/self/fd/{f.fileno()}", temporary, dst_dir_fd=directory, follow_symlinks=True)
                named = True
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
    except OSError as e:
        if named:
            _remove(temporary, directory)
        raise OutputError(f"{cannot}: {e.strerror}", shown) from None
    except BaseException:
        if named:
            _remove(temporary, directory)
        raise


def _new_file(directory: int, temporary: str) -> tuple:
    """(a descriptor of a new file in DIRECTORY, whether it has a name): unnamed (O_TMPFILE) where the system
    allows it, else named TEMPORARY."""
    unnamed = getattr(os, "O_TMPFILE", 0)
    if unnamed and os.path.exists("/proc/self/fd"):
        try:
            return os.open(".", unnamed | os.O_WRONLY | os.O_CLOEXEC, 0o600, dir_fd=directory), False
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(temporary, flags, 0o600, dir_fd=directory), True


def _keep_mode_and_owner(fd: int, directory: int, name: str, shown: str) -> None:
    """The new file of NAME gets the mode and owner of the regular file it replaces (as cp and editors keep them),
    or the usual mode (the new file is created 0600) for a new one or one that replaces anything else (a link
    planted since the path was resolved lends neither). A file of another user is not replaced unless its owner can
    be kept (root), nor in a sticky world-writable directory (_check_sticky_entry): OutputError."""
    try:
        old = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        old = None
    if old is not None:
        _check_sticky_entry(old, os.fstat(directory), shown)
    if old is None or not stat.S_ISREG(old.st_mode):
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


def write_descriptor(fd: int, text: str, shown: str, close: bool = False) -> None:
    """Write all of text to descriptor FD at its offset (OutputError when it cannot; BrokenPipeError propagates)."""
    try:
        view = memoryview(text.encode("utf-8", errors="surrogateescape"))
        while len(view):
            view = view[os.write(fd, view):]
    except BrokenPipeError:
        raise
    except OSError as e:
        raise OutputError(f"cannot write: {e.strerror}", shown) from None
    finally:
        if close:
            os.close(fd)


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
    _flush(stream)
    write_descriptor(fd, text, "<stdout>")


def _flush(stream) -> None:
    """What Python buffered for STREAM goes first (BrokenPipeError propagates)."""
    try:
        stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError, AttributeError):
        pass


def _remove(path: str, directory: int | None = None) -> None:
    try:
        os.unlink(path, dir_fd=directory)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
