"""SVMlight input: reading, validation and grouping into examples (README, "Input format").

The only place input is validated; every malformed line raises InputError naming file:line.
"""
from __future__ import annotations

import gzip
import math
import re
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from svmstruct import io
from svmstruct import svmlight_parser as parser
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
    docids: "Docids"  # str per row: "docid = X" from the comment, else its first token, else "L<line>"
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


_DOCID = re.compile(rb"docid\s*=\s*(\S+)")
CHUNK = 1 << 23  # bytes of text parsed per kernel call; memory stays near the final arrays


def _complete_chunks(f, name: str):
    """Successive buffers of whole lines (a missing final newline is added), read into one reused
    bytearray: each yielded memoryview is valid until the next one is requested."""
    buf = bytearray(CHUNK)
    kept = 0  # bytes of an unfinished line carried to the front of buf
    while True:
        try:
            got = f.readinto(memoryview(buf)[kept:])
        except (OSError, EOFError) as e:
            raise InputError(f"cannot read: {e}", name) from None
        if not got:
            if kept:
                yield memoryview(bytes(buf[:kept]) + b"\n")
            return
        total = kept + got
        cut = buf.rfind(b"\n", 0, total) + 1
        if cut == 0:  # a line longer than the buffer: grow it
            kept = total
            if total == len(buf):
                buf.extend(bytearray(len(buf)))
            continue
        yield memoryview(buf)[:cut]
        kept = total - cut
        buf[:kept] = buf[cut:total]


class Docids:
    """The docids of a file, stored compactly (one byte string + offsets); indexing gives str."""

    def __init__(self):
        self._parts, self._lengths = [], []

    def append(self, docid: str) -> None:
        self._parts.append(docid.encode())

    def freeze(self) -> "Docids":
        self._blob = b"".join(self._parts)
        self._offsets = np.zeros(len(self._parts) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in self._parts], out=self._offsets[1:])
        del self._parts
        return self

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return self._blob[self._offsets[i]:self._offsets[i + 1]].decode()

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __eq__(self, other):
        return list(self) == list(other)


def docid_from_comment(comment: bytes) -> str | None:
    """`docid = X` / `docid=X` in the comment (LETOR), else its first token."""
    m = _DOCID.search(comment)
    if m:
        return m.group(1).decode("utf-8", "replace")
    tokens = comment.split()
    return tokens[0].decode("utf-8", "replace") if tokens else None


def read_svmlight(path: str, n_features: int | None = None, dtype=np.float64, layout: str = "sparse") -> Dataset:
    """Read an SVMlight file (``-`` for stdin, gzip detected by its magic bytes).

    n_features widens X to at least that many columns (to score a test file with a model). dtype
    float32 stores the features in single precision, as svm_light does (half the memory). layout
    'sparse' gives a CSR matrix, 'dense' an ndarray (for dense data it saves the 4-byte index of every
    value), 'auto' whichever takes less memory.
    The file is read twice (sizes, then values), so memory peaks near the final arrays; stdin and
    gzip are spooled once.
    """
    name = "<stdin>" if path == "-" else path
    with io.open_binary(path) as f:
        if path == "-" or isinstance(f, gzip.GzipFile):
            chunks = [bytes(chunk) for chunk in _complete_chunks(f, name)]
            source = lambda: iter(chunks)  # noqa: E731
        else:
            source = None
        rows = nnz = highest = 0
        for buf in (source() if source else _complete_chunks(f, name)):
            r, z, h = parser.count_lines(np.frombuffer(buf, dtype=np.uint8), len(buf))
            rows, nnz, highest = rows + r, nnz + z, max(highest, h)
        if rows == 0:
            raise InputError("no examples", name)
        width = max(highest, n_features or 0)
        itemsize = np.dtype(dtype).itemsize
        dense = layout == "dense" or (layout == "auto" and rows * width * itemsize <= nnz * (itemsize + 4))
        X = np.zeros((rows, width) if dense else (0, width), dtype=dtype)
        indptr = np.zeros(rows + 1 if not dense else 1, dtype=np.int64)
        indices = np.empty(0 if dense else nnz, dtype=np.int32)
        values = np.empty(0 if dense else nnz, dtype=dtype)
        y = np.empty(rows)
        qid = np.zeros(rows, dtype=np.int64)
        has_qid = np.zeros(rows, dtype=np.bool_)
        lines = np.zeros(rows, dtype=np.int64)
        docids = Docids()
        state = dict(line=0, row=0, nz=0)
        if source is None:
            f.seek(0)
        for buf in (source() if source else _complete_chunks(f, name)):
            _parse_chunk(buf, name, state, dense, X, indptr, indices, values, y, qid, has_qid, lines, docids)
    if state["row"] != rows:
        raise InputError(f"the file changed while it was read ({state['row']} rows, expected {rows})", name)
    if has_qid.any() and not has_qid.all():
        row = int(np.flatnonzero(has_qid != has_qid[0])[0])
        raise InputError("either every line has a qid or none has", name, int(lines[row]))
    any_qid = bool(has_qid[0])
    qptr = group_queries(qid, lines, name) if any_qid else np.array([0, rows], dtype=np.int64)
    if not dense:
        X = sp.csr_matrix((values, indices, indptr), shape=(rows, width))
    return Dataset(X, y, qid, qptr, docids.freeze(), lines, name, any_qid)


