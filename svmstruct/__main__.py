"""The `svmstruct` command's entry point. A command goes to the resident worker when one serves this
installation (svmstruct.worker.resident: no start-up to pay), else runs here; `svmstruct worker ...` (the worker's
status, stop) always runs here and starts no server. Ctrl-C while the command line interface is still being
imported (numpy, click: a noticeable time on a busy machine) ends as cleanly as it does later, with exit 130.
The worker's server (started by resident) runs its callers' commands through the same command line interface."""
import sys


def main() -> None:
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
    run(extra=COMMANDS)


def serve() -> None:
    """The resident worker's server process (resident._start_server)."""
    import functools

    from svmstruct import cli
    from svmstruct.worker import server
    from svmstruct.worker.command import COMMANDS

    server.main(functools.partial(cli.main, extra=COMMANDS))


if __name__ == "__main__":
    main()
