"""The resident worker, the caller's side: a command hands itself to a server that has already imported the
package and loaded its cached kernels, instead of paying that start-up (~0.5 s) in its own process.

It serves where that pays and where it can be trusted: inside make (MAKEFLAGS or MAKELEVEL set: a batch of
commands) or when asked (SVMSTRUCT_RESIDENT=1). A plain shell command runs in its own process and starts no
server. There, the first command starts a server in the background and runs in its own process; later commands
connect to the server's Unix socket in the user's private directory and hand over their arguments, working
directory, umask, environment, signal dispositions and every descriptor they inherited (SCM_RIGHTS). The server
forks a child per command (svmstruct.worker.server), which takes all of that and runs the command as a
process of its own would. Nothing is trusted that the kernel does not vouch for:

- the directory is opened once, checked (a directory of this user that nobody else may enter) and used only
  through its descriptor (/proc/self/fd/N/...), so renaming or replacing it cannot redirect a connection;
- both ends check their peer's credentials (SO_PEERCRED: the same user); the child's pid comes from the
  kernel (SCM_CREDENTIALS) and is held as a pidfd, so signals reach that process and no other;
- the server serves only callers of the same key: interpreter and options, sys.path, the package's location, the
  environment read at import time, and the caller's rights (user and groups, capabilities, namespaces, root,
  security label, cgroup, scheduling, niceness, CPU affinity, resource limits); the child also checks the
  caller's I/O priority, and the server that its package files and dependencies are unchanged;
- a caller in a sandbox whose rules cannot be compared runs its command itself: no_new_privs or a seccomp filter
  (the marks Landlock, seccomp and bubblewrap need from an unprivileged process), or a kernel that refuses it
  ptrace's read access to the child (a Landlock domain, an AppArmor or SELinux confinement); so does a
  background job of a terminal (the kernel stops it when it reads there; the server's child has no terminal);
- connect and handshake time out after TIMEOUT: a server that does not answer (stopped, swapped out) leaves
  the command to its own process, which also runs whenever anything of this machinery fails before the
  command started.

Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the child; Ctrl-Z stops the child with the caller
and `fg` continues both; signals the caller inherited as ignored stay ignored in the child; a child killed by
a signal kills its caller with the same signal; a caller killed outright ends its command (the child sees the
connection close and terminates as on SIGTERM).

Off (every command in its own process) when SVMSTRUCT_RESIDENT is 0/off/no/false, and outside make unless it is
1/on/yes/true; off Linux on x86-64 or arm64 (macOS: Accelerate's threads make a forking server unsafe; other
machines: see IOPRIO_SYSCALLS); under a tracer, profiler or coverage tool (it must see the work); when a standard
descriptor is closed; when the directory is not private. `svmstruct worker status|stop` shows and stops the
servers (docs/worker.md).
"""
from __future__ import annotations

import _socket
import os
import sys
import zlib

SWITCH = "SVMSTRUCT_RESIDENT"  # 1 / on / yes / true: the worker also outside make; 0 / off / no / false: never
DIRECTORY = "SVMSTRUCT_RESIDENT_DIR"  # the socket directory (default: $XDG_RUNTIME_DIR/svmstruct, /tmp/svmstruct-UID)
IDLE = "SVMSTRUCT_RESIDENT_IDLE"  # seconds a server waits for work before it exits
IDLE_SECONDS = 60.0
MAX_IDLE_SECONDS = 86400.0
TIMEOUT = 0.5  # seconds to connect and hand over before the command runs in its own process instead
PROTOCOL = "svmstruct-resident-2"
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the svmstruct directory this code is in
# environment variables read when modules load (numba's configuration and cache location, the OpenMP and BLAS
# runtimes, the interpreter, the locale, tempfile's directory): a server started under others behaves otherwise
_KEY_PREFIXES = ("PYTHON", "NUMBA_", "OMP_", "KMP_", "GOMP_", "OPENBLAS_", "MKL_", "LC_", "LANG", "TMPDIR", "HOME",
                 "XDG_CACHE_HOME", "SVMSTRUCT_RESIDENT_")  # not the switch itself
_NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
_RIGHTS = (b"CapInh", b"CapPrm", b"CapEff", b"CapBnd", b"CapAmb", b"NoNewPrivs", b"Seccomp", b"Seccomp_filters")
# ioprio_get and ioprio_set by machine (the child compares and keeps its caller's I/O priority); elsewhere: off
IOPRIO_SYSCALLS = {"x86_64": (252, 251), "aarch64": (31, 30)}
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
_STOPS = ("SIGTSTP", "SIGTTIN", "SIGTTOU")  # job control: stop the child too, then this process
# dispositions a process inherits (exec keeps "ignored"): the child ignores what the caller ignores
INHERITED = (*FORWARDED, *_STOPS, "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGPIPE")
_MAX_DESCRIPTORS = 250  # SCM_RIGHTS carries at most 253 descriptors
_MIN_FREE_BYTES = 1 << 20  # no server is started in a directory on a fuller file system
_LENGTH_DIGITS = 10
RETRY_SECONDS = 60.0  # after a server failed to start, callers wait this long before starting another


ON, OFF = ("1", "on", "yes", "true"), ("0", "off", "no", "false")  # SVMSTRUCT_RESIDENT's values
MAKE = ("MAKEFLAGS", "MAKELEVEL")  # set by make for its recipes: a batch of commands


def enabled() -> bool:
    """Whether commands may go through a resident worker: asked for (SVMSTRUCT_RESIDENT=1), or inside make,
    where a batch of commands pays for it, unless turned off; on Linux (x86-64, arm64), unobserved (module
    docstring)."""
    value = os.environ.get(SWITCH, "").strip().lower()
    if value in OFF or (value not in ON and not any(name in os.environ for name in MAKE)):
        return False
    if not sys.platform.startswith("linux") or os.uname().machine not in IOPRIO_SYSCALLS:  # /proc, SO_PEERCRED...
        return False
    return not _observed()


def _observed() -> bool:
    """A tracer, profiler or coverage tool watches this interpreter (python -m cProfile, coverage run, pdb):
    the command must run where it looks."""
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+: sys.monitoring tools (coverage's sysmon core)
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))


def idle_seconds() -> float | None:
    """SVMSTRUCT_RESIDENT_IDLE (default IDLE_SECONDS), or None when it is not a number of seconds in
    [0, MAX_IDLE_SECONDS]."""
    text = os.environ.get(IDLE)
    if text is None or not text.strip():
        return IDLE_SECONDS
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value <= MAX_IDLE_SECONDS else None  # (nan compares false: refused)


def unsandboxed() -> str | None:
    """Why this process must run its command itself although the worker is on (None: it may hand it over): it
    set no_new_privs or has a seccomp filter, the marks of a sandbox (Landlock, seccomp, bubblewrap...) whose
    rules the worker cannot compare with its own; or it reads or writes a terminal whose foreground job it is
    not (a background job must stop there, and the worker's child would not: it has no terminal)."""
    with open("/proc/self/status", "rb") as f:
        fields = dict(line.split(b":", 1) for line in f.read().splitlines() if b":" in line)
    if fields.get(b"NoNewPrivs", b"0").strip() != b"0":
        return "it runs with no_new_privs (a sandbox's mark)"
    if fields.get(b"Seccomp", b"0").strip() != b"0":
        return "it runs under a seccomp filter"
    for fd in (0, 1, 2):
        try:
            if os.isatty(fd) and os.tcgetpgrp(fd) != os.getpgrp():
                return "it is a background job of its terminal"
        except OSError:  # not our controlling terminal: nothing would stop this process there either
            pass
    return None


def _say_why(args: list, why: str) -> None:
    """At -v 2 and above, one line: why this command runs in its own process although the worker is on."""
    levels = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-v"] + [a[2:] for a in args if
                                                                              a.startswith("-v") and a != "-v"]
    if levels and levels[-1] in ("2", "3"):
        sys.stderr.write(f"svmstruct: running in its own process, not the resident worker's: {why}\n")


def run(args: list) -> int | None:
    """Run `svmstruct ARGS` through the resident worker: its exit status, or None when it did not run (the
    caller runs it in its own process; a server is started for the next command when none is running)."""
    if not enabled():
        return None
    if idle_seconds() is None:
        sys.stderr.write(f"svmstruct: warning: {IDLE}={os.environ[IDLE]!r} is not a number of seconds from 0 to "
                         f"{MAX_IDLE_SECONDS:.0f}: the resident worker is not used\n")
        return None
    try:
        why = unsandboxed()
        if why is not None:
            _say_why(args, why)
            return None
        place = open_directory()
    except (OSError, ValueError):
        return None
    if place is None:
        return None
    try:
        return _run(place, args)
    except OSError:  # /proc unreadable, a descriptor gone: nothing was handed over
        return None
    finally:
        os.close(place)