_MESSAGES = {
    parser.BAD_TARGET: "bad target '{tok}'",
    parser.MALFORMED: "malformed token '{tok}' (expected index:value)",
    parser.BAD_INDEX: "bad feature index '{tok}'",
    parser.INDEX_TOO_SMALL: "feature index must be >= 1: '{tok}'",
    parser.NOT_INCREASING: "feature indices must increase: '{tok}' after index {last}",
    parser.BAD_QID: "bad qid '{tok}'",
    parser.QID_MISPLACED: "qid must come once, before the features: '{tok}'",
    parser.BAD_OPTION: "bad sid/cost token '{tok}'",
    parser.OPTION_MISPLACED: "sid/cost must come before the features: '{tok}'",
}


def _parse_chunk(buf, name, state, dense, X, indptr, indices, values, y, qid, has_qid, lines, docids):
    """Parse one buffer of whole lines into the arrays, converting fallback tokens with float()."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    rows_before = state["row"]
    comment_start = np.zeros(len(y), dtype=np.int64)  # indexed by row, like every output array
    comment_end = np.zeros(len(y), dtype=np.int64)
    capacity = 1 << 16
    p = 0
    flat = X.reshape(-1) if dense else values
    while True:
        fb_pos = np.empty(capacity, dtype=np.int64)
        fb_start = np.empty(capacity, dtype=np.int64)
        fb_end = np.empty(capacity, dtype=np.int64)
        row0 = state["row"]
        code, p, line, row, nz, count, t0, t1, last = parser.parse_lines(
            arr, len(arr), p, state["line"], row0, state["nz"], dense, X, indptr, indices, values, y, qid,
            has_qid, lines, comment_start, comment_end,
            fb_pos, fb_start, fb_end, 0)
        for k in range(count):
            token = bytes(buf[fb_start[k]:fb_end[k]]).decode("utf-8", "replace")
            slot = int(fb_pos[k])
            target = slot < 0
            try:
                v = float(token)
            except ValueError:
                v = None
            where_line = int(lines[-1 - slot]) if target else None
            if v is None or not math.isfinite(v):
                if where_line is None:  # a feature: find its line from the slot
                    where_line = _line_of_slot(slot, dense, X, indptr, lines, row)
                what = "target" if target else "feature value"
                problem = "is not finite" if v is not None else "is not a number"
                raise InputError(f"{what} {problem}: '{token}'", name, where_line)
            if target:
                y[-1 - slot] = v
            else:
                flat[slot] = v
        state.update(line=line, row=row, nz=nz)
        if code == parser.FULL:
            capacity *= 2
            continue
        if code != parser.OK:
            token = bytes(buf[t0:t1]).decode("utf-8", "replace")
            raise InputError(_MESSAGES[code].format(tok=token, last=last), name, line)
        break
    for r in range(rows_before, state["row"]):
        c0, c1 = comment_start[r], comment_end[r]
        d = docid_from_comment(bytes(buf[c0:c1])) if c1 > c0 else None
        docids.append(d if d is not None else f"L{lines[r]}")


def _line_of_slot(slot, dense, X, indptr, lines, rows_done):
    row = slot // X.shape[1] if dense else int(np.searchsorted(indptr[: rows_done + 2], slot, side="right")) - 1
    return int(lines[row]) if lines[row] else None


def from_arrays(X, y, qid=None, name: str = "<arrays>") -> tuple[Dataset, np.ndarray]:
    """A Dataset from in-memory arrays (the Python API): X a numpy array or scipy sparse matrix
    (n x d), y the n targets, qid None (one example) or n query ids in any order.

    Rows of one qid need not be adjacent: they are grouped (stably, queries in order of first
    appearance). Returns the dataset and `order`, with dataset row r = input row order[r].
    Raises InputError for non-finite values or mismatched lengths.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        values = X.data
    else:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InputError(f"X must be 2-dimensional, got shape {X.shape}", name)
        values = X
    y = np.asarray(y, dtype=np.float64).ravel()
    n = X.shape[0]
    if len(y) != n:
        raise InputError(f"X has {n} rows but y has {len(y)} values", name)
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(y))):
        raise InputError("X and y must be finite (no NaN or infinity)", name)
    if n == 0:
        raise InputError("no examples", name)
    if qid is None:
        order = np.arange(n)
        qids = np.zeros(n, dtype=np.int64)
        qptr = np.array([0, n], dtype=np.int64)
    else:
        qid = np.asarray(qid).ravel()
        if len(qid) != n:
            raise InputError(f"X has {n} rows but qid has {len(qid)} values", name)
        _, first, codes = np.unique(qid, return_index=True, return_inverse=True)
        rank = np.argsort(np.argsort(first, kind="stable"), kind="stable")  # queries by first appearance
        order = np.argsort(rank[codes.ravel()], kind="stable")
        qids = rank[codes.ravel()][order].astype(np.int64) + 1
        qptr = np.concatenate(([0], np.flatnonzero(np.diff(qids)) + 1, [n])).astype(np.int64)
    X = X[order]
    docids = Docids()
    for r in order:
        docids.append(f"L{r + 1}")
    return Dataset(X, y[order], qids, qptr, docids.freeze(), order + 1, name, qid is not None), order


def largest_magnitude(dataset: Dataset) -> float:
    """The largest |x| of the features (0 for an empty matrix)."""
    values = dataset.X if isinstance(dataset.X, np.ndarray) else dataset.X.data
    return float(np.max(np.abs(values), initial=0.0))


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
    if all(isinstance(d.X, np.ndarray) for d in datasets):
        X = np.vstack([np.pad(d.X, ((0, 0), (0, width - d.n_features))) for d in datasets])
    else:
        blocks = []
        for d in datasets:
            block = sp.csr_matrix(d.X)
            block.resize((block.shape[0], width))
            blocks.append(block)
        X = sp.vstack(blocks, format="csr")
    qid = np.concatenate([d.qid for d in datasets])
    line = np.concatenate([d.line for d in datasets])
    has_qid = all(d.has_qid for d in datasets)
    path = name or "+".join(d.path for d in datasets)
    qptr = group_queries(qid, line, path) if has_qid else np.array([0, len(qid)], dtype=np.int64)
    docids = Docids()
    for d in datasets:
        for doc in d.docids:
            docids.append(doc)
    docids.freeze()
    return Dataset(X, np.concatenate([d.y for d in datasets]), qid, qptr, docids, line, path, has_qid)
