"""A resident worker that repeated `svmstruct` commands reuse, so that a batch of small runs does not pay the
start-up (the interpreter, numpy, numba and its cached kernels: ~0.3-0.5 s a process) once per command.

The first command starts a server in the background and runs in its own process as before; later commands of
the same user, installation and settings connect to the server's Unix socket and hand it their arguments,
working directory, umask, environment and standard input, output and error (the descriptors themselves,
SCM_RIGHTS). The server, which imported everything and loaded the cached kernels once, forks a child per
command (concurrent callers, no state kept between commands); the child runs the command exactly as a process
of its own would and reports the exit status. The caller forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the
child, and a child whose caller went away (killed) terminates itself. The server exits after IDLE_SECONDS
without work.

Invisible by design: the same command lines, outputs, files and exit statuses. What a caller can see: the
command's CPU time and memory are the child's, not the calling process's (`time`, `/usr/bin/time -v`).

Off (every command in its own process) when SVMSTRUCT_RESIDENT is 0, off, no or false; when the socket
directory is not private to the user; when a standard descriptor is closed; on systems without Unix sockets and
fork; whenever connecting or handing over fails before the command started. The server serves only callers of
the same key: interpreter and its options (-W, -X, -O), sys.path, the package's source files, the environment
read at import time (NUMBA_*, OMP_*, ... see _KEY_PREFIXES), niceness, CPU affinity, resource limits and cgroup
— anything that a process of its own would have set up differently.

Fork safety: numba's OpenMP threading layer kills a child forked after the parent launched it, so the server
never launches it: it loads the cached kernels that do not run in parallel (those load without the threading
layer); a child loads its parallel kernels itself on first use.
"""
from __future__ import annotations

import _socket  # not socket: the caller's side imports no more than it needs (socket and signal cost ~6 ms)
import os
import stat
import sys
import zlib

SWITCH = "SVMSTRUCT_RESIDENT"  # 0 / off / no / false: no resident worker
DIRECTORY = "SVMSTRUCT_RESIDENT_DIR"  # where the socket lives (default: $XDG_RUNTIME_DIR/svmstruct, /tmp/svmstruct-UID)
IDLE = "SVMSTRUCT_RESIDENT_IDLE"  # seconds the server waits for work before it exits
IDLE_SECONDS = 60.0
PROTOCOL = "svmstruct-resident-1"
# environment variables read when the modules load (numba's configuration, the OpenMP and BLAS runtimes, the
# interpreter, the locale, tempfile's directory): a server started under other values would behave differently
_KEY_PREFIXES = ("PYTHON", "NUMBA_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_", "MKL_", "LC_", "LANG", "TMPDIR",
                 "SVMSTRUCT_RESIDENT_")  # not the switch itself
_FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
_LENGTH_DIGITS = 10
_LONGEST_NAME = 100  # NAME.sock and NAME.PID.tmp within the 107 bytes of a Unix socket's path
_RETRY_SECONDS = 60.0  # after a server failed to start, callers wait this long before starting another


def enabled() -> bool:
    """Whether commands may go through a resident worker (see the module docstring)."""
    if os.environ.get(SWITCH, "").strip().lower() in ("0", "off", "no", "false"):
        return False
    return hasattr(_socket, "AF_UNIX") and hasattr(_socket.socket, "sendmsg") and hasattr(os, "fork")


def run(args: list) -> int | None:
    """Run `svmstruct ARGS` through the resident worker: its exit status, or None when it did not run (the
    caller runs it in this process; a server is started for the next command when none is running)."""
    if not enabled():
        return None
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        place = _directory()
        if place is None:
            return None
        key = _key()
        name = os.path.join(place, f"w-{zlib.crc32(key.encode()):08x}")
        if len(os.fsencode(name)) > _LONGEST_NAME:  # a Unix socket's path has at most 107 bytes
            return None
        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    except (OSError, ValueError):
        return None
    try:
        try:
            connection.connect(name + ".sock")
        except OSError:
            _start_server(name, key)
            return None
        return _hand_over(connection, key, args)
    finally:
        connection.close()


