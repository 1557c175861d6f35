"""The registry of what is trained: svmstruct's loss families and structured problems, and any a user registers —
the one extension point (docs/ARCHITECTURE.md, "Adding a loss").

A family is a module with a list LOSSES of svmstruct.spec.Loss values (document losses) and/or PROBLEMS of
svmstruct.spec.Problem values (structured problems). FAMILIES names svmstruct's own by their modules' dotted
names, imported the first time the registry is read (a command that reads no loss, eval or classify of a linear
model, imports none of them); register() adds a module of yours. Family modules import svmstruct.spec, never this
package. A loss that declares the option `pairwise` has svm_rank's pairs mixed into its bound here
(losses.combo.with_pairs).
"""
from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType

from svmstruct.errors import InputError
from svmstruct.spec import Loss, Option, Problem

FAMILIES = ("svmstruct.losses.perf", "svmstruct.losses.rank", "svmstruct.losses.svmmap", "svmstruct.losses.dorm",
            "svmstruct.losses.div", "svmstruct.losses.combo", "svmstruct.problems.multiclass",
            "svmstruct.problems.hmm")
DEFAULT = "errorrate"  # svm_perf's default loss, `learn`'s without -l
_COMBO = "svmstruct.losses.combo"


class _Table(Mapping):
    """One table of the registry (the losses by name, the problems by MODULE:CLASS), holding svmstruct's own
    families from the first time it is read."""

    def __init__(self):
        self.entries: dict = {}

    def __getitem__(self, key):
        _load()
        return self.entries[key]

    def __iter__(self) -> Iterator:
        _load()
        return iter(self.entries)

    def __len__(self) -> int:
        _load()
        return len(self.entries)


REGISTRY = _Table()  # the document losses, by name
PROBLEMS = _Table()  # the structured problems, by MODULE:CLASS
_loaded: list = []


def _load() -> None:
    if not _loaded:
        _loaded.append(True)
        for name in FAMILIES:
            register(importlib.import_module(name))
        vars(importlib.import_module(_COMBO))["registry_lookup"] = lookup  # a combo's components are registered losses


def register(family: ModuleType) -> None:
    """Add a family module's LOSSES and PROBLEMS (names and aliases must be new; an option flag shared with another
    loss must be declared alike)."""
    _load()
    known = {alias for spec in (*REGISTRY.entries.values(), *PROBLEMS.entries.values())
             for alias in (spec.name, *spec.aliases)}
    for problem in getattr(family, "PROBLEMS", ()):
        clash = {problem.name, *problem.aliases} & known
        if clash:
            raise ValueError(f"problem {problem.name}: name {sorted(clash)[0]} is already registered")
        PROBLEMS.entries[problem.name] = problem
        known |= {problem.name, *problem.aliases}
    for loss in getattr(family, "LOSSES", ()):
        clash = {loss.name, *loss.aliases} & known
        if clash:
            raise ValueError(f"loss {loss.name}: name {sorted(clash)[0]} is already registered")
        if loss.option("pairwise") is not None:  # a listwise loss that mixes svm_rank's pairs in (--pairwise)
            loss = dataclasses.replace(loss, build=importlib.import_module(_COMBO).with_pairs(loss.build))
        REGISTRY.entries[loss.name] = loss
        known |= {loss.name, *loss.aliases}
    all_options()  # a conflicting declaration fails here, at registration


def unregister(family: ModuleType) -> None:
    """Remove a family's losses and problems again (tests that register a toy loss or problem)."""
    for loss in getattr(family, "LOSSES", ()):
        REGISTRY.entries.pop(loss.name, None)
    for problem in getattr(family, "PROBLEMS", ()):
        PROBLEMS.entries.pop(problem.name, None)


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


def problem_options() -> dict:
    """{flag: [(short name, Option), ...]}: the options that svmstruct's own problems declare (-o aside), by the flags
    their originals spell them with (`learn` offers these flags; svm_hmm's --t and --b share theirs with the kernel's
    basis and svm_perf's bias, which do not apply to a problem: config.Run moves such values to the problem)."""
    flags: dict = {}
    for found in PROBLEMS.values():
        for short in found.aliases:
            for option in found.options[1:]:
                for flag in option.flags:
                    flags.setdefault(flag, []).append((short, option))
    return flags


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
    for found in PROBLEMS.values():
        if name == found.name or name in found.aliases:
            return found
    return importlib.import_module("svmstruct.problems").named(name)


def of_model(trained, problem: str | None = None, source: str | None = None) -> Loss | Problem | None:
    """The spec a model names: a registered loss, a structured problem (MODULE:CLASS or a short name of svmstruct's:
    registered, or yours when PROBLEM, the command line's --problem, names it: svmstruct.problems.load), or None
    (svm_light's models, and ours of a loss registered only where it was trained, whose output is scores). Any other
    name is refused: scoring it as a linear model would be silently wrong. SOURCE: the model file, for messages."""
    if trained.format == "svmlight" or trained.loss in REGISTRY:
        return REGISTRY.get(trained.loss)
    for found in PROBLEMS.values():
        if trained.loss in found.aliases:
            return found
    if trained.loss.count(":") == 1:  # a problem's MODULE:CLASS (a loss's name has no colon): checked when loaded
        return importlib.import_module("svmstruct.problems").named(trained.loss, problem, source)
    if trained.scores:
        return None
    raise InputError(f"the model's loss '{trained.loss}' is no loss or problem known here, and its output is not "
                     "scores (an edited model, or a loss registered only in the process that trained it)", source,
                     trained.lines.get("loss"))
