"""The resident worker's server and the children that run its commands (the caller's side, the protocol and
what is checked: svmstruct.worker.resident).

The server imports the package, listens on NAME.sock in the socket directory (descriptor 3, from the caller that
started it), loads the cached numba kernels between commands the way numba's dispatcher loads them, and forks a
child per command. The child closes everything of the server and of other callers, takes the caller's request
(checked: key, rights, I/O priority), places the caller's descriptors at their numbers, answers `P`, and runs
the command once the caller says `G`. The server exits after IDLE_SECONDS without work, on SIGTERM, when its
package files or dependencies changed, and when it could no longer fork safely (numba's threading layer or a
second thread started in it); it removes its socket, lock and log as it goes.
"""
from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import sys
import time
from typing import Any

from svmstruct.worker import preload, resident

PLACE = 3  # the socket directory's descriptor in the server (resident._start_server)
DEPENDENCIES = ("numpy", "scipy", "numba", "llvmlite", "click", "osqp")
_REFUSED = 3  # a child's exit status when it did not take the command (the caller runs it itself)


def main(command) -> None:
    """The server process (resident._start_server): its settings on standard input, the directory as
    descriptor 3; command(ARGS) runs one command (the entry point hands over the command line interface's)."""
    raw = b""
    while part := os.read(0, 1 << 16):
        raw += part
    name, expected, *path = (os.fsdecode(f) for f in raw.split(b"\0"))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.path[:] = path
    os.chdir("/")
    Server(name, expected, command).serve()


