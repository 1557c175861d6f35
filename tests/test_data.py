"""The SVMlight reader: agreement with scikit-learn on the shared data, strictness, gzip and stdin."""
import gzip
import io
import sys

import numpy as np
import pytest

from svmstruct.errors import InputError
from svmstruct.io import data

from conftest import DATA, need_shared


def shared_files():
    return sorted(str(p.relative_to(DATA)) for p in DATA.rglob("*")
                  if p.suffix in (".txt", ".svm") and "vocab" not in p.name)


@pytest.mark.slow
def test_agrees_with_sklearn_on_every_shared_file():
    need_shared()
    from sklearn.datasets import load_svmlight_file

    files = shared_files()
    assert len(files) >= 13
    for name in files:
        ours = data.read_svmlight(str(DATA / name), dtype=np.float64)
        X, y, qid = load_svmlight_file(str(DATA / name), query_id=True, zero_based=False)
        width = max(X.shape[1], ours.n_features)
        X.resize((X.shape[0], width))
        mine = ours.X.copy()
        mine.resize((mine.shape[0], width))
        assert (mine != X).nnz == 0, name
        assert np.array_equal(ours.y, y), name
        assert np.array_equal(ours.qid, qid) if ours.has_qid else len(qid) == 0, name


def write(tmp_path, text, name="f.dat"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_parses_qids_docids_comments_and_options(tmp_path):
    path = write(tmp_path, "# header comment\n\n2 qid:7 sid:3 cost:1.5 1:0.5 4:-2e-3 # docid = GX01 inc = 1\r\n"
                           "0 qid:7 2:1 # plain-id rest\n1 qid:9\n")
    d = data.read_svmlight(path)
    assert d.X.shape == (3, 4) and d.X[0, 3] == -2e-3 and d.X[1, 1] == 1.0 and d.X[2].nnz == 0
    assert d.y.tolist() == [2.0, 0.0, 1.0] and d.qid.tolist() == [7, 7, 9] and d.qptr.tolist() == [0, 2, 3]
    assert d.docids == ["GX01", "plain-id", "L5"] and d.line.tolist() == [3, 4, 5] and d.has_qid


def test_without_qid_the_file_is_one_example(tmp_path):
    d = data.read_svmlight(write(tmp_path, "1 1:1\n-1 2:1\n"))
    assert d.qptr.tolist() == [0, 2] and not d.has_qid and d.n_examples == 1


def test_n_features_widens(tmp_path):
    assert data.read_svmlight(write(tmp_path, "1 1:1\n"), n_features=5).X.shape == (1, 5)


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("1 0:1", "0:1"),
        ("1 3:1 2:1", "2:1"),
        ("1 2:1 2:1", "2:1"),
        ("1 1:nan", "nan"),
        ("1 1:inf", "inf"),
        ("nan 1:1", "nan"),
        ("x 1:1", "'x'"),
        ("1 1:", "1:"),
        ("1 :4", ":4"),
        ("1 a:1", "'a'"),
        ("1 1:x", "'x'"),
        ("1 5", "'5'"),
        ("1 qid:a 1:1", "'a'"),
        ("1 1:1 qid:3", "qid:3"),
    ],
)
def test_malformed_lines_name_file_line_and_token(tmp_path, line, fragment):
    body = line.replace("1 ", "1 qid:1 ", 1) if "qid" not in line else line
    path = write(tmp_path, "1 qid:1 1:1\n" + body)
    with pytest.raises(InputError) as e:
        data.read_svmlight(path)
    assert e.value.path == path and e.value.line == 2 and fragment in e.value.message


def test_reappearing_qid_names_both_lines(tmp_path):
    path = write(tmp_path, "1 qid:1 1:1\n0 qid:2 1:1\n0 qid:1 1:1\n")
    with pytest.raises(InputError, match="line 1") as e:
        data.read_svmlight(path)
    assert e.value.line == 3


