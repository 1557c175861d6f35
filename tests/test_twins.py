"""Each job with a numba kernel and a plain twin for small inputs (svmstruct.compute.paths) gives the same result both
ways, to the bit, on every input class: the SVMlight reader (valid and malformed tokens of every kind, qids, comments,
blank lines, each layout and precision, with and without features), trec_eval's ranking (ties, empty queries) and the
docid checks."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmstruct.dataset import documents, ranking
from svmstruct.errors import InputError
from svmstruct.io import data, heads


@pytest.fixture
def way(monkeypatch):
    def use(path: str):
        monkeypatch.setenv("SVMSTRUCT_PATH", path)
    yield use


TARGETS = ["1", "0", "-2.5", "3e2", ".5", "5.", "+1", "2", "nan", "inf", "1e999", "abc", "0x1", "1:2", "1_0",
           "12345678901234567890", "-0"]
QIDS = ["qid:1", "qid:2", "qid:1", "qid:-3", "qid:x", "qid:", "qid:1:2", "qid:9999999999999999999", "qid:+4"]
OPTIONS = ["sid:3", "sid:x", "cost:1.5", "cost:1e999", "cost:nan", "cost:", "sid:1:2"]
FEATURES = ["1:0.5", "2:-1", "3:1e-5", "4:0", "5:-0", "6:1e40", "7:1.2345678901234567890", "8:3", "9:.5", "10:2.",
            "0:1", "-1:2", "+2:3", "5:abc", "5:1:2", "99999999999:1", "2147483648:1", "2147483647:1", ":3", "4:",
            "x:1", "s1:2", "c:1", "4:nan", "12:1e-320", "3:7"]
COMMENTS = ["", "# docid = GX1", "# d3 extra", "#", "#docid=", "# docid = \xe9t\xe9", "# docid=A docid=B", "#  x"]


@st.composite
def svmlight_texts(draw, bad: bool):
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["data"] * 6 + ["blank", "comment"]))
        if kind == "blank":
            lines.append(draw(st.sampled_from(["", "  ", "\t", "\r"])))
            continue
        if kind == "comment":
            lines.append(draw(st.sampled_from(COMMENTS[1:])))
            continue
        target = draw(st.sampled_from(TARGETS if bad else ["1", "0", "2", "-1", "0.5"]))
        tokens = [target]
        if draw(st.booleans()):
            tokens.append(draw(st.sampled_from(QIDS if bad else ["qid:1", "qid:2", "qid:3"])))
        if bad and draw(st.integers(0, 4)) == 0:
            tokens.append(draw(st.sampled_from(OPTIONS)))
        indices = sorted(draw(st.sets(st.integers(1, 40), max_size=6)))
        tokens += [f"{j}:{draw(st.sampled_from(['0.25', '-3', '1e-3', '7', '0']))}" for j in indices]
        if bad and draw(st.integers(0, 2)) == 0:
            tokens.insert(draw(st.integers(1, len(tokens))), draw(st.sampled_from(FEATURES + QIDS + OPTIONS)))
        space = draw(st.sampled_from([" ", "\t", "  "]))
        lines.append(space.join(tokens) + (" " + draw(st.sampled_from(COMMENTS)) if draw(st.booleans()) else "")
                     + draw(st.sampled_from(["", "", "\r", " "])))
    ending = draw(st.sampled_from(["\n", ""])) if lines else ""
    return ("\n".join(lines) + ending).encode("utf-8", "surrogateescape")


def _read(path, way, kind: str, **options):
    way(kind)
    try:
        return data.read_svmlight(str(path), **options)
    except InputError as e:
        return f"InputError: {e}"


def _same(a, b) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    X, Y = a.X, b.X
    assert type(X) is type(Y) and X.shape == Y.shape and X.dtype == Y.dtype
    if hasattr(X, "tocsr"):
        assert np.array_equal(X.indptr, Y.indptr) and np.array_equal(X.indices, Y.indices)
        X, Y = X.data, Y.data
    assert X.tobytes() == Y.tobytes()  # to the bit, -0.0 included
    for field in ("y", "qid", "qptr", "line"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert list(a.docids) == list(b.docids) and a.has_qid == b.has_qid
    assert (a.columns is None) == (b.columns is None) and (a.columns is None or np.array_equal(a.columns, b.columns))
    assert a.targets_only == b.targets_only


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(svmlight_texts(bad=True), svmlight_texts(bad=False)),
       options=st.sampled_from([{}, {"features": False}, {"dtype": np.float64}, {"layout": "dense"},
                                {"layout": "auto"}, {"n_features": 50}, {"dtype": np.float64, "layout": "dense"}]))
def test_the_reader_and_its_twin_read_every_file_alike(tmp_path, way, text, options):
    path = tmp_path / "t.dat"
    path.write_bytes(text)
    _same(_read(path, way, "kernel", **options), _read(path, way, "twin", **options))


@pytest.mark.parametrize("text", [
    b"", b"# only a comment\n", b"1 qid:1 1:1\n0 1:2\n", b"1 qid:1 1:1\n0 qid:2 1:2\n1 qid:1 1:3\n",
    b"1 qid:1 1:1e40 # float32 overflow\n0 1:2\n", b"1 qid:2 1:1\n0 qid:1 2:3 1:2\n", b"1 1:2 qid:3\n",
    b"1 qid:1 5000000:1 2147483647:0.5\n0 qid:1 7:1\n", b"2 qid:1 1:1 # docid = a\n1 qid:1 1:2 # docid = a\n",
    b"1 qid:1 1:1\n" * 3 + b"x qid:1 1:1\n", b"1 qid:1 3:1 2:1\n", b"\xff qid:1 1:1\n", b"1 qid:1 1:1",
])
@pytest.mark.parametrize("options", [{}, {"features": False}, {"layout": "dense"}])
def test_the_reader_and_its_twin_on_the_edges(tmp_path, way, text, options):
    """Empty files, mixed and reappearing qids (before and after a parse error), float32 overflow, hashed ids,
    repeated docids, decreasing indices, undecodable bytes, a last line without its newline."""
    path = tmp_path / "t.dat"
    path.write_bytes(text)
    _same(_read(path, way, "kernel", **options), _read(path, way, "twin", **options))


def test_a_large_file_takes_the_kernel_and_a_pipe_of_either_size_reads_alike(tmp_path, monkeypatch):
    """Below TWIN_BYTES the twin reads (no numba needed), above it the kernel; a pipe is looked at first and then
    read by the one its size chooses, the bytes looked at first read as part of it."""
    import subprocess
    import sys

    small = tmp_path / "small.dat"
    small.write_text("".join(f"{i % 3} qid:{1 + i // 10} 1:{i} 2:0.5 # d{i}\n" for i in range(100)))
    monkeypatch.setattr(heads, "TWIN_BYTES", 1000)  # the small file is large now
    monkeypatch.setattr(heads, "TWIN_LABEL_BYTES", 1000)
    monkeypatch.delenv("SVMSTRUCT_PATH", raising=False)
    big = data.read_svmlight(str(small))
    monkeypatch.setenv("SVMSTRUCT_PATH", "twin")  # the twin, forced beyond TWIN_BYTES, reads the whole file
    assert data.read_svmlight(str(small)).n_docs == data.read_svmlight(str(small), features=False).n_docs == 100
    assert sum(part.n_docs for part in data.read_parts(str(small))) == 100
    monkeypatch.undo()
    one_process = subprocess.run([sys.executable, "-c", (
        "import sys; from svmstruct.io import data; d = data.read_svmlight(sys.argv[1]); "
        "print(d.X.sum(), d.n_docs, 'numba' in sys.modules)"), str(small)], capture_output=True, text=True, check=True)
    assert one_process.stdout.split() == [str(big.X.sum()), "100", "False"]
    script = ("from svmstruct.io import data, heads; heads.TWIN_BYTES = 1000; d = data.read_svmlight('-'); "
              "print(d.X.sum(), list(d.docids)[-1])")
    piped = subprocess.run(f"cat {small} | {sys.executable} -c \"{script}\"", shell=True, capture_output=True,
                           text=True, check=True)
    assert piped.stdout.split() == [str(big.X.sum()), "d99"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 12), min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1),
       levels=st.sampled_from([2, 5, 1000]))
def test_trec_ranking_and_its_twin_agree(way, sizes, seed, levels):
    """Scores with many ties (2 or 5 distinct values) or few, empty queries, docids in any order."""
    rng = np.random.default_rng(seed)
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    scores = rng.integers(0, levels, qptr[-1]).astype(float) * rng.choice([1.0, -1.0])
    docids = [f"d{rng.integers(0, 50)}-{i}" for i in range(qptr[-1])]
    way("kernel")
    kernel = ranking.trec_ranking(scores, qptr, docids)
    way("twin")
    assert np.array_equal(kernel, ranking.trec_ranking(scores, qptr, docids))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 8), min_size=1, max_size=5), seed=st.integers(0, 2**32 - 1))
def test_repeated_docids_are_found_alike(way, sizes, seed):
    rng = np.random.default_rng(seed)
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    ids = documents.Docids()
    ids.extend([f"d{rng.integers(0, 12)}".encode() for _ in range(qptr[-1])])
    found = ids.freeze()
    dataset = documents.Dataset(np.zeros((qptr[-1], 0)), np.zeros(qptr[-1]), np.repeat(np.arange(len(sizes)), sizes),
                                qptr, found, np.arange(1, qptr[-1] + 1), "t.dat", True)
    results = []
    for kind in ("kernel", "twin"):
        way(kind)
        try:
            documents.check_unique_docids(dataset)
            results.append(None)
        except InputError as e:
            results.append(str(e))
    assert results[0] == results[1]


def _values_of_every_magnitude(rng, rows: int, columns: int, dtype) -> np.ndarray:
    """A rows x columns matrix of values from 1e-8 to 1e8, 40 % zeros and 10 % negative zeros."""
    X = rng.normal(size=(rows, columns)) * 10.0 ** rng.integers(-8, 8, size=(rows, columns))
    X[rng.random((rows, columns)) < 0.4] = 0.0
    X[rng.random((rows, columns)) < 0.1] = -0.0
    return X.astype(dtype)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(0, 30), columns=st.integers(0, 13), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.float32, np.float64]), dense=st.booleans())
def test_matvec_and_its_twin_agree_to_the_bit(way, rows, columns, seed, dtype, dense):
    """Sparse and dense, float32 and float64, empty rows and columns, -0.0, values of every magnitude."""
    import scipy.sparse as sp

    from svmstruct.compute import products

    rng = np.random.default_rng(seed)
    X = _values_of_every_magnitude(rng, rows, columns, dtype)
    w = rng.normal(size=columns) * 10.0 ** rng.integers(-5, 5, size=columns)
    w[rng.random(columns) < 0.2] = -0.0
    matrix = X if dense else sp.csr_matrix(X)
    if not dense:
        matrix.data[rng.random(matrix.nnz) < 0.1] = -0.0  # stored negative zeros too
    way("kernel")
    kernel = products.matvec(matrix, w)
    way("twin")
    assert products.matvec(matrix, w).tobytes() == kernel.tobytes()


WEIGHT_LINES = ["1 0.5", "2 -0.25", "3 1e-300", "4 0.1", "5 1.2345678901234567", "6 -0", "7 5e-324", "8 1e308",
                "9 0.30000000000000004", "10 123456789012345678", "3 nan", "4 inf", "0 1", "99 1", "x 1", "1",
                "1 2 3", "+2 1.5", "2 1_0", "2 0x10", "", "  ", "\t", "12345678901234567890 1", "2 1.5 ", " 2 1.5"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.sampled_from(WEIGHT_LINES), max_size=8), declared=st.integers(0, 9),
       n_features=st.sampled_from([12, 99]), ending=st.sampled_from(["\n", "\r\n"]))
def test_model_weight_lines_and_their_twin_agree(tmp_path_factory, way, lines, declared, n_features, ending):
    """Weight lines of every form (valid, malformed, ids outside 1..n_features, weights not finite), fewer or more
    lines than the header says, blank lines after them, CR LF: the same model, or the same first error."""
    from svmstruct import model

    path = tmp_path_factory.mktemp("m") / "w.model"
    head = ["svmstruct-model 1", "loss pairs", "output scores", f"n_features {n_features}", "threshold 0.5",
            f"weights {declared}"]
    path.write_bytes(ending.join(head + lines).encode() + ending.encode())
    results = []
    for kind in ("kernel", "twin"):
        way(kind)
        try:
            m = model.load_model(str(path))
            results.append((m.w.tobytes(), None if m.columns is None else m.columns.tobytes(), m.threshold))
        except InputError as e:
            results.append(str(e))
    assert results[0] == results[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(0, 30), columns=st.integers(0, 13), seed=st.integers(0, 2**32 - 1),
       dtype=st.sampled_from([np.float32, np.float64]), dense=st.booleans())
def test_rmatvec_and_its_twin_agree_to_the_bit(way, rows, columns, seed, dtype, dense):
    """X'c with zero coefficients (their rows skipped: an added 0.0 would turn a -0.0 into 0.0) and -0.0 values."""
    import scipy.sparse as sp

    from svmstruct.compute import products

    rng = np.random.default_rng(seed)
    X = _values_of_every_magnitude(rng, rows, columns, dtype)
    coef = rng.normal(size=rows) * (rng.random(rows) < 0.7)
    coef[rng.random(rows) < 0.1] = -0.0
    matrix = X if dense else sp.csr_matrix(X)
    way("kernel")
    kernel = products.rmatvec(matrix, coef)
    way("twin")
    assert products.rmatvec(matrix, coef).tobytes() == kernel.tobytes()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 14), min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1),
       levels=st.sampled_from([1, 2, 4, 100]), average=st.booleans())