def _directory() -> str | None:
    """The user's private socket directory (created 0700), or None when it is not private."""
    chosen = os.environ.get(DIRECTORY)
    if chosen:
        place = chosen
    elif os.environ.get("XDG_RUNTIME_DIR"):
        place = os.path.join(os.environ["XDG_RUNTIME_DIR"], "svmstruct")
    else:
        place = os.path.join("/tmp", f"svmstruct-{os.getuid()}")
    try:
        os.mkdir(place, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(place)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return place


def _key() -> str:
    """What a server must share with its callers (module docstring), as one string."""
    package = os.path.dirname(os.path.abspath(__file__))
    sources = []
    for folder in (package, os.path.join(package, "losses"), os.path.join(package, "diversity")):
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.endswith(".py"):
                    info = entry.stat()
                    sources.append(f"{entry.name}:{info.st_mtime_ns}:{info.st_size}")
    environment = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(_KEY_PREFIXES))
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = []
    import resource

    limits = [resource.getrlimit(getattr(resource, n)) for n in dir(resource) if n.startswith("RLIMIT_")]
    try:
        with open("/proc/self/cgroup") as f:
            cgroup = f.read()
    except OSError:
        cgroup = ""
    return repr((PROTOCOL, sys.executable, sys.version, sys.flags, sys.warnoptions, sys._xoptions, sys.path, package,
                 sorted(sources), environment, os.getuid(), os.nice(0), affinity, limits, cgroup))


def _hand_over(connection, key: str, args: list) -> int | None:
    """Send the command and wait for its exit status, forwarding signals to the child that runs it."""
    import _signal

    replies = _Lines(connection)
    try:
        env = [f"{k}={v}" for k, v in os.environ.items()]
        umask = os.umask(0)
        os.umask(umask)
        fields = [key, os.getcwd(), str(umask), sys.argv[0], str(len(args)), *args, *env]
        payload = b"\0".join(os.fsencode(f) for f in fields)
        descriptors = b"".join(fd.to_bytes(4, sys.byteorder) for fd in (0, 1, 2))  # C ints (array: +2 ms)
        connection.sendmsg([b"%0*d" % (_LENGTH_DIGITS, len(payload))],
                           [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, descriptors)])
        connection.sendall(payload)
        first = replies.readline()
    except OSError:
        return None
    if not first.startswith(b"P"):  # refused (another key) or gone before the command started
        return None
    child = int(first[1:])

    def forward(signum, frame):
        try:
            os.kill(child, signum)
        except OSError:
            pass

    for name in _FORWARDED:
        _signal.signal(getattr(_signal, name), forward)
    try:
        status = replies.readline()
    except OSError:
        status = b""
    if not status.startswith(b"S"):
        sys.stderr.write("svmstruct: error: the resident worker's process was lost (set SVMSTRUCT_RESIDENT=0 "
                         "to run every command in its own process)\n")
        return 1
    return int(status[1:])


class _Lines:
    """Lines read from a socket (a _socket.socket has no makefile)."""

    def __init__(self, connection):
        self.connection, self.pending = connection, b""

    def readline(self) -> bytes:
        while b"\n" not in self.pending:
            part = self.connection.recv(64)
            if not part:
                return b""
            self.pending += part
        line, _, self.pending = self.pending.partition(b"\n")
        return line


def _start_server(name: str, key: str) -> None:
    """Start the server detached (its own session, no terminal, standard descriptors on /dev/null), unless one
    holds the lock (it is loading)."""
    import fcntl

    try:
        lock = os.open(name + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return
    os.close(lock)
    if _failed_recently(name):
        return
    code = ("import sys; sys.path[:] = sys.argv[3:]; from svmstruct import resident; "
            "resident.serve(sys.argv[1], sys.argv[2])")
    argv = [sys.executable, "-c", code, name, key, *sys.path]
    pid = os.fork()
    if pid == 0:  # the intermediate process: a new session, then the server, which init adopts
        try:
            os.setsid()
            if os.fork() == 0:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
                os.closerange(3, 65536)
                os.chdir("/")
                os.execv(sys.executable, argv)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _failed_recently(name: str) -> bool:
    """The last server of NAME failed to start less than _RETRY_SECONDS ago (its log says why)."""
    import time

    try:
        with open(name + ".log", "rb") as f:
            return time.time() - os.fstat(f.fileno()).st_mtime < _RETRY_SECONDS and b"\nfailed: " in f.read()
    except OSError:
        return False


def serve(name: str, key: str) -> None:
    """The server: preload, listen on NAME.sock, fork a child per command, exit when idle or on SIGTERM."""
    import fcntl
    import select
    import signal
    import socket
    import time

    lock = os.open(name + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another server of this key runs or is loading
    log = open(name + ".log", "w", buffering=1)  # the lock holder's: its first line names its pid (stop_servers)
    os.dup2(log.fileno(), 2)
    sys.stderr = log
    stopping = []  # SIGTERM (stop_servers): leave the loop below at its next turn, not from inside a kernel load
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))
    log.write(f"pid {os.getpid()}: loading\n")
    if _key() != key:  # the caller runs with interpreter options (-W, -X, -O...) that a plain server lacks
        log.write("failed: this process's key differs from its caller's (interpreter options?)\n")
        return
    started = time.perf_counter()
    try:
        to_load = _preload()  # loaded between commands, after the socket is up: the children of the first ones
        log.write(f"imported in {time.perf_counter() - started:.2f} s\n")  # load what they miss themselves
        import gc

        gc.freeze()  # the loaded objects stay out of the children's collections: no copy-on-write of their pages
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        temporary = f"{name}.{os.getpid()}.tmp"
        listener.bind(temporary)
        listener.listen(64)
        os.rename(temporary, name + ".sock")
    except Exception as e:  # callers run their commands themselves, and start no server for _RETRY_SECONDS
        import traceback

        traceback.print_exc(file=log)
        log.write(f"failed: {e!r}\n")
        return
    mine = os.stat(name + ".sock").st_ino
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    idle = float(os.environ.get(IDLE, IDLE_SECONDS))
    children: dict = {}
    last = time.monotonic()
    try:
        while not stopping:
            timeout = 0.0 if to_load else None if children else max(0.0, last + idle - time.monotonic())
            ready, _, _ = select.select([listener.fileno(), wake_read], [], [], timeout)
            if not ready and to_load:
                _load(*to_load.pop(0))
                if not to_load:
                    log.write(f"kernels loaded at {time.perf_counter() - started:.2f} s\n")
                continue
            if wake_read in ready:
                while _drain(wake_read):
                    pass
            if _reap(children):
                last = time.monotonic()
            if listener.fileno() in ready:
                if not _safe_to_fork():
                    log.write("stopped: numba's threading layer or another thread was started here\n")
                    break
                connection, _ = listener.accept()
                pid = os.fork()
                if pid == 0:
                    _child(connection, key, [listener.fileno(), wake_read, wake_write, lock])
                children[pid] = connection
                log.write(f"command {len(children)} running: pid {pid}\n")
            if not children and (time.monotonic() - last >= idle or not _still_mine(name, mine)):
                break
    finally:
        if _still_mine(name, mine):
            os.unlink(name + ".sock")
        log.write("exiting\n")
    os._exit(0)  # the interpreter's own shutdown (numba, LLVM) takes ~1.5 s of CPU for nothing