def test_mixing_lines_with_and_without_qid(tmp_path):
    with pytest.raises(InputError) as e:
        data.read_svmlight(write(tmp_path, "1 qid:1 1:1\n0 1:1\n"))
    assert e.value.line == 2


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="cannot open"):
        data.read_svmlight(str(tmp_path / "absent.dat"))
    with pytest.raises(InputError, match="no examples"):
        data.read_svmlight(write(tmp_path, "# only a comment\n"))
    with pytest.raises(InputError):
        data.read_svmlight(str(tmp_path))


def test_gzip_and_stdin(tmp_path, monkeypatch):
    text = "1 qid:1 1:0.25 3:4 # a\n0 qid:1 2:1 # b\n"
    gz = tmp_path / "f.dat.gz"
    with gzip.open(gz, "wt") as f:
        f.write(text)
    plain = data.read_svmlight(write(tmp_path, text))
    zipped = data.read_svmlight(str(gz))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    piped = data.read_svmlight("-")
    for d in (zipped, piped):
        assert (d.X != plain.X).nnz == 0 and d.docids == plain.docids and np.array_equal(d.y, plain.y)
    assert piped.path == "<stdin>"


def test_kernel_numbers_equal_python_float_bit_for_bit(tmp_path):
    rng = np.random.default_rng(2)
    tokens = ["0", "-0", "+1", ".5", "5.", "1e-300", "1E+22", "123456789012345678", "0.1", "3.14159265358979323846",
              "9007199254740993", "1e23", "4.9e-324", "00012.5000", "-7.25e-3"]
    for _ in range(3000):
        mantissa = "".join(rng.choice(list("0123456789"), size=int(rng.integers(1, 22))))
        point = int(rng.integers(0, len(mantissa) + 1))
        token = mantissa[:point] + "." + mantissa[point:] if rng.random() < 0.7 else mantissa
        if rng.random() < 0.3:
            token += f"e{int(rng.integers(-30, 30))}"
        tokens.append(("-" if rng.random() < 0.3 else "") + token)
    path = tmp_path / "numbers.dat"
    path.write_text("".join(f"{t} 1:{t}\n" for t in tokens))
    d = data.read_svmlight(str(path), dtype=np.float64)
    expected = np.array([float(t) for t in tokens])
    assert np.array_equal(d.y.view(np.int64), expected.view(np.int64))
    values = d.X.toarray()[:, 0]
    nonzero = expected != 0
    assert np.array_equal(values[nonzero].view(np.int64), expected[nonzero].view(np.int64))


def test_float32_and_dense_layouts_hold_the_same_values(tmp_path):
    path = write(tmp_path, "1 qid:1 1:0.25 3:-1.5\n0 qid:1 2:3\n")
    sparse = data.read_svmlight(path)
    dense = data.read_svmlight(path, dtype=np.float32, layout="dense")
    assert isinstance(dense.X, np.ndarray) and dense.X.dtype == np.float32
    assert np.array_equal(dense.X, sparse.X.toarray().astype(np.float32))


def test_chunk_boundaries_and_lines_longer_than_the_buffer(monkeypatch):
    need_shared()
    path = str(DATA / "mq2008" / "S1.txt")
    whole = data.read_svmlight(path)
    monkeypatch.setattr(data, "CHUNK", 97)  # lines are ~600 bytes: every line spans several reads
    pieces = data.read_svmlight(path)
    assert (pieces.X != whole.X).nnz == 0 and np.array_equal(pieces.y, whole.y)
    assert pieces.docids == whole.docids and np.array_equal(pieces.line, whole.line)