def open_directory() -> int | None:
    """A descriptor of the user's private socket directory (created 0700 if missing), or None when it is not
    a directory of this user that nobody else may enter; the caller closes it."""
    user = os.geteuid()
    if user != os.getuid():
        return None
    chosen = os.environ.get(DIRECTORY) or (os.path.join(os.environ["XDG_RUNTIME_DIR"], "svmstruct")
                                           if os.environ.get("XDG_RUNTIME_DIR") else f"/tmp/svmstruct-{user}")
    try:
        os.mkdir(chosen, 0o700)
    except FileExistsError:
        pass
    place = os.open(chosen, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    info = os.fstat(place)
    if info.st_uid != user or info.st_mode & 0o077:
        os.close(place)
        return None
    return place


def at(place: int, name: str) -> str:
    """The path of NAME in the directory open as PLACE, through the descriptor."""
    return f"/proc/self/fd/{place}/{name}"


def socket_name(key: str) -> str:
    return f"w-{zlib.crc32(key.encode()):08x}"


def key() -> str:
    """What a server must share with its callers (module docstring), as one string."""
    environment = sorted(f"{k}={v}" for k, v in os.environ.items() if k.startswith(_KEY_PREFIXES))
    options = {k: v for k, v in sys._xoptions.items() if k != "utf8"}  # UTF-8 mode: sys.flags.utf8_mode
    return repr((PROTOCOL, sys.executable, sys.version, sys.flags, sys.warnoptions, options, sys.path, PACKAGE,
                 environment, rights("self")))


def rights(process: str) -> tuple:
    """What a process may do and sees, from /proc/PROCESS: users, groups, capabilities, seccomp, namespaces, root,
    security label, cgroup, scheduling, niceness, affinity and resource limits (the child compares a caller's
    with its own: a command must not run with rights its caller lacks)."""
    proc = f"/proc/{process}"
    with open(f"{proc}/status", "rb") as f:
        status = [line for line in f.read().splitlines() if line.split(b":")[0] in _RIGHTS or
                  line.startswith((b"Uid:", b"Gid:", b"Groups:"))]
    namespaces = [os.readlink(f"{proc}/ns/{name}") for name in _NAMESPACES if os.path.exists(f"{proc}/ns/{name}")]
    root = os.stat(f"{proc}/root")
    label = _read(f"{proc}/attr/current")
    pid = 0 if process == "self" else int(process)
    scheduling = (os.sched_getscheduler(pid), os.sched_getparam(pid).sched_priority,
                  os.getpriority(os.PRIO_PROCESS, pid), sorted(os.sched_getaffinity(pid)))
    return (status, namespaces, (root.st_dev, root.st_ino), label, _read(f"{proc}/cgroup"), scheduling,
            _read(f"{proc}/limits"))


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _inherited_descriptors() -> list | None:
    """The descriptors a program started now would inherit (0, 1, 2 and any other without close-on-exec), or
    None when a standard one is closed or there are too many to hand over."""
    found = []
    for entry in os.listdir("/proc/self/fd"):
        fd = int(entry)
        try:
            if os.get_inheritable(fd):
                found.append(fd)
        except OSError:  # the listing's own descriptor, closed by now
            pass
    found.sort()
    return found if found[:3] == [0, 1, 2] and len(found) <= _MAX_DESCRIPTORS else None


def _run(place: int, args: list) -> int | None:
    descriptors = _inherited_descriptors()
    if descriptors is None:
        return None
    caller_key = key()
    name = socket_name(caller_key)
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        connection.settimeout(TIMEOUT)
        try:
            connection.connect(at(place, name + ".sock"))
        except (FileNotFoundError, ConnectionRefusedError):  # no server, or one that ended
            _start_server(place, name)
            return None
        except OSError:  # a full backlog, a timeout: this one runs in its own process
            return None
        return _hand_over(connection, caller_key, args, descriptors)
    finally:
        connection.close()


def _peer(connection) -> tuple:
    """(pid, uid, gid) of the process at the other end when it connected (SO_PEERCRED: the kernel's word)."""
    raw = connection.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
    return tuple(int.from_bytes(raw[i:i + 4], sys.byteorder, signed=True) for i in (0, 4, 8))


def _hand_over(connection, caller_key: str, args: list, descriptors: list) -> int | None:
    """Send the command; once the child that will run it answered, let it start and wait for its exit status,
    forwarding signals to it. None: nothing ran (the caller runs the command in its own process)."""
    import _signal

    try:
        if _peer(connection)[1] != os.geteuid():  # somebody else's socket
            return None
        connection.setsockopt(_socket.SOL_SOCKET, _socket.SO_PASSCRED, 1)  # the child's credentials come with `P`
        if connection.recv(1) != b"H":  # a child is there: only now the descriptors go (a stopped server would
            return None  # hold them unread in its queue, and a pipe to this command would not end)
        payload = _request(caller_key, args, descriptors)
        numbers = b"".join(fd.to_bytes(4, sys.byteorder) for fd in descriptors)  # C ints
        connection.sendmsg([b"%0*d" % (_LENGTH_DIGITS, len(payload))],
                           [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, numbers)])
        connection.sendall(payload)
        child = _ready_child(connection)
        if child is None:
            return None
        if not _may_inspect(child):
            _say_why(args, "the kernel does not let it inspect the worker's process (a sandbox such as Landlock, "
                           "or a security module's confinement)")
            return None
        pidfd = _pidfd(child)
        relayed = [getattr(_signal, name) for name in (*FORWARDED, *_STOPS, "SIGCONT")]
        held = _signal.pthread_sigmask(_signal.SIG_BLOCK, relayed)  # none lost between `G` and the forwarding
        try:
            connection.sendall(b"G")  # the child runs the command from here on: no own-process fallback after this
            connection.settimeout(None)
            _forward_signals(_signal, lambda signum: _send_signal(_signal, pidfd, child, signum))
        finally:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, held)
    except OSError:
        return None
    replies = _Lines(connection)
    try:
        status = replies.readline()
    except OSError:
        status = b""
    if status.startswith(b"X"):  # the child was killed by this signal: so is its caller
        _die_by(_signal, int(status[1:]))
    if not status.startswith(b"S"):
        sys.stderr.write("svmstruct: error: the resident worker's process was lost (set SVMSTRUCT_RESIDENT=0 to run "
                         "every command in its own process)\n")
        return 1
    return int(status[1:])