def stop_servers(place: str | None = None) -> list:
    """Stop the servers of a socket directory (default: this user's): the pids signalled."""
    import fcntl
    import glob
    import re
    import signal

    place = place or _directory()
    stopped = []
    for lock_path in glob.glob(os.path.join(place or "/nonexistent", "w-*.lock")):
        lock = os.open(lock_path, os.O_RDWR)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            continue  # no server holds it
        except OSError:
            pass
        finally:
            os.close(lock)
        try:
            with open(lock_path[:-len(".lock")] + ".log") as f:
                found = re.match(r"pid (\d+):", f.readline())
        except OSError:
            found = None
        if found:
            os.kill(int(found.group(1)), signal.SIGTERM)
            stopped.append(int(found.group(1)))
    return stopped


def _safe_to_fork() -> bool:
    """One thread, and numba's threading layer not launched (a child of a process that launched its OpenMP
    layer is killed when it runs a parallel kernel)."""
    import threading

    from numba.np.ufunc import parallel

    return threading.active_count() == 1 and not parallel._is_initialized


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except OSError:
        return False


def _still_mine(name: str, inode: int) -> bool:
    try:
        return os.stat(name + ".sock").st_ino == inode
    except OSError:
        return False


def _reap(children: dict) -> bool:
    """Collect ended children; one killed by a signal reports 128 + its number to its caller."""
    reaped = False
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        connection = children.pop(pid, None)
        reaped = True
        if connection is None:
            continue
        if os.WIFSIGNALED(status):
            try:
                connection.sendall(b"S%d\n" % (128 + os.WTERMSIG(status)))
            except OSError:
                pass
        connection.close()
    return reaped


def _preload() -> list:
    """Import what the commands use (every input then takes the numba paths: the numpy twins of small inputs
    exist to avoid loading numba, which is loaded here); the cached kernel signatures to load, as
    (kernel, signature) in _FIRST's order: the one-thread kernels only (a parallel one would launch the
    threading layer)."""
    import importlib
    import pkgutil

    import svmstruct

    for found in pkgutil.walk_packages(svmstruct.__path__, "svmstruct."):
        if found.name.rsplit(".", 1)[1] not in _NOT_PRELOADED:
            importlib.import_module(found.name)
    from svmstruct import small

    small.use_numba_paths()
    from numba.core.registry import CPUDispatcher

    from svmstruct.threads import ParallelKernel

    kernels: list = []
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("svmstruct"):
            continue
        for kernel in list(vars(module).values()):
            if isinstance(kernel, ParallelKernel) and kernel.__module__ == module_name:
                kernels.append((module_name, kernel.one_thread))
            elif isinstance(kernel, CPUDispatcher) and kernel.__module__ == module_name \
                    and not kernel.targetoptions.get("parallel"):
                kernels.append((module_name, kernel))
    kernels.sort(key=lambda pair: _FIRST.index(pair[0]) if pair[0] in _FIRST else len(_FIRST))
    return [(kernel, signature) for _, kernel in kernels for signature in _cached_signatures(kernel)]