@pytest.mark.parametrize("chunk", [None, 512])
def test_docid_kernel_equals_the_regular_expression(tmp_path, monkeypatch, chunk):
    """The docids of a file (a numba kernel over the comments) against data.docid_from_comment, the regular
    expression `docid\\s*=\\s*(\\S+)` or else the first token, on random comments built from its pieces,
    by both kernel readers; in small chunks too, where some chunks hold only ASCII docids (copied out by the kernel
    at once) and others a row without one or a byte beyond ASCII (taken row by row)."""
    rng = np.random.default_rng(0)
    pieces = [b"docid", b"doc", b"id", b"=", b" ", b"\t", b"\x0b", b"\x0c", b"GX", b"-1", b"d\xc3\xa9", b"\xff",
              b"#", b"docid=", b"docid =  ", b"x"]
    comments = [b"".join(pieces[k] for k in rng.integers(0, len(pieces), rng.integers(0, 8))) if (i // 40) % 2
                else b"docid = GX%d" % i for i in range(3000)]
    path = tmp_path / "comments.txt"
    path.write_bytes(b"".join(b"1 qid:1 1:1 #" + c + b"\n" for c in comments))
    expected = [data.docid_from_comment(c) for c in comments]
    monkeypatch.setenv("SVMSTRUCT_PATH", "kernel")  # the kernels read it, however small (compute.paths)
    if chunk:
        monkeypatch.setattr(data, "CHUNK", chunk)
    for features in (True, False):
        assert list(data.read_svmlight(str(path), features=features).docids) == [
            e if e is not None else f"L{i + 1}" for i, e in enumerate(expected)]


def test_the_word_scans_stop_where_a_byte_loop_stops():
    """svmlight_parser._data_end reads 8 bytes at a time: on random texts of every length and start (so every
    alignment), with bytes whose high bit is set (where a zero-byte test can borrow), it stops at the first '#' or
    newline from its start, as a loop over the bytes; gather_spans gives the spans' bytes one after another and
    whether they are all ASCII."""
    from svmstruct.compute.jit import kernel_bytes
    from svmstruct.io import svmlight_parser as parser

    rng = np.random.default_rng(5)
    for _ in range(4000):
        raw = rng.integers(0, 256, int(rng.integers(0, 48)), dtype=np.uint8)
        for _ in range(int(rng.integers(0, 3))):  # a few more stops than chance gives
            if len(raw):
                raw[rng.integers(0, len(raw))] = rng.choice([ord("#"), ord("\n")])
        text = bytes(raw)
        p = int(rng.integers(0, len(text) + 1))
        stops = [k for k in range(p, len(text)) if text[k] in b"#\n"]
        assert parser._data_end(kernel_bytes(text), p, len(text)) == (stops[0] if stops else len(text)), (text, p)
        spans = np.sort(rng.integers(0, len(text) + 1, (int(rng.integers(0, 4)), 2)), axis=1)
        gathered, ascii = parser.gather_spans(kernel_bytes(text), spans[:, 0].copy(), spans[:, 1].copy())
        expected = b"".join(text[a:b] for a, b in spans)
        assert gathered.tobytes() == expected and ascii == expected.isascii()


def test_chunks_parsed_on_several_threads_give_the_same_dataset(tmp_path, monkeypatch):
    """A file read in many small chunks, on one thread and on two (chunks are counted and parsed in
    parallel from offsets known after the first pass), equals the file read in one piece; an error in a
    late chunk names its line."""
    import numba

    rng = np.random.default_rng(3)
    lines = []
    for i in range(3000):
        # every third value has 25 decimals: off the kernel's fast path (converted by Python)
        values = [f"{v:.6g}" if k % 3 else f"{v:.25f}" for k, v in enumerate(rng.normal(size=6))]
        lines.append(f"{i % 3} qid:{1 + i // 10} " + " ".join(f"{2 * k + 1}:{v}" for k, v in enumerate(values))
                     + (f" # docid = D{i}" if i % 7 else "") + "\n")
    path = tmp_path / "many.txt"
    path.write_text("".join(lines))
    whole = data.read_svmlight(str(path))
    monkeypatch.setattr(data, "CHUNK", 4096)
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            chunked = data.read_svmlight(str(path))
            assert (chunked.X != whole.X).nnz == 0 and np.array_equal(chunked.X.indptr, whole.X.indptr)
            assert np.array_equal(chunked.y, whole.y) and np.array_equal(chunked.qid, whole.qid)
            assert np.array_equal(chunked.line, whole.line) and list(chunked.docids) == list(whole.docids)
        lines[2500] = "1 qid:251 3:1 2:1\n"
        path.write_text("".join(lines))
        with pytest.raises(InputError) as e:
            data.read_svmlight(str(path))
        assert e.value.line == 2501 and "must increase" in str(e.value)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize("token", ["x:1:2", "0:1:2", "-3:1:2", "3:1:2", "7:1:2", "7:1.5:2", "7:nan:2", "qid:1:2",
                                   "sid:1:2", "cost:1:2", "c:1:2"])
def test_a_second_colon_is_malformed_before_any_other_error(token, tmp_path):
    """The kernel checks for a second colon only off its fast path; the error must be the one a check
    first would give (here index 3 after 5 would otherwise be 'must increase', 0 'must be >= 1')."""
    path = tmp_path / "colon.txt"
    path.write_text(f"1 qid:1 1:1\n1 qid:1 5:1 {token} 9:1\n")
    with pytest.raises(InputError) as e:
        data.read_svmlight(str(path))
    assert e.value.line == 2 and "malformed token" in str(e.value), str(e.value)


@pytest.mark.parametrize("chunk", [1 << 22, 64])
@pytest.mark.parametrize("layout", ["sparse", "dense"])
def test_a_qid_error_before_a_bad_token_is_the_one_reported(tmp_path, monkeypatch, chunk, layout):
    """The first error in the file is reported: qid errors are found after reading, but one on a line
    before a bad token (here an index above 2^31 - 1 on line 6) comes first; with several reappearing
    qids, the earliest reappearance."""
    monkeypatch.setattr(data, "CHUNK", chunk)
    path = tmp_path / "f.dat"
    path.write_bytes(b"0 qid:1 1:1\n0 qid:2 1:1\n0 qid:3 1:1\n0 qid:1 1:1\n0 qid:2 1:1\n0 qid:9 99999999999:1\n")
    with pytest.raises(InputError, match=r"f.dat:4: qid 1 reappears after another qid \(first seen at line 1\)"):
        data.read_svmlight(str(path), layout=layout)
    path.write_bytes(b"0 qid:1 1:1\n0 1:1\n0 qid:1 1:1\n0 qid:9 99999999999:1\n")
    with pytest.raises(InputError, match="f.dat:2: either every line has a qid or none has"):
        data.read_svmlight(str(path), layout=layout)
    path.write_bytes(b"0 qid:1 1:1\n0 qid:9 99999999999:1\n0 qid:1 1:1\n")  # the bad token comes first here
    with pytest.raises(InputError, match="f.dat:2: feature index '99999999999' is above"):
        data.read_svmlight(str(path), layout=layout)


@pytest.mark.parametrize("layout", ["sparse", "dense"])
def test_reading_without_features_reads_targets_qids_and_docids_alike_and_no_feature(tmp_path, layout):
    """features=False (eval, qrels) reads targets, qids, docids and lines as the full read does, rejects the same
    bad targets and qids, and does not read the features (what eval needs is there; classify checks them)."""
    path = tmp_path / "d.txt"
    path.write_text("# header\n2 qid:3 1:0.5 7:1e-300 9:123456789012345678901 # docid = a\n"
                    "0 qid:3 2:-1 # b\n\n1 qid:4 5:1 # c\n")
    full = data.read_svmlight(str(path), layout=layout)
    labels = data.read_svmlight(str(path), layout=layout, features=False)
    assert labels.X.shape == (3, 0)
    np.testing.assert_array_equal(labels.y, full.y)
    np.testing.assert_array_equal(labels.qid, full.qid)
    np.testing.assert_array_equal(labels.qptr, full.qptr)
    np.testing.assert_array_equal(labels.line, full.line)
    assert list(labels.docids) == list(full.docids) == ["a", "b", "c"]
    for bad, message in [("x qid:1 3:0.5\n", "target is not a number"), ("1e999 qid:1 3:1\n", "target is not finite"),
                         ("1 qid:x 3:1\n", "bad qid"), ("1 3:1\n", "either every line has a qid"),
                         ("1 sid:q qid:1 3:1\n", "bad sid"), ("1 qid:1 qid:1 3:1\n", "qid must come once")]:
        path.write_text("0 qid:1 1:1\n" + bad)
        with pytest.raises(InputError, match=message) as raised:
            data.read_svmlight(str(path), layout=layout, features=False)
        assert raised.value.line == 2
    for unread in ["1 qid:1 3:0.5 2:1 # d", "1 qid:1 3:1e999 # d", "1 qid:1 3:x", "1 qid:1 3", "1 sid:2 qid:1 x y"]:
        path.write_text("0 qid:1 1:1 # a\n" + unread + "\n")
        labels = data.read_svmlight(str(path), layout=layout, features=False)
        assert labels.y.tolist() == [0.0, 1.0] and labels.qid.tolist() == [1, 1] and labels.line.tolist() == [1, 2]


def _first_repeat_by_loop(docids, qptr):
    """The first repeated docid in file order and its first line in the query, straight from the definition."""
    for lo, hi in zip(qptr[:-1], qptr[1:]):
        seen: dict = {}
        for r in range(int(lo), int(hi)):
            if docids[r] in seen:
                return r, seen[docids[r]]
            seen[docids[r]] = r
    return None


@pytest.mark.parametrize("collide", [False, True])
def test_duplicate_docids_are_found_as_by_a_loop_also_when_hashes_collide(tmp_path, monkeypatch, collide):
    from svmstruct.dataset import documents

    if collide:  # every docid the same hash: groups of different docids compared as strings
        monkeypatch.setattr(documents.Docids, "hashes", lambda self: np.zeros(len(self), dtype=np.uint64))
    rng = np.random.default_rng(7)
    for trial in range(30):
        sizes = rng.integers(1, 7, size=8)
        names = [f"d{rng.integers(0, 12)}" for _ in range(int(sizes.sum()))]
        lines = [f"{rng.integers(0, 3)} qid:{q + 1} 1:1 # {names[r]}"
                 for q, size in enumerate(sizes) for r in range(int(sizes[:q].sum()), int(sizes[:q + 1].sum()))]
        path = tmp_path / f"t{trial}.txt"
        path.write_text("\n".join(lines) + "\n")
        d = data.read_svmlight(str(path), features=False)
        expected = _first_repeat_by_loop(list(d.docids), d.qptr)
        if expected is None:
            documents.check_unique_docids(d)
            continue
        with pytest.raises(InputError) as raised:
            documents.check_unique_docids(d)
        r, earlier = expected
        assert raised.value.line == r + 1
        message = f"docid {names[r]} appears twice in query {d.qid[r]} (lines {earlier + 1} and {r + 1})"
        assert message in str(raised.value)


def _rows(d):
    """Every row's (index, value) pairs of a CSR Dataset, by feature index."""
    columns = np.arange(d.n_features) if d.columns is None else d.columns
    return [[(int(columns[j]) + 1, float(v)) for j, v in zip(d.X[r].indices, d.X[r].data)] for r in range(d.n_docs)]


def _random_file(rng, with_qid: bool = True) -> str:
    lines = ["# a header"]
    for q in range(int(rng.integers(1, 12))):
        for _ in range(int(rng.integers(1, 6))):
            indices = np.sort(rng.choice(np.arange(1, 40), size=int(rng.integers(0, 6)), replace=False))
            features = " ".join(f"{i}:{rng.normal():.4g}" for i in indices)
            qid = f"qid:{q + 1} " if with_qid else ""
            lines.append(f"{rng.integers(0, 3)} {qid}{features} # d{q}-{rng.integers(10**6)}")
            if rng.random() < 0.1:
                lines.append("")
    return "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")