def test_the_pairs_oracle_and_its_twin_agree_to_the_bit(way, sizes, seed, levels, average):
    """svm_rank's oracle (pairs, pairs-avg) on queries with tied labels and tied or close scores, empty queries and
    queries without a pair: the same label ranks, pair counts, dcoef and Delta."""
    from svmstruct.losses import rank

    rng = np.random.default_rng(seed)
    qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    y = rng.integers(0, levels, qptr[-1]).astype(float)
    scores = np.round(rng.normal(size=qptr[-1]), 1) * rng.choice([0.5, 1.0, 3.0])
    found = []
    for kind in ("kernel", "twin"):
        way(kind)
        most_violated, pairs = rank._pairs_oracle(y, qptr, average)
        dcoef, delta = most_violated(scores)
        found.append((pairs.tolist(), dcoef.tobytes(), float(delta)))
    assert found[0] == found[1]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 60), seed=st.integers(0, 2**32 - 1), levels=st.sampled_from([1, 2, 5, 1000]))
def test_pair_accuracy_and_its_twin_agree(way, n, seed, levels):
    from svmstruct.evaluation import measures

    ranked = np.random.default_rng(seed).integers(0, levels, n).astype(float)
    way("kernel")
    kernel = measures.pair_accuracy(ranked, ranked, 0.0)
    way("twin")
    assert measures.pair_accuracy(ranked, ranked, 0.0) == kernel


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 40))
def test_weights_are_written_alike(way, seed, n):
    """The model's weight lines: io.float_text's numba repr and Python's own, on doubles of every kind."""
    from svmstruct.io import model_files

    rng = np.random.default_rng(seed)
    values = rng.normal(size=n) * 10.0 ** rng.integers(-30, 30, n)
    special = rng.random(n) < 0.2
    values[special] = rng.choice([0.0, -0.0, 5e-324, 1e308, 0.1, 2.0 ** 60, 123456789.0], size=int(special.sum()))
    ids = np.sort(rng.choice(2**31 - 1, size=n, replace=False) + 1)
    way("kernel")
    kernel = model_files.weights_text(ids, values)
    way("twin")
    assert model_files.weights_text(ids, values) == kernel


