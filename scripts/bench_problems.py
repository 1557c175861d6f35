"""The problems of the package. SVM-multiclass (svmstruct.problems.multiclass) against scikit-learn's
LinearSVC(multi_class="crammer_singer")
(liblinear's Crammer & Singer solver) on the same objective, on scikit-learn's digits (1,797 images, 10 classes,
64 features; 1,000 to train, the rest to test): svm_multiclass's 1/2|w|^2 + C/n sum xi with Delta = 100 equals
liblinear's with C_liblinear = C / (100 n), w = 100 w_liblinear. Prints both primal objectives (computed alike
here), their relative difference, the times and the test accuracies. SVM-hmm (svmstruct.problems.hmm) on the
sticky Markov chains of tests/test_hmm.py (150 sequences to train, 100 held out): held-out token accuracy against
SVM-multiclass on the tokens alone, and the training time of 3,000 sequences. The original programs are not in
these comparisons: their sources cannot be fetched from this machine.

Usage: python scripts/bench_problems.py
"""
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.svm import LinearSVC

import svmstruct
from svmstruct.problems.hmm import HMM
from svmstruct.problems.multiclass import LOSS, Examples, Multiclass

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_hmm import sequences, token_accuracy  # noqa: E402
from test_multiclass import objective  # noqa: E402


def main():
    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    X = sp.csr_matrix(X / 16.0)
    train, test = (Examples(X[part], y[part] + 1) for part in (order[:1000], order[1000:]))
    n, K = len(train), 10
    print("| C | svmstruct primal | iterations | s | liblinear primal | s | rel. diff | test accuracy "
          "(ours / liblinear) |")
    print("|---|---|---|---|---|---|---|---|")
    for C in (1.0, 100.0, 10000.0):
        start = time.perf_counter()
        ours = svmstruct.fit_problem(Multiclass(), train, C=C, epsilon=0.01)
        ours_s = time.perf_counter() - start
        w = np.zeros(K * X.shape[1])
        w[:len(ours.w)] = ours.w
        start = time.perf_counter()
        theirs = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C / (LOSS * n), tol=1e-8,
                           max_iter=100000).fit(train.X, train.y)
        theirs_s = time.perf_counter() - start
        p_ours = objective(train.X, train.y, w, C, K)
        p_theirs = objective(train.X, train.y, LOSS * theirs.coef_.ravel(), C, K)
        acc_ours = np.mean(np.array(svmstruct.problems.predict(ours, test)) == test.y)
        acc_theirs = np.mean(theirs.predict(test.X) == test.y)
        print(f"| {C:g} | {p_ours:.6f} | {ours.result.iterations} | {ours_s:.2f} | {p_theirs:.6f} | {theirs_s:.2f} | "
              f"{(p_ours - p_theirs) / p_theirs:+.2e} | {acc_ours:.4f} / {acc_theirs:.4f} |")

    hmm_table()


def hmm_table():
    drawn = sequences(np.random.default_rng(1), 250)
    train, test = drawn[:150], drawn[150:]
    hmm = svmstruct.fit_problem(HMM(), train, C=10.0)
    tokens = Examples(sp.vstack([x for x, _ in train], format="csr"), np.concatenate([y for _, y in train]))
    alone = svmstruct.fit_problem(Multiclass(), tokens, C=10.0)
    flat = Examples(sp.vstack([x for x, _ in test], format="csr"), np.concatenate([y for _, y in test]))
    without = np.mean(np.array(svmstruct.problems.predict(alone, flat)) == flat.y)
    print(f"\nSVM-hmm held-out token accuracy {token_accuracy(svmstruct.problems.predict(hmm, test), test):.4f} "
          f"({hmm.result.iterations} iterations); the tokens alone (SVM-multiclass) {without:.4f}")
    many = sequences(np.random.default_rng(2), 3000)
    start = time.perf_counter()
    trained = svmstruct.fit_problem(HMM(), many, C=10.0)
    print(f"SVM-hmm on 3,000 sequences ({sum(len(y) for _, y in many):,} tokens): {trained.result.iterations} "
          f"iterations in {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