@pytest.mark.parametrize("seed", range(12))
def test_reading_in_parts_gives_the_whole_files_rows(tmp_path, seed):
    """read_parts (classify's reader of large files): the parts one after the other are the whole file's
    Dataset — rows, values, lines, qids, docids — whatever the part size, down to a line a part."""
    rng = np.random.default_rng(seed)
    path = tmp_path / "f.txt"
    path.write_text(_random_file(rng, with_qid=seed % 3 != 0))
    whole = data.read_svmlight(str(path), dtype=np.float64)
    for size in (1, 7, 64, 300, 1 << 20):
        parts = list(data.read_parts(str(path), np.float64, part_bytes=size))
        assert sum(p.n_docs for p in parts) == whole.n_docs
        for name in ("y", "qid", "line"):
            assert np.concatenate([getattr(p, name) for p in parts]).tolist() == getattr(whole, name).tolist()
        assert [doc for p in parts for doc in p.docids] == list(whole.docids)
        assert [row for p in parts for row in _rows(p)] == _rows(whole)


@pytest.mark.parametrize("size", [1, 20, 1 << 20])
def test_reading_in_parts_reports_the_whole_files_errors(tmp_path, size):
    """Across parts as in one: a qid that comes back, a qid on some lines only, a bad token (its line in the
    file), no data line at all."""
    path = tmp_path / "f.txt"
    cases = [("0 qid:1 1:1\n0 qid:2 1:1\n# c\n0 qid:1 1:1\n",
              r"qid 1 reappears after another qid \(first seen at line 1\)", 4),
             ("0 qid:1 1:1\n0 qid:1 1:1\n0 1:1\n", "either every line has a qid or none has", 3),
             ("0 qid:1 1:1\n\n0 qid:1 1:1 2:x\n", "feature value is not a number", 3),
             ("# only\n\n# comments\n", "no examples", None)]
    for text, message, line in cases:
        path.write_text(text)
        with pytest.raises(InputError, match=message) as whole:
            data.read_svmlight(str(path))
        with pytest.raises(InputError, match=message) as parts:
            list(data.read_parts(str(path), part_bytes=size))
        assert parts.value.line == whole.value.line == line
        assert str(parts.value) == str(whole.value)


