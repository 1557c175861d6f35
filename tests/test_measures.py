"""Measures against independent references: pytrec_eval (trec_eval), scikit-learn, loops from the definitions."""
import numpy as np
import pytest

from svmstruct.dataset import ranking
from svmstruct.evaluation import measures
from svmstruct.io import data, trec

from conftest import DATA, REFERENCE, need_shared

TREC_MEASURES = {"map": "map", "P_5": "P_5", "P_10": "P_10", "recip_rank": "recip_rank", "ndcg": "ndcg",
                 "ndcg_cut_10": "ndcg_cut_10"}


def parse_trec(text: str, columns: int):
    rows = [line.split() for line in text.splitlines()]
    assert all(len(r) == columns for r in rows)
    return rows


@pytest.fixture(scope="module", params=["S1", "S2", "S3", "S4", "S5"])
def mq2008_test(request):
    need_shared()
    return data.read_svmlight(str(DATA / "mq2008" / f"{request.param}.txt"))


def score_variants(dataset):
    from svmstruct import model

    rng = np.random.default_rng(3)
    model_scores = model.score(model.load_model(str(REFERENCE / "mq2008-S1-rank-l1-c1.model")), dataset)
    return {
        "model": model_scores,
        "ties": np.round(model_scores, 1),
        "random": rng.normal(size=dataset.n_docs),
        "constant": np.zeros(dataset.n_docs),
    }


@pytest.mark.parametrize("variant", ["model", "ties", "random", "constant"])
def test_trec_names_equal_pytrec_eval_per_query_and_mean(mq2008_test, variant):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    scores = score_variants(mq2008_test)[variant]
    qrels, run = {}, {}
    for qid, _, docid, rel in parse_trec(trec.format_qrels(mq2008_test), 4):
        qrels.setdefault(qid, {})[docid] = int(rel)
    for qid, _, docid, _rank, score, _ in parse_trec(trec.format_run(mq2008_test, scores), 6):
        run.setdefault(qid, {})[docid] = float(score)
    expected = pytrec_eval.RelevanceEvaluator(qrels, set(TREC_MEASURES.values())).evaluate(run)
    table = measures.measure_table(mq2008_test, scores, list(TREC_MEASURES))
    for ours, theirs in TREC_MEASURES.items():
        for qid, values in expected.items():  # to the bit: the terms added in trec_eval's order
            assert table[ours][qid] == values[theirs], (ours, qid)
        mean = np.mean([values[theirs] for values in expected.values()])
        assert table[ours]["all"] == pytest.approx(mean, abs=1e-9)


def test_trec_run_ranks_follow_trec_eval_tie_order(mq2008_test):
    scores = np.zeros(mq2008_test.n_docs)
    rows = parse_trec(trec.format_run(mq2008_test, scores), 6)
    first_query = [r for r in rows if r[0] == rows[0][0]]
    docids = [r[2] for r in first_query]
    assert docids == sorted(docids, reverse=True)
    assert [int(r[3]) for r in first_query] == list(range(1, len(first_query) + 1))