SCORE_LINES = ["1", "-2.5", " 0.125\t", "\t3e2 ", ".5", "5.", "+1", "-0", "1e999", "-1e-400", "2.2250738585072014e-308",
               "0.30000000000000004", "-4.3113530601327613e-07", "12345678901234567890", "1 2", "1-2", "nan", "inf",
               "abc", "0x1", "1_0", "", "  ", "e5", "1e", ".", "-", "1\r2", "5\r"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.sampled_from(SCORE_LINES), max_size=8), ending=st.sampled_from(["\n", "\r\n"]),
       last=st.booleans())
def test_the_predictions_reader_and_its_twin_agree(tmp_path_factory, way, lines, ending, last):
    """Prediction files of every line form (numbers of each syntax, the ones float() alone reads, two numbers, no
    number, blanks around, a stray CR, CR LF), with and without a last newline: the same scores to the bit, or the
    same error."""
    from svmstruct.evaluation import tables

    path = tmp_path_factory.mktemp("p") / "predictions"
    path.write_bytes((ending.join(lines) + (ending if last and lines else "")).encode())
    results = []
    for kind in ("kernel", "twin"):
        way(kind)
        try:
            results.append(tables.read_predictions(str(path), len(lines)).tobytes())
        except InputError as e:
            results.append(str(e))
    assert results[0] == results[1]


