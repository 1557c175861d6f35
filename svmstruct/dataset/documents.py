"""What a labelled SVMlight file is once read, without its reader: the Dataset, its docids, and the checks on
queries and docids that every command shares (svmstruct.io.data, the reader, re-exports all of it)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from svmstruct.errors import InputError


@dataclass
class Dataset:
    """A labelled SVMlight file.

    Row r of X is data line r; column j holds feature index j+1 (indices are 1-based in the file).
    Example e (a query, or the whole file when there is no qid) is rows qptr[e]:qptr[e+1].
    """

    X: Any  # scipy CSR matrix or dense ndarray, n_docs x n_features (no columns: labels only)
    y: np.ndarray  # float64 targets
    qid: np.ndarray  # int64, 0 where a line has no qid
    qptr: np.ndarray  # int64, n_examples + 1 row boundaries
    docids: "Docids"  # str per row: "docid = X" from the comment, else its first token, else "L<line>"
    line: np.ndarray  # int64 source line number (1-based) of each row
    path: str
    has_qid: bool
    # feature index - 1 of every column when the file's indices are sparse (hashed ids up to 2^31 - 1 are
    # stored as the distinct ids used, not as columns up to the largest); None: column j is index j + 1
    columns: np.ndarray | None = None
    targets_only: bool = False  # read without features: no line holds more than its target (a predictions file)

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


HASH_KERNEL_ROWS = 200_000  # Docids.hashes: numba's loop from this many docids


class Docids:
    """The docids of a file, stored compactly (one byte string + offsets); indexing gives str."""

    def __init__(self):
        self._parts: list = []  # byte strings, each holding one or more docids
        self._lengths: list = []  # their docids' lengths (a list or an array per part)

    def append(self, docid: str) -> None:
        encoded = docid.encode()
        self._parts.append(encoded)
        self._lengths.append([len(encoded)])

    def extend(self, docids: list) -> None:
        """Docids as read from a file (bytes); invalid UTF-8 is replaced as docid_from_comment does.
        Kept as one byte string per call (a chunk of a file), not one object per docid."""
        blob = b"".join(docids)
        if not blob.isascii():
            docids = [d.decode("utf-8", "replace").encode() for d in docids]
            blob = b"".join(docids)
        self._parts.append(blob)
        self._lengths.append(np.fromiter(map(len, docids), dtype=np.int64, count=len(docids)))

    def extend_spans(self, text: np.ndarray, start: np.ndarray, end: np.ndarray, gathered: np.ndarray | None,
                     lines: np.ndarray) -> None:
        """extend() with the docids at text[start[i]:end[i]] (bytes of a chunk of a file): GATHERED holds them one
        after another (io.svmlight_parser.gather_spans) when every row has one and they are all ASCII; else (None)
        they are taken row by row, a row without one (start < 0) getting `L<line>`."""
        if gathered is None:  # rare: the per-row path (invalid UTF-8 replaced as docid_from_comment does)
            self.extend([bytes(text[a:b]) if a >= 0 else b"L%d" % line
                         for a, b, line in zip(start.tolist(), end.tolist(), lines.tolist())])
            return
        self._parts.append(gathered.tobytes())
        self._lengths.append((end - start).astype(np.int64))

    def hashes(self) -> np.ndarray:
        """A 64-bit hash of every docid: equal docids have equal hashes (FNV-1a over its first 64 bytes, seeded with
        its length, in numba's loop without temporary arrays; for a few docids Python's hash of each)."""
        from svmstruct.compute import paths

        if not paths.compiled(len(self), HASH_KERNEL_ROWS, "svmstruct.dataset.order_kernels"):
            return np.array([hash(self[i]) for i in range(len(self))], dtype=np.int64).view(np.uint64)
        from svmstruct.compute.jit import kernel_bytes
        from svmstruct.dataset.order_kernels import fnv_hashes

        out = np.empty(len(self), dtype=np.uint64)
        fnv_hashes(kernel_bytes(self._blob), self._offsets, out)
        return out

    def freeze(self) -> "Docids":
        """One byte string and the offsets of the docids in it, built part by part (each part dropped once
        copied: memory stays near the result)."""
        blob = bytearray()
        self._offsets = np.zeros(sum(len(x) for x in self._lengths) + 1, dtype=np.int64)
        at = 0
        for k, (part, lengths) in enumerate(zip(self._parts, self._lengths)):
            blob += part
            np.cumsum(lengths, out=self._offsets[at + 1:at + 1 + len(lengths)])
            self._offsets[at + 1:at + 1 + len(lengths)] += self._offsets[at]
            at += len(lengths)
            self._parts[k] = self._lengths[k] = None
        self._blob = blob
        del self._parts, self._lengths
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


def check_unique_docids(dataset: Dataset) -> None:
    """InputError naming both lines when a docid appears twice in one query: TREC runs and qrels need
    unique docids (trec_eval refuses duplicates) and eval breaks ties by docid. The first repeat in the file
    is named, with the docid's first line in its query. Rows are grouped by (query, docid hash) in one sort;
    only groups of equal hashes are compared as strings."""
    docids, qptr = dataset.docids, dataset.qptr
    hashes = docids.hashes() if isinstance(docids, Docids) else \
        np.array([hash(d) for d in docids], dtype=np.int64).view(np.uint64)
    with np.errstate(over="ignore"):  # the common case: no two rows of a query have the same hash (one sort)
        keyed = np.repeat(np.arange(len(qptr) - 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15), np.diff(qptr))
    keyed ^= hashes
    keyed.sort()
    if not np.any(keyed[1:] == keyed[:-1]):
        return
    del keyed
    query = np.repeat(np.arange(len(qptr) - 1), np.diff(qptr))
    order = np.lexsort((hashes, query))  # by query, hash, then row (lexsort is stable)
    same = (query[order][1:] == query[order][:-1]) & (hashes[order][1:] == hashes[order][:-1])
    first_repeat = None  # (row of the repeat, row of the docid's first occurrence)
    for at in np.flatnonzero(same & ~np.concatenate(([False], same[:-1]))).tolist():  # each group's start
        end = at + 1
        while end < len(same) and same[end]:
            end += 1
        seen: dict = {}
        for r in order[at:end + 1].tolist():
            docid = docids[r]
            if docid in seen:
                if first_repeat is None or r < first_repeat[0]:
                    first_repeat = (r, seen[docid])
                break
            seen[docid] = r
    if first_repeat is not None:
        r, earlier = first_repeat
        raise InputError(f"docid {docids[r]} appears twice in query {dataset.qid[r]} (lines "
                         f"{dataset.line[earlier]} and {dataset.line[r]}): runs, qrels and per-query "
                         "measures need one document per docid", dataset.path, int(dataset.line[r]))


def in_line_order_if_repeated(dataset: Dataset) -> tuple:
    """(the dataset, None) when every docid is unique in its query; otherwise (the dataset with the docids `L<line>`
    of its lines, the one warning to print): a file whose comments are free text (their first token is no document
    id) is measured as a file without comments is, and eval says so once."""
    import dataclasses

    try:
        check_unique_docids(dataset)
        return dataset, None
    except InputError as e:
        repeat = e
    docids = Docids()
    docids.extend([b"L%d" % line for line in np.asarray(dataset.line).tolist()])
    where = f"{repeat.path}:{repeat.line}: " if repeat.path is not None else ""
    return dataclasses.replace(dataset, docids=docids.freeze()), (
        f"{where}{repeat.message.split(':')[0]}: not one document per docid (comments of free text?); the "
        "documents are named by their lines instead (L<line>, as in a file without comments), ties broken between "
        "those names as trec_eval breaks them")


def group_queries(qid: np.ndarray, line: np.ndarray, name: str) -> np.ndarray:
    """Row boundaries of the runs of equal qid; a qid that reappears after another is an error."""
    starts = np.flatnonzero(np.diff(qid)) + 1
    qptr = np.concatenate(([0], starts, [len(qid)])).astype(np.int64)
    first = qid[qptr[:-1]]
    order = np.argsort(first, kind="stable")
    dup = np.flatnonzero(first[order][1:] == first[order][:-1])
    if len(dup):
        earliest = int(np.argmin(line[qptr[order[dup + 1]]]))  # the reappearance earliest in the file
        a, b = order[dup[earliest]], order[dup[earliest] + 1]
        raise InputError(
            f"qid {first[b]} reappears after another qid (first seen at line {line[qptr[a]]}); "
            "lines of one query must be contiguous",
            name,
            int(line[qptr[b]]),
        )
    return qptr
