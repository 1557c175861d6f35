"""Run a command inside a sandbox of the kernel's, as a sandboxing tool would start it (for the tests of the resident
worker: what a sandboxed caller may not do, its command must not do through the worker either).

    python tests/sandbox.py [--landlock-read P:...] [--landlock-write P:...] [--no-nnp] [--deny-rename | --allow-all]
        -- COMMAND ARGS...

--landlock-read/--landlock-write: a Landlock domain (Linux 5.13+) in which only the colon-separated READ paths can
be read (and run) and the WRITE paths also written; --deny-rename: a seccomp filter that fails rename(2),
renameat(2) and renameat2(2) with EPERM (--allow-all: a filter that denies nothing). Both set no_new_privs first,
as an unprivileged process must; --no-nnp leaves it unset (root only: CAP_SYS_ADMIN may enter a Landlock domain
without it). Exit 97: the kernel refused the sandbox."""
import argparse
import ctypes
import errno
import os
import struct
import sys

LIBC = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}  # create_ruleset, add_rule, restrict_self
RENAMES = {"x86_64": (0xC000003E, (82, 264, 316)), "aarch64": (0xC00000B7, (38, 276))}  # audit arch, syscalls
REFUSED = 97


def _fail(what: str) -> None:
    sys.stderr.write(f"sandbox: {what}: {os.strerror(ctypes.get_errno())}\n")
    sys.exit(REFUSED)


def no_new_privs() -> None:
    if LIBC.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("no_new_privs")


def landlock(readable: list, writable: list) -> None:
    """Enter a Landlock domain that handles every file-system right of the kernel's ABI."""
    create, add, restrict = LANDLOCK[os.uname().machine]
    abi = LIBC.syscall(create, None, 0, 1)  # LANDLOCK_CREATE_RULESET_VERSION
    if abi < 1:
        _fail("Landlock")
    handled = (1 << 13) - 1  # execute .. make_sym (ABI 1)
    handled |= (1 << 13) if abi >= 2 else 0  # refer
    handled |= (1 << 14) if abi >= 3 else 0  # truncate
    handled |= (1 << 15) if abi >= 5 else 0  # ioctl_dev
    attr = struct.pack("QQQ", handled, 0, 0) if abi >= 4 else struct.pack("Q", handled)
    ruleset = LIBC.syscall(create, ctypes.create_string_buffer(attr), len(attr), 0)
    if ruleset < 0:
        _fail("landlock_create_ruleset")
    read = 1 | 4 | 8  # execute, read_file, read_dir
    for paths, rights in ((readable, read), (writable, handled)):
        for path in paths:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            rule = struct.pack("=Qi", rights if os.path.isdir(path) else rights & (1 | 2 | 4 | (1 << 14)), fd)
            if LIBC.syscall(add, ruleset, 1, ctypes.create_string_buffer(rule), 0) != 0:  # LANDLOCK_RULE_PATH_BENEATH
                _fail(f"landlock_add_rule {path}")
            os.close(fd)
    if LIBC.syscall(restrict, ruleset, 0) != 0:
        _fail("landlock_restrict_self")


def deny_rename(numbers: tuple | None = None) -> None:
    """A seccomp filter: rename, renameat and renameat2 fail with EPERM (or the system calls NUMBERS: none, a filter
    that allows everything); every other call is allowed."""
    arch, renames = RENAMES[os.uname().machine]
    numbers = renames if numbers is None else numbers
    load, jump, ret = 0x20, 0x15, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | errno.EPERM
    program = [(load, 0, 0, 4), (jump, 0, len(numbers) + 1, arch), (load, 0, 0, 0)]
    for i, number in enumerate(numbers):
        program.append((jump, len(numbers) - i, 0, number))
    program += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxP", len(program), ctypes.addressof(buffer))
    if LIBC.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.create_string_buffer(fprog), 0, 0) != 0:
        _fail("seccomp")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--landlock-read", default="")
    parser.add_argument("--landlock-write", default="")
    parser.add_argument("--no-nnp", action="store_true")
    parser.add_argument("--deny-rename", action="store_true")
    parser.add_argument("--allow-all", action="store_true", help="a seccomp filter that denies nothing")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if not args.no_nnp:
        no_new_privs()
    if args.landlock_read or args.landlock_write:
        landlock([p for p in args.landlock_read.split(":") if p], [p for p in args.landlock_write.split(":") if p])
    if args.deny_rename:
        deny_rename()
    if args.allow_all:
        deny_rename(())
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
