"""TREC interchange: runs (`qid Q0 docid rank score tag`) and qrels (`qid 0 docid rel`) for trec_eval.

Ranks follow trec_eval's own re-sort of a run (score descending, then docid descending) applied to the
printed scores, so the rank we print is the rank trec_eval scores. A file without qids is one query
with qid 0. Docids come from the data (generated `L<line>` where the comment has none), the same in
runs and qrels; a docid twice in one query is an error (trec_eval refuses it).
"""
from __future__ import annotations

import numpy as np

from svmstruct.dataset.documents import check_unique_docids
from svmstruct.dataset.ranking import trec_order


def printed_scores(scores: np.ndarray) -> np.ndarray:
    """The scores as trec_eval reads them back from `%.8f`."""
    return np.array([float(f"{v:.8f}") for v in scores])


def format_run(dataset, scores: np.ndarray, tag: str = "svmstruct") -> str:
    check_unique_docids(dataset)
    shown = printed_scores(scores)
    lines = []
    for q in range(dataset.n_examples):
        lo, hi = int(dataset.qptr[q]), int(dataset.qptr[q + 1])
        qid = dataset.qid[lo]
        docids = dataset.docids[lo:hi]
        for rank, i in enumerate(trec_order(shown[lo:hi], docids), 1):
            lines.append(f"{qid} Q0 {docids[i]} {rank} {shown[lo + i]:.8f} {tag}\n")
    return "".join(lines)


def format_qrels(dataset) -> str:
    """One `qid 0 docid label` line per row; labels printed as integers when they are integral."""
    check_unique_docids(dataset)
    lines = []
    for qid, docid, label in zip(dataset.qid, dataset.docids, dataset.y):
        value = int(label) if float(label).is_integer() else label
        lines.append(f"{qid} 0 {docid} {value}\n")
    return "".join(lines)
