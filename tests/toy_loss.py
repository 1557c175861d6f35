"""A loss added the way docs/ARCHITECTURE.md describes, used by tests/test_toy_loss.py: one module that
declares its option and registers with one line, and nothing else changes (not the commands, not the estimators).

The toy is a classification SVM whose margin is its option: outputs are labelings ybar of the documents,
Delta(y, ybar) = margin * #(ybar_i != y_i), Psi(x, ybar) = 1/2 sum_i ybar_i x_i, and every document is an
example (n = N). A document is in the most violated labeling, flipped, iff y_i w.x_i < margin.
"""
import numpy as np

from svmstruct.options import positive_int
from svmstruct.spec import Loss, Option
from svmstruct.train.problem import Reference, TrainingProblem

MARGIN = Option("toy_option", ("--toy-option",), "int", "the margin a document needs (toy)", default=1,
                check=positive_int, metavar="M", examples=(2,))


def build(data, opts: dict) -> TrainingProblem:
    y = np.where(data.y > 0, 1.0, -1.0)
    margin = float(opts["toy_option"])

    def most_violated(scores):
        flipped = y * scores < margin
        return np.where(flipped, y, 0.0), margin * float(flipped.sum())

    def constraint(example, labeling):  # Psi(x, y) - Psi(x, ybar) = 1/2 sum (y_i - ybar_i) x_i
        ybar = np.asarray(labeling, dtype=float)
        return 0.5 * (y - ybar), margin * float(np.sum(ybar != y))

    return TrainingProblem(data.X, len(y), most_violated,
                           reference=Reference("labeling", 1, lambda e: len(y), constraint))


# family perf: a loss over documents labelled +1/-1, as svm_perf's, so the SVMPerf estimator takes it
LOSSES = [Loss("toy", (), "perf", "margin-scaled error count (the architecture walkthrough)", build, 0.01,
               options=(MARGIN,), output="labeling", measure=lambda opts: "accuracy")]