# the entry points, the warm-up, Dask (an optional extra, imported by the commands that use it)
_NOT_PRELOADED = ("__main__", "command", "warmup", "distributed", "resident")
# the kernels every command or the common losses use, loaded first
_FIRST = ["svmstruct.svmlight_parser", "svmstruct.sparse_kernels", "svmstruct.eval_kernels",
          "svmstruct.losses.rank_oracles", "svmstruct.losses.map_oracles", "svmstruct.losses.dorm_oracles",
          "svmstruct.losses.assignment", "svmstruct.losses.perf_oracles"]


def _cached_signatures(kernel) -> list:
    """The signatures of KERNEL that numba's cache holds for this machine."""
    try:
        magic = kernel.targetctx.codegen().magic_tuple()
        return [entry[0] for entry in kernel._cache._cache_file._load_index() if entry[1] == magic]
    except Exception as e:  # numba's cache internals differ: a child loads the kernel when it runs it
        sys.stderr.write(f"not preloaded: {kernel.__name__}: {e!r}\n")
        return []


def _load(kernel, signature) -> None:
    """Load a cached signature of KERNEL (nothing is compiled here)."""
    try:
        overload = kernel._cache.load_overload(signature, kernel.targetctx)
        if overload is not None:
            kernel.add_overload(overload)
    except Exception as e:
        sys.stderr.write(f"not preloaded: {kernel.__name__}{signature}: {e!r}\n")


def _child(connection, key: str, inherited: list) -> None:
    """A forked child: take the caller's command and state, run it, report the exit status. Never returns."""
    import signal
    import socket
    import threading

    code = 1
    done = threading.Event()
    started = False
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for name in ("SIGTERM", "SIGHUP", "SIGQUIT"):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
        for fd in inherited:
            os.close(fd)
        header, fds, _, _ = socket.recv_fds(connection, _LENGTH_DIGITS, 3)
        header += _receive(connection, _LENGTH_DIGITS - len(header))
        fields = [os.fsdecode(f) for f in _receive(connection, int(header)).split(b"\0")]
        if fields[0] != key or len(fds) != 3:
            connection.sendall(b"K\n")
            os._exit(0)
        cwd, umask, argv0, count = fields[1], int(fields[2]), fields[3], int(fields[4])
        args, env = fields[5:5 + count], fields[5 + count:]
        os.chdir(cwd)
        os.umask(umask)
        os.environ.clear()
        for item in env:
            name, _, value = item.partition("=")
            os.environ[name] = value
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _standard_streams()
        sys.argv = [argv0, *args]
        connection.sendall(b"P%d\n" % os.getpid())
        started = True
        threading.Thread(target=_watch, args=(connection, done), daemon=True).start()
        code = _run_command(args)
    except BaseException as e:
        if started:  # an error the command did not handle: its traceback, as the interpreter would print it
            import traceback

            traceback.print_exc()
        else:  # the hand-over failed: the caller gets no "P" and runs the command itself
            sys.stderr.write(f"hand-over failed: {e!r}\n")
    finally:
        done.set()
        for stream in (sys.stdout, sys.stderr):  # as the interpreter flushes them at its exit
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        try:
            connection.sendall(b"S%d\n" % code)
        except OSError:
            pass
        os._exit(code)


def _receive(connection, n: int) -> bytes:
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
    sys.stdout = open(1, "w", encoding=encoding, errors=errors, closefd=False, buffering=-1,
                      newline=None)
    if os.isatty(1):
        sys.stdout.reconfigure(line_buffering=True)
    sys.stderr = open(2, "w", encoding=encoding, errors="backslashreplace", closefd=False)
    sys.stderr.reconfigure(line_buffering=True)


def _watch(connection, done) -> None:
    """The caller closes the connection only once it has the status, or when it was killed: then end the run
    as SIGTERM would (temporary files removed)."""
    try:
        connection.recv(1)
    except OSError:
        pass
    if not done.is_set():
        os.kill(os.getpid(), __import__("signal").SIGTERM)


def _run_command(args: list) -> int:
    """cli.main(ARGS) as the interpreter would run it: its exit status; stdout flushed."""
    from svmstruct import cli

    try:
        cli.main(args)
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
    try:
        sys.stdout.flush()
    except OSError:
        code = code or 120  # the interpreter's status when its final flush of stdout fails
    return code


if __name__ == "__main__":  # python -m svmstruct.resident stop
    if sys.argv[1:] != ["stop"]:
        sys.exit("usage: python -m svmstruct.resident stop")
    print(" ".join(map(str, stop_servers())))