class Server:
    def __init__(self, name: str, expected: str, command):
        self.name, self.expected, self.command = name, expected, command
        self.children: dict = {}  # pid -> the server's copy of the connection of the caller it serves
        self.stopping: list = []
        self.log: Any = None

    def serve(self) -> None:
        """Lock, check, preload, listen, serve until idle; never returns."""
        lock = os.open(self.name + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600,
                       dir_fd=PLACE)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os._exit(0)  # another server of this key runs or is loading
        self.lock = lock
        log = os.open(self.name + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW,
                      0o600, dir_fd=PLACE)
        os.dup2(log, 2)  # what the interpreter or numba print goes to the log
        self.log = open(log, "w", buffering=1)
        sys.stderr = self.log
        os.ftruncate(lock, 0)
        os.write(lock, f"{os.getpid()}\n{resident.PACKAGE}\n"
                       f"{sys.executable}\n{time.time():.0f}\n".encode())
        signal.signal(signal.SIGTERM, lambda signum, frame: self.stopping.append(signum))
        self.say(f"pid {os.getpid()}: loading")
        started = time.perf_counter()
        try:
            if resident.key() != self.expected:
                raise RuntimeError("this process's key differs from its caller's")
            self.key = self.expected
            to_load = preload.kernels()  # loaded between commands, after the socket is up
            _io_priority(0)  # ctypes loaded here, not in every child
            self.modules = loaded_files()
            self.installation = installation(self.modules)
            self.say(f"imported in {time.perf_counter() - started:.2f} s")
            import gc

            gc.freeze()  # the loaded objects stay out of the children's collections: no copy-on-write of their pages
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            temporary = f"{self.name}.{os.getpid()}.tmp"
            listener.bind(resident.at(PLACE, temporary))
            listener.listen(64)
            os.rename(temporary, self.name + ".sock", src_dir_fd=PLACE, dst_dir_fd=PLACE)
        except Exception as e:  # callers run their commands themselves, and start no server for RETRY_SECONDS
            import traceback

            traceback.print_exc(file=self.log)
            self.say(f"failed: {e!r}")  # the log stays: it says why, and keeps callers from retrying at once
            os.unlink(self.name + ".lock", dir_fd=PLACE)
            os._exit(1)
        self.mine = os.stat(self.name + ".sock", dir_fd=PLACE).st_ino
        clean = False
        try:
            self._loop(listener, to_load, started)
            clean = True
        finally:
            self._leave(clean)

    def say(self, line: str) -> None:
        try:
            self.log.write(line + "\n")
        except (OSError, ValueError):
            pass

    def _loop(self, listener, to_load: list, started: float) -> None:
        wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_write)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)
        self.private = [listener.fileno(), wake_read, wake_write, self.lock, self.log.fileno(), PLACE]
        poller = select.poll()
        poller.register(listener.fileno(), select.POLLIN)
        poller.register(wake_read, select.POLLIN)
        idle = resident.idle_seconds()
        idle = resident.IDLE_SECONDS if idle is None else idle  # (callers start no server with a bad one)
        last = time.monotonic()
        while not self.stopping:
            wait = 0.0 if to_load else None if self.children else max(0.0, last + idle - time.monotonic())
            ready = dict(poller.poll(None if wait is None else wait * 1000))
            if not ready and to_load:
                preload.load(*to_load.pop(0))
                if not to_load:
                    self.say(f"kernels loaded at {time.perf_counter() - started:.2f} s")
                continue
            if wake_read in ready:
                while _drain(wake_read):
                    pass
            for fd, events in ready.items():  # a caller went away: a stopped child must run to see it and end
                pid = self._child_of(fd)
                if pid is not None and events & (select.POLLRDHUP | select.POLLHUP | select.POLLERR):
                    poller.unregister(fd)
                    _signal_child(pid, signal.SIGCONT)
            if self._reap(poller):
                last = time.monotonic()
            if listener.fileno() in ready:
                if not self._accept(listener, poller):
                    break
            if not self.children and (time.monotonic() - last >= idle or not self._still_mine()):
                break

    def _accept(self, listener, poller) -> bool:
        """Take a connection: fork its child, or refuse it. False: this server must stop (stale, or no longer
        safe to fork)."""
        connection, _ = listener.accept()
        if _peer(connection)[1] != os.geteuid():  # not this user (the directory keeps others out; this also)
            connection.close()
            return True
        if installation(self.modules) != self.installation:
            self.say("stopped: the package or a dependency changed")
            connection.close()
            return False
        if not _safe_to_fork():
            self.say("stopped: numba's threading layer or another thread was started here")
            connection.close()
            return False
        try:
            pid = os.fork()
        except OSError as e:
            self.say(f"fork failed: {e!r}")
            connection.close()
            return True
        if pid == 0:
            others = [c.fileno() for c in self.children.values()]
            Child(connection, self.key, self.log.fileno(), [*self.private, *others], self.command).run()
        self.children[pid] = connection
        poller.register(connection.fileno(), select.POLLRDHUP)
        self.say(f"command {len(self.children)} running: pid {pid}")
        return True

    def _child_of(self, fd: int):
        for pid, connection in self.children.items():
            if connection.fileno() == fd:
                return pid
        return None

    def _reap(self, poller) -> bool:
        """Collect ended children; one killed by a signal: its caller is told which (X)."""
        reaped = False
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            connection = self.children.pop(pid, None)
            reaped = True
            if connection is None:
                continue
            if os.WIFSIGNALED(status):
                try:
                    connection.sendall(b"X%d\n" % os.WTERMSIG(status))
                except OSError:
                    pass
            elif os.WIFEXITED(status) and os.WEXITSTATUS(status) == _REFUSED:
                self.say(f"pid {pid}: the command was not taken (its caller runs it)")
            try:
                poller.unregister(connection.fileno())
            except KeyError:
                pass
            connection.close()
        return reaped

    def _still_mine(self) -> bool:
        try:
            return os.stat(self.name + ".sock", dir_fd=PLACE).st_ino == self.mine
        except OSError:
            return False

    def _leave(self, clean: bool) -> None:
        """Remove the socket (if still this server's), the log (unless it says why this server failed) and the
        lock, then exit without the interpreter's shutdown (numba and LLVM take ~1.5 s of CPU for nothing)."""
        self.say("exiting")
        for suffix in (".sock", ".log", ".lock") if clean else (".sock", ".lock"):
            if suffix == ".sock" and not self._still_mine():
                continue
            try:
                os.unlink(self.name + suffix, dir_fd=PLACE)
            except OSError:
                pass
        os._exit(0)


def _peer(connection) -> tuple:
    raw = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
    return tuple(int.from_bytes(raw[i:i + 4], sys.byteorder, signed=True) for i in (0, 4, 8))


