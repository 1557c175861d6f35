"""SVMlight input: reading, validation and grouping into examples (docs/commands.md, "Input format").

The only place input is validated; every malformed line raises InputError naming file:line.
"""
from __future__ import annotations

import gzip
import math
import re
import zlib
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from svmstruct.compute import threads as policy
from svmstruct.dataset.documents import Dataset, Docids, check_unique_docids, docid_from_comment, group_queries  # noqa: F401
from svmstruct.errors import InputError
from svmstruct.io import files, heads
from svmstruct.options import NON_FINITE, NUMBER

CHUNK = 1 << 22  # bytes of text parsed per kernel call (threads + 1 in flight): memory stays near the final arrays
# values the kernel's fast path leaves to Python: plain decimals only (float() would also take '1_0',
# non-ASCII digits and surrounding Unicode spaces), and the spellings of nan/inf, which are not finite
_DECIMAL = re.compile(NUMBER.encode() + rb"\Z")
_NON_FINITE = re.compile(NON_FINITE.encode(), re.IGNORECASE)
_SECOND_TOKEN = re.compile(rb"^[ \t]*[^\s#]+[ \t]+[^\s#]", re.MULTILINE)  # a line with more than its target
# indices above this are compacted to the distinct ones used when at most half of the range is used
COMPACT_ABOVE = 1 << 20


def _complete_chunks(f, name: str, buffers: int = 1, size: int | None = None):
    """Successive buffers of whole lines of about `size` bytes (CHUNK; a missing final newline is added), read
    into `buffers` reused bytearrays in turn: each yielded memoryview, of its buffer from its start, stays valid
    until `buffers` more are requested (no copy, and no fresh memory to fault in for every chunk)."""
    size = size or CHUNK
    plain = heads.plain_size(f)
    if plain is not None:  # no larger than a plain file: zeroing 4 MB takes ~7 ms, all of a small file's read
        size = min(size, plain + 1)
    pool = [bytearray(size)]  # grown to `buffers` as needed: a small file touches no more memory than it fills
    turn = 0
    buf = pool[0]
    kept = 0  # bytes of an unfinished line at the front of buf
    while True:
        try:
            got = f.readinto(memoryview(buf)[kept:])
        except (OSError, EOFError, zlib.error) as e:
            raise InputError(f"cannot read (corrupt or truncated?): {e}", name) from None
        if not got:
            if kept:
                yield memoryview(bytes(buf[:kept]) + b"\n")
            return
        total = kept + got
        cut = buf.rfind(b"\n", 0, total) + 1
        if cut == 0:  # a line longer than the buffer: grow it
            kept = total
            if total == len(buf):
                grown = bytearray(2 * len(buf))
                grown[:total] = buf[:total]
                buf = pool[turn] = grown
            continue
        yield memoryview(buf)[:cut]
        turn = (turn + 1) % buffers
        if turn == len(pool):
            pool.append(bytearray(len(buf)))
        following = pool[turn]
        kept = total - cut
        if len(following) < len(buf):  # keep the grown size: the next line may be as long
            following = pool[turn] = bytearray(len(buf))
        following[:kept] = buf[cut:total]
        buf = following


def read_svmlight(path: str, n_features: int | None = None, dtype=np.float32, layout: str = "sparse",
                  features: bool = True) -> Dataset:
    """Read an SVMlight file (``-`` for stdin, gzip detected by its magic bytes).

    n_features widens X to at least that many columns (to line a test file up with a training file); a
    file with feature indices above COMPACT_ABOVE that uses at most half of its index range gets only
    the columns it uses, their indices in `columns`, whatever n_features asks. dtype float32 (the
    default) stores the features in single precision, as svm_light, svm_perf and svm_rank do (FVAL is a
    float: the same values as theirs, half the memory of float64, which keeps them in double precision). layout
    'sparse' gives a CSR matrix, 'dense' an ndarray (for dense data it saves the 4-byte index of every
    value), 'auto' whichever takes less memory.
    The file is read twice (sizes, then values), so memory peaks near the final arrays; stdin and
    gzip are spooled once. Both passes run over chunks of whole lines on numba's thread count
    (--threads): the first gives every chunk's rows, nonzeros and lines, so each chunk is parsed from
    its own offsets in parallel, and the results are taken in file order (the first error in the file
    is the one reported). features=False (eval, qrels) reads no feature (X has no
    column): a line's target, qid (sid, cost) and comment are read and checked as always, the rest is skipped
    unread, in one pass over the file (_read_labels).
    """
    name = "<stdin>" if path == "-" else path
    with files.open_binary(path) as f:
        small = heads.small_text(f, heads.TWIN_BYTES if features else heads.TWIN_LABEL_BYTES)
        if small is None:  # the numba kernels (compute.paths)
            f = heads.Prefixed(f)  # type: ignore[assignment]  # the bytes looked at already come first
            if not features:
                return _read_labels(f, name, dtype)
            return _read(f, name, path != "-", n_features, dtype, layout)
    return _read_twin(small, name, n_features, dtype, layout, features)


