"""A structured problem over a kernel map (learn --problem ... -t, svmstruct.kernels.nystroem): the examples' feature
vectors mapped to phi(x) over a basis drawn from them, the model keeping the map (its basis; the factor recomputed
on reading), classify mapping the test examples alike; refusals where a kernel cannot apply."""
import numpy as np
import pytest

import svmstruct
from svmstruct.errors import InputError

from conftest import ROOT, invoke, invoke_here

STRUCT = ROOT.parent / "shared" / "reference" / "struct"
DIGITS = (STRUCT / "digits.train.svm", STRUCT / "digits.test.svm")


def accuracy(predictions, path) -> float:
    truth = [line.split()[0] for line in path.read_text().splitlines()]
    return float(np.mean(np.array(predictions.split()) == np.array(truth)))


@pytest.fixture(scope="module")
def needs_struct():
    if not STRUCT.exists():
        pytest.skip("needs ../shared/reference/struct")


def learn_and_classify(tmp_path, name, *options):
    model, predictions = tmp_path / f"{name}.model", tmp_path / f"{name}.pred"
    run = invoke("learn", "--problem", "multiclass", "-e", "0.01", *options, str(DIGITS[0]), str(model))
    assert run.returncode == 0, run.stderr
    run = invoke("classify", str(DIGITS[1]), str(model), str(predictions))
    assert run.returncode == 0, run.stderr
    return model, accuracy(predictions.read_text(), DIGITS[1])


@pytest.mark.slow
def test_an_rbf_basis_beats_the_linear_multiclass_on_held_out_digits(needs_struct, tmp_path):
    """digits (1,000 to train, 797 held out): the RBF kernel over a basis of 300 training images above the best
    linear C of svm_multiclass's reference grid (C 10000: 0.927; the kernel ~0.96)."""
    _, linear = learn_and_classify(tmp_path, "linear", "-c", "10000")
    model, kernel = learn_and_classify(tmp_path, "rbf", "-c", "100000", "-t", "2", "-g", "0.25", "--k", "300")
    assert kernel > linear + 0.02, (kernel, linear)
    text = model.read_text()
    assert "\nkernel rbf\n" in text and "\nmap.basis 300\n" in text and "\noption.features 300\n" in text


def test_the_map_goes_with_the_model_through_its_file(needs_struct, tmp_path):
    """fit_problem with a kernel: the model predicts the same before and after a round trip, through
    svmstruct.problems.predict and classify alike."""
    from svmstruct import training
    from svmstruct.config import Settings
    from svmstruct.kernels.nystroem import Spec
    from svmstruct.kernels.table import Kernel
    from svmstruct.problems import multiclass, spec

    problem = multiclass.Multiclass()
    examples = problem.read(str(DIGITS[0]))[:300]
    loss = spec(multiclass.Multiclass)
    opts = loss.resolve({"rescaling": 2})
    source = training.ExamplesSource(problem, examples, kernel=Spec(Kernel(2, gamma=0.25), size=60))
    trained = next(training.train_grid(source, loss, opts, Settings([1000.0], 0.1)))
    assert trained.feature_map is not None and trained.feature_map.size == 60 and trained.options["features"] == 60
    test = problem.read(str(DIGITS[1]))
    before = svmstruct.problems.predict(trained, test)
    trained.save(tmp_path / "m")
    again = svmstruct.load_model(str(tmp_path / "m"))
    assert np.array_equal(again.feature_map.basis.values, trained.feature_map.basis.values)
    assert np.array_equal(again.feature_map.factor, trained.feature_map.factor)
    assert svmstruct.problems.predict(again, test) == before
    run = invoke("classify", str(DIGITS[1]), str(tmp_path / "m"), str(tmp_path / "p"))
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "p").read_text().split() == [str(c) for c in before]


def test_hmm_tokens_map_too(needs_struct, tmp_path):
    """SVM-hmm over a kernel map of its tokens (the OCR letters' first 60 words): it trains, and classify tags
    every test token through the map."""
    lines = (STRUCT / "letters.train.hmm").read_text().splitlines(keepends=True)
    words = sorted({line.split()[1] for line in lines}, key=lambda q: int(q[4:]))[:60]
    chosen = set(words)
    (tmp_path / "train").write_text("".join(line for line in lines if line.split()[1] in chosen))
    run = invoke("learn", "--problem", "hmm", "-c", "10", "-e", "0.5", "-t", "2", "-g", "0.02", "--k", "80",
                 str(tmp_path / "train"), str(tmp_path / "m"))
    assert run.returncode == 0, run.stderr
    run = invoke("classify", str(STRUCT / "letters.test.hmm"), str(tmp_path / "m"), str(tmp_path / "p"))
    assert run.returncode == 0, run.stderr
    tags = (tmp_path / "p").read_text().split()
    assert len(tags) == len((STRUCT / "letters.test.hmm").read_text().splitlines())
    assert accuracy((tmp_path / "p").read_text(), STRUCT / "letters.test.hmm") > 0.3


@pytest.mark.parametrize("options, message", [
    (["--workers", "2"], "-t with --problem trains in one process"),
    (["--format", "svm_multiclass"], "the original's model cannot hold svmstruct's kernel map"),
    (["--features", "64"], "--features with -t: the problem's features are the kernel map's"),
])
def test_refusals_of_a_problems_kernel(needs_struct, tmp_path, options, message):
    run = invoke("learn", "--problem", "multiclass", "-c", "10", "-t", "2", *options, str(DIGITS[0]),
                 str(tmp_path / "m"))
    assert run.returncode == 2 and message in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert not (tmp_path / "m").exists()


def test_a_problem_without_feature_vectors_refuses_a_kernel(tmp_path):
    (tmp_path / "train").write_text("1 1:0.5\n")
    run = invoke_here("learn", "--problem", "multilabel_problem:MultiLabel", "-c", "10", "-t", "2",
                      tmp_path / "train", tmp_path / "m")
    assert run.returncode == 2 and "gives no feature vectors to map" in run.stderr, run.stderr


def test_a_damaged_map_is_refused_at_its_line(needs_struct, tmp_path):
    model, _ = learn_and_classify(tmp_path, "small", "-c", "1000", "-t", "2", "-g", "0.25", "--k", "20")
    text = model.read_text()
    without_kernel = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("kernel"))
    (tmp_path / "bad").write_text(without_kernel)
    with pytest.raises(InputError, match="a model over a kernel map needs a 'kernel' line"):
        svmstruct.load_model(str(tmp_path / "bad"))
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("map.basis"))
    lines[at + 2] = lines[at + 1]  # a basis vector twice: dependent
    (tmp_path / "twice").write_text("".join(lines))
    with pytest.raises(InputError, match=r"twice:\d+: 1 of the map's 20 basis vectors are dependent"):
        svmstruct.load_model(str(tmp_path / "twice"))
