"""eval: comparison statistics against scipy, prediction files, pipes into a TREC scorer, model selection."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from svmstruct.errors import InputError
from svmstruct.evaluation import measures, tables
from svmstruct.io import data

from conftest import invoke

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "mq2008-small"


svmstruct = invoke


@pytest.fixture(scope="module")
def test_set():
    return data.read_svmlight(str(SMALL / "test.txt"))


def test_compare_p_values_equal_scipy_on_the_per_query_values(test_set):
    rng = np.random.default_rng(0)
    a = rng.normal(size=test_set.n_docs)
    b = a + rng.normal(size=test_set.n_docs) * 0.5 + 0.3 * test_set.y
    result = tables.compare(test_set, [("a", a), ("b", b)], ["map", "ndcg@10", "f1"])
    for name in ("map", "ndcg@10"):
        m = measures.lookup(name)
        qa = measures.per_query(m, test_set.y, a, test_set.qptr, test_set.docids)
        qb = measures.per_query(m, test_set.y, b, test_set.qptr, test_set.docids)
        row = result[name][1]
        assert row["wilcoxon_p"] == pytest.approx(stats.wilcoxon(qb, qa).pvalue, rel=1e-12)
        assert row["ttest_p"] == pytest.approx(stats.ttest_rel(qb, qa).pvalue, rel=1e-12)
        expected = (int(np.sum(qb > qa)), int(np.sum(qb == qa)), int(np.sum(qb < qa)))
        assert (row["wins"], row["ties"], row["losses"]) == expected
        assert result[name][0]["value"] == pytest.approx(qa.mean())
    assert "wins" not in result["f1"][1]  # file measures have no per-query pairing


def test_identical_runs_compare_as_all_ties(test_set):
    s = np.arange(test_set.n_docs, dtype=float)
    row = tables.compare(test_set, [("a", s), ("b", s.copy())], ["map"])["map"][1]
    assert row["ties"] == test_set.n_examples and row["wilcoxon_p"] == 1.0


def test_prediction_file_errors(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("0.5\nabc\n")
    with pytest.raises(InputError) as e:
        tables.read_predictions(str(path), 2)
    assert e.value.line == 2 and "abc" in e.value.message
    path.write_text("0.5\n")
    with pytest.raises(InputError, match="1 predictions for 2 data lines"):
        tables.read_predictions(str(path), 2)
    path.write_text("nan\n")
    with pytest.raises(InputError, match="not finite"):
        tables.read_predictions(str(path), 1)


def test_trec_run_piped_into_a_scorer_gives_evals_numbers(tmp_path):
    pytest.importorskip("pytrec_eval")
    model = tmp_path / "m.model"
    assert svmstruct("learn", "-l", "map", "-v", "0", SMALL / "train.txt", model).returncode == 0
    qrels_text = svmstruct("qrels", SMALL / "test.txt").stdout
    scorer = (
        "import sys, json, pytrec_eval\n"
        "qrels = {}\n"
        f"for line in open({str(tmp_path / 'q')!r}):\n"
        "    q, _, d, r = line.split(); qrels.setdefault(q, {})[d] = int(r)\n"
        "run = {}\n"
        "for line in sys.stdin:\n"
        "    q, _, d, rank, score, tag = line.split(); run.setdefault(q, {})[d] = float(score)\n"
        "res = pytrec_eval.RelevanceEvaluator(qrels, {'map'}).evaluate(run)\n"
        "print(sum(v['map'] for v in res.values()) / len(res))\n"
    )
    (tmp_path / "q").write_text(qrels_text)
    classify = subprocess.Popen([sys.executable, "-m", "svmstruct", "classify", "--format", "trec", SMALL / "test.txt",
                                 model, "-"], stdout=subprocess.PIPE)
    scored = subprocess.run([sys.executable, "-c", scorer], stdin=classify.stdout, capture_output=True, text=True)
    classify.wait()
    assert classify.returncode == 0 and scored.returncode == 0, scored.stderr
    ours = svmstruct("eval", "--format", "json", "-m", "map", SMALL / "test.txt",
                     "-", stdin=svmstruct("classify", SMALL / "test.txt", model).stdout)
    assert json.loads(ours.stdout)["map"]["all"] == pytest.approx(float(scored.stdout), abs=1e-9)


def test_learn_with_a_validation_grid_keeps_the_best_c(tmp_path):
    model = tmp_path / "m.model"
    run = svmstruct("learn", "-l", "map", "-c", "0.01,1,100", "--validate", SMALL / "vali.txt", "--select", "ndcg@10",
                    SMALL / "train.txt", model)
    assert run.returncode == 0, run.stderr
    lines = [l for l in run.stderr.splitlines() if l.startswith("C ")]
    values = {float(l.split()[1]): float(l.split()[4]) for l in lines}
    assert len(values) == 3
    header = dict(l.split(" ", 1) for l in model.read_text().splitlines()[1:20] if " " in l)
    best = max(values, key=lambda c: (values[c], -c))
    assert float(header["C"]) == best and header["selected_by"] == "ndcg@10"
    assert svmstruct("learn", "-c", "1,2", SMALL / "train.txt", tmp_path / "x").returncode == 2


def test_the_mean_over_queries_is_trec_evals_to_the_printed_digit(tmp_path):
    """trec_eval adds the per-query values one after the other in strcmp order of the qids, then divides
    (meas_acc.c, meas_avg.c). These 16 P_10 values average to 0.61875, on a rounding boundary: that sum
    prints 0.6188 where numpy's pairwise mean prints 0.6187."""
    p10 = [0.9, 0.9, 0.4, 0.3, 0.9, 0.5, 0.3, 0.9, 0.7, 0.7, 0.4, 0.9, 0.3, 0.6, 0.7, 0.5]  # in strcmp qid order
    qids = sorted((str(q) for q in range(1, 17)), key=str.encode)  # "1", "10", ..., "16", "2", ...
    lines = []
    for qid, value in sorted(zip(qids, p10), key=lambda pair: int(pair[0])):  # the file in numeric qid order
        relevant = round(value * 10)
        lines += [f"{int(d < relevant)} qid:{qid} 1:{12 - d} # d{d}" for d in range(12)]
    test = tmp_path / "t.txt"
    test.write_text("\n".join(lines) + "\n")
    scores = tmp_path / "s.pred"
    scores.write_text("".join(f"{line.split()[2][2:]}\n" for line in lines))
    total = 0.0
    for value in p10:
        total += value
    assert f"{total / 16:.4f}" == "0.6188" != f"{np.mean(p10):.4f}"
    result = svmstruct("eval", "-m", "P_10", test, scores)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1].split() == ["P_10", "all", "0.6188"]


