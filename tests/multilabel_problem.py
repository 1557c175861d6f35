"""A structured problem written outside the package, as a user writes one (docs/problems.md): multi-label
classification with the Hamming loss. An output y is one 0/1 per label; Psi(x, y) puts x in the block of every
label y has; Delta(y, ybar) counts the labels that differ. Files hold `LABELS index:value ...` lines, LABELS a
comma-separated list of labels 1..L or `none`."""
import itertools

import numpy as np

from svmstruct.errors import InputError
from svmstruct.options import positive_int
from svmstruct.problems import StructuredProblem
from svmstruct.spec import Option, Problem


class MultiLabel(StructuredProblem):
    """Multi-label classification with the Hamming loss (the problems walkthrough)."""

    declared = (Option("labels", ("--labels",), "int", "the number of labels L", default=3, check=positive_int,
                       examples=(2,)),
                Option("features", ("--features",), "int", "the number of features D", default=4,
                       check=positive_int))

    def __init__(self, labels: int = 3, features: int = 4):
        super().__init__(labels=labels, features=features)
        self.L, self.D = int(labels), int(features)

    def tiny_examples(self, rng):
        """12 examples of D features whose L labels follow a random linear rule with noise."""
        truth = rng.normal(size=(self.L, self.D))
        out = []
        for _ in range(12):
            x = np.round(rng.normal(size=self.D), 1)
            out.append((x, tuple(int(v) for v in (truth @ x + rng.normal(scale=0.7, size=self.L) > 0))))
        return out

    def read(self, path):
        examples = []
        with open(path) as f:
            for number, line in enumerate(f, 1):
                tokens = line.split("#")[0].split()
                if not tokens:
                    continue
                y = [0] * self.L
                for label in ([] if tokens[0] == "none" else tokens[0].split(",")):
                    if not (label.isdigit() and 1 <= int(label) <= self.L):
                        raise InputError(f"label {label!r} is not one of 1..{self.L}", path, number)
                    y[int(label) - 1] = 1
                x = np.zeros(self.D)
                for token in tokens[1:]:
                    index, value = token.split(":")
                    x[int(index) - 1] = float(value)
                examples.append((x, tuple(y)))
        return examples

    def dimension(self, examples):
        return self.L * self.D

    def psi(self, x, y):
        return np.concatenate([x * label for label in y])

    def loss(self, y, ybar):
        return float(sum(a != b for a, b in zip(y, ybar)))

    def _gains(self, x, y, w):
        """w.Psi(x, ybar) - w.Psi(x, y) gained by flipping each label alone."""
        scores = w.reshape(self.L, self.D) @ x
        return np.array([(1 - 2 * label) * s for label, s in zip(y, scores)])

    def most_violated(self, x, y, w):
        """Each label on its own: flip it when 1 + its gain > 0 (ties keep it)."""
        gains = self._gains(x, y, w)
        return tuple(1 - label if 1.0 + g > 0 else label for label, g in zip(y, gains))

    def most_violated_slack(self, x, y, w):
        """max over d of d (1 + the d largest gains): flip the labels of the best d."""
        gains = self._gains(x, y, w)
        order = np.argsort(-gains, kind="stable")
        values = [d * (1.0 + gains[order[:d]].sum()) for d in range(self.L + 1)]
        best = int(np.argmax(values))
        flipped = set(order[:best].tolist()) if values[best] > 0 else set()
        return tuple(1 - label if i in flipped else label for i, label in enumerate(y))

    def predict(self, x, w):
        return tuple(int(s > 0) for s in w.reshape(self.L, self.D) @ x)

    def outputs(self, x):
        return itertools.product((0, 1), repeat=self.L)

    def format(self, y):
        return ",".join(str(i + 1) for i, label in enumerate(y) if label) or "none"


class MarginOnly(MultiLabel):
    """The same problem without a slack-rescaling oracle."""

    most_violated_slack = StructuredProblem.most_violated_slack


PROBLEMS = [Problem.of(MultiLabel)]  # what svmstruct.registry.register(this module) adds to the registry
