"""Diversity files: TREC diversity qrels (`qid subtopic docid judgment`) and selections (`qid docid ...`)."""
from __future__ import annotations

import numpy as np

from svmstruct.errors import InputError


def read_subtopics(path: str) -> dict:
    """TREC diversity qrels `qid subtopic docid judgment` -> {(qid, docid): set of subtopics} (judgment > 0)."""
    covering: dict = {}
    from svmstruct.io import files

    with files.open_text(path, "subtopics") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 4:
                raise InputError(f"expected 'qid subtopic docid judgment', found '{line.strip()}'", path, lineno)
            try:
                qid, judgment = int(parts[0]), float(parts[3])
            except ValueError:
                raise InputError(f"bad qid or judgment in '{line.strip()}'", path, lineno) from None
            if judgment > 0:
                covering.setdefault((qid, parts[2]), set()).add(parts[1])
            else:
                covering.setdefault((qid, parts[2]), set())
    return covering


def subtopic_matrix(dataset, lo: int, hi: int, covering: dict, path: str):
    """(documents x subtopics incidence, weights proportional to the documents covering each)."""
    import scipy.sparse as sp

    qid = int(dataset.qid[lo])
    names: dict[str, int] = {}
    rows: list[int] = []
    cols: list[int] = []
    for r in range(lo, hi):
        for topic in sorted(covering.get((qid, dataset.docids[r]), ())):
            cols.append(names.setdefault(topic, len(names)))
            rows.append(r - lo)
    if not names:
        raise InputError(f"candidate set qid {qid} has no subtopic judgments", path)
    M = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(hi - lo, len(names)))
    counts = np.asarray(M.sum(axis=0)).ravel()
    return M, counts / counts.sum()


def check_docids(dataset, covering: dict, path: str) -> None:
    """Every judged (qid, docid) must be a document of the data file, and a docid one document."""
    from svmstruct.dataset.documents import check_unique_docids

    check_unique_docids(dataset)
    known = {(int(q), d) for q, d in zip(dataset.qid, dataset.docids)}
    missing = [key for key in covering if key[0] in set(int(q) for q in dataset.qid) and key not in known]
    if missing:
        qid, docid = missing[0]
        raise InputError(f"{len(missing)} judged documents are not in {dataset.path}, e.g. qid {qid} docid {docid}",
                         path)


def read_selections(path: str) -> dict:
    """{qid: [docid, ...]} from `qid docid docid ...` lines."""
    from svmstruct.io import files

    out = {}
    with files.open_text(path, "selections") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            try:
                out[int(parts[0])] = parts[1:]
            except ValueError:
                raise InputError(f"expected 'qid docid ...', found '{line.strip()[:60]}'", path, lineno) from None
    return out


def format_subsets(data, subsets, fmt: str = "selections", tag: str = "svmstruct") -> str:
    """[(qid, [row indices])] as `qid docid ...` lines, or with fmt 'trec' as a TREC run in that order."""
    from svmstruct.dataset.documents import check_unique_docids

    check_unique_docids(data)
    lines: list[str] = []
    for qid, rows in subsets:
        docids = [data.docids[r] for r in rows]
        if fmt == "trec":
            lines.extend(f"{qid} Q0 {d} {rank} {len(docids) - rank + 1} {tag}\n" for rank, d in enumerate(docids, 1))
        else:
            lines.append(f"{qid} " + " ".join(docids) + "\n")
    return "".join(lines)
