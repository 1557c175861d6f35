"""What the commands share: number and tag option types in svm_light's syntax, messages on stderr, the progress
printer, --threads, and the loss options generated from the registry's declarations."""
from __future__ import annotations

import sys

import click


class _Bounded(click.ParamType):
    """A number option in svm_light's syntax (options.parse_number / parse_integer: `1_0`, `nan`, full-width
    digits are not numbers), optionally within [low, high]."""

    name = "number"

    def __init__(self, low=None, high=None):
        self.low, self.high = low, high

    def parse(self, value):
        from svmstruct.options import parse_number

        return parse_number(value)

    def convert(self, value, param, ctx):
        from svmstruct.options import LARGEST_INTEGER

        try:
            number = self.parse(value)
        except OverflowError:
            self.fail(f"{value!r} is larger than {LARGEST_INTEGER}", param, ctx)
        except ValueError:
            self.fail(f"{value!r} is not {'an integer' if self.name == 'integer' else 'a finite number'}", param, ctx)
        if (self.low is not None and number < self.low) or (self.high is not None and number > self.high):
            self.fail(f"{value!r} is not between {self.low:g} and {self.high:g}" if self.high is not None
                      else f"{value!r} is below {self.low:g}", param, ctx)
        return number


class Number(_Bounded):
    """A finite number (-e, --rel-threshold, --alpha)."""


class Integer(_Bounded):
    """A decimal integer of at most options.LARGEST_INTEGER in magnitude (-#, -v, --threads, -k, ...)."""

    name = "integer"

    def parse(self, value):
        from svmstruct.options import parse_integer

        return parse_integer(value)


class Tag(click.ParamType):
    """A TREC run tag: one word of printable characters (trec_eval splits a run line at whitespace)."""

    name = "tag"

    def convert(self, value, param, ctx):
        if not (value and value.isprintable() and len(value.split()) == 1 and value.split()[0] == value):
            self.fail(f"{value!r} is not one word of printable characters (trec_eval reads six fields a line)",
                      param, ctx)
        return value


def say(line: str) -> None:
    """A line on stderr. A failed write (a full or closed stderr) is not fatal: progress is not worth the
    model."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def warn(message: str) -> None:
    """A warning: always on stderr, whatever the verbosity."""
    say(f"svmstruct: warning: {printable(message)}")


def printable(text: str) -> str:
    """TEXT with what a terminal would act on or cannot show — control characters (escape sequences, bells,
    carriage returns), undecodable bytes — spelled as escapes (\\x1b), so that a file's bytes quoted in a
    message are seen, not executed."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("utf-8", "surrogateescape").decode("latin-1")
                   .encode("unicode_escape").decode("ascii") for c in text)


def progress_printer(verbosity: int):
    """-v 1 and 2: a line per iteration (the duality gap, both objectives, the working set); -v 3 adds the line
    search's step along [w_b, w_t], the slack xi and |w| at w_b."""
    def show(row: dict) -> None:
        detail = f"  step {row['step']:.4f}  xi {row['xi']:.6f}  |w| {row['norm']:.6f}" if verbosity >= 3 else ""
        say(f"iter {row['iteration']:4d}  gap/C {row['gap']:.6g}  primal {row['primal']:.6f}  "
            f"dual {row['dual']:.6f}  constraints {row['constraints']}  {row['seconds']:.2f}s{detail}")

    return show if verbosity >= 1 else None


def _set_threads(ctx, param, threads):
    """--threads N: the numba kernels (oracles, readers, products) use up to N threads; their results do not
    depend on N. Default: svmstruct.threads.default_count() (the cores this process may use; 1 inside
    make -jN)."""
    if threads is None:
        return
    import numba

    from svmstruct.compute import threads as policy

    available = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    if threads > available:
        warn(f"--threads {threads}: only {available} threads are available here; using {available}")
    policy.set_count(min(threads, available))



THREADS_OPTION = click.option("--threads", type=Integer(1), default=None, expose_value=False,
                              callback=_set_threads, metavar="N",
                              help="Threads of the parallel kernels (default: the cores this process may use, "
                                   "1 inside make -jN); results do not depend on it.")


def option_help(name: str) -> str:
    """The help of a loss option: what it means for each loss that takes it, with its default."""
    from svmstruct import registry

    groups: dict = {}
    for loss in registry.REGISTRY.values():
        option = loss.option(name)
        if option is not None:
            default = "" if option.default is None or option.default is False else f" (default {option.default})"
            groups.setdefault(option.help + default, []).append(loss.name)
    return "; ".join(f"{', '.join(names)}: {text}" for text, names in groups.items())


def problem_help(flag: str) -> str:
    """What FLAG means to svmstruct's own problems ('' when none takes it): '--problem hmm: ... (default 1)'."""
    from svmstruct import registry

    offered = registry.problem_options().get(flag, ())
    meanings = [f"--problem {short}: {option.help}" + ("" if option.default is None else f" (default {option.default})")
                for short, option in offered]
    return "With " + "; ".join(meanings) if meanings else ""


def loss_options(f):
    """One click option per registered loss option (None when not given, so a loss's own default applies)."""
    from svmstruct import registry

    for option in reversed(sorted(registry.all_options().values(), key=lambda o: o.flag.lstrip("-"))):
        text = "; ".join(filter(None, (option_help(option.name), problem_help(option.flag))))
        if option.kind == "flag":
            f = click.option(*option.flags, option.name, is_flag=True, default=None, help=text)(f)
        else:
            f = click.option(*option.flags, option.name, default=None, metavar=option.metavar, help=text)(f)
    return f


def spelling(name: str) -> str:
    from svmstruct import registry

    option = registry.all_options().get(name)
    return option.flag if option else name


def default_loss() -> str:
    from svmstruct import registry

    return registry.DEFAULT



def build_command(name: str, function, decorators: list) -> click.Command:
    """The click command `name` running `function` with the options and arguments of `decorators` (in order)."""
    for decorator in reversed(decorators):
        function = decorator(function)
    return click.command(name=name)(function)


def as_typed(*extra: str) -> str:
    """The running command as a shell would type it, with EXTRA first (click's parsed values: each option given with
    its first flag, then the arguments)."""
    import shlex

    ctx = click.get_current_context()
    words = [*ctx.command_path.split(), *extra]
    arguments: list = []
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if value is None or value is False or value == param.default or value == ():
            continue
        if isinstance(param, click.Argument):
            arguments.extend(value if isinstance(value, (list, tuple)) else [value])
        elif getattr(param, "is_flag", False):
            words.append(param.opts[0])
        else:
            for item in value if getattr(param, "multiple", False) else [value]:
                words += [param.opts[0], str(item)]
    return " ".join(shlex.quote(str(word)) for word in [*words, *arguments])
