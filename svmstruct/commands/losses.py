"""`svmstruct losses`: what the registry holds — the losses (-l), their names, aliases, default C and epsilon, and
options; then svmstruct's own structured problems (--problem NAME), which need -c."""
from __future__ import annotations

import click


def losses_command():
    """List the losses (-l) with their names, aliases, default C and epsilon, and options, then the structured
    problems (--problem)."""
    from svmstruct import registry

    for loss in registry.REGISTRY.values():
        aliases = ",".join(loss.aliases)
        flags = " ".join(o.flag for o in loss.options)
        click.echo(f"{loss.name:<12} {aliases:<10} {loss.family:<5} C {loss.default_C:<4g} "
                   f"eps {loss.default_epsilon:<6g} {loss.summary}" + (f"  [{flags}]" if flags else ""))
    click.echo("\nstructured problems (learn --problem NAME -c C; docs/problems.md):")
    for problem in registry.PROBLEMS.values():
        flags = " ".join(o.flag for o in problem.options)
        click.echo(f"{problem.aliases[0]:<12} {'':<10} {'':<5} C -c   eps {problem.default_epsilon:<6g} "
                   f"{problem.summary}  [{flags}]")


def command() -> click.Command:
    return click.command(name="losses")(losses_command)