def ndcg_at_k_loop(labels, scores, k):
    """NDCG@k from the definition: gain 2^l - 1, discount 1/log2(1 + position), ties by input order."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    dcg = sum((2 ** labels[i] - 1) / np.log2(2 + r) for r, i in enumerate(order[:k]))
    ideal = sorted(labels, reverse=True)
    best = sum((2 ** l - 1) / np.log2(2 + r) for r, l in enumerate(ideal[:k]))
    return dcg / best if best > 0 else 0.0


def ap_loop(labels, scores):
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    hits, total = 0, 0.0
    for r, i in enumerate(order, 1):
        if labels[i] > 0:
            hits += 1
            total += hits / r
    return total / hits if hits else 0.0


@pytest.mark.parametrize("seed", range(20))
def test_at_names_equal_loops_and_sklearn(seed):
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    labels = rng.integers(0, 3, size=n).astype(float)
    scores = rng.normal(size=n)  # distinct scores: tie order plays no role
    docids = [f"d{i}" for i in range(n)]
    qptr = np.array([0, n])
    for k in (1, 5, 10):
        got = measures.per_query(measures.lookup(f"ndcg@{k}"), labels, scores, qptr, docids)[0]
        assert got == pytest.approx(ndcg_at_k_loop(labels, scores, k), abs=1e-12)
        if labels.max() > 0 and n > 1:
            assert got == pytest.approx(ndcg_score([2 ** labels - 1], [scores], k=k), abs=1e-12)
    got = measures.per_query(measures.lookup("map"), labels, scores, qptr, docids)[0]
    assert got == pytest.approx(ap_loop(labels, scores), abs=1e-12)


def eru_loop(labels, scores, alpha, neutral):
    """ERU from Breese et al. (1998) as Le & Smola eq. 16 states it: sum over ranks j of max(v_j - d, 0) /
    2^((j - 1)/(alpha - 1)), over the same for the labels sorted down; ties by input order."""
    def utility(values):
        return sum(max(v - neutral, 0.0) / 2 ** ((j - 1) / (alpha - 1)) for j, v in enumerate(values, 1))

    best = utility(sorted(labels, reverse=True))
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    return utility([labels[i] for i in order]) / best if best > 0 else 0.0


@pytest.mark.parametrize("seed", range(10))
def test_eru_and_wta_equal_loops_from_the_paper(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    labels = rng.integers(0, 4, size=n).astype(float)
    scores = rng.normal(size=n)
    docids = [f"d{i}" for i in range(n)]
    qptr = np.array([0, n])
    for name, alpha, neutral in (("eru", 5.0, 0.0), ("eru:3:1", 3.0, 1.0), ("eru:1.5:0.5", 1.5, 0.5)):
        got = measures.per_query(measures.lookup(name), labels, scores, qptr, docids)[0]
        assert got == pytest.approx(eru_loop(labels, scores, alpha, neutral), abs=1e-12), name
    wta = measures.per_query(measures.lookup("wta"), labels, scores, qptr, docids)[0]
    assert wta == float(labels[int(np.argmax(scores))] == labels.max())
    for bad in ("eru:1:0", "eru:x:0", "eru:3"):
        with pytest.raises(KeyError):
            measures.lookup(bad)


@pytest.mark.parametrize("seed", range(10))
def test_file_measures_equal_sklearn(seed):
    from sklearn import metrics

    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=200, p=[0.7, 0.3])
    s = np.round(rng.normal(size=200) + 0.8 * y, 1)  # ties on purpose
    actual, predicted = y > 0, s > 0

    def ours(name):
        return measures.over_file(measures.lookup(name), y, s)

    assert ours("accuracy") == pytest.approx(metrics.accuracy_score(actual, predicted))
    assert ours("error") == pytest.approx(1 - metrics.accuracy_score(actual, predicted))
    assert ours("precision") == pytest.approx(metrics.precision_score(actual, predicted))
    assert ours("recall") == pytest.approx(metrics.recall_score(actual, predicted))
    assert ours("f1") == pytest.approx(metrics.f1_score(actual, predicted))
    assert ours("fbeta2") == pytest.approx(metrics.fbeta_score(actual, predicted, beta=2))
    assert ours("rocarea") == pytest.approx(metrics.roc_auc_score(actual, s))


def pair_accuracy_loop(ranked) -> float:
    """From the definition: the pairs of positions i < j of different label, the higher label first."""
    correct = swapped = 0
    for i in range(len(ranked)):
        for j in range(i + 1, len(ranked)):
            correct += ranked[i] > ranked[j]
            swapped += ranked[i] < ranked[j]
    return correct / (correct + swapped) if correct + swapped else 0.0


@pytest.mark.parametrize("seed", range(12))
def test_pair_accuracy_equals_the_pair_loop(seed):
    """Graded, binary, constant, real-valued and negative labels, one document and none."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    labels = [rng.integers(0, 5, n), rng.integers(0, 2, n), np.zeros(n), rng.normal(size=n),
              -rng.integers(0, 3, n)][seed % 5].astype(float)
    got = measures.pair_accuracy(labels, labels, 0.0)
    assert got == pytest.approx(pair_accuracy_loop(labels), abs=1e-15)
    scores = np.round(rng.normal(size=n), 1)  # ties: trec_eval's order decides
    qptr = np.array([0, n])
    ranked = labels[ranking.trec_order(scores, [f"d{i}" for i in range(n)])] if n else labels
    assert measures.per_query(measures.lookup("pairacc"), labels, scores, qptr,
                              [f"d{i}" for i in range(n)])[0] == pytest.approx(pair_accuracy_loop(ranked), abs=1e-15)