def test_the_training_loops_products_take_the_kernel_once_numba_runs_kernels():
    """X @ w, X' c and svm_rank's pairs oracle are called every iteration: in a process where numba runs kernels
    already (an oracle's), a small one loads its kernel (milliseconds) rather than take the twin (Reuters corn
    errorrate: 11 s of training against 3 s); where numba runs none yet (a small classify or learn -l pairs), the
    twin, without numba."""
    import subprocess
    import sys

    probe = ("import sys, numpy as np, scipy.sparse as sp\n"
             "from svmstruct.compute import products\n"
             "if sys.argv[1] == 'running':\n"
             "    from svmstruct.problems import class_kernels\n"
             "    one = np.ones((1, 1))\n"
             "    class_kernels.row_dots.one_thread(np.array([0, 1]), np.array([0]), np.array([1.0]), one,\n"
             "                                      np.zeros(1, dtype=np.int64), np.empty(1))\n"
             "X = sp.random(50, 20, 0.3, format='csr', random_state=0)\n"
             "products.matvec(X, np.ones(20)); products.rmatvec(X, np.ones(50))\n"
             "from svmstruct.losses import rank\n"
             "rank._pairs_oracle(np.array([1.0, 0.0, 2.0]), np.array([0, 3]), False)\n"
             "print('svmstruct.compute.matvec' in sys.modules, 'svmstruct.losses.rank_oracles' in sys.modules,\n"
             "      'numba' in sys.modules)\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "SVMSTRUCT_PATH"}
    outputs = [subprocess.run([sys.executable, "-c", probe, state], capture_output=True, text=True, env=env,
                              check=True).stdout.split() for state in ("running", "idle")]
    assert outputs == [["True", "True", "True"], ["False", "False", "False"]]


def test_a_model_whose_predictions_run_kernels_has_its_weights_read_by_the_kernel(tmp_path):
    """classify of an hmm model runs numba's Viterbi whatever its size, so its weights are read by the kernel (the
    OCR letters' --t 2 --e 1 model, 84,287 weights: 0.5 s by the twin), alike, in our format and svm_hmm's; a
    multiclass model of as few weights, whose predictions are scipy's product, by the twin, without numba."""
    import subprocess
    import sys

    from svmstruct import model

    options = "option.tags 4\noption.features 8\noption.transitions 1\noption.emissions 0\n"  # 4 x 8 + 4 x 4 weights
    weights = "".join(f"{j} {(-1) ** j * j / 7!r}\n" for j in range(1, 49))
    probe = ("import sys; from svmstruct.model import load_model; m = load_model(sys.argv[1]); "
             "print(m.w.tobytes().hex(), 'svmstruct.io.float_text' in sys.modules)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "SVMSTRUCT_PATH"}
    paths = []
    for problem in ("hmm:HMM", "multiclass:Multiclass"):
        paths.append(tmp_path / problem.split(":")[0])
        paths[-1].write_text(f"svmstruct-model 1\nloss svmstruct.problems.{problem}\n{options}n_features 48\n"
                             f"threshold 0.0\nweights 48\n{weights}")
    paths.append(tmp_path / "svm_hmm")
    model.save_model(model.load_model(paths[0]), paths[-1], fmt="svm_hmm")
    seen = [subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, env=env,
                           check=True).stdout.split() for path in paths]
    assert [loaded for _, loaded in seen] == ["True", "False", "True"]
    assert seen[0][0] == seen[1][0]
    by_twin = subprocess.run([sys.executable, "-c", probe, str(paths[-1])], capture_output=True, text=True,
                             env={**env, "SVMSTRUCT_PATH": "twin"}, check=True).stdout.split()
    assert by_twin[0] == seen[2][0]  # (svm_hmm writes 8 digits: its weights are not ours to the bit)