def _read(f, name: str, named: bool, n_features: int | None, dtype, layout: str) -> Dataset:
    """read_svmlight by the parsing kernels (numba), in two passes (NAMED: not stdin)."""
    seekable = named and not isinstance(f.f, gzip.GzipFile) and f.seekable()  # not: a pipe, a FIFO
    dataset = _read_from(f, name, seekable, n_features, dtype, layout)
    assert dataset is not None
    return dataset


def _read_twin(text: bytes, name: str, n_features: int | None, dtype, layout: str, features: bool) -> Dataset:
    """read_svmlight of a small file's TEXT by the Python twin (io.svmlight_twin): the dataset the kernels give,
    checked in the same order (the first parse error, unless a qid error comes before it; then single precision,
    then the qids)."""
    from svmstruct.io import svmlight_twin as twin

    rows, problem = twin.parse(text, features)
    got = twin.arrays(rows, features, dtype)
    n = len(got["y"])
    out = _Arrays.empty(n, 0, dtype, False, 0, features=False)
    out.y, out.qid, out.has_qid, out.lines = got["y"], got["qid"], got["has_qid"], got["lines"]
    if problem is not None:
        raise _first_error(problem, out, 0, n, name)
    if n == 0:
        raise InputError("no examples", name)
    docids = Docids()
    found = [None if comment is None else docid_from_comment(comment) for comment in rows.comments]
    docids.extend([b"L%d" % line if docid is None else docid.encode() for docid, line in zip(found, rows.lines)])
    if not features:
        mixed = _mixed_qid_error(out, n, name)
        if mixed is not None:
            raise mixed
        any_qid = bool(out.has_qid[0])
        qptr = group_queries(out.qid, out.lines, name) if any_qid else np.array([0, n], dtype=np.int64)
        return Dataset(np.zeros((n, 0), dtype=dtype), out.y, out.qid, qptr, docids.freeze(), out.lines, name, any_qid,
                       targets_only=_SECOND_TOKEN.search(text) is None)
    width = max(rows.highest, n_features or 0)
    itemsize = np.dtype(dtype).itemsize
    nnz = len(got["values"])
    dense = layout == "dense" or (layout == "auto" and n * width * itemsize <= nnz * (itemsize + 4))
    out.indptr, out.indices, out.values = got["indptr"], got["indices"], got["values"]
    if dense and width <= COMPACT_ABOVE:  # as the kernel writes it: every value assigned in place
        out.dense = True
        out.X = np.zeros((n, width), dtype=dtype)
        out.X[np.repeat(np.arange(n), np.diff(out.indptr)), out.indices] = out.values
    return _assembled(out, width, rows.highest, docids, layout, name)


