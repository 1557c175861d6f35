"""Model files: exact round trip, atomic writes, the originals' format, corrupt files."""

import numpy as np
import pytest

from svmstruct import model
from svmstruct.errors import InputError, OutputError
from svmstruct.io import files

from conftest import REFERENCE, need_shared


def sample_model():
    rng = np.random.default_rng(0)
    w = rng.normal(size=50) * 10.0 ** rng.integers(-20, 20, size=50)
    w[::3] = 0.0
    return model.Model(w=w, threshold=0.1 + 0.2, loss="rocarea", options={"k": 10, "per_query": False},
                       header={"C": 100.0, "epsilon": 0.001, "iterations": 12, "train_file": "x.dat"})


def test_round_trip_is_exact(tmp_path):
    m = sample_model()
    path = tmp_path / "m.model"
    model.save_model(m, str(path))
    back = model.load_model(str(path))
    assert np.array_equal(back.w, m.w) and back.threshold == m.threshold
    assert back.loss == "rocarea" and back.options == {"k": "10", "per_query": "False"}
    assert back.header["C"] == "100.0" and back.header["train_file"] == "x.dat"
    model.save_model(back, str(tmp_path / "again.model"))
    assert (tmp_path / "again.model").read_text() == path.read_text()


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    target = tmp_path / "m.model"

    def explode(_m):
        raise RuntimeError("boom")

    monkeypatch.setattr(model, "format_model", explode)
    with pytest.raises(RuntimeError):
        model.save_model(sample_model(), str(target))
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_keeps_the_old_file_until_the_rename(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    files.atomic_write(str(target), "new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_write_into_missing_directory_is_an_output_error(tmp_path):
    with pytest.raises(OutputError, match="cannot write"):
        files.atomic_write(str(tmp_path / "nope" / "m.model"), "x")


@pytest.mark.parametrize(
    "text, line",
    [
        ("", 1),
        ("hello\n", 1),
        ("svmstruct-model 9\n", 1),
        ("svmstruct-model 1\nloss errorrate\nn_features 3\nthreshold 0\nweights 2\n1 0.5\n", 6),
        ("svmstruct-model 1\nloss errorrate\nn_features 3\nthreshold x\nweights 0\n", 4),
        ("svmstruct-model 1\nloss errorrate\nn_features 3\nthreshold 0\nweights 1\n7 0.5\n", 6),
        ("svmstruct-model 1\nloss errorrate\nn_features 3\nthreshold 0\nweights 1\n1 nan\n", 6),
        ("svmstruct-model 1\nloss errorrate\nthreshold 0\n", 3),
        ("SVM-light Version V6.20\n2 # kernel type\n", 2),
    ],
)
def test_corrupt_models_name_file_and_line(tmp_path, text, line):
    path = tmp_path / "bad.model"
    path.write_text(text)
    with pytest.raises(InputError) as e:
        model.load_model(str(path))
    assert e.value.path == str(path) and e.value.line == line


def test_missing_model_file(tmp_path):
    with pytest.raises(InputError, match="cannot open model"):
        model.load_model(str(tmp_path / "absent.model"))


def test_reads_the_originals_models_and_exports_them_back(tmp_path):
    need_shared()
    original = model.load_model(str(REFERENCE / "corn-perf-err-c100.model"))
    assert original.format == "svmlight" and original.threshold == pytest.approx(1.1632508)
    assert original.n_features == 11232 and np.count_nonzero(original.w) > 1000
    path = tmp_path / "export.model"
    path.write_text(model.format_svmlight(original))
    again = model.load_model(str(path))
    np.testing.assert_allclose(again.w, original.w, rtol=1e-7)
    assert again.threshold == pytest.approx(original.threshold, rel=1e-7)


def svm_light_kernel_model(kind: str, sv_lines: list, parameters=("3", "1", "1", "1")) -> str:
    header = ["SVM-light Version V6.20", f"{kind} # kernel type"]
    header += [f"{value} # kernel parameter -{flag} " for value, flag in zip(parameters, "dgsr")]
    header += ["empty# kernel parameter -u ", "4 # highest feature index ", "2 # number of training documents ",
               f"{len(sv_lines) + 1} # number of support vectors plus 1 ",
               "0.5 # threshold b, each following line is a SV"]
    return "\n".join(header + sv_lines) + "\n"


@pytest.mark.parametrize("kind, expected", [
    ("1", lambda dots: (1 * dots + 1) ** 3), ("2", None), ("3", lambda dots: np.tanh(1 * dots + 1))])
def test_svm_light_kernel_models_score_their_expansion(tmp_path, kind, expected):
    """score(x) = sum_j alpha_j k(sv_j, x) - b, written from svm_light's kernel definitions."""
    from svmstruct.io import data

    path = tmp_path / "k.model"
    path.write_text(svm_light_kernel_model(kind, ["0.5 1:1 3:0.25 #", "-2 2:0.5 4:1 #"]))
    trained = model.load_model(str(path))
    test = tmp_path / "t.dat"
    test.write_text("1 1:0.5 2:1\n-1 3:2 4:0.125\n")
    ds = data.read_svmlight(str(test))
    sv = np.array([[1, 0, 0.25, 0], [0, 0.5, 0, 1]])
    x = ds.X.toarray() if hasattr(ds.X, "toarray") else ds.X
    dots = x @ sv.T
    if kind == "2":
        values = np.exp(-1.0 * ((x ** 2).sum(1)[:, None] - 2 * dots + (sv ** 2).sum(1)[None, :]))
    else:
        values = expected(dots)
    assert model.score(trained, ds) == pytest.approx(values @ np.array([0.5, -2.0]) - 0.5, rel=1e-12)


def test_a_user_kernel_model_is_one_clear_error(tmp_path):
    path = tmp_path / "k.model"
    path.write_text(svm_light_kernel_model("4", ["0.5 1:1 #"]))
    with pytest.raises(InputError, match="user-defined kernels"):
        model.load_model(str(path))
    path.write_text(svm_light_kernel_model("7", ["0.5 1:1 #"]))
    with pytest.raises(InputError, match="unknown kernel type"):
        model.load_model(str(path))
