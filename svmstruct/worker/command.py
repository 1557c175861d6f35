"""`svmstruct worker [status|stop [--all]]`: the worker's command, which the entry point adds to the command
group (the command line interface itself knows nothing of the worker)."""
import click


def command() -> click.Command:
    @click.command(name="worker", add_help_option=False,
                   context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def worker(args):
        """Show or stop the resident worker that serves commands inside make: status, stop [--all]."""
        from svmstruct.worker import control

        code = control.manage(list(args))
        if code:
            raise SystemExit(code)

    return worker


COMMANDS = {"worker": command}  # what the entry point adds to svmstruct.cli's group
