"""`svmstruct losses`: the registered losses, their names, aliases, default C and epsilon, and options."""
from __future__ import annotations

import click


def losses_command():
    """List the losses with their names, aliases, default C and epsilon, and options."""
    from svmstruct import losses

    for loss in losses.REGISTRY.values():
        aliases = ",".join(loss.aliases)
        flags = " ".join(o.flag for o in loss.options)
        click.echo(f"{loss.name:<12} {aliases:<10} {loss.family:<5} C {loss.default_C:<4g} "
                   f"eps {loss.default_epsilon:<6g} {loss.summary}" + (f"  [{flags}]" if flags else ""))



def command() -> click.Command:
    return click.command(name="losses")(losses_command)
