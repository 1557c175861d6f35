"""The `svmstruct` command's entry point: Ctrl-C while the command line interface is still being imported
(numpy, click: a noticeable time on a busy machine) ends as cleanly as it does later, with exit 130."""
import sys


def main() -> None:
    try:
        from svmstruct.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("svmstruct: error: interrupted\n")
        raise SystemExit(130) from None
    run()
