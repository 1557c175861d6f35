"""svmstruct.quick: `classify TEST MODEL` on small plain files without numba or scipy must write exactly
what the full path writes, and hand everything else to the full path."""
import gzip
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmstruct import api, data, model, quick, small

from conftest import ROOT, invoke

SMALL_RANKING = ROOT / "data" / "mq2008-small"


def full_path(test_path: str, trained) -> str:
    scores = model.score(trained, data.read_svmlight(test_path))
    return "".join(f"{s:.8f}\n" for s in scores)


def saved(trained, path, fmt="svmstruct"):
    trained.save(str(path), fmt)
    return model.load_model(str(path))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("models")
    train = data.read_svmlight(str(SMALL_RANKING / "train.txt"))
    ranking = api.fit(train, loss="map", C=10)
    binary = api.fit(train, loss="errorrate", C=1, rel_threshold=0)  # a bias: the threshold is not 0
    narrow = api.fit(train, loss="pairs", C=1)
    narrow.w = narrow.w[:20]  # features 21.. of the test files are unknown to it
    return {"map": (ranking, out / "map.model", "svmstruct"), "svmlight": (binary, out / "b.model", "svmlight"),
            "bias": (binary, out / "bias.model", "svmstruct"), "narrow": (narrow, out / "n.model", "svmstruct")}


@pytest.mark.parametrize("which", ["map", "svmlight", "bias", "narrow"])
@pytest.mark.parametrize("part", ["test", "vali"])
def test_the_shipped_files_score_as_on_the_full_path(models, which, part, tmp_path):
    trained, path, fmt = models[which]
    loaded = saved(trained, path, fmt)
    small = tmp_path / "small.txt"
    small.write_bytes(b"".join((SMALL_RANKING / f"{part}.txt").read_bytes().splitlines(keepends=True)[:100]))
    text = quick.classify(str(small), str(path))
    assert text is not None and text == full_path(str(small), loaded)


values = st.one_of(st.floats(-1e6, 1e6, allow_nan=False).map(repr), st.sampled_from(
    ["0", "-0", "-0.0", "1e-320", "000.5", ".5", "5.", "+3", "1E3", "0.1000000000000000055511151231257827",
     "123456789012345678901234567890"]))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1", "-1", "0", "2.5"]),
                          st.lists(st.tuples(st.integers(1, 40), values), max_size=12)), min_size=1, max_size=8),
       st.lists(st.floats(-10, 10, allow_nan=False), min_size=30, max_size=30),
       st.sampled_from(["svmstruct", "svmlight"]), st.booleans())
def test_random_plain_files_score_as_on_the_full_path(tmp_path_factory, lines, weights, fmt, with_qid):
    tmp = tmp_path_factory.mktemp("random")
    text = []
    for number, (target, pairs) in enumerate(lines):
        features = sorted(dict(pairs).items())
        qid = f" qid:{number // 3 + 1}" if with_qid else ""
        text.append(f"{target}{qid} " + " ".join(f"{i}:{v}" for i, v in features) + f" # doc{number}\n")
    test = tmp / "t.txt"
    test.write_text("".join(text))
    w = np.array(weights)
    w[3] = -0.0
    trained = model.Model(w=w, threshold=0.25, loss="map", header={"output": "scores"})
    loaded = saved(trained, tmp / "m.model", fmt)
    assert quick.classify(str(test), str(tmp / "m.model")) == full_path(str(test), loaded)


@pytest.mark.parametrize("content", [
    b"",  # no examples: the full path says so
    b"1 qid:1 1:0.5\n1 qid:2 1:0.5\n1 qid:1 1:0.5\n",  # a qid that reappears
    b"1 qid:1 1:0.5\n1 1:0.5\n",  # qid on some lines only
    b"1 2:0.5 1:0.5\n",  # indices not increasing
    b"1 1:nan\n", b"1 1:1e999\n", b"inf 1:1\n", b"1 1:1_0\n",  # not finite, not a plain decimal
    b"1 sid:3 1:0.5\n", b"1 cost:2 1:0.5\n", b"1 0:1\n", b"1 qid:x 1:1\n",
    b"  \n1 1:1\n",  # a line of spaces: whatever the reader makes of it, the full path decides
    b"1 1:0.5\x0b\n", "1 1:0.5 ünïcode\n".encode(),
])
def test_anything_not_plain_goes_to_the_full_path(models, content, tmp_path):
    trained, path, fmt = models["map"]
    saved(trained, path, fmt)
    test = tmp_path / "t.txt"
    test.write_bytes(content)
    assert quick.classify(str(test), str(path)) is None


