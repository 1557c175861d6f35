"""The kernels, one table: svm_light's code (-t) and name, the formula, the parameters each reads and the checks
on them, the estimators' names, and k(a, b) from a.b and the squared norms. `learn -t` and its help, the
estimators, the model files and the Nystroem map all read this table: adding a kernel is adding a row (a kernel
of svm_light's has a compiled twin in kernel_functions.kernel_value, which the Gram matrices of the table's
first three rows use; any other row's `value` is vectorised numpy). No numba here: `learn --help` reads it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

POLYNOMIAL, RBF, SIGMOID = 1, 2, 3
PARAMETERS = {"degree": "-d", "gamma": "-g", "coef_lin": "-s", "coef_const": "-r"}  # Kernel's fields, learn's flags


@dataclass(frozen=True)
class Kernel:
    """svm_light's kernel and its parameters (learn -t -d -g -s -r, with svm_light's defaults)."""
    kind: int = RBF
    degree: int = 3  # -d
    gamma: float = 1.0  # -g
    coef_lin: float = 1.0  # -s
    coef_const: float = 1.0  # -r


@dataclass(frozen=True)
class KernelType:
    code: int  # svm_light's -t, and the kernel type line of its model files
    name: str  # ours: model files, logs, the estimators' kernel=
    formula: str  # for --help
    parameters: tuple  # the Kernel fields it reads
    value: Callable[[np.ndarray, np.ndarray, np.ndarray, Kernel], np.ndarray]  # (a.b, |a|^2, |b|^2, kernel) -> k(a, b)
    check: Callable[[Kernel], str | None] = lambda kernel: None  # why these parameters make no kernel, or None
    estimator_gamma: str = "gamma"  # the Kernel field the estimators' gamma sets (scikit-learn's convention)
    aliases: tuple = ()  # other names the estimators take
    svm_light: bool = True  # svm_light's models can hold it


TYPES: dict[int, KernelType] = {t.code: t for t in [
    KernelType(POLYNOMIAL, "polynomial", "(s a.b + r)^d", ("degree", "coef_lin", "coef_const"),
               lambda dot, na, nb, k: (k.coef_lin * dot + k.coef_const) ** float(k.degree),
               lambda k: f"-d {k.degree}: the polynomial kernel needs a degree of at least 1" if k.degree < 1 else None,
               estimator_gamma="coef_lin", aliases=("poly",)),
    KernelType(RBF, "rbf", "exp(-g |a-b|^2)", ("gamma",),
               lambda dot, na, nb, k: np.exp(-k.gamma * (na - 2.0 * dot + nb)),
               lambda k: None if k.gamma > 0 else f"-g {k.gamma:g}: the RBF kernel needs gamma > 0"),
    KernelType(SIGMOID, "sigmoid", "tanh(s a.b + r)", ("coef_lin", "coef_const"),
               lambda dot, na, nb, k: np.tanh(k.coef_lin * dot + k.coef_const), estimator_gamma="coef_lin"),
]}
COMPILED = (POLYNOMIAL, RBF, SIGMOID)  # the kinds kernel_functions.kernel_value computes


def of_name(name: str) -> KernelType | None:
    """The kernel called `name` (its name or an alias), or None."""
    return next((t for t in TYPES.values() if name == t.name or name in t.aliases), None)


def listing() -> str:
    """'1 polynomial (s a.b + r)^d, 2 rbf exp(-g |a-b|^2), 3 sigmoid tanh(s a.b + r)' for messages and help."""
    return ", ".join(f"{t.code} {t.name} {t.formula}" for t in TYPES.values())


def problem(kernel: Kernel) -> str | None:
    """Why `kernel` is not a kernel of the table with valid parameters (None when it is)."""
    if kernel.kind == 4:
        return "-t 4: user-defined kernels are not supported (svm_light compiles them into the program)"
    if kernel.kind not in TYPES:
        return f"-t {kernel.kind}: the kernel is 0 (linear), {listing()}"
    return TYPES[kernel.kind].check(kernel)
