"""The `svmstruct` command's entry point. A command goes to the resident worker when one serves this
installation (svmstruct.worker.resident: no start-up to pay), else runs here; `svmstruct worker ...` (the worker's
status, stop) always runs here and starts no server. Ctrl-C while the command line interface is still being
imported (numpy, click: a noticeable time on a busy machine) ends as cleanly as it does later, with exit 130.
The worker's server (started by resident) runs its callers' commands through the same command line interface.
A command run here ends without the interpreter's teardown (_leave)."""
import os
import sys


def _as_a_command() -> None:
    """This process is the command's: BLAS on one thread unless the user chose (svmstruct.compute.threads says why;
    set before numpy loads its BLAS). `import svmstruct` in a user's program changes nothing of the kind."""
    for variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):  # compute.threads.BLAS_VARIABLES
        os.environ.setdefault(variable, "1")


def main() -> None:
    _as_a_command()
    try:
        from svmstruct.worker import resident

        if sys.argv[1:2] == ["worker"]:  # `svmstruct worker [status|stop] [--all]`
            from svmstruct.worker import control

            sys.exit(control.manage(sys.argv[2:]))
        code = resident.run(sys.argv[1:])
        if code is not None:
            sys.exit(code)
        from svmstruct.cli import main as run
        from svmstruct.worker.command import COMMANDS
    except KeyboardInterrupt:
        sys.stderr.write("svmstruct: error: interrupted\n")
        raise SystemExit(130) from None
    try:
        run(extra=COMMANDS)
        code = 0
    except SystemExit as e:
        if e.code is not None and not isinstance(e.code, int):
            raise
        code = e.code or 0
    _leave(code)


def _leave(code: int) -> None:
    """End the process once the command is done: the atexit handlers run (temporary folders, thread pools,
    logging), the streams are flushed, then os._exit skips the interpreter's teardown of the modules — about 0.2 s
    once numba has loaded a parallel kernel, a tenth of a two-second run. Under a profiler or tracer (it reports
    after the command) or with a thread of the command still running (a cluster's client) the interpreter ends as
    usual."""
    import atexit
    import os
    import threading

    from svmstruct.worker import resident

    if resident._observed() or any(t.is_alive() and not t.daemon for t in threading.enumerate()
                                   if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            code = code or 141
    os._exit(code)


def serve() -> None:
    """The resident worker's server process (resident._start_server; it has its caller's environment, which
    main() set as a command's)."""
    import functools

    from svmstruct import cli
    from svmstruct.worker import server
    from svmstruct.worker.command import COMMANDS

    server.main(functools.partial(cli.main, extra=COMMANDS))


if __name__ == "__main__":
    main()