def test_other_inputs_and_models_go_to_the_full_path(models, tmp_path):
    trained, path, _ = models["map"]
    saved(trained, path, "svmstruct")
    plain = b"1 qid:1 1:0.5 2:1\n0 qid:1 1:0.25\n"
    (tmp_path / "t.txt").write_bytes(plain)
    (tmp_path / "t.gz").write_bytes(gzip.compress(plain))
    (tmp_path / "big.txt").write_bytes(plain * (small.CLASSIFY_BYTES // len(plain) + 1))
    assert quick.classify(str(tmp_path / "t.txt"), str(path)) is not None
    for test in ("-", str(tmp_path / "t.gz"), str(tmp_path / "big.txt"), str(tmp_path / "absent.txt")):
        assert quick.classify(test, str(path)) is None
    query = model.Model(w=trained.w, loss="map", header={"output": "scores", "normalize": "query"})
    old = model.Model(w=trained.w, loss="map", header={})  # written before models said how they score
    div = model.Model(w=trained.w, loss="div", header={})
    for number, other in enumerate((query, old, div)):
        other.save(str(tmp_path / f"{number}.model"))
        assert quick.classify(str(tmp_path / "t.txt"), str(tmp_path / f"{number}.model")) is None
    hashed = model.Model(w=np.array([0.5, 2.0]), loss="map", header={"output": "scores"},
                         columns=np.array([0, 2**31 - 2]))
    hashed.save(str(tmp_path / "hashed.model"))
    text = quick.classify(str(tmp_path / "t.txt"), str(tmp_path / "hashed.model"))
    assert text in (None, full_path(str(tmp_path / "t.txt"), model.load_model(str(tmp_path / "hashed.model"))))
    (tmp_path / "bad.model").write_text("not a model\n")
    assert quick.classify(str(tmp_path / "t.txt"), str(tmp_path / "bad.model")) is None


def test_classify_on_a_small_file_loads_neither_numba_nor_scipy(models, tmp_path):
    trained, path, fmt = models["map"]
    saved(trained, path, fmt)
    small = tmp_path / "small.txt"
    small.write_bytes(b"".join((SMALL_RANKING / "test.txt").read_bytes().splitlines(keepends=True)[:10]))
    script = ("import sys; from svmstruct import cli\ntry:\n    cli.main(['classify', sys.argv[1], sys.argv[2], "
              "sys.argv[3]])\nfinally:\n    print(sorted(m for m in ('numba', 'scipy') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", script, str(small), str(path), str(tmp_path / "out")],
                         capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr
    with_option = invoke("classify", "-v", "0", str(small), str(path))  # an option: the full path
    assert (tmp_path / "out").read_text() == with_option.stdout == full_path(str(small), model.load_model(str(path)))


def test_eval_of_a_letor_file_loads_neither_numba_nor_scipy_and_reports_as_the_full_reader(models, tmp_path):
    """eval needs labels, qids and docids: a plain file up to small.LABELS_BYTES is read without numba or scipy,
    and the report is the one the full reader's dataset gives."""
    from svmstruct import data, evaluate

    trained, path, fmt = models["map"]
    saved(trained, path, fmt)
    test = SMALL_RANKING / "test.txt"
    preds = tmp_path / "p"
    assert invoke("classify", test, path, preds).returncode == 0
    script = ("import sys; from svmstruct import cli\ntry:\n    cli.main(['eval', '-m', 'map', '-m', 'ndcg@10', "
              "sys.argv[1], sys.argv[2]])\nfinally:\n"
              "    print(sorted(m for m in ('numba', 'scipy') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", script, str(test), str(preds)], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip().endswith("[]"), run.stdout + run.stderr
    light, full = quick.read_labels(str(test)), data.read_svmlight(str(test))
    assert light is not None
    for field in ("y", "qid", "qptr", "line"):
        assert np.array_equal(getattr(light, field), getattr(full, field)), field
    assert list(light.docids) == list(full.docids) and light.has_qid == full.has_qid
    scores = evaluate.read_predictions(str(preds), full.n_docs)
    names = ["map", "ndcg@10", "P_10", "mrr", "error", "rocarea"]
    assert evaluate.measure_table(light, scores, names) == evaluate.measure_table(full, scores, names)