def _read_from(f, name: str, seekable: bool, n_features: int | None, dtype, layout: str, first_line: int = 0,
               empty_ok: bool = False) -> Dataset | None:
    """_read of an open file (spooled first unless seekable), its lines numbered from first_line + 1; None for
    a file without a data line when empty_ok."""
    threads = policy.count()
    with ThreadPoolExecutor(threads) as pool:
        if not seekable:
            chunks = [bytes(chunk) for chunk in _complete_chunks(f, name)]
            source = lambda: iter(chunks)  # noqa: E731
        else:  # _in_order holds at most threads + 1 chunks, and the one given to the caller
            source = lambda: _complete_chunks(f, name, threads + 2)  # noqa: E731
        counts = []  # per chunk: (bytes, rows, feature tokens, physical lines)
        highest = 0
        for buf, (r, z, h, lines_in) in _in_order(pool, threads, _count, source()):
            counts.append((len(buf), r, z, lines_in))
            highest = max(highest, h)
        rows, nnz = sum(c[1] for c in counts), sum(c[2] for c in counts)
        if rows == 0:
            if empty_ok:
                return None
            raise InputError("no examples", name)
        width = max(highest, n_features or 0)
        itemsize = np.dtype(dtype).itemsize
        dense = layout == "dense" or (layout == "auto" and rows * width * itemsize <= nnz * (itemsize + 4))
        if dense and width > COMPACT_ABOVE:
            dense = False  # parse sparse, compact the columns, then densify (below)
        out = _Arrays.empty(rows, width, dtype, dense, nnz)
        docids = Docids()
        if seekable:
            f.seek(0)
        starts = []  # each chunk parses from its own (line, row, nonzero) offsets: known from the counts
        line, row, nz = first_line, 0, 0
        for size, r, z, lines_in in counts:
            starts.append((size, line, row, nz))
            line, row, nz = line + lines_in, row + r, nz + z
        parse = lambda item: _parse_kernel(item[0], item[1], out, name)  # noqa: E731
        parsed_rows = 0
        for (buf, (_, first_line, first_row, _)), (calls, spans) in _in_order(pool, threads, parse,
                                                                                  zip(source(), starts)):
            problem = _finish_chunk(buf, calls, first_line, first_row, out, docids, spans)
            if problem is not None:
                raise _first_error(problem, out, first_row, calls[-1][-1], name)
            parsed_rows = calls[-1][-1]
    if parsed_rows != rows:
        raise InputError(f"the file changed while it was read ({parsed_rows} rows, expected {rows})", name)
    return _assembled(out, width, highest, docids, layout, name)


def _assembled(out: _Arrays, width: int, highest: int, docids: Docids, layout: str, name: str) -> Dataset:
    """The Dataset of a parsed file's arrays (OUT's rows, all of them), checked after parsing as both readers check
    it: single precision, then the qids; a sparse file's columns compacted above COMPACT_ABOVE, then densified for
    layout 'dense'."""
    rows, dtype = len(out.y), out.X.dtype if out.dense else out.values.dtype
    X, indptr, indices, values, y, qid, has_qid, lines = (out.X, out.indptr, out.indices, out.values, out.y, out.qid,
                                                          out.has_qid, out.lines)
    _check_single_precision(X if out.dense else values, out.dense, indptr, lines, name)
    mixed = _mixed_qid_error(out, rows, name)  # a reappearing qid: group_queries below says so
    if mixed is not None:
        raise mixed
    any_qid = bool(has_qid[0])
    qptr = group_queries(qid, lines, name) if any_qid else np.array([0, rows], dtype=np.int64)
    columns = None
    if not out.dense:
        if highest > COMPACT_ABOVE:  # whatever n_features asks: the model maps features by index
            columns, indices = _compact(indices, highest)
        import scipy.sparse as sp

        X = sp.csr_matrix((values, indices, indptr), shape=(rows, width if columns is None else len(columns)))
        if layout == "dense":
            _check_dense_size(rows, X.shape[1], np.dtype(dtype).itemsize, name)
            dense_X = np.zeros(X.shape, dtype=dtype)  # assigned, not summed (toarray would turn -0.0 into 0.0)
            dense_X[np.repeat(np.arange(rows), np.diff(X.indptr)), X.indices] = X.data
            X = dense_X
    return Dataset(X, y, qid, qptr, docids.freeze(), lines, name, any_qid, columns)


PART_BYTES = 1 << 26  # read_parts: whole lines of about this many bytes a part


def read_labelled(path: str, what: str) -> tuple:
    """(the Dataset of an SVMlight file, its features as CSR over their own indices, its labels as integers) when
    every label is one of 1, 2, ... (`what`: class, tag; SVM-multiclass's and SVM-hmm's files); InputError at the
    first line whose label is not."""
    import scipy.sparse as sp

    dataset = read_svmlight(path, dtype=np.float64, layout="sparse")
    y = dataset.y
    bad = np.flatnonzero((y < 1) | (y != np.round(y)))
    if len(bad):
        raise InputError(f"{what} {y[bad[0]]:g} is not one of 1, 2, ...", path,
                         int(dataset.line[bad[0]]))
    X = sp.csr_matrix(dataset.X)
    if dataset.columns is not None:  # compacted feature ids back to their indices
        X = sp.csr_matrix((X.data, dataset.columns[X.indices], X.indptr),
                          shape=(X.shape[0], int(dataset.columns[-1]) + 1 if len(dataset.columns) else 0))
    return dataset, X, y.astype(np.int64)