def test_options_a_comparison_cannot_honour_are_refused(tmp_path):
    """-q and --format trec are trec_eval's one-run-at-a-time lines: with several runs they were ignored (a
    comparison table, exit 0, in a trec_eval pipeline); --alpha without --subtopics was ignored too."""
    model, preds = tmp_path / "m", tmp_path / "p"
    assert invoke("learn", "-l", "map", "-v", "0", SMALL / "train.txt", model).returncode == 0
    assert invoke("classify", SMALL / "test.txt", model, preds).returncode == 0
    for args in (["-q"], ["--format", "trec"], ["-q", "--format", "trec"]):
        run = invoke("eval", *args, "-m", "map", SMALL / "test.txt", preds, preds)
        assert run.returncode == 2 and "for one PREDICTIONS file" in run.stderr and run.stdout == "", run.stderr
    run = invoke("eval", "--alpha", "0.3", SMALL / "test.txt", preds)
    assert run.returncode == 2 and "--subtopics" in run.stderr
    assert invoke("eval", "--format", "json", "-m", "map", SMALL / "test.txt", preds, preds).stdout.startswith("{")


def test_trec_evals_dotted_names_are_accepted_wherever_a_measure_is_named(tmp_path):
    model, preds = tmp_path / "m", tmp_path / "p"
    assert invoke("learn", "-l", "map", "-v", "0", SMALL / "train.txt", model).returncode == 0
    assert invoke("classify", SMALL / "test.txt", model, preds).returncode == 0
    dotted = invoke("eval", "-m", "P.10", "-m", "ndcg_cut.10", "-m", "recall.10", SMALL / "test.txt", preds)
    plain = invoke("eval", "-m", "P_10", "-m", "ndcg_cut_10", "-m", "recall_10", SMALL / "test.txt", preds)
    assert dotted.returncode == 0 and dotted.stdout == plain.stdout and dotted.stdout.startswith("P_10\t")
    chosen = tmp_path / "chosen"
    run = invoke("learn", "-l", "pairs", "-c", "0.1,1", "--validate", SMALL / "vali.txt", "--select", "ndcg_cut.10",
                 "-v", "0", SMALL / "train.txt", chosen)
    assert run.returncode == 0 and "selected_by ndcg_cut_10" in chosen.read_text()


def test_a_letor_file_with_free_text_comments_evaluates_and_validates(tmp_path):
    """Comments of free text (LETOR's lines, `# a page about ...`: the first token repeats within a query) make no
    docids: eval and learn --validate say so once and measure the file as one without comments (docids L<line>),
    the same values to the last digit."""
    lines = (ROOT / "data" / "mq2008-small" / "vali.txt").read_text().splitlines()
    bare = [line.split("#")[0].rstrip() for line in lines]
    (tmp_path / "free.txt").write_text("".join(f"{line} # a page about the query\n" for line in bare))
    (tmp_path / "bare.txt").write_text("".join(f"{line}\n" for line in bare))
    scores = "".join(f"{(7 * i) % 5 / 4}\n" for i in range(len(bare)))  # ties in every query
    free = invoke("eval", "-q", "-m", "map", "-m", "ndcg@10", tmp_path / "free.txt", "-", stdin=scores)
    plain = invoke("eval", "-q", "-m", "map", "-m", "ndcg@10", tmp_path / "bare.txt", "-", stdin=scores)
    assert free.returncode == 0 and free.stdout == plain.stdout and plain.stderr == ""
    assert free.stderr.count("\n") == 1 and "docid a appears twice in query" in free.stderr
    assert "not one document per docid (comments of free text?)" in free.stderr
    run = invoke("learn", "-l", "map", "-c", "1,10", "--validate", tmp_path / "free.txt", "-v", "0",
                 ROOT / "data" / "mq2008-small" / "train.txt", tmp_path / "m")
    assert run.returncode == 0 and "comments of free text?" in run.stderr, run.stderr
