"""SVMlight input: reading, validation and grouping into examples (DESIGN.md section 3).

The only place input is validated; every malformed line raises InputError naming file:line.
"""
from __future__ import annotations

import gzip
import io
import math
import re
import sys
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from svmstruct.errors import InputError


@dataclass
class Dataset:
    """A labelled SVMlight file.

    Row r of X is data line r; column j holds feature index j+1 (indices are 1-based in the file).
    Example e (a query, or the whole file when there is no qid) is rows qptr[e]:qptr[e+1].
    """

    X: sp.csr_matrix  # float64, n_docs x n_features
    y: np.ndarray  # float64 targets
    qid: np.ndarray  # int64, 0 where a line has no qid
    qptr: np.ndarray  # int64, n_examples + 1 row boundaries
    docids: list  # str per row: "docid = X" from the comment, else its first token, else "L<line>"
    line: np.ndarray  # int64 source line number (1-based) of each row
    path: str
    has_qid: bool

    @property
    def n_docs(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_examples(self) -> int:
        return len(self.qptr) - 1


_DOCID = re.compile(r"docid\s*=\s*(\S+)")


def _open_text(path: str):
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    try:
        if path.endswith(".gz"):
            return gzip.open(path, "rt", encoding="utf-8", errors="replace")
        return open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path) from None


def docid_from_comment(comment: str) -> str | None:
    m = _DOCID.search(comment)
    if m:
        return m.group(1)
    tokens = comment.split()
    return tokens[0] if tokens else None


def read_svmlight(path: str, n_features: int | None = None) -> Dataset:
    """Read an SVMlight file (``-`` for stdin, ``.gz`` transparently).

    n_features widens X to at least that many columns (to score a test file with a model).
    """
    name = "<stdin>" if path == "-" else path
    ys, qids, lines, docids = [], [], [], []
    indptr, indices, values = [0], [], []
    any_qid = None
    with _open_text(path) as f:
        for lineno, raw in enumerate(f, 1):
            text, _, comment = raw.partition("#")
            tokens = text.split()
            if not tokens:
                continue
            try:
                target = float(tokens[0])
            except ValueError:
                raise InputError(f"bad target '{tokens[0]}'", name, lineno) from None
            if not math.isfinite(target):
                raise InputError(f"target is not finite: '{tokens[0]}'", name, lineno)
            qid = None
            last = 0
            for tok in tokens[1:]:
                key, sep, val = tok.partition(":")
                if not sep or not key or not val:
                    raise InputError(f"malformed token '{tok}' (expected index:value)", name, lineno)
                if key == "qid":
                    if qid is not None or last:
                        raise InputError(f"qid must come once, before the features: '{tok}'", name, lineno)
                    try:
                        qid = int(val)
                    except ValueError:
                        raise InputError(f"bad qid '{val}'", name, lineno) from None
                    continue
                if key in ("sid", "cost"):
                    if last:
                        raise InputError(f"'{key}' must come before the features: '{tok}'", name, lineno)
                    try:
                        float(val)
                    except ValueError:
                        raise InputError(f"bad {key} '{val}'", name, lineno) from None
                    continue
                try:
                    idx = int(key)
                except ValueError:
                    raise InputError(f"bad feature index '{key}'", name, lineno) from None
                if idx < 1:
                    raise InputError(f"feature index must be >= 1: '{tok}'", name, lineno)
                if idx <= last:
                    raise InputError(f"feature indices must increase: '{tok}' after index {last}", name, lineno)
                try:
                    v = float(val)
                except ValueError:
                    raise InputError(f"bad feature value '{val}'", name, lineno) from None
                if not math.isfinite(v):
                    raise InputError(f"feature value is not finite: '{tok}'", name, lineno)
                last = idx
                indices.append(idx - 1)
                values.append(v)
            if any_qid is None:
                any_qid = qid is not None
            elif any_qid != (qid is not None):
                raise InputError("either every line has a qid or none has", name, lineno)
            indptr.append(len(indices))
            ys.append(target)
            qids.append(qid if qid is not None else 0)
            lines.append(lineno)
            d = docid_from_comment(comment) if comment else None
            docids.append(d if d is not None else f"L{lineno}")
    if not ys:
        raise InputError("no examples", name)
    qid_arr = np.asarray(qids, dtype=np.int64)
    line_arr = np.asarray(lines, dtype=np.int64)
    qptr = group_queries(qid_arr, line_arr, name) if any_qid else np.array([0, len(ys)], dtype=np.int64)
    width = max(max(indices, default=-1) + 1, n_features or 0)
    X = sp.csr_matrix(
        (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int32), np.asarray(indptr, dtype=np.int64)),
        shape=(len(ys), width),
    )
    return Dataset(X, np.asarray(ys, dtype=np.float64), qid_arr, qptr, docids, line_arr, name, bool(any_qid))


def group_queries(qid: np.ndarray, line: np.ndarray, name: str) -> np.ndarray:
    """Row boundaries of the runs of equal qid; a qid that reappears after another is an error."""
    starts = np.flatnonzero(np.diff(qid)) + 1
    qptr = np.concatenate(([0], starts, [len(qid)])).astype(np.int64)
    first = qid[qptr[:-1]]
    order = np.argsort(first, kind="stable")
    dup = np.flatnonzero(first[order][1:] == first[order][:-1])
    if len(dup):
        a, b = order[dup[0]], order[dup[0] + 1]
        raise InputError(
            f"qid {first[b]} reappears after another qid (first seen at line {line[qptr[a]]}); "
            "lines of one query must be contiguous",
            name,
            int(line[qptr[b]]),
        )
    return qptr


def concatenate(datasets: list, name: str | None = None) -> Dataset:
    """The datasets one after the other (as if their files were concatenated); qids must stay contiguous."""
    width = max(d.n_features for d in datasets)
    blocks = []
    for d in datasets:
        X = d.X.copy()
        X.resize((X.shape[0], width))
        blocks.append(X)
    X = sp.vstack(blocks, format="csr")
    qid = np.concatenate([d.qid for d in datasets])
    line = np.concatenate([d.line for d in datasets])
    has_qid = all(d.has_qid for d in datasets)
    path = name or "+".join(d.path for d in datasets)
    qptr = group_queries(qid, line, path) if has_qid else np.array([0, len(qid)], dtype=np.int64)
    docids = [doc for d in datasets for doc in d.docids]
    return Dataset(X, np.concatenate([d.y for d in datasets]), qid, qptr, docids, line, path, has_qid)