def read_basis(path: str):
    """The vectors of a kernel basis file (learn --f: SVMlight lines, their targets ignored) as a
    kernel_functions.Basis."""
    from svmstruct.kernels.kernel_functions import Basis

    return Basis.of_dataset(read_svmlight(path))


def read_parts(path: str, dtype=np.float32, part_bytes: int | None = None):
    """read_svmlight(path, dtype=dtype) as consecutive Datasets (CSR) of whole lines, about part_bytes
    (PART_BYTES) of the file each, for scoring a file without holding its whole matrix: the rows, values, line
    numbers and docids of the whole file's Dataset, part by part (a part without a data line is skipped), and
    its checks across the parts: a qid on every line or on none, a qid that comes back after another. An error
    is reported when its part is read, the parts in file order (so the earliest of two kinds of error in two
    parts, where the whole file would report its qid errors after every malformed token)."""
    name = "<stdin>" if path == "-" else path
    first_line = 0
    with_qid = None  # the first part's
    last_qid = None  # the qid of the last row so far (its query may go on in the next part)
    first_seen: dict = {}  # qid -> the line of its query's first row
    with files.open_binary(path) as f:
        small = heads.small_text(f, heads.TWIN_BYTES)
        if small is not None:  # one part, read by the Python twin (compute.paths)
            yield _read_twin(small, name, None, dtype, "sparse", True)
            return
        f = heads.Prefixed(f)  # type: ignore[assignment]
        # one reused buffer (fresh memory costs page faults: ~3 s a GB on this project's machine)
        for part in _complete_chunks(f, name, size=part_bytes or PART_BYTES):
            d = _read_from(_PartReader(part), name, True, None, dtype, "sparse", first_line, empty_ok=True)
            first_line += part.obj.count(b"\n", 0, len(part))
            if d is None:
                continue
            if with_qid is None:
                with_qid = d.has_qid
            if d.has_qid != with_qid:
                raise InputError("either every line has a qid or none has", name, int(d.line[0]))
            if d.has_qid:
                for start in d.qptr[:-1].tolist():
                    qid, line = int(d.qid[start]), int(d.line[start])
                    if start == 0 and qid == last_qid:
                        continue  # the query of the part before goes on
                    if qid in first_seen:
                        raise InputError(f"qid {qid} reappears after another qid (first seen at line "
                                         f"{first_seen[qid]}); lines of one query must be contiguous", name, line)
                    first_seen[qid] = line
                last_qid = int(d.qid[-1])
            yield d
    if with_qid is None:
        raise InputError("no examples", name)


class _PartReader:
    """A part of a file (a memoryview) as the seekable binary file _read_from reads, without a copy of it."""

    def __init__(self, data: memoryview):
        self.data, self.at = data, 0

    def readinto(self, buffer) -> int:
        n = min(len(buffer), len(self.data) - self.at)
        buffer[:n] = self.data[self.at:self.at + n]
        self.at += n
        return n

    def seek(self, at: int) -> None:
        self.at = at


