"""SVM-hmm as a problem of the package (svmstruct.problems.hmm): Viterbi's most violated tagging and prediction
against enumeration, and on sequences whose tags follow a sticky Markov chain it tags held-out tokens better than
the same features without transitions (SVM-multiclass per token), from Python and from the command line."""
import itertools

import numpy as np
import pytest
import scipy.sparse as sp

import svmstruct
from svmstruct.problems import StructuredProblem
from svmstruct.problems.hmm import HMM
from svmstruct.problems.multiclass import Examples, Multiclass

from conftest import invoke_here


@pytest.mark.parametrize("seed", range(15))
def test_viterbi_attains_the_enumerated_maximum(seed):
    rng = np.random.default_rng(seed)
    K, D, length = int(rng.integers(1, 4)), 3, int(rng.integers(1, 5))
    problem = HMM(tags=K, features=D)
    dim = problem.dimension([])
    x = sp.csr_matrix(np.round(rng.normal(size=(length, D)), 1))
    y = rng.integers(1, K + 1, size=length)
    for w in (rng.normal(size=dim), np.zeros(dim), np.round(rng.normal(size=dim))):
        def margin(out, w=w):
            return problem.loss(y, out) + w @ problem.vector(x, out, dim)

        def score(out, w=w):
            return w @ problem.vector(x, out, dim)

        everything = [np.array(out) for out in itertools.product(range(1, K + 1), repeat=length)]
        assert margin(problem.most_violated(x, y, w)) == pytest.approx(max(map(margin, everything)), abs=1e-9)
        assert score(problem.predict(x, w)) == pytest.approx(max(map(score, everything)), abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_the_all_at_once_cut_equals_the_one_at_a_time_cut(seed):
    rng = np.random.default_rng(seed)
    examples = sequences(rng, 8, K=3, D=4)
    cut_equals_the_one_at_a_time_cut(HMM(), examples, rng)


def cut_equals_the_one_at_a_time_cut(problem, examples, rng):
    dim = problem.dimension(examples)
    for w in (rng.normal(size=dim), np.zeros(dim)):
        fast, total = problem.cut(examples, w, 2)
        slow, slow_total = StructuredProblem.cut(problem, examples, w, 2)
        np.testing.assert_allclose(fast, slow, atol=1e-9)
        assert total == slow_total


def sequences(rng, count, K=3, D=6, stay=0.85, noise=1.6):
    """Tags from a sticky Markov chain; a token's features are its tag's prototype plus much noise."""
    prototypes = rng.normal(size=(K, D))
    out = []
    for _ in range(count):
        length = int(rng.integers(5, 15))
        tags = [int(rng.integers(K))]
        for _ in range(length - 1):
            tags.append(tags[-1] if rng.random() < stay else int(rng.integers(K)))
        X = prototypes[tags] + noise * rng.normal(size=(length, D))
        out.append((sp.csr_matrix(X), np.array(tags) + 1))
    return out


def token_accuracy(predicted, examples):
    return np.mean(np.concatenate([p == y for p, (_, y) in zip(predicted, examples)]))


@pytest.fixture(scope="module")
def chains():
    """150 sequences to train on and 100 held out, from one chain and one set of prototypes."""
    drawn = sequences(np.random.default_rng(1), 250)
    return drawn[:150], drawn[150:]


@pytest.mark.slow
def test_transitions_tag_held_out_sequences_better_than_tokens_alone(chains):
    train, test = chains
    hmm = svmstruct.fit_problem(HMM(), train, C=10.0)
    tokens = Examples(sp.vstack([x for x, _ in train], format="csr"), np.concatenate([y for _, y in train]))
    alone = svmstruct.fit_problem(Multiclass(), tokens, C=10.0)
    with_transitions = token_accuracy(svmstruct.problems.predict(hmm, test), test)
    flat = Examples(sp.vstack([x for x, _ in test], format="csr"), np.concatenate([y for _, y in test]))
    without = np.mean(np.array(svmstruct.problems.predict(alone, flat)) == flat.y)
    assert hmm.result.converged and with_transitions > without + 0.05, (with_transitions, without)


def write_sequences(path, examples):
    """An svm_hmm file: `TAG qid:SEQUENCE index:value ...` per token."""
    path.write_text("".join(f"{tag} qid:{q + 1} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in zip(row.indices, row.data))
                            + "\n" for q, (x, tags) in enumerate(examples) for row, tag in zip(x, tags)))


@pytest.mark.slow
def test_learn_and_classify_sequences_from_the_command_line(chains, tmp_path):
    train, test = chains
    for name, examples in (("train", train), ("test", test)):
        write_sequences(tmp_path / name, examples)
    run = invoke_here("learn", "--problem", "hmm", "-c", "10", "-v", "0", tmp_path / "train", tmp_path / "m")
    assert run.returncode == 0, run.stderr
    assert invoke_here("classify", tmp_path / "test", tmp_path / "m", tmp_path / "tags").returncode == 0
    predicted = np.array([int(t) for t in (tmp_path / "tags").read_text().split()])
    truth = np.concatenate([y for _, y in test])
    assert len(predicted) == len(truth) and np.mean(predicted == truth) > 0.6
    model = svmstruct.load_model(str(tmp_path / "m"))
    again = svmstruct.fit_problem(HMM(), HMM().read(str(tmp_path / "train")), C=10.0)
    np.testing.assert_allclose(again.w, model.w, rtol=1e-9, atol=1e-12)


# ---- svm_hmm's orders, its beam and the zero/one loss

def _orders(rng):
    t = int(rng.integers(0, 4))
    return t, int(rng.integers(0, min(t, 1) + 1)), int(rng.integers(0, 2))


@pytest.mark.parametrize("seed", range(40))
def test_viterbi_of_every_order_attains_the_enumerated_maximum(seed):
    """Transitions of order 0-3, emissions of order 0-1, the wrong tags or zero/one per sequence: the most violated
    tagging and the prediction against every tagging (random, zero and integer weights: ties)."""
    rng = np.random.default_rng(100 + seed)
    t, e, loss = _orders(rng)
    K, D, length = int(rng.integers(1, 4)), 3, int(rng.integers(1, 6))
    problem = HMM(tags=K, features=D, transitions=t, emissions=e, loss_function=loss)
    dim = problem.dimension([])
    x = sp.csr_matrix(np.round(rng.normal(size=(length, D)), 1))
    y = rng.integers(1, K + 1, size=length)
    everything = [np.array(out) for out in itertools.product(range(1, K + 1), repeat=length)]
    for w in (rng.normal(size=dim), np.zeros(dim), np.round(rng.normal(size=dim))):
        def margin(out, w=w):
            return problem.loss(y, out) + w @ problem.vector(x, out, dim)

        def score(out, w=w):
            return w @ problem.vector(x, out, dim)

        assert margin(problem.most_violated(x, y, w)) == pytest.approx(max(map(margin, everything)), abs=1e-9)
        assert score(problem.predict(x, w)) == pytest.approx(max(map(score, everything)), abs=1e-9)
        wide = problem.predict(x, w, beam=10_000)  # a beam that keeps every state: exact
        assert score(wide) == pytest.approx(max(map(score, everything)), abs=1e-9)


@pytest.mark.parametrize("seed", range(8))
def test_the_all_at_once_cut_of_every_order_equals_the_one_at_a_time_cut(seed):
    rng = np.random.default_rng(200 + seed)
    t, e, loss = _orders(rng)
    problem = HMM(transitions=t, emissions=e, loss_function=loss)
    cut_equals_the_one_at_a_time_cut(problem, sequences(rng, 6, K=3, D=4), rng)


def test_svm_hmms_option_checks():
    from svmstruct.errors import UsageError

    with pytest.raises(UsageError, match="at most that of the transitions"):
        HMM(transitions=0, emissions=1)
    run = invoke_here("learn", "--problem", "hmm", "-c", "1", "--problem-option", "transitions=4", "x", "m")
    assert run.returncode == 2 and "must be 0, 1, 2 or 3" in run.stderr


def test_svm_hmms_flags_are_spelled_as_svm_hmm_spells_them(chains, tmp_path):
    """--t, --e, --b and --loss-function on learn's command line are the problem's options (svm_hmm_learn's --t 2
    --e 1 --b 2; its -l is --loss-function here): the model is the one --problem-option gives; a kernel's --t
    without --problem, a value given both ways, and svm_perf's --b for multiclass are refused."""
    write_sequences(tmp_path / "train", chains[0][:40])
    flagged = invoke_here("learn", "--problem", "hmm", "-c", "10", "--t", "2", "--e", "1", "--b", "2",
                          "--loss-function", "0", "-v", "0", tmp_path / "train", tmp_path / "flagged")
    assert flagged.returncode == 0, flagged.stderr
    named = invoke_here("learn", "--problem", "hmm", "-c", "10", "-v", "0", *[
        arg for option in ("transitions=2", "emissions=1", "beam=2", "loss_function=0")
        for arg in ("--problem-option", option)], tmp_path / "train", tmp_path / "named")
    assert named.returncode == 0, named.stderr
    assert (tmp_path / "flagged").read_bytes() == (tmp_path / "named").read_bytes()
    assert svmstruct.load_model(str(tmp_path / "flagged")).options["transitions"] == "2"
    refused = {
        ("--t", "2", "--problem-option", "transitions=3"): "--t and --problem-option transitions both give",
        ("--t", "7"): "--t must be 0, 1, 2 or 3",
        ("--t", "0", "--e", "1"): "at most that of the transitions",
    }
    for args, message in refused.items():
        run = invoke_here("learn", "--problem", "hmm", "-c", "1", *args, tmp_path / "train", tmp_path / "m")
        assert run.returncode == 2 and message in run.stderr, (args, run.stderr)
    run = invoke_here("learn", "-l", "f1", "--t", "2", tmp_path / "train", tmp_path / "m")
    assert run.returncode == 2 and "--t applies to a kernel" in run.stderr
    run = invoke_here("learn", "--problem", "multiclass", "-c", "1", "--b", "2", tmp_path / "train", tmp_path / "m")
    assert run.returncode == 2 and "--b does not apply" in run.stderr
    assert not (tmp_path / "m").exists()
    listing = invoke_here("losses").stdout
    assert "--problem NAME" in listing and "\nhmm " in listing and "--t --e --b --loss-function" in listing
    assert "With --problem hmm: the order of the transitions" in " ".join(invoke_here("learn", "--help").stdout.split())


@pytest.mark.parametrize("seed", range(8))
def test_the_kept_taggings_cut_is_each_sequences_most_violated_kept_tagging(seed):
    """cached_cut (svm_struct's constraint cache) against a loop over the sequences with psi and loss: each sequence
    keeps the last five distinct taggings the oracle gave it, and the cut at a new w takes the most violated of them or
    the true tagging (every order, both losses; ties cannot decide with random weights)."""
    rng = np.random.default_rng(300 + seed)
    t, e, loss = _orders(rng)
    problem = HMM(transitions=t, emissions=e, loss_function=loss)
    examples = sequences(rng, 6, K=3, D=4)
    dim = problem.dimension(examples)
    assert problem.cached_cut(examples, rng.normal(size=dim), 2) is None  # nothing kept before the oracle ran
    kept = [[y] * 5 for _, y in examples]
    oldest = [0] * len(examples)
    for _ in range(8):  # more answers than a sequence keeps
        w = rng.normal(size=dim)
        problem.cut(examples, w, 2)
        for i, (x, y) in enumerate(examples):
            answer = problem.most_violated(x, y, w)
            if not any(np.array_equal(answer, row) for row in kept[i]):
                kept[i][oldest[i]] = answer
                oldest[i] = (oldest[i] + 1) % 5
    w = rng.normal(size=dim)
    expected, total = np.zeros(dim), 0.0
    for (x, y), rows in zip(examples, kept):
        best = max([y, *rows], key=lambda out: problem.loss(y, out) + w @ problem.vector(x, out, dim))
        expected += problem.vector(x, y, dim) - problem.vector(x, best, dim)
        total += problem.loss(y, best)
    found, found_total = problem.cached_cut(examples, w, 2)
    np.testing.assert_allclose(found, expected, atol=1e-9)
    assert found_total == total


def test_training_with_the_kept_taggings_is_certified_as_without_and_calls_the_oracle_less():
    """The kept taggings' cuts only move the dual: the run stops on the oracle's own certificate, within C epsilon of
    the optimum that a tight run without them brackets, with fewer calls to Viterbi."""
    from svmstruct import training

    examples = sequences(np.random.default_rng(7), 60, K=4, D=5)
    C, eps = 10.0, 0.05

    def run(keep: bool, epsilon: float):
        problem = HMM(transitions=2).training_problem(examples)
        calls, oracle = [], problem.most_violated
        problem.most_violated = lambda w: calls.append(1) or oracle(w)
        if not keep:
            problem.cached = None
        return training.train(problem, C, epsilon), len(calls)

    (tight, _), (plain, plain_calls), (kept, kept_calls) = run(False, 1e-4), run(False, eps), run(True, eps)
    for result in (tight, plain, kept):
        assert result.converged
    optimum_low, optimum_high = tight.dual, tight.primal
    assert kept.dual <= optimum_high + 1e-9 and kept.primal >= optimum_low - 1e-9
    assert kept.primal - kept.dual <= C * eps * (1 + 1e-6)
    assert kept_calls < plain_calls


def test_a_run_resumed_from_its_checkpoint_keeps_the_taggings_and_ends_as_the_whole_run(tmp_path):
    """The checkpoint saves the taggings the oracle gave (cached_cut's), so a resumed run takes the same steps as one
    that never stopped: the same iterations and weights. A checkpoint whose kept taggings name a tag that does not
    exist is refused in one line."""
    import svmstruct

    train = tmp_path / "train.hmm"
    write_sequences(train, sequences(np.random.default_rng(11), 60, K=4, D=5))
    common = ["--problem", "hmm", "--t", "2", "-c", "10", "-e", "0.05", "-v", "0"]
    assert invoke_here("learn", *common, train, tmp_path / "whole").returncode == 0
    stopped = invoke_here("learn", *common, "-#", "4", "--checkpoint", tmp_path / "ck", train, tmp_path / "part")
    assert stopped.returncode == 0 and (tmp_path / "ck").exists(), stopped.stderr
    with np.load(tmp_path / "ck") as saved:
        arrays = dict(saved)
    assert len(arrays["kept"]) > 0
    arrays["kept"][0] = 99  # a tag of none of the 4
    with open(tmp_path / "damaged", "wb") as f:
        np.savez(f, **arrays)
    refused = invoke_here("learn", *common, "--checkpoint", tmp_path / "damaged", "--resume", train, tmp_path / "m")
    assert refused.returncode != 0 and "kept taggings" in refused.stderr and not (tmp_path / "m").exists()
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    resumed = invoke_here("learn", *common, "--checkpoint", tmp_path / "ck", "--resume", train, tmp_path / "done")
    assert resumed.returncode == 0, resumed.stderr
    done, whole = (svmstruct.load_model(str(tmp_path / name)) for name in ("done", "whole"))
    assert done.header["iterations"] == whole.header["iterations"] and int(whole.header["iterations"]) > 4
    assert np.abs(done.w - whole.w).max() <= 1e-9 * np.abs(whole.w).max()