def _signal_child(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except OSError:
        return False


def _safe_to_fork() -> bool:
    """One thread, and numba's threading layer not launched (a child of a process that launched its OpenMP
    layer is killed when it runs a parallel kernel)."""
    import threading

    from numba.np.ufunc import parallel

    return threading.active_count() == 1 and not parallel._is_initialized


def installation(modules: tuple = ()) -> tuple:
    """What this server's code is: every file of the package (size, modification and change times, inode), the files
    of the other MODULES it loaded (a dependency edited in place) and the metadata of its dependencies (an upgrade
    replaces them). A server whose installation changed stops."""
    package = resident.PACKAGE
    files = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(names):
            files.append((os.path.relpath(os.path.join(folder, name), package), *_stamp(os.path.join(folder, name))))
    return tuple(files), tuple(_stamp(path) for path in modules), tuple(_dependency(name) for name in DEPENDENCIES)


def _stamp(path: str) -> tuple:
    try:
        info = os.stat(path)
    except OSError:
        return ("gone",)
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def loaded_files() -> tuple:
    """The files of the modules this process has loaded from outside the package (its dependencies' code)."""
    package = resident.PACKAGE + os.sep
    found = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    return tuple(sorted(f for f in found if isinstance(f, str) and not f.startswith(package) and os.path.isfile(f)))


_METADATA: dict = {}  # dependency -> the path of its metadata file (found once)


def _dependency(name: str) -> tuple:
    if name not in _METADATA:
        from importlib import metadata

        try:
            found = [f for f in metadata.distribution(name).files or () if f.name == "METADATA"]
            _METADATA[name] = str(found[0].locate()) if found else None
        except metadata.PackageNotFoundError:
            _METADATA[name] = None
    if _METADATA[name] is None:
        return (name,)
    try:
        info = os.stat(_METADATA[name])
    except OSError:
        return (name, "gone")
    return name, info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


class Request:
    """A caller's request (resident._request): its key, working directory, umask, argv[0], the numbers of the
    descriptors it handed over, the signals it ignores and blocks, the command's arguments, its environment."""

    def __init__(self, payload: bytes):
        fields = [os.fsdecode(f) for f in payload.split(b"\0")]
        self.key, self.cwd, umask, self.argv0, numbers, ignored, blocked, count = fields[:8]
        self.umask = int(umask)
        self.descriptors = [int(n) for n in numbers.split(",")]
        self.ignored = [getattr(signal, n) for n in ignored.split(",") if n in resident.INHERITED]
        self.blocked = [int(n) for n in blocked.split(",") if n]
        self.args = fields[8:8 + int(count)]
        self.environment = dict(item.partition("=")[::2] for item in fields[8 + int(count):])


class Child:
    """A forked child: the command of one caller (module docstring). run() never returns."""

    def __init__(self, connection, key: str, log: int, inherited: list, command):
        self.connection, self.key, self.log, self.inherited = connection, key, log, inherited
        self.command = command

    def run(self) -> None:
        code = _REFUSED
        started = False
        try:
            self._reset()
            self.connection.sendall(b"H")
            request = self._receive()
            problem = self._check(request)
            if problem:
                self.note(f"refused: {problem}")
                self.connection.sendall(b"K")
                os._exit(_REFUSED)
            self._place(request.descriptors)
            self._take(request)
            self.connection.sendall(b"P")  # the kernel adds this process's credentials (the caller asked)
            if _receive_exactly(self.connection, 1) != b"G":
                os._exit(_REFUSED)
            self.connection.settimeout(None)
            os.close(self.log)  # nothing of the server from here on
            started = True
            code = _run_command(self.command, request.args, self.connection, signal.SIGTERM in request.ignored)
        except BaseException as e:
            if started:  # an error the command did not handle: its traceback, as the interpreter would print it
                import traceback

                traceback.print_exc()
                code = 1
            else:
                self.note(f"hand-over failed: {e!r}")
        finally:
            if not started:
                os._exit(_REFUSED)
            for stream in (sys.stdout, sys.stderr):  # as the interpreter flushes them at its exit
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass
            try:
                self.connection.sendall(b"S%d\n" % code)
            except OSError:
                pass
            os._exit(code)

    def note(self, line: str) -> None:
        try:
            os.write(self.log, f"pid {os.getpid()}: {line}\n".encode(errors="backslashreplace"))
        except OSError:
            pass

    def _reset(self) -> None:
        """The server's signal handling undone; its descriptors and other callers' connections closed."""
        signal.set_wakeup_fd(-1)
        for name in ("SIGCHLD", "SIGTERM", "SIGHUP", "SIGQUIT"):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in self.inherited:
            if fd != self.log:
                try:
                    os.close(fd)
                except OSError:
                    pass
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 2)  # until the caller's: nothing of this process writes to the server's log by accident
        os.close(null)
        self.connection.settimeout(2 * resident.TIMEOUT)

    def _receive(self) -> Request:
        header, fds, _, _ = socket.recv_fds(self.connection, resident._LENGTH_DIGITS, 253)
        self.received = fds
        header += _receive_exactly(self.connection, resident._LENGTH_DIGITS - len(header))
        return Request(_receive_exactly(self.connection, int(header)))

    def _check(self, request: Request) -> str | None:
        """Why this child must not run the request (None: it may): another key, other rights than this process's,
        another I/O priority, descriptors that do not match."""
        if request.key != self.key:
            return "another key"
        if len(request.descriptors) != len(self.received):
            return "descriptors missing"
        caller = _peer(self.connection)[0]
        try:
            if resident.rights(str(caller)) != resident.rights("self"):
                return "the caller's rights differ from this process's"
            if _io_priority(caller) != _io_priority(0):
                return "the caller's I/O priority differs"
        except OSError as e:
            return f"the caller cannot be checked: {e!r}"
        return None

    def _place(self, targets: list) -> None:
        """The caller's descriptors at their numbers (its 0, 1, 2, and any other it would pass to a program),
        this process's own (the connection, the log) moved out of their way first."""
        highest = max([*targets, *self.received, self.connection.fileno(), self.log]) + 1
        mine = {self.connection.fileno(), self.log, *self.received, 0, 1, 2}
        strangers = {int(fd) for fd in os.listdir("/proc/self/fd")} - mine
        if any(fd in strangers and _open(fd) for fd in targets):
            raise OSError(f"a descriptor of this process is at one of {targets}")
        self.connection = socket.socket(fileno=_move(self.connection.detach(), highest))
        self.connection.settimeout(2 * resident.TIMEOUT)  # (also makes its descriptor's blocking mode match)
        self.log = _move(self.log, highest)
        moved = [_move(fd, highest) for fd in self.received]
        for target, fd in zip(targets, moved):
            os.dup2(fd, target, inheritable=True)
            os.close(fd)

    def _take(self, request: Request) -> None:
        """The caller's working directory, umask, environment, signal dispositions and mask, argv and streams."""
        os.chdir(request.cwd)
        os.umask(request.umask)
        os.environ.clear()
        os.environ.update(request.environment)
        for number in request.ignored:
            signal.signal(number, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, request.blocked)
        sys.argv = [request.argv0, *request.args]
        _standard_streams()


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _move(fd: int, lowest: int) -> int:
    """FD duplicated to a descriptor of at least LOWEST (close-on-exec), the original closed."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)
    os.close(fd)
    return moved


def _io_priority(pid: int) -> int:
    """ioprio_get(IOPRIO_WHO_PROCESS, PID) (ionice's class and level): OSError when it cannot be read."""
    import ctypes

    value = _libc().syscall(resident.IOPRIO_SYSCALLS[os.uname().machine][0], 1, pid)
    if value < 0:
        raise OSError(ctypes.get_errno(), "ioprio_get failed")
    return value


_LIBC: list = []


def _libc():
    """The C library through ctypes (loaded once, by the server: its children need not)."""
    if not _LIBC:
        import ctypes

        _LIBC.append(ctypes.CDLL(None, use_errno=True))
    return _LIBC[0]


def _receive_exactly(connection, n: int) -> bytes:
    parts = []
    while n > 0:
        part = connection.recv(min(n, 1 << 20))
        if not part:
            raise EOFError("the caller went away")
        parts.append(part)
        n -= len(part)
    return b"".join(parts)


def _standard_streams() -> None:
    """sys.stdin, stdout and stderr over the caller's descriptors, buffered as the interpreter buffers them."""
    encoding, errors = sys.stdout.encoding, sys.stdout.errors
    sys.stdin = open(0, "r", encoding=sys.stdin.encoding, errors=sys.stdin.errors, closefd=False)
    sys.stdout = open(1, "w", encoding=encoding, errors=errors, closefd=False, buffering=-1, newline=None)
    if os.isatty(1):
        sys.stdout.reconfigure(line_buffering=True)
    sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", closefd=False)
    sys.stderr.reconfigure(line_buffering=True)


def _watch(connection, done, term_ignored: bool) -> None:
    """The caller closes the connection only once it has the status, or when it was killed: then end the run
    as SIGTERM would (temporary files removed), or as the kill did if SIGTERM is ignored here."""
    try:
        connection.recv(1)
    except OSError:
        pass
    if not done.is_set():  # the caller was killed: nothing more reaches its output or its terminal, as for its own
        null = os.open(os.devnull, os.O_WRONLY)  # process (the run still ends as SIGTERM ends it: no file left)
        for fd in (1, 2):
            os.dup2(null, fd)
        os.kill(os.getpid(), signal.SIGKILL if term_ignored else signal.SIGTERM)


def _run_command(command, args: list, connection, term_ignored: bool) -> int:
    """command(ARGS) as the interpreter would run it: its exit status; stdout flushed."""
    import threading

    done = threading.Event()
    threading.Thread(target=_watch, args=(connection, done, term_ignored), daemon=True).start()
    try:
        command(args)
        code = 0
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            code = e.code or 0
        else:
            sys.stderr.write(f"{e.code}\n")
            code = 1
    except KeyboardInterrupt:
        sys.stderr.write("svmstruct: error: interrupted\n")
        code = 130
    finally:
        done.set()
    try:
        sys.stdout.flush()
    except OSError:
        code = code or 120  # the interpreter's status when its final flush of stdout fails
    return code