def _read_labels(f, name: str, dtype) -> Dataset:
    """read_svmlight(features=False), in one pass: every chunk of lines is parsed on its own (from its line 0 and
    row 0, in parallel) into per-row arrays of its own, its features unread; in file order its
    line numbers are shifted by the lines before it, its docids taken and its first problem reported. Memory
    is that of the targets, qids, line numbers and docids (the chunks' rows are copied, in the calling thread,
    into arrays sized from the first chunk's bytes per row and the file's size, whose untouched end costs
    no memory); nothing is spooled (stdin and gzip are read once)."""
    threads = policy.count()
    out = None  # the file's rows so far: out's per-row arrays [:rows]
    rows = first_line = 0
    docids = Docids()
    more_than_targets = False  # a line with a token after its target (a qid, a feature): labelled data
    with ThreadPoolExecutor(threads) as pool:
        size = heads.plain_size(f)
        parse = lambda buf: _parse_alone(buf, name)  # noqa: E731
        for buf, (chunk, calls, lines_in, spans) in _in_order(pool, threads, parse,
                                                              _complete_chunks(f, name, threads + 2)):
            more_than_targets = more_than_targets or _SECOND_TOKEN.search(buf) is not None
            n = calls[-1][-1]
            chunk.lines[:n] += first_line
            problem = _finish_chunk(buf, calls, first_line, 0, chunk, docids, spans)
            if out is None:  # the file's rows estimated from the first chunk's (stdin, gzip: doubled as needed)
                estimate = 64 * n if size is None else int(1.25 * n * size / len(buf))
                out = _Arrays.empty(estimate + 1024, 0, np.float64, False, 0, features=False)
            if rows + n > len(out.y):
                out = out.rows_grown(max(2 * len(out.y), rows + n))
            for field in ("y", "qid", "has_qid", "lines"):
                getattr(out, field)[rows:rows + n] = getattr(chunk, field)[:n]
            if problem is not None:
                raise _first_error(problem, out, rows, rows + n, name)
            rows += n
            first_line += lines_in
    if rows == 0 or out is None:
        raise InputError("no examples", name)
    y, qid, has_qid, lines = (getattr(out, field)[:rows] for field in ("y", "qid", "has_qid", "lines"))
    mixed = _mixed_qid_error(out, rows, name)
    if mixed is not None:
        raise mixed
    any_qid = bool(has_qid[0])
    qptr = group_queries(qid, lines, name) if any_qid else np.array([0, rows], dtype=np.int64)
    return Dataset(np.zeros((rows, 0), dtype=dtype), y, qid, qptr, docids.freeze(), lines, name, any_qid,
                   targets_only=not more_than_targets)


def _compact(indices: np.ndarray, width: int) -> tuple:
    """(columns, indices): the distinct 0-based indices used, and every index replaced by its position
    among them, when they use at most half of 0..width-1; else (None, indices)."""
    columns = np.unique(indices)
    if 2 * len(columns) > width:
        return None, indices
    return columns.astype(np.int64), np.searchsorted(columns, indices).astype(np.int32)


def _check_dense_size(rows: int, width: int, itemsize: int, name: str) -> None:
    """--dense on sparse data with a huge index range would allocate rows x width: refuse it."""
    size = rows * width * itemsize
    if size > 1 << 32:
        raise InputError(f"--dense needs {size / 2**30:.1f} GiB for {rows} lines x {width} features; "
                         "the data is sparse: leave out --dense", name)


def _check_single_precision(values: np.ndarray, dense: bool, indptr: np.ndarray, lines: np.ndarray, name: str):
    """A value beyond single precision's range becomes inf in a float32 array (the default): name its line."""
    if values.dtype != np.float32 or values.size == 0:
        return
    if np.isfinite(np.max(values)) and np.isfinite(np.min(values)):  # no full-size boolean array
        return
    first = int(np.flatnonzero(~np.isfinite(values.reshape(-1)))[0])
    row = first // values.shape[1] if dense else int(np.searchsorted(indptr, first, side="right")) - 1
    raise InputError("a feature value is beyond single precision's range (about 3.4e38), where features are "
                     "stored (as svm_light stores them): learn --float64 keeps them in double precision",
                     name, int(lines[row]))


def _message(code: int) -> str:
    """The text of a parsing error code ({tok}: the token, {last}: the index before it)."""
    from svmstruct.io.svmlight_codes import MESSAGES

    return MESSAGES[code]


@dataclass
class _Arrays:
    """The output arrays of read_svmlight, shared by the chunks (each writes its own rows)."""

    X: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    y: np.ndarray
    qid: np.ndarray
    has_qid: np.ndarray
    lines: np.ndarray
    comment_start: np.ndarray
    comment_end: np.ndarray
    dense: bool
    features: bool = True  # False: the features are not read (X, indptr, indices, values unused)

    @staticmethod
    def empty(rows: int, width: int, dtype, dense: bool, nnz: int, features: bool = True) -> "_Arrays":
        """Arrays for `rows` rows (the features dense, CSR of nnz values, or not read)."""
        kept = nnz if features and not dense else 0
        return _Arrays(
            X=np.zeros((rows, width) if dense else (0, width), dtype=dtype),
            indptr=np.zeros(rows + 1 if features and not dense else 1, dtype=np.int64),
            indices=np.empty(kept, dtype=np.int32), values=np.empty(kept, dtype=dtype),
            y=np.empty(rows), qid=np.zeros(rows, dtype=np.int64), has_qid=np.zeros(rows, dtype=np.bool_),
            lines=np.zeros(rows, dtype=np.int64), comment_start=np.zeros(rows, dtype=np.int64),
            comment_end=np.zeros(rows, dtype=np.int64), dense=dense, features=features)

    def rows_grown(self, rows: int) -> "_Arrays":
        """The per-row arrays (no features) with room for `rows` rows, the first ones kept (the rest never
        written: zeroed pages untouched take no memory)."""
        grown = _Arrays.empty(rows, 0, self.values.dtype, False, 0, features=False)
        for field in _Arrays.PER_ROW:
            old = getattr(self, field)
            getattr(grown, field)[:len(old)] = old
        return grown

    PER_ROW = ("y", "qid", "has_qid", "lines", "comment_start", "comment_end")