def _request(caller_key: str, args: list, descriptors: list) -> bytes:
    """The command and this process's state as NUL-separated fields (resident_server.Request reads them)."""
    import _signal

    umask = os.umask(0)
    os.umask(umask)
    ignored = [name for name in INHERITED if _signal.getsignal(getattr(_signal, name)) == _signal.SIG_IGN]
    blocked = sorted(int(s) for s in _signal.pthread_sigmask(_signal.SIG_BLOCK, []))
    fields = [caller_key, os.getcwd(), str(umask), sys.argv[0], ",".join(map(str, descriptors)), ",".join(ignored),
              ",".join(map(str, blocked)), str(len(args)), *args, *(f"{k}={v}" for k, v in os.environ.items())]
    return b"\0".join(os.fsencode(f) for f in fields)


def _ready_child(connection) -> int | None:
    """The pid of the child that will run the command, from the kernel's credentials of its `P` (it must be of
    this user), or None: refused (another key), or gone before it was ready."""
    data, ancillary, _, _ = connection.recvmsg(16, _socket.CMSG_SPACE(12))
    pid = None
    for level, kind, raw in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_CREDENTIALS and len(raw) >= 12:
            pid, uid = (int.from_bytes(raw[i:i + 4], sys.byteorder, signed=True) for i in (0, 4))
            if uid != os.geteuid():
                return None
    return pid if data == b"P" and pid else None  # 0: a process this one cannot see


def _may_inspect(pid: int) -> bool:
    """The kernel lets this process read the namespaces of the child that would run its command, as it may read
    its own: ptrace's read access, which every security module checks. A process in a Landlock domain (invisible in
    /proc) or confined by AppArmor or SELinux is refused for a process outside its confinement: its command must
    run where its confinement holds, in its own process."""
    try:
        os.readlink(f"/proc/{pid}/ns/mnt")
        return True
    except OSError:
        return False


