"""`svmstruct worker [status|stop] [--all]`: the resident worker's servers of this user, where commands go, and
stopping them (the servers themselves: svmstruct.worker.server; the caller's side: svmstruct.worker.resident)."""
from __future__ import annotations

import fcntl
import os
import signal
import sys
import time

from svmstruct.worker import resident


def servers(place: int, every: bool = False) -> list:
    """The running servers in the directory open as PLACE: (pid, lock file name, package, started) of this
    installation's (every=True: of every installation of this user)."""
    package = resident.PACKAGE
    found = []
    for entry in sorted(os.listdir(place)):
        if not (entry.startswith("w-") and entry.endswith(".lock")):
            continue
        try:
            lock = os.open(entry, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=place)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
                continue  # nobody holds it: no server
            except OSError:
                pass
            lines = os.read(lock, 1 << 16).decode(errors="replace").splitlines()
        finally:
            os.close(lock)
        if len(lines) >= 4 and lines[0].isdigit() and (every or lines[1] == package):
            found.append((int(lines[0]), entry, lines[1], float(lines[3])))
    return found


def stop_servers(folder: str | None = None, every: bool = False) -> list:
    """Stop this installation's servers in FOLDER (default: the user's socket directory; every=True: those of
    every installation): the pids signalled."""
    place = _open_folder(folder)
    if place is None:
        return []
    try:
        stopped = []
        for pid, _, _, _ in servers(place, every):
            if _is_server(pid):
                _terminate(pid)
                stopped.append(pid)
        return stopped
    finally:
        os.close(place)


def _open_folder(folder: str | None) -> int | None:
    if folder is None:
        try:
            return resident.open_directory()
        except OSError:
            return None
    try:
        return os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None


def _is_server(pid: int) -> bool:
    """PID is a resident server of this user (not a process that took the pid of one that ended)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().endswith(b"svmstruct-resident-worker\0") and os.stat(f"/proc/{pid}").st_uid == os.geteuid()
    except OSError:
        return False


def manage(args: list) -> int:
    """`svmstruct worker [status|stop] [--all]`."""
    if "-h" in args or "--help" in args:
        print("usage: svmstruct worker [status|stop] [--all]\n\n  status  the resident worker: where it serves, its "
              "socket directory, this installation's servers (--all: every installation's)\n  stop    stop "
              "them (each ends after its running commands; a new one starts with the next command)")
        return 0
    every = "--all" in args
    words = [a for a in args if a != "--all"]
    if words not in ([], ["status"], ["stop"]) or any(a.startswith("-") and a != "--all" for a in args):
        sys.stderr.write("usage: svmstruct worker [status|stop] [--all]\n")
        return 2
    if words == ["stop"]:
        stopped = stop_servers(every=every)
        print(f"stopped {len(stopped)} resident worker{'s' if len(stopped) != 1 else ''}"
              + (f" (pid {', '.join(map(str, stopped))})" if stopped else ""))
        return 0
    place = _open_folder(None)
    if place is None:
        print("resident worker: off (the socket directory is not private to this user)")
        return 0
    try:
        found = servers(place, every)
        directory = os.readlink(f"/proc/self/fd/{place}")
    finally:
        os.close(place)
    print(f"resident worker: {_state()}; sockets in {directory}")
    for pid, lock, package, started in found:
        print(f"  pid {pid}: {lock[:-5]}.sock, {package}, up {time.time() - started:.0f} s, {_memory(pid)}")
    if not found:
        print("  no server running")
    return 0


def _state() -> str:
    """Where commands go, as `worker status` says it."""
    value = os.environ.get(resident.SWITCH)
    if value is not None and value.strip().lower() in resident.OFF:
        return f"off ({resident.SWITCH}={value})"
    if value is not None and value.strip().lower() in resident.ON:
        return f"on for every command ({resident.SWITCH}={value})" if resident.enabled() else "off here"
    if resident.enabled():
        return f"on (inside make; {resident.SWITCH}=0 turns it off)"
    return f"on inside make only (a command outside make runs in its own process; {resident.SWITCH}=1 for every one)"


def _memory(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = [line.split()[1] for line in f if line.startswith("VmRSS:")]
        return f"{int(rss[0]) / 1024:.0f} MB resident" if rss else "memory unknown"
    except OSError:
        return "memory unknown"


def _terminate(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