def _in_order(pool, threads: int, work, items):
    """(item, work(item)) for every item, in order, with up to threads + 1 items in flight on the pool
    (each holds a chunk of the file: memory stays near the final arrays)."""
    pending: deque = deque()
    for item in items:
        pending.append((item, pool.submit(work, item)))
        if len(pending) > threads:
            item, future = pending.popleft()
            yield item, future.result()
    while pending:
        item, future = pending.popleft()
        yield item, future.result()


def _count(buf: bytes):
    from svmstruct.compute.jit import kernel_bytes
    from svmstruct.io import svmlight_parser as parser

    return parser.count_lines(kernel_bytes(buf), len(buf))


def _parse_kernel(buf: bytes, start: tuple, out: _Arrays, name: str) -> tuple:
    """Run the parsing kernel over one chunk of whole lines from its offsets (on a worker thread: the
    kernel releases the GIL). Returns the kernel's calls: (fallback slots, starts, ends, code, error
    token span, previous index, the row reached), FULL asking for another call with more room; and the
    docids of the chunk's rows (_docid_spans)."""
    size, line, row, nz = start
    if len(buf) != size:
        raise InputError("the file changed while it was read", name)
    calls, _, _ = _parse_calls(buf, line, row, nz, out, name)
    return calls, _docid_spans(buf, out, row, calls[-1][-1])


def _docid_spans(buf, out: _Arrays, first_row: int, row_end: int) -> tuple:
    """(start, end, gathered) of the docids of out's rows first_row:row_end (a chunk's, on its parsing thread: the
    kernels release the GIL): their byte spans in buf (-1 where a row has none), and, when every row has one and
    they are all ASCII, their bytes one after another (else None: Docids.extend_spans takes them row by row)."""
    from svmstruct.compute.jit import kernel_bytes
    from svmstruct.io import svmlight_parser as parser

    arr = kernel_bytes(buf)
    start = np.empty(row_end, dtype=np.int64)  # indexed by row like the other arrays; only first_row: is used
    end = np.empty(row_end, dtype=np.int64)
    parser.docid_spans(arr, out.comment_start, out.comment_end, first_row, row_end, start, end)
    start, end = start[first_row:], end[first_row:]
    if len(start) == 0 or int(start.min()) < 0:
        return start, end, None
    gathered, ascii = parser.gather_spans(arr, start, end)
    return start, end, gathered if ascii else None


def _parse_calls(buf, line: int, row: int, nz: int, out: _Arrays, name: str, grow: bool = False) -> tuple:
    """(the kernel's calls, out, lines parsed) over buf from (line, row, nz); a FULL call is followed by one with
    twice the fallback room, or, when the rows are full, with out's per-row arrays twice as long (grow) — in
    two passes they are sized by the count, so full rows mean the file changed."""
    from svmstruct.compute.jit import kernel_bytes
    from svmstruct.io import svmlight_parser as parser

    arr = kernel_bytes(buf)
    calls = []
    capacity = 1 << 16
    p = 0
    while True:
        fb_pos = np.empty(capacity, dtype=np.int64)
        fb_start = np.empty(capacity, dtype=np.int64)
        fb_end = np.empty(capacity, dtype=np.int64)
        code, p, line, row, nz, count, t0, t1, last = parser.parse_lines(
            arr, len(arr), p, line, row, nz, out.dense, out.features, out.X, out.indptr, out.indices, out.values, out.y,
            out.qid, out.has_qid, out.lines, out.comment_start, out.comment_end, fb_pos, fb_start, fb_end, 0)
        calls.append((fb_pos[:count], fb_start[:count], fb_end[:count], code, t0, t1, last, row))
        if code != parser.FULL:
            return calls, out, line
        if row == len(out.y):
            if not grow:
                raise InputError("the file changed while it was read", name)
            out = out.rows_grown(2 * row)
        else:
            capacity *= 2