def test_classify_scores_a_file_a_part_at_a_time_as_a_whole(tmp_path, monkeypatch):
    """classify's scores read in parts of a few lines (data.PART_BYTES) equal those of the whole file read at
    once (the same CSR products, row by row); gzip and stdin alike."""
    from svmstruct import model

    from conftest import invoke_here as invoke

    rng = np.random.default_rng(5)
    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    train.write_text(_random_file(rng))
    test.write_text(_random_file(rng))
    assert invoke("learn", "-l", "pairs", "-c", "1", "-v", "0", train, tmp_path / "m.model").returncode == 0
    trained = model.load_model(str(tmp_path / "m.model"))
    whole = data.read_svmlight(str(test))
    expected = "".join(f"{s:.8f}\n" for s in model.score(trained, whole))
    monkeypatch.setattr(data, "PART_BYTES", 50)
    (tmp_path / "test.txt.gz").write_bytes(gzip.compress(test.read_bytes()))
    for source, stdin in ((test, None), (tmp_path / "test.txt.gz", None), ("-", test.read_text())):
        done = invoke("classify", "-v", "0", source, tmp_path / "m.model", tmp_path / "p.txt", stdin=stdin)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "p.txt").read_text() == expected


def test_the_byte_kernels_are_compiled_for_read_only_arrays_alone(tmp_path, monkeypatch):
    """Files read from a path (chunks of a bytearray), from bytes (a pipe) and models read whole give the kernels
    the one array type compute.jit.kernel_bytes makes: a writable one would be another signature to compile."""
    from svmstruct.compute import jit
    from svmstruct.dataset import order_kernels
    from svmstruct.io import float_text, svmlight_parser

    monkeypatch.setenv("SVMSTRUCT_PATH", "kernel")
    path = tmp_path / "a.txt"
    path.write_text("".join(f"{q % 3} qid:{q} 1:0.5 7:{q}.25 # d{q}\n" for q in range(1, 40)))
    data.read_svmlight(str(path))
    data.read_svmlight(str(path), features=False)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    data.read_svmlight("-")
    float_text.read_scores(bytearray(b"0.5\n-1.25\n"))
    float_text.read_id_value_block(jit.kernel_bytes(bytearray(b"1 0.5\n2 3\n")), 2)
    from numba.core.registry import CPUDispatcher

    kernels = [kernel for module in (svmlight_parser, float_text, order_kernels) for kernel in vars(module).values()
               if isinstance(kernel, CPUDispatcher)]
    byte_arrays = [(kernel.__name__, arg) for kernel in kernels for signature in kernel.signatures
                   for arg in signature if str(getattr(arg, "dtype", "")) == "uint8"]
    assert len({name for name, _ in byte_arrays}) >= 4  # parse_lines, count_lines, docid_spans, _score_lines, ...
    assert all(not arg.mutable for _, arg in byte_arrays), [b for b in byte_arrays if b[1].mutable]
