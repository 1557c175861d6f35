"""The registry of what is trained: the one extension point (docs/ARCHITECTURE.md, "Adding a loss").

A family is a module with a list LOSSES of svmstruct.spec.Loss values (document losses) and/or PROBLEMS of
svmstruct.spec.Problem values (structured problems: svmstruct's own multiclass and hmm); FAMILIES below names them.
Family modules import svmstruct.spec, never this package, so there is no import cycle. A loss that declares the
option `pairwise` has svm_rank's pairs mixed into its bound here (combo.with_pairs).
"""
from __future__ import annotations

import dataclasses
from types import ModuleType

from svmstruct.errors import InputError
from svmstruct.losses import combo, div, dorm, perf, rank, svmmap
from svmstruct.problems import hmm, multiclass
from svmstruct.spec import Loss, Option, Problem

FAMILIES: list[ModuleType] = [perf, rank, svmmap, dorm, div, combo, multiclass, hmm]
DEFAULT = "errorrate"  # svm_perf's default loss, `learn`'s without -l

REGISTRY: dict[str, Loss] = {}  # the document losses, by name
PROBLEMS: dict[str, Problem] = {}  # the structured problems, by MODULE:CLASS


def register(family: ModuleType) -> None:
    """Add a family module's LOSSES and PROBLEMS (names and aliases must be new; an option flag shared with another
    loss must be declared alike)."""
    known = {alias for spec in (*REGISTRY.values(), *PROBLEMS.values()) for alias in (spec.name, *spec.aliases)}
    for problem in getattr(family, "PROBLEMS", ()):
        clash = {problem.name, *problem.aliases} & known
        if clash:
            raise ValueError(f"problem {problem.name}: name {sorted(clash)[0]} is already registered")
        PROBLEMS[problem.name] = problem
        known |= {problem.name, *problem.aliases}
    for loss in getattr(family, "LOSSES", ()):
        clash = {loss.name, *loss.aliases} & known
        if clash:
            raise ValueError(f"loss {loss.name}: name {sorted(clash)[0]} is already registered")
        if loss.option("pairwise") is not None:  # a listwise loss that mixes svm_rank's pairs in (--pairwise)
            loss = dataclasses.replace(loss, build=combo.with_pairs(loss.build))
        REGISTRY[loss.name] = loss
        known |= {loss.name, *loss.aliases}
    all_options()  # a conflicting declaration fails here, at registration


def unregister(family: ModuleType) -> None:
    """Remove a family's losses and problems again (tests that register a toy loss or problem)."""
    for loss in getattr(family, "LOSSES", ()):
        REGISTRY.pop(loss.name, None)
    for problem in getattr(family, "PROBLEMS", ()):
        PROBLEMS.pop(problem.name, None)


def all_options() -> dict[str, Option]:
    """Every option of every registered loss, by keyword (the CLI generates its flags from these)."""
    out: dict[str, Option] = {}
    for loss in REGISTRY.values():
        for option in loss.options:
            seen = out.get(option.name)
            if seen is None:
                out[option.name] = option
            elif (seen.flags, seen.kind) != (option.flags, option.kind):
                raise ValueError(f"option {option.name} is declared as {seen.flags} {seen.kind} and as "
                                 f"{option.flags} {option.kind}")
    return out


for _family in FAMILIES:
    register(_family)


def same_code_elsewhere(code: str, chosen: Loss) -> list[Loss]:
    """Losses that another original program calls by the numeric code `code` (which here means `chosen`)."""
    return [loss for loss in REGISTRY.values() if code in loss.other_codes and loss is not chosen]


def lookup(name: str) -> tuple[Loss, dict]:
    """The loss called `name` (canonical name or alias, case-insensitive) and the options its name sets.

    A name like ``prec@10`` or ``ndcg@5`` selects the loss registered as ``prec@k`` / ``ndcg@k`` with k set;
    ``combo:ndcg@10,map`` selects combo with those losses.
    """
    key = name.strip().lower()
    base, colon, rest = key.partition(":")
    if colon and base == "combo" and "combo" in REGISTRY:
        return REGISTRY["combo"], {"combo_losses": rest}
    for loss in REGISTRY.values():
        if key == loss.name or key in loss.aliases:
            return loss, {}
    base, at, k = key.partition("@")
    if at and k.isdigit() and int(k) > 0:
        for loss in REGISTRY.values():
            if base + "@k" == loss.name or base + "@k" in loss.aliases:
                return loss, {"k": int(k)}
    known = ", ".join(f"{x.name} ({'/'.join(x.aliases)})" if x.aliases else x.name for x in REGISTRY.values())
    raise InputError(f"unknown loss '{name}'; known losses: {known}")


def problem(name: str) -> Problem:
    """The structured problem called NAME: a registered one by its MODULE:CLASS or short name, else a problem of
    yours by MODULE:CLASS (imported: svmstruct.problems.load; UsageError when it cannot be)."""
    from svmstruct import problems

    for found in PROBLEMS.values():
        if name == found.name or name in found.aliases:
            return found
    return problems.named(name)


def of_model(trained, problem: str | None = None, source: str | None = None) -> Loss | Problem | None:
    """The spec a model names: a registered loss, a structured problem (MODULE:CLASS or a short name of svmstruct's:
    registered, or yours when PROBLEM, the command line's --problem, names it: svmstruct.problems.load), or None
    (svm_light's models, and ours of a loss registered only where it was trained, whose output is scores). Any other
    name is refused: scoring it as a linear model would be silently wrong. SOURCE: the model file, for messages."""
    from svmstruct import problems

    if trained.format == "svmlight" or trained.loss in REGISTRY:
        return REGISTRY.get(trained.loss)
    for found in PROBLEMS.values():
        if trained.loss in found.aliases:
            return found
    if trained.loss.count(":") == 1:  # a problem's MODULE:CLASS (a loss's name has no colon): checked when loaded
        return problems.named(trained.loss, problem, source)
    if trained.scores:
        return None
    raise InputError(f"the model's loss '{trained.loss}' is no loss or problem known here, and its output is not "
                     "scores (an edited model, or a loss registered only in the process that trained it)", source,
                     trained.lines.get("loss"))


combo.registry_lookup = lookup  # a combo's components are registered losses