def _parse_alone(buf, name: str) -> tuple:
    """(_Arrays holding the chunk's rows first, the kernel's calls, its physical lines, its docids' _docid_spans): a
    chunk parsed from line 0, row 0, its features unread (_read_labels). The rows are calls[-1][-1]; a line the
    kernel stopped at may have its target in the next row."""
    out = _Arrays.empty(len(buf) // 256 + 64, 0, np.float64, False, 0, features=False)
    calls, out, lines_in = _parse_calls(buf, 0, 0, 0, out, name, grow=True)
    return out, calls, lines_in, _docid_spans(buf, out, 0, calls[-1][-1])


def _finish_chunk(buf: bytes, calls: list, first_line: int, first_row: int, out: _Arrays, docids: "Docids",
                  spans: tuple) -> tuple | None:
    """In file order: convert the tokens off the kernel's fast path and add the docids of the chunk's rows
    (out's rows first_row: on; SPANS: their _docid_spans); its first problem, (line, message), if it has one (the
    line found from the problem's byte position and the lines before the chunk)."""
    from svmstruct.compute.jit import kernel_bytes
    from svmstruct.io import svmlight_parser as parser

    arr = kernel_bytes(buf)
    flat = out.X.reshape(-1) if out.dense else out.values
    newlines = None
    for fb_pos, fb_start, fb_end, code, t0, t1, last, _ in calls:
        problems = []  # (byte position, message) of every bad token found
        for k in range(len(fb_pos)):
            raw = bytes(buf[fb_start[k]:fb_end[k]])
            slot = int(fb_pos[k])
            what = "cost" if slot == parser.CHECK_ONLY else "target" if slot < 0 else "feature value"
            value = float(raw) if _DECIMAL.match(raw) else None
            if value is None or not math.isfinite(value):
                problem = "is not finite" if value is not None or _NON_FINITE.match(raw) else "is not a number"
                problems.append((int(fb_start[k]), f"{what} {problem}: '{raw.decode('utf-8', 'backslashreplace')}'"))
            elif slot == parser.CHECK_ONLY:
                continue
            elif slot < 0:
                out.y[-1 - slot] = value
            elif out.features:
                with np.errstate(over="ignore"):  # float32 overflow: reported with its line after reading
                    flat[slot] = value
        if code not in (parser.OK, parser.FULL):
            token = bytes(buf[t0:t1]).decode("utf-8", "backslashreplace")
            problems.append((int(t0), _message(code).format(tok=token, last=last)))
        if problems:
            position, message = min(problems)
            if newlines is None:
                newlines = np.flatnonzero(arr == parser.NEWLINE)
            return first_line + int(np.searchsorted(newlines, position)) + 1, message
    start, end, gathered = spans
    docids.extend_spans(arr, start, end, gathered, out.lines[first_row:calls[-1][-1]])
    return None


def _first_error(problem: tuple, out: _Arrays, first_row: int, reached: int, name: str) -> InputError:
    """The first error in the file, given a chunk's first problem (line, message) and out's rows up to `reached`
    (the chunk's rows from first_row): a qid error of the lines before it (found only after reading) comes
    first."""
    line, message = problem
    before = first_row + int(np.searchsorted(out.lines[first_row:reached], line))
    earlier = _qid_error(out, before, name)
    if earlier is not None and earlier.line is not None and earlier.line < line:
        return earlier
    return InputError(message, name, line)


def _mixed_qid_error(out: _Arrays, rows: int, name: str) -> InputError | None:
    """The error of the first `rows` rows if some of them have a qid and others not."""
    has_qid = out.has_qid[:rows]
    if rows == 0 or has_qid.all() or not has_qid.any():
        return None
    row = int(np.flatnonzero(has_qid != has_qid[0])[0])
    return InputError("either every line has a qid or none has", name, int(out.lines[row]))


def _qid_error(out: _Arrays, rows: int, name: str) -> InputError | None:
    """The qid error of the first `rows` rows, if any: a qid on some lines only, or a qid that reappears."""
    error = _mixed_qid_error(out, rows, name)
    if error is None and rows > 0 and out.has_qid[0]:
        try:
            group_queries(out.qid[:rows], out.lines[:rows], name)
        except InputError as e:
            return e
    return error