def _pidfd(pid: int) -> int | None:
    """A descriptor of process PID (it waits for our `G`, so it is alive and is the one that answered)."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # before Linux 5.3: signals go by pid
        return None


def _send_signal(_signal, pidfd: int | None, pid: int, signum: int) -> None:
    try:
        if pidfd is not None:
            _signal.pidfd_send_signal(pidfd, signum)
        else:
            os.kill(pid, signum)
    except OSError:
        pass


def _forward_signals(_signal, send) -> None:
    """Forward the ending signals this process does not ignore; on Ctrl-Z (SIGTSTP, SIGTTIN, SIGTTOU) stop the
    child, then this process as the signal would have; on SIGCONT continue the child."""
    def forward(signum, frame):
        send(signum)

    def stop(signum, frame):
        send(_signal.SIGSTOP)
        _signal.signal(signum, _signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # stopped here until SIGCONT (unless the kernel discards it: orphaned group)
        _signal.signal(signum, stop)
        send(_signal.SIGCONT)

    def resume(signum, frame):
        send(_signal.SIGCONT)

    for name in (*FORWARDED, *_STOPS):
        number = getattr(_signal, name)
        if _signal.getsignal(number) != _signal.SIG_IGN:
            _signal.signal(number, stop if name in _STOPS else forward)
    _signal.signal(_signal.SIGCONT, resume)


def _die_by(_signal, signum: int) -> None:
    """End this process by SIGNUM, as its child ended (the shell sees the same status)."""
    try:
        if signum not in (_signal.SIGKILL, _signal.SIGSTOP):  # (their disposition cannot be set)
            _signal.signal(signum, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)  # a signal that does not end a process (SIGCHLD...): its usual status


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


def _start_server(place: int, name: str) -> None:
    """Start the server of NAME detached (its own session, no terminal, standard descriptors on /dev/null, the
    directory as descriptor 3), unless one is starting or one failed less than RETRY_SECONDS ago."""
    import fcntl

    try:
        room = os.statvfs(place)
        if room.f_bavail * room.f_frsize < _MIN_FREE_BYTES:
            return
        lock = os.open(name + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600, dir_fd=place)
    except OSError:
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a server that runs or is loading
        fcntl.flock(lock, fcntl.LOCK_UN)
    except OSError:
        return
    finally:
        os.close(lock)
    if _failed_recently(place, name):
        return
    settings = b"\0".join(os.fsencode(f) for f in (name, key(), *sys.path))
    argv = [sys.executable, *_interpreter_options(), "-c", "from svmstruct.__main__ import serve; serve()",
            "svmstruct-resident-worker"]
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the intermediate process: a new session, then the server, which init adopts
        try:
            os.setsid()
            if os.fork() == 0:
                null = os.open(os.devnull, os.O_RDWR)
                os.dup2(reading, 0)
                os.dup2(null, 1)
                os.dup2(null, 2)
                os.dup2(place, 3) if place != 3 else os.set_inheritable(3, True)
                os.closerange(4, 65536)
                os.chdir(os.path.dirname(PACKAGE))  # -c finds svmstruct here
                os.execv(sys.executable, argv)
        finally:
            os._exit(0)
    os.close(reading)
    try:
        os.write(writing, settings)
    except OSError:
        pass
    os.close(writing)
    os.waitpid(pid, 0)


def _interpreter_options() -> list:
    """This interpreter's options (-W, -X, -O, -E, -s, -I...), so that the server runs as its callers; UTF-8
    mode spelled out (a C locale turns it on here, and the coerced locale this process passes on would not)."""
    import subprocess

    given = subprocess._args_from_interpreter_flags()  # type: ignore[attr-defined]  # -X: all added below
    options = [o for i, o in enumerate(given) if o != "-X" and (i == 0 or given[i - 1] != "-X")]
    for name, value in sys._xoptions.items():
        if name != "utf8":
            options += ["-X", name if value is True else f"{name}={value}"]
    return [*options, "-X", f"utf8={sys.flags.utf8_mode}"]


def _failed_recently(place: int, name: str) -> bool:
    """The last server of NAME failed to start less than RETRY_SECONDS ago (its log says why)."""
    import time

    try:
        fd = os.open(name + ".log", os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=place)
    except OSError:
        return False
    with open(fd, "rb") as f:
        return time.time() - os.fstat(f.fileno()).st_mtime < RETRY_SECONDS and b"\nfailed: " in f.read()