def test_pair_accuracy_of_a_long_query_is_linear_in_memory():
    """10^6 documents in one query: the pairs are counted, never stored (an n x n matrix would be 931 GiB)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    ranked = rng.integers(0, 5, 1_000_000).astype(float)
    tracemalloc.start()
    value = measures.pair_accuracy(ranked, ranked, 0.0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 100 * 2**20 and 0.49 < value < 0.51


def test_unknown_measure_is_reported():
    with pytest.raises(KeyError, match="unknown measure 'P_x'"):
        measures.lookup("P_x")


def test_the_unknown_measure_message_and_all_name_every_listwise_measure():
    """`-m all` and the list an unknown name is answered with hold each listwise measure (evaluation/listwise.py),
    with its cut-off where it has one."""
    from svmstruct.evaluation import listwise

    with pytest.raises(KeyError) as raised:
        measures.lookup("nosuch")
    for measure in listwise.MEASURES:
        name = measure.name.replace("@k", "@10").replace("_k", "_10")
        assert name in measures.ALL_MEASURES and measures.lookup(name).name == name
        assert f" {name}," in raised.value.args[0] or f" {name} " in raised.value.args[0]


@pytest.mark.parametrize("seed", range(5))
def test_midranks_equal_scipy_rankdata(seed):
    from scipy.stats import rankdata

    rng = np.random.default_rng(seed)
    s = rng.integers(0, 5 + 10 * seed, size=50 + seed).astype(float)  # many ties
    np.testing.assert_array_equal(measures.midranks(s), rankdata(s))
    assert measures.midranks(np.array([])).shape == (0,) and measures.midranks(np.array([3.0])).tolist() == [1.0]


def test_the_ranking_of_the_whole_file_is_every_querys_trec_order():
    """ranking.trec_ranking sorts every query by score and looks at docids only where scores tie: the same
    permutation as trec_order query by query (scores with many ties, -0.0 and 0.0 among them)."""
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 9, size=300)
    qptr = np.concatenate([[0], np.cumsum(sizes)])
    scores = rng.integers(-2, 3, size=qptr[-1]).astype(float) * rng.choice([1.0, 0.5], size=qptr[-1])
    scores[scores == 0] = rng.choice([0.0, -0.0], size=int(np.sum(scores == 0)))
    docids = [f"d{rng.integers(0, 10**6)}" for _ in range(qptr[-1])]
    order = ranking.trec_ranking(scores, qptr, docids)
    for lo, hi in zip(qptr[:-1], qptr[1:]):
        assert order[lo:hi].tolist() == (lo + ranking.trec_order(scores[lo:hi], docids[lo:hi])).tolist()


BATCHED = ["map", "recip_rank", "mrr", "ndcg", "wta", "P_1", "P_3", "p@2", "recall_1", "recall_4", "ndcg_cut_1",
           "ndcg_cut_3", "ndcg@2", "ndcg@10", "dcg@3", "eru", "eru:3:1", "mwta"]


def _labels(kind: str, n: int, rng) -> np.ndarray:
    if kind == "grades":
        return rng.integers(0, 5, size=n).astype(float)
    if kind == "binary":
        return rng.choice([-1.0, 1.0], size=n)
    if kind == "zero":
        return np.zeros(n)
    if kind == "negative":
        return rng.integers(-3, 2, size=n).astype(float)
    return np.round(rng.normal(size=n) * 3, 3)


@pytest.mark.slow
def test_batch_measures_equal_the_per_query_functions_to_the_bit():
    """Every measure with a batch function gives the per-query function's value bit for bit, query by query
    (random, degenerate and negative labels, tied scores, single-document queries), also across the blocks
    per_query cuts the file into and whether a query's terms are added with other queries' or alone."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from svmstruct.evaluation import batch_measures

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.integers(1, 9), min_size=1, max_size=12), st.integers(0, 2**32 - 1),
           st.sampled_from(["grades", "binary", "zero", "negative", "real"]), st.sampled_from([0.0, 1.0]),
           st.sampled_from([None, 1, 5]), st.sampled_from([1, 3, 32]))
    def check(sizes, seed, kind, threshold, block, few):
        rng = np.random.default_rng(seed)
        qptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        n = int(qptr[-1])
        labels = _labels(kind, n, rng)
        scores = rng.integers(0, 3, size=n).astype(float)  # ties: the docids decide
        docids = [f"d{i}" for i in rng.permutation(n)]
        order = ranking.trec_ranking(scores, qptr, docids)
        for name in BATCHED:
            m = measures.lookup(name)
            assert m.batch is not None
            loop = np.array([m.fn(labels[order[lo:hi]], labels[lo:hi], threshold)
                             for lo, hi in zip(qptr[:-1], qptr[1:])])
            old = measures.BATCH_ROWS, batch_measures.FEW
            measures.BATCH_ROWS, batch_measures.FEW = block or old[0], few
            try:
                got = measures.per_query(m, labels, scores, qptr, docids, threshold, order)
            finally:
                measures.BATCH_ROWS, batch_measures.FEW = old
            np.testing.assert_array_equal(got.view(np.int64), loop.view(np.int64), err_msg=name)

    check()
