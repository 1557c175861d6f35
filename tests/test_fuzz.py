"""Property-based fuzzing of the two readers: data.read_svmlight and model.load_model.

Contract under test (README "Input format", "Model file", "Errors and exit codes"): a valid file is read
exactly (values bit-identical to Python's float() of the token); a malformed one raises InputError naming
the line, never another exception, never a hang, never silent acceptance or a silently different value.

Round trips generate valid files with their intended contents; mutations corrupt them and compare the
reader with a small, strict reference parser written here from the README grammar.
The failures it found (all fixed) stay as regression tests with their minimal reproducers
(test_known_*) at the end of the file.
"""
from __future__ import annotations

import gzip
import io
import math
import os
import re
import struct
import sys
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from svmstruct import model
from svmstruct.errors import InputError
from svmstruct.io import data

# FUZZ_NO_SHRINK=1 skips shrinking (for exploratory runs with many failures); FUZZ_SCALE=N runs N times as
# many examples (longer campaigns). The database is off so that runs leave nothing behind in the worktree.
PHASES = [Phase.explicit, Phase.generate] + ([] if os.environ.get("FUZZ_NO_SHRINK") else [Phase.shrink])
SCALE = float(os.environ.get("FUZZ_SCALE", "1"))
FAST = dict(deadline=3000, database=None, phases=PHASES,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def examples(n: int) -> int:
    return max(1, int(n * SCALE))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    # warm the numba kernels (cache load or compilation) outside hypothesis's deadline
    warm = d / "warm.dat"
    for text in (b"1 qid:1 1:0.5 2:x\n", b"1 qid:1 1:0.5\n"):
        for raw in (text, gzip.compress(text)):  # gzip gives read-only buffers: another specialisation
            warm.write_bytes(raw)
            for layout in ("sparse", "dense"):
                try:
                    data.read_svmlight(str(warm), layout=layout)
                except InputError:
                    pass
    return d


def put(workdir, raw: bytes, name: str = "f.dat") -> str:
    path = workdir / name
    path.write_bytes(raw)
    return str(path)


# Read buffer size (data.CHUNK): small buffers put chunk boundaries everywhere (lines longer than the
# buffer make it grow) and avoid the default 8 MiB buffer, which makes every read of a tiny file cost ~10 ms.
CHUNK_EXTRA = st.sampled_from([1, 2, 3, 17, 4096])


def chunk_for(raw: bytes, extra: int) -> int:
    return extra


def read(path, chunk, **kw):
    saved = data.CHUNK
    data.CHUNK = chunk
    try:
        return data.read_svmlight(path, **{"dtype": np.float64, **kw})  # the exact values, unless a test asks
    finally:
        data.CHUNK = saved


def bits(v: float) -> int:
    return struct.unpack("<q", struct.pack("<d", v))[0]


# --------------------------------------------------------------------------------------------------
# strategies: numbers


SPECIAL = ["0", "-0", "+0", "-0.0", "0.", ".0", "1e-3", ".5", "5.", "+2", "-7", "1E+2", "1e+300", "4.9e-324",
           "2.2250738585072011e-308", "1.7976931348623157e+308", "9007199254740993", "123456789012345678",
           "1234567890123456789", "1e23", "0.1", "3.14159265358979323846", "00012.5000", "-7.25e-3", "1e22",
           "1e-22", "9007199254740992e22", "0e999999", "0.000000000000000000000000000001"]


SIGN = st.sampled_from(["", "+", "-"])
DIGITS = st.text("0123456789", max_size=22)
SOME_DIGITS = st.text("0123456789", min_size=1, max_size=3)
MAYBE_DIGITS = st.none() | DIGITS
EXPONENT = st.none() | st.tuples(st.sampled_from("eE"), SIGN, st.integers(0, 330))


@st.composite
def decimal_text(draw):
    sign, whole, frac = draw(SIGN), draw(DIGITS), draw(MAYBE_DIGITS)
    if not whole and not frac:
        whole = draw(SOME_DIGITS)
    text = sign + whole + ("" if frac is None else "." + frac)
    e = draw(EXPONENT)
    return text if e is None else f"{text}{e[0]}{e[1]}{e[2]}"


# spellings of finite numbers: repr() of any double, hand-made decimals, special cases
NUMBER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    decimal_text(),
    st.sampled_from(SPECIAL),
    st.integers(-10**30, 10**30).map(str),
).filter(lambda t: math.isfinite(float(t)))
NONNEG_NUMBER = NUMBER.filter(lambda t: float(t) >= 0)

# --------------------------------------------------------------------------------------------------
# strategies: valid SVMlight files with their intended contents

WORD = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters=" \t\n\r\x0b\x0c=#"),
               min_size=1, max_size=8)
PLAIN_WORD = WORD.filter(lambda w: "docid" not in w)
GAP = st.sampled_from([" ", " ", " ", "  ", "\t", " \t "])
COMMENT_KIND = st.sampled_from(["none", "docid", "word", "empty"])
BLANKISH = st.sampled_from(["", " ", "  \t"])
PRE = st.sampled_from(["", " ", "\t"])
EQ = st.sampled_from([" = ", "=", "  =\t", " ="])
REST = st.sampled_from(["", " inc = 1 prob = 0.5", " x"])
REST_WORDS = st.lists(PLAIN_WORD, max_size=3)
NOISE_LINE = st.sampled_from(["", "   ", "#", "# a comment line", "\t# docid = zz", " #x"])
TRAILING_LINE = st.sampled_from(["", "  ", "# trailing"])
LEAD_ZEROS = st.sampled_from(["", "", "", "0", "00"])
QID_SIGN = st.sampled_from(["", "+"])
EOL_MODE = st.sampled_from(["never", "always", "mixed"])
ZERO_TO_TWO = st.integers(0, 2)
GROUP_SIZES = st.lists(st.integers(1, 4), min_size=1, max_size=5)
QID_VALUE = st.integers(0, 10**18 - 1)
N_ROWS = st.integers(1, 8)
SID = st.integers(0, 10**6)
INDEX_SETS = {hi: st.sets(st.integers(1, hi), max_size=8) for hi in (40, 50, 300, 2**31 - 1)}


@st.composite
def comment(draw):
    """(comment text after '#' or None, the docid it gives or None)."""
    kind = draw(COMMENT_KIND)
    if kind == "none":
        return None, None
    if kind == "empty":
        return draw(BLANKISH), None
    if kind == "docid":
        x = draw(WORD)
        return f"{draw(PRE)}docid{draw(EQ)}{x}{draw(REST)}", x
    word = draw(PLAIN_WORD)
    return " " + " ".join([word] + draw(REST_WORDS)), word


COMMENT = comment()


@st.composite
def svmlight_file(draw, max_index=300, cost=NONNEG_NUMBER):
    """(bytes of a valid file, expected rows: token texts, qid, docid, line number)."""
    if draw(st.booleans()):
        sizes = draw(GROUP_SIZES)
        qids = draw(st.lists(QID_VALUE, min_size=len(sizes), max_size=len(sizes), unique=True))
        row_qids = [q for q, s in zip(qids, sizes) for _ in range(s)]
    else:
        row_qids = [None] * draw(N_ROWS)
    index_sets = INDEX_SETS[2**31 - 1 if draw(st.booleans()) else max_index]
    crlf = draw(EOL_MODE)
    final_newline = draw(st.booleans())
    out, exp_rows = [], []
    line = 0

    def eol():
        return "\r\n" if crlf == "always" or (crlf == "mixed" and draw(st.booleans())) else "\n"

    for q in row_qids:
        for _ in range(draw(ZERO_TO_TWO)):
            out.append(draw(NOISE_LINE) + eol())
            line += 1
        target = draw(NUMBER)
        toks = [target]
        if q is not None:
            toks.append(f"qid:{draw(QID_SIGN)}{q}")
        for _ in range(draw(ZERO_TO_TWO)):
            toks.append(f"sid:{draw(SID)}" if draw(st.booleans()) else f"cost:{draw(cost)}")
        feats = []
        for j in sorted(draw(index_sets)):
            v = draw(NUMBER)
            toks.append(f"{draw(LEAD_ZEROS)}{j}:{v}")
            feats.append((j, v))
        text = draw(PRE) + "".join(t + draw(GAP) for t in toks[:-1]) + toks[-1] + draw(PRE)
        c, docid = draw(COMMENT)
        if c is not None:
            text += "#" + c
        line += 1
        out.append(text + eol())
        exp_rows.append(dict(y=target, qid=q, feats=feats, docid=docid if docid is not None else f"L{line}",
                             line=line))
    for _ in range(draw(ZERO_TO_TWO)):
        out.append(draw(TRAILING_LINE) + eol())
    raw = "".join(out)
    if not final_newline:
        raw = raw[:-2] if raw.endswith("\r\n") else raw[:-1]
    return raw.encode("utf-8"), exp_rows


def check_dataset(d, rows, width_at_least=0):
    """d must hold exactly the rows (expected values are float() of the token text, compared bit for bit)."""
    n = len(rows)
    used = max([j for r in rows for j, _ in r["feats"]] + [0])
    width = max(used, width_at_least)
    # columns: feature index - 1 of each column; indices beyond data.COMPACT_ABOVE are stored compactly
    if d.columns is None:
        assert used <= data.COMPACT_ABOVE
        columns = np.arange(width)
    else:
        columns = d.columns
        assert used > data.COMPACT_ABOVE and np.all(np.diff(columns) > 0) and columns[-1] == used - 1
    assert d.X.shape == (n, len(columns))
    assert [bits(v) for v in d.y] == [bits(float(r["y"])) for r in rows]
    assert d.line.tolist() == [r["line"] for r in rows]
    assert list(d.docids) == [r["docid"] for r in rows]
    has_qid = rows[0]["qid"] is not None
    assert d.has_qid == has_qid
    assert d.qid.tolist() == [r["qid"] if has_qid else 0 for r in rows]
    if has_qid:
        starts = [i for i in range(n) if i == 0 or rows[i]["qid"] != rows[i - 1]["qid"]]
        assert d.qptr.tolist() == starts + [n]
    else:
        assert d.qptr.tolist() == [0, n]
    if isinstance(d.X, np.ndarray):
        expected = np.zeros((n, len(columns)))
        for i, r in enumerate(rows):
            for j, v in r["feats"]:
                expected[i, int(np.searchsorted(columns, j - 1))] = float(v)
        assert np.array_equal(d.X.view(np.int64), expected.view(np.int64))
    else:
        assert d.X.indptr.tolist() == np.cumsum([0] + [len(r["feats"]) for r in rows]).tolist()
        assert columns[d.X.indices].tolist() == [j - 1 for r in rows for j, _ in r["feats"]]
        assert [bits(v) for v in d.X.data] == [bits(float(v)) for r in rows for _, v in r["feats"]]


COST = st.one_of(st.integers(0, 10**6).map(str), st.sampled_from(["0.5", "1.25", "2e-3", "1E2", ".5", "1e-30",
                                                                 "900719925474100.0", "2.4099988603096348e+229"]))


@settings(max_examples=examples(200), **FAST)
@given(f=svmlight_file(cost=COST), layout=st.sampled_from(["sparse", "dense", "auto"]),
       source=st.sampled_from(["file", "file", "gzip", "stdin"]), n_features=st.none() | st.integers(0, 400),
       extra=CHUNK_EXTRA)
@pytest.mark.slow
def test_round_trip_valid_files(workdir, f, layout, source, n_features, extra):
    raw, rows = f
    note(repr(raw))
    width = max([j for r in rows for j, _ in r["feats"]] + [n_features or 0])
    if layout != "sparse" and width > 10**5:
        layout = "sparse"
    path = put(workdir, gzip.compress(raw) if source == "gzip" else raw)
    saved = sys.stdin
    if source == "stdin":
        path, sys.stdin = "-", io.TextIOWrapper(io.BytesIO(raw))
    try:
        d = read(path, chunk_for(raw, extra), n_features=n_features, layout=layout)
    finally:
        sys.stdin = saved
    check_dataset(d, rows, n_features or 0)
    assert d.path == ("<stdin>" if source == "stdin" else path)


@pytest.mark.slow
@pytest.mark.parametrize("fast_prefix", [False, True])
def test_fallback_buffer_refills(workdir, fast_prefix):
    """More than 65536 tokens outside the fast path in one chunk (parse_lines returns FULL and is called again);
    with fast_prefix every line starts with a target, a qid and features on the fast path, so the kernel comes
    back in the middle of a line it has partly stored and must parse it again from its start."""
    rng = np.random.default_rng(1)
    rows, out = [], []
    for r in range(4500):  # 17 or 20 such tokens a line, about 2 MB: one chunk
        vals = [f"{rng.random():.20f}" for _ in range(20)]  # 20 significant digits: converted by float()
        if fast_prefix:
            vals[:3] = ["0.5", "-0.25", "3"]
            target, qid = "2", r // 10 + 1
        else:
            target, qid = "0.12345678901234567891", None
        prefix = f"{target} " + (f"qid:{qid} " if qid else "")
        out.append(prefix + " ".join(f"{j}:{v}" for j, v in enumerate(vals, 1)) + f" # d{r}\n")
        rows.append(dict(y=target, qid=qid, feats=list(enumerate(vals, 1)), docid=f"d{r}", line=r + 1))
    path = put(workdir, "".join(out).encode(), "full.dat")
    for layout in ("sparse", "dense"):
        check_dataset(data.read_svmlight(path, layout=layout, dtype=np.float64), rows)


# --------------------------------------------------------------------------------------------------
# reference parser (README grammar, strict) for the mutation properties

NUM = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INT = re.compile(rb"[+-]?[0-9]+")
IDX = re.compile(rb"[0-9]+")
DOCID = re.compile(rb"docid\s*=\s*(\S+)")


class Reject(Exception):
    def __init__(self, kind, line=None, lines=None):
        super().__init__(kind, line)
        self.kind, self.line = kind, line
        self.lines = lines if lines is not None else {line}


def ref_number(tok: bytes, line: int) -> float:
    if not NUM.fullmatch(tok):
        try:
            lenient = math.isfinite(float(tok.decode("utf-8", "replace")))
        except ValueError:
            lenient = False
        raise Reject("float()-only number" if lenient else "not a number", line)
    v = float(tok)
    if not math.isfinite(v):
        raise Reject("not finite", line)
    return v


def ref_parse(raw: bytes, limits: list):
    """(rows, limits) or Reject. limits: (reason, line) where the library may reject what the grammar allows."""
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error):
            raise Reject("gzip") from None
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    rows: list = []
    try:
        _ref_lines(lines, rows, limits)
    except Reject as grammar:  # the first error in the file: a qid error on an earlier line comes first
        earlier = qid_problem(rows)
        raise earlier if earlier is not None and earlier.line < grammar.line else grammar from None
    if not rows:
        raise Reject("no examples")
    problem = qid_problem(rows)
    if problem is not None:
        raise problem
    return rows, limits


def qid_problem(rows: list):
    """The Reject of the qid rules (every line has a qid or none; a query's lines are contiguous), or None."""
    if not rows:
        return None
    has = [r["qid"] is not None for r in rows]
    if any(has) and not all(has):
        return Reject("qid mix", next(r["line"] for r in rows if (r["qid"] is not None) != has[0]))
    if has[0]:
        seen, bad = set(), set()
        for i, r in enumerate(rows):
            if i and r["qid"] == rows[i - 1]["qid"]:
                continue
            if r["qid"] in seen:
                bad.add(r["line"])
            seen.add(r["qid"])
        if bad:
            return Reject("qid reappears", min(bad), bad)
    return None


def _ref_lines(lines: list, rows: list, limits: list) -> None:
    """The grammar, line by line: rows appended, limits noted, a Reject at the first bad token."""
    for no, text in enumerate(lines, 1):
        content, hsh, comm = text.partition(b"#")
        toks = content.split()
        if not toks:
            continue
        y = ref_number(toks[0], no)
        q, last, feats = None, 0, []
        for tok in toks[1:]:
            key, colon, val = tok.partition(b":")
            if not colon or not key or not val or b":" in val:
                raise Reject("malformed", no)
            if key == b"qid":
                if q is not None or last:
                    raise Reject("qid misplaced", no)
                if not INT.fullmatch(val):
                    raise Reject("bad qid", no)
                q = int(val)
                if not -2**63 <= q < 2**63:
                    raise Reject("qid out of int64", no)
                if len(val.lstrip(b"+-")) > 18:
                    limits.append(("qid with more than 18 digits", no))
            elif key in (b"sid", b"cost"):
                if last:
                    raise Reject("option misplaced", no)
                if key == b"sid":  # README: sid:<int>
                    if not re.fullmatch(rb"[+-]?[0-9]+", val):
                        raise Reject("bad sid", no)
                    if len(val.lstrip(b"+-")) > 18:
                        limits.append(("sid with more than 18 digits", no))
                else:
                    ref_number(val, no)
            else:
                if not IDX.fullmatch(key):
                    raise Reject("bad index", no)
                j = int(key)
                if j < 1 or j <= last:
                    raise Reject("index order", no)
                if j > 2**31 - 1:  # README: indices up to 2^31 - 1 (stored 0-based in 32 bits)
                    limits.append(("index above 2^31 - 1", no))
                last = j
                feats.append((j, ref_number(val, no)))
        if hsh:
            m = DOCID.search(comm)
            words = comm.split()
            first = words[0].decode("utf-8", "replace") if words else None
            docid = m.group(1).decode("utf-8", "replace") if m else first
        else:
            docid = None
        rows.append(dict(y=y, qid=q, feats=feats, docid=docid or f"L{no}", line=no))


# errors read_svmlight reports after reading every line (the reference, line by line, reports a bad token first)
WHOLE_FILE_CHECKS = ("either every line has a qid or none has", "reappears after another qid")


NASTY = [b"\x00", b"\xff", b"\xc3\x28", b"\xc2\xa0", b"\xd9\xa1", b"\t", b"\r", b"\n", b"\x0b", b"\x0c", b"\x1c",
         b" ", b"#", b":", b"_", b"9" * 400, b"0." + b"0" * 400 + b"1", b"nan", b"inf", b"-inf", b"1e400", b"1e-400",
         b"0", b"-0", b" 0:1", b" 3:1 2:1", b" 2:1 2:1", b" 99999999999:1", b" 4294967297:1", b" 2147483649:1",
         b" 1234567890123456789:1", b"qid:", b" qid:", b" qid:7", b" qid:-3", b" :5", b" 5:", b" 1:2:3",
         b" sid:", b" cost:1e-30", b" cost:x", b"\xef\xbb\xbf", b"+", b"-", b"e", b".", b"E+"]


NASTY_S = st.sampled_from(NASTY)
# whole tokens appended to a line (indices above the generated ones, so the rest of the line stays valid)
APPEND_TOKENS = st.sampled_from([b" 99999999999:1", b" 4294967297:1", b" 2147483649:1", b" 1234567890123456789:1",
                                 b" 0:1", b" 3:1 2:1", b" 2:1 2:1", b" qid:", b" qid:7", b" :5", b" 5:", b" 1:2:3",
                                 b" sid:", b" cost:1e-30", b" 999:1_0", b" 998:\xd9\xa1", b" 997:nan", b" 996:1e400",
                                 b" 995:1\xc2\xa0", b" 994:0x10", b" 993:\x00"])
OPS = st.sampled_from(["insert", "nasty", "delete", "replace", "number", "append", "dupline", "swaplines"])
ONE_TO_THREE = st.integers(1, 3)
SHORT_BYTES = st.binary(min_size=1, max_size=6)
DEL_LEN = st.integers(1, 8)
BYTE = st.integers(0, 255)
NONZERO_BYTE = st.integers(1, 255)


@st.composite
def mutated(draw, raw: bytes) -> bytes:
    b = bytearray(raw)
    for _ in range(draw(ONE_TO_THREE)):
        op = draw(OPS)
        i = draw(st.integers(0, len(b)))
        if op == "insert":
            b[i:i] = draw(SHORT_BYTES)
        elif op == "nasty":
            b[i:i] = draw(NASTY_S)
        elif op == "delete":
            del b[i:i + draw(DEL_LEN)]
        elif op == "replace" and i < len(b):
            b[i] = draw(BYTE)
        elif op == "number":
            spans = [m.span() for m in re.finditer(rb"[0-9.eE+-]+", bytes(b))]
            if spans:
                s, e = draw(st.sampled_from(spans))
                b[s:e] = draw(NASTY_S)
        elif op == "append":  # a token at the end of a line's data part
            lines = bytes(b).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            head, sep, tail = lines[k].partition(b"#")
            lines[k] = head.rstrip(b"\r") + draw(APPEND_TOKENS) + b" " + sep + tail
            b = bytearray(b"\n".join(lines))
        elif op in ("dupline", "swaplines"):
            lines = bytes(b).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            m = draw(st.integers(0, len(lines) - 1))
            if op == "dupline":
                lines.insert(m, lines[k])
            else:
                lines[k], lines[m] = lines[m], lines[k]
            b = bytearray(b"\n".join(lines))
    return bytes(b)


MUTATION_BASE = svmlight_file(max_index=40, cost=COST)
HOW = st.sampled_from(["text", "text", "text", "gzip-text", "gzip-bytes"])
GZIP_DAMAGE = st.sampled_from(["truncate", "flip", "insert", "tail"])


@st.composite
def corrupt_file(draw):
    raw, _ = draw(MUTATION_BASE)
    how = draw(HOW)
    if how == "text":
        return draw(mutated(raw))
    if how == "gzip-text":
        return gzip.compress(draw(mutated(raw)))
    z = bytearray(gzip.compress(raw, mtime=0))
    kind = draw(GZIP_DAMAGE)
    i = draw(st.integers(2, len(z) - 1))
    if kind == "truncate":
        return bytes(z[:i])
    if kind == "flip":
        z[i] ^= draw(NONZERO_BYTE)
        return bytes(z)
    if kind == "insert":
        return bytes(z[:i] + draw(SHORT_BYTES) + z[i:])
    return bytes(z) + draw(SHORT_BYTES)


def check_sane(d):
    n = d.X.shape[0]
    assert len(d.y) == len(d.qid) == len(d.line) == len(d.docids) == n >= 1
    assert d.qptr[0] == 0 and d.qptr[-1] == n and np.all(np.diff(d.qptr) > 0)
    assert np.all(np.isfinite(d.y)) and np.all(np.diff(d.line) > 0) and d.line[0] >= 1
    if sp.issparse(d.X):
        d.X.check_format(full_check=True)
        assert np.all(np.isfinite(d.X.data))
    else:
        assert np.all(np.isfinite(d.X))


def read_against_reference(workdir, raw, layout, chunk):
    path = put(workdir, raw)
    note(repr(raw))
    limits = []
    try:
        ref = ref_parse(raw, limits)
    except Reject as r:
        ref = r
    note(f"reference: {ref if isinstance(ref, Reject) else 'accepts'}")
    try:
        d = read(path, chunk, layout=layout)
    except InputError as e:
        first_bad = ref.line if isinstance(ref, Reject) and ref.line is not None else math.inf
        if e.line in {line for _, line in limits} and e.line <= first_bad:
            return  # an implementation limit at or before the first bad line
        assert isinstance(ref, Reject), f"valid file rejected: {e}"
        if ref.line is not None:
            assert e.line in ref.lines, f"{e} but the first bad line is {ref.line} ({ref.kind})"
        return
    assert not isinstance(ref, Reject), f"malformed file accepted ({ref.kind}, line {ref.line})"
    check_sane(d)
    check_dataset(d, [dict(r, y=repr(r["y"]), feats=[(j, repr(v)) for j, v in r["feats"]]) for r in ref[0]])


@pytest.mark.slow
@settings(max_examples=examples(700), **FAST)
@given(raw=corrupt_file(), extra=CHUNK_EXTRA)
def test_mutated_files_give_a_dataset_or_input_error(workdir, raw, extra):
    read_against_reference(workdir, raw, "sparse", chunk_for(raw, extra))


@pytest.mark.slow
@settings(max_examples=examples(200), **FAST)
@given(raw=corrupt_file(), extra=CHUNK_EXTRA)
def test_mutated_files_dense_layout(workdir, raw, extra):
    read_against_reference(workdir, raw, "dense", chunk_for(raw, extra))


@pytest.mark.slow
@settings(max_examples=examples(500), **FAST)
@given(raw=corrupt_file(), extra=CHUNK_EXTRA)
def test_reading_without_features_agrees_with_the_full_reader(workdir, raw, extra):
    """eval's reader (features=False: one pass, chunks parsed alone, features unread) gives the full reader's
    targets, qids, docids and lines wherever the full reader accepts the file, and where it refuses a file
    the full reader refuses it too, at that line or before (an earlier bad feature)."""
    path = put(workdir, raw)
    note(repr(raw))
    chunk = chunk_for(raw, extra)
    try:
        labels = read(path, chunk, features=False)
    except InputError as e:
        with pytest.raises(InputError) as full_error:
            read(path, chunk)
        assert full_error.value.line is None or e.line is None or full_error.value.line <= e.line
        return
    try:
        d = read(path, chunk)
    except InputError:
        return  # a bad feature, which eval does not read
    assert labels.X.shape == (d.n_docs, 0)
    assert [bits(v) for v in labels.y] == [bits(v) for v in d.y]
    assert np.array_equal(labels.qid, d.qid) and np.array_equal(labels.qptr, d.qptr)
    assert np.array_equal(labels.line, d.line) and list(labels.docids) == list(d.docids)


@pytest.mark.slow
@settings(max_examples=examples(300), **FAST)
@given(raw=corrupt_file(), part=st.sampled_from([1, 17, 4096]))
def test_reading_in_parts_agrees_with_the_whole_file(workdir, raw, part):
    """classify's reader of large files (data.read_parts) accepts what the whole-file reader accepts, with the
    same rows, and refuses what it refuses (at the same line unless two kinds of error sit in two parts)."""
    path = put(workdir, raw)
    note(repr(raw))
    try:
        whole = data.read_svmlight(path, dtype=np.float64)
    except InputError as e:
        with pytest.raises(InputError) as parts_error:
            list(data.read_parts(path, np.float64, part_bytes=part))
        assert e.line is None or parts_error.value.line is not None
        return
    parts = list(data.read_parts(path, np.float64, part_bytes=part))
    assert [bits(v) for p in parts for v in p.y] == [bits(v) for v in whole.y]
    assert np.concatenate([p.line for p in parts]).tolist() == whole.line.tolist()
    assert np.concatenate([p.qid for p in parts]).tolist() == whole.qid.tolist()
    assert [doc for p in parts for doc in p.docids] == list(whole.docids)
    assert [row for p in parts for row in rows_of(p)] == rows_of(whole)


def rows_of(d):
    X = sp.csr_matrix(d.X)
    columns = np.arange(d.n_features) if d.columns is None else d.columns
    return [[(int(columns[j]) + 1, float(v)) for j, v in zip(X[r].indices, X[r].data) if v != 0]
            for r in range(d.n_docs)]


# ---- eval's prediction reader: one number in svm_light's syntax per line, else an error naming the line

SCORE = re.compile(r"[ \t]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*\r?")


@st.composite
def predictions_file(draw):
    values = draw(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1, max_size=8))
    text = bytearray("".join(f"{v:.8f}\n" if draw(st.booleans()) else f"{v!r}\n" for v in values).encode())
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["insert", "flip", "delete"]))
        k = draw(st.integers(0, max(0, len(text) - 1)))
        if op == "insert":
            text[k:k] = draw(st.sampled_from([b"_", b" ", b"\t", b"e", b"x", b"nan", b"inf", "\u0661".encode(),
                                              "\uff11".encode(), b"Q0 ", b"\r", b"\n", b"9" * 400, b"\x00"]))
        elif op == "flip" and text:
            text[k] = draw(st.integers(1, 255))
        elif text:
            del text[k]
    return bytes(text)


def reference_predictions(raw: bytes):
    """(values) or the 1-based number of the first bad line, from the README's rule."""
    text = raw.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    values = []
    for number, line in enumerate(lines, 1):
        if not SCORE.fullmatch(line) or not math.isfinite(float(line.strip())):
            return number
        values.append(float(line.strip()))
    return values


@pytest.mark.slow
@settings(max_examples=examples(600), **FAST)
@given(raw=predictions_file())
def test_the_prediction_reader_takes_one_finite_number_a_line(workdir, raw):
    from svmstruct.evaluation import tables

    path = put(workdir, raw, "p.txt")
    note(repr(raw))
    expected = reference_predictions(raw)
    n = len(expected) if isinstance(expected, list) else raw.count(b"\n") + 1
    try:
        values = tables.read_predictions(path, n)
    except InputError as e:
        if isinstance(expected, list):  # only the count can be wrong, and it is not
            raise AssertionError(f"valid predictions rejected: {e}") from None
        assert e.line == expected or e.line is None and "predictions for" in e.message, (e, expected)
        return
    assert isinstance(expected, list), f"line {expected} accepted"
    assert [bits(v) for v in values] == [bits(v) for v in expected]


# --------------------------------------------------------------------------------------------------
# model files

VALUE_TEXT = st.text(min_size=1, max_size=12)
KEY = st.text(min_size=1, max_size=10).filter(
    lambda k: k.isprintable() and " " not in k and k not in model.RESERVED_KEYS
    and not k.startswith(model.RESERVED_PREFIXES))
HEADER_VALUE = st.one_of(VALUE_TEXT, st.floats(allow_nan=False, allow_infinity=False), st.integers(-10**20, 10**20),
                         st.booleans())
FINITE = st.floats(allow_nan=False, allow_infinity=False)
WEIGHT = st.one_of(st.just(0.0), st.just(-0.0), FINITE)  # compared by bits below


@st.composite
def svmstruct_model(draw):
    w = np.array(draw(st.lists(WEIGHT, max_size=30)), dtype=float)
    return model.Model(w=w, threshold=draw(FINITE), loss=draw(VALUE_TEXT),
                       options=draw(st.dictionaries(KEY, HEADER_VALUE, max_size=4)),
                       header=draw(st.dictionaries(KEY, HEADER_VALUE, max_size=6)))



@st.composite
def svmstruct_kernel_model(draw):
    """A kernel model (learn -t): `kernel*` lines and `basis` lines of sparse vectors over increasing indices."""
    from svmstruct.kernels import kernel_functions, table

    n_features = draw(st.integers(1, 40))
    rows = draw(st.lists(st.dictionaries(st.integers(0, n_features - 1), FINITE, max_size=5), min_size=1, max_size=5))
    indptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    indices = np.array([j for r in rows for j in sorted(r)], dtype=np.int32)
    values = np.array([r[j] for r in rows for j in sorted(r)], dtype=np.float64)
    kind = draw(st.sampled_from(sorted(table.TYPES)))
    kernel = table.Kernel(kind, draw(st.integers(1, 5)), *(draw(FINITE) for _ in range(3)))
    coef = np.array(draw(st.lists(WEIGHT, min_size=len(rows), max_size=len(rows))), dtype=float)
    m = model.Model(w=np.zeros(0), threshold=draw(FINITE), loss=draw(VALUE_TEXT),
                    header=draw(st.dictionaries(KEY, HEADER_VALUE, max_size=3)))
    m.set_kernel(kernel_functions.KernelExpansion(kernel, kernel_functions.Basis(indptr, indices, values), coef))
    m.w = np.zeros(max(n_features, int(indices.max(initial=-1)) + 1))
    return m


@settings(max_examples=examples(100), **FAST)
@given(m=svmstruct_kernel_model())
def test_svmstruct_kernel_model_round_trip(workdir, m):
    path = workdir / "k.model"
    model.save_model(m, str(path))
    back = model.load_model(str(path))
    assert back.kernel.kernel == m.kernel.kernel and bits(back.threshold) == bits(float(m.threshold))
    for name in ("indptr", "indices"):
        assert np.array_equal(getattr(back.kernel.basis, name), getattr(m.kernel.basis, name))
    assert [bits(v) for v in back.kernel.basis.values] == [bits(v) for v in m.kernel.basis.values]
    assert [bits(v) for v in back.kernel.coef] == [bits(v) for v in m.kernel.coef]
    model.save_model(back, str(workdir / "again.model"))
    assert (workdir / "again.model").read_bytes() == path.read_bytes()


@settings(max_examples=examples(150), **FAST)
@given(m=svmstruct_model())
def test_svmstruct_model_round_trip(workdir, m):
    path = workdir / "m.model"
    model.save_model(m, str(path))
    back = model.load_model(str(path))
    assert back.format == "svmstruct" and back.loss == m.loss
    assert [bits(v) for v in back.w] == [bits(v) for v in m.w]
    assert bits(back.threshold) == bits(float(m.threshold))
    # header and option values come back as the text they were written as (floats exactly, by repr)
    assert back.options == {k: repr(v) if isinstance(v, float) else str(v) for k, v in m.options.items()}
    assert back.header == {k: repr(v) if isinstance(v, float) else str(v) for k, v in m.header.items()}
    model.save_model(back, str(workdir / "again.model"))
    assert (workdir / "again.model").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("key", [*model.RESERVED_KEYS, "kernel.gamma", "option.k", "two words", "a\nb", ""])
def test_a_header_key_the_reader_would_not_get_back_is_refused_when_writing(tmp_path, key):
    with pytest.raises(ValueError, match="cannot be written"):
        model.save_model(model.Model(w=np.ones(2), header={key: "1"}), str(tmp_path / "m.model"))
    assert not (tmp_path / "m.model").exists()


SV_VALUE = st.one_of(st.floats(-1e15, 1e15, allow_nan=False), st.sampled_from(["0", "-0", "1e-3", ".5", "+2", "1E+2"]))
HEADER_JUNK = st.sampled_from(["3", "1", "0.001", "empty", "1e-05", ""])
SV_COMMENT = st.sampled_from(["", " #", " # docid 3", "#x"])


def as_text(v):
    return v if isinstance(v, str) else repr(v)


@st.composite
def svmlight_model(draw):
    """(text of an svm_light V6.20 linear model, expected w, expected threshold)."""
    highest = draw(st.integers(0, 40))
    n_sv = draw(st.integers(0, 5)) if highest else 0
    threshold = as_text(draw(SV_VALUE))
    header = ["SVM-light Version V6.20", "0 # kernel type"]
    header += [f"{draw(HEADER_JUNK)} # kernel parameter" for _ in range(5)]
    header += [f"{highest} # highest feature index", f"{draw(st.integers(0, 99))} # number of training documents",
               f"{n_sv + 1} # number of support vectors plus 1",
               f"{threshold} # threshold b, each following line is a SV (starting with alpha*y)"]
    w = np.zeros(highest)
    for _ in range(n_sv):
        alpha = as_text(draw(SV_VALUE))
        toks = [alpha]
        for j in sorted(draw(st.sets(st.integers(1, highest), max_size=6))):
            v = as_text(draw(SV_VALUE))
            toks.append(f"{j}:{v}")
            w[j - 1] += float(alpha) * float(np.float32(float(v)))  # svm_light keeps feature values as float
        header.append(" ".join(toks) + draw(SV_COMMENT))
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(header) + eol  # every line ends with a newline (one that does not: a model cut short)
    return text.encode(), w, float(threshold)


@settings(max_examples=examples(100), **FAST)
@given(m=svmlight_model())
def test_svmlight_model_round_trip(workdir, m):
    raw, w, threshold = m
    back = model.load_model(put(workdir, raw, "light.model"))
    assert back.format == "svmlight"
    assert [bits(v) for v in back.w] == [bits(v) for v in w]
    assert bits(back.threshold) == bits(threshold)
    with pytest.raises(InputError, match="cut short"):  # the same file without its last newline
        model.load_model(put(workdir, raw.rstrip(b"\r\n"), "light.model"))


MODEL_NASTY = [b"-1", b"9" * 30, b"99999999999", b"nan", b"inf", b"-inf", b"1e400", b"1e39", b"3.5e38", b"\x00",
               b"\xff", b"\r", b"\n", b"\x0c", b"\x1c", b"\xc2\x85", b"\xe2\x80\xa8", b" ", b"\t", b"#", b"0", b"-0",
               b"_", b"1_0", b"\xd9\xa3", b":", b" 1:1", b" 0:1", b"svmstruct-model 1", b"weights 2", b"n_features 0"]
MODEL_NASTY_S = st.sampled_from(MODEL_NASTY)
MODEL_OPS = st.sampled_from(["insert", "nasty", "delete", "replace", "number", "field", "count", "svvalue",
                             "dupline", "swaplines"])
COUNT_NASTY = st.sampled_from([b"-1", b"0", b"-5", b"+3", b"99999999999", b"9" * 30, b"1_0", b"\xd9\xa3", b"1e3", b""])
SV_NASTY = st.sampled_from([b"1e39", b"3.5e38", b"-1e39", b"1e308", b"nan", b"inf", b"1e400", b"1_0", b"", b"1:2"])


@st.composite
def mutated_model(draw):
    seed = draw(st.sampled_from(["svmstruct", "kernel", "svmlight"]))
    if seed != "svmlight":
        text = model.format_model(draw(svmstruct_model() if seed == "svmstruct" else svmstruct_kernel_model())).encode()
    else:
        text = draw(svmlight_model())[0]
    b = bytearray(text)
    for _ in range(draw(ONE_TO_THREE)):
        op = draw(MODEL_OPS)
        i = draw(st.integers(0, len(b)))
        if op == "insert":
            b[i:i] = draw(SHORT_BYTES)
        elif op == "nasty":
            b[i:i] = draw(MODEL_NASTY_S)
        elif op == "delete":
            del b[i:i + draw(DEL_LEN)]
        elif op == "replace" and i < len(b):
            b[i] = draw(BYTE)
        elif op == "number":
            spans = [m.span() for m in re.finditer(rb"[0-9.eE+-]+", bytes(b))]
            if spans:
                s, e = draw(st.sampled_from(spans))
                b[s:e] = draw(MODEL_NASTY_S)
        elif op == "count":  # n_features / weights / svm_light's highest index and SV count
            lines = bytes(b).split(b"\n")
            keyed = [k for k, l in enumerate(lines) if l.startswith((b"n_features ", b"weights "))]
            k = draw(st.sampled_from(keyed or [7, 9]))
            if k < len(lines):
                key, space, rest = lines[k].partition(b" ")
                if key in (b"n_features", b"weights"):
                    lines[k] = key + b" " + draw(COUNT_NASTY)
                else:
                    lines[k] = draw(COUNT_NASTY) + b" " + space + rest
            b = bytearray(b"\n".join(lines))
        elif op == "svvalue":  # the value of an `index:value` token or the alpha of an SV line
            spans = [m.span(1) for m in re.finditer(rb":([^ \r\n#]+)", bytes(b))]
            if spans:
                s, e = draw(st.sampled_from(spans))
                b[s:e] = draw(SV_NASTY)
        elif op == "field":  # replace a field of one line (header value, count, weight), often a header line
            lines = bytes(b).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1) | st.integers(0, min(len(lines) - 1, 12)))
            head, sep, _ = lines[k].partition(b"#")
            parts = head.split(b" ")
            parts[draw(st.integers(0, len(parts) - 1))] = draw(MODEL_NASTY_S)
            lines[k] = b" ".join(parts) + sep + _
            b = bytearray(b"\n".join(lines))
        elif op in ("dupline", "swaplines"):
            lines = bytes(b).split(b"\n")
            k = draw(st.integers(0, len(lines) - 1))
            m = draw(st.integers(0, len(lines) - 1))
            if op == "dupline":
                lines.insert(m, lines[k])
            else:
                lines[k], lines[m] = lines[m], lines[k]
            b = bytearray(b"\n".join(lines))
    return bytes(b)


@pytest.mark.slow
@settings(max_examples=examples(1000), **FAST)
@given(raw=mutated_model())
def test_mutated_models_give_a_model_or_input_error(workdir, raw):
    note(repr(raw))
    path = put(workdir, raw, "bad.model")
    n_lines = len(raw.decode("utf-8", "replace").splitlines())
    try:
        with np.errstate(all="ignore"):
            m = model.load_model(path)
    except InputError as e:
        assert e.path == path and e.line is not None and 1 <= e.line <= max(n_lines, 1), e
        return
    assert isinstance(m.w, np.ndarray) and m.w.ndim == 1 and m.w.dtype == np.float64
    assert math.isfinite(m.threshold)
    if len(m.w) <= 10**7:  # larger: a lazily allocated zero array; scanning it would take seconds
        assert np.all(np.isfinite(m.w))


# --------------------------------------------------------------------------------------------------
# failures the properties above found (all fixed), each kept with its minimal reproducer


def read_bytes(tmp_path, raw, **kw):
    path = tmp_path / "f.dat"
    path.write_bytes(raw)
    return str(path), data.read_svmlight(str(path), **{"dtype": np.float64, **kw})


def expect_input_error(tmp_path, raw, line=None, **kw):
    with pytest.raises(InputError) as e:
        read_bytes(tmp_path, raw, **kw)
    if line is not None:
        assert e.value.line == line, str(e.value)


@pytest.mark.parametrize("raw", [b"0 1:a :\n", b"0 1:a 1:1\n", b"1 1:1\n0 1:a :\n"])
def test_known_bad_value_then_malformed_token_sparse(tmp_path, raw):
    expect_input_error(tmp_path, raw, line=raw.count(b"\n"))


@pytest.mark.parametrize("raw, layout", [(b"a :\n", "sparse"), (b"1 1:1\na :\n", "sparse"),
                                         (b"0 1:a :\n", "dense"), (b"1 1:1\n0 1:a :\n", "dense")])
def test_known_bad_value_then_malformed_token_line_number(tmp_path, raw, layout):
    expect_input_error(tmp_path, raw, line=raw.count(b"\n"), layout=layout)


def test_known_corrupt_deflate_stream(tmp_path):
    # gzip header + one deflate byte with the reserved block type 3
    expect_input_error(tmp_path, b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\x07")


@pytest.mark.parametrize("raw", [b"1 1:1_0\n", b"1_0 1:1\n", b"1 1:\xd9\xa1\n", b"1 1:\xef\xbc\x93\n",
                                 b"1 1:2\xc2\xa0\n"])
def test_known_float_only_spellings_accepted(tmp_path, raw):
    expect_input_error(tmp_path, raw, line=1)


@pytest.mark.parametrize("raw", [b"1 2147483649:1\n", b"1 4294967297:5\n"])
def test_known_index_beyond_int32(tmp_path, raw):
    index = int(raw.split()[1].split(b":")[0])
    try:
        _, d = read_bytes(tmp_path, raw)
    except InputError:
        return  # rejecting it would be fine too
    assert d.X.indices.tolist() == [index - 1]


@pytest.mark.parametrize("raw", [b"1 cost:1e-30 1:1\n", b"1 cost:900719925474100.0 1:1\n",
                                 b"1 cost:2.4099988603096348e+229 1:1\n"])
def test_known_finite_cost_outside_fast_path_is_read_and_ignored(tmp_path, raw):
    _, d = read_bytes(tmp_path, raw)
    assert d.n_docs == 1 and d.y.tolist() == [1.0] and d.X.toarray().tolist() == [[1.0]]


@pytest.mark.parametrize("raw", [b"0 1:2\n1 cost:1e999 1:1\n", b"0 1:2\n1 cost:nan 1:1\n",
                                 b"0 1:2\n1 cost:1e3x 1:1\n"])
def test_known_cost_that_is_not_a_finite_number_is_rejected_at_its_line(tmp_path, raw):
    expect_input_error(tmp_path, raw, line=2)


def test_known_line_longer_than_buffer_after_first_chunk(tmp_path):
    raw = b"1 1:1\n1 #" + b"x" * data.CHUNK + b"\n"
    _, d = read_bytes(tmp_path, raw)
    assert d.n_docs == 2


@pytest.mark.parametrize("raw", [b"1 99999999999:1\n", b"1 99999999999\n"])
def test_known_dense_layout_huge_index(tmp_path, raw):
    expect_input_error(tmp_path, raw, layout="dense")


def load_bytes(tmp_path, raw):
    path = tmp_path / "m.model"
    path.write_bytes(raw)
    return model.load_model(str(path))


def expect_model_error(tmp_path, raw):
    with pytest.raises(InputError):
        with np.errstate(all="ignore"):
            load_bytes(tmp_path, raw)


LIGHT = ("SVM-light Version V6.20\n0 # kernel type\n3\n1\n1\n1\nempty\n{highest} # highest feature index\n1\n"
         "{count} # number of support vectors plus 1\n0.5 # threshold b\n{sv}\n")


@pytest.mark.parametrize("n", [b"-1", b"99999999999", b"9" * 20])
def test_known_model_n_features_negative_or_huge(tmp_path, n):
    expect_model_error(tmp_path, b"svmstruct-model 1\nn_features " + n + b"\nweights 0\n")


@pytest.mark.parametrize("highest", ["-1", "99999999999"])
def test_known_svmlight_model_highest_index_negative_or_huge(tmp_path, highest):
    expect_model_error(tmp_path, LIGHT.format(highest=highest, count=2, sv="1 1:1").encode())


@pytest.mark.parametrize("sv", ["1 1:1e39", "0 1:1e39", "1e300 1:1e30"])
def test_known_svmlight_model_non_finite_weight(tmp_path, sv):
    try:
        with np.errstate(all="ignore"):
            m = load_bytes(tmp_path, LIGHT.format(highest=3, count=2, sv=sv).encode())
    except InputError:
        return
    assert np.all(np.isfinite(m.w)), m.w


def test_known_svmlight_model_negative_sv_count(tmp_path):
    expect_model_error(tmp_path, LIGHT.format(highest=3, count=0, sv="1 1:1\n1 2:1").encode())


def test_known_model_duplicate_weight_index(tmp_path):
    expect_model_error(tmp_path, b"svmstruct-model 1\nn_features 3\nweights 2\n1 0.5\n1 0.7\n")


def test_known_model_magic_prefix_accepted(tmp_path):
    expect_model_error(tmp_path, b"svmstruct-modelXYZ 1\nn_features 3\nweights 0\n")


@pytest.mark.parametrize("raw", [b"svmstruct-model 1\nn_features 1_0\nweights 1\n1_0 2_5\n",
                                 "svmstruct-model 1\nn_features \u0663\nweights 0\n".encode()])
def test_known_model_float_only_spellings_accepted(tmp_path, raw):
    expect_model_error(tmp_path, raw)


def test_known_negative_zero_weight_loses_its_sign(tmp_path):
    path = str(tmp_path / "m.model")
    model.save_model(model.Model(w=np.array([-0.0, 1.0])), path)
    assert np.signbit(model.load_model(path).w[0])


@pytest.mark.parametrize("value", ["a\x0cb", "a\u2028b", "a\nb"])
def test_known_header_value_with_a_line_separator(tmp_path, value):
    path = str(tmp_path / "m.model")
    model.save_model(model.Model(w=np.array([1.0]), header={"train_file": value}), path)
    assert model.load_model(path).header["train_file"] == value


def test_known_non_utf8_train_file_name_on_save(tmp_path):
    """A file name with a byte that is not UTF-8 (a surrogate escape) is written as an ASCII escape and read
    back as the same name; the weights survive."""
    path = tmp_path / "m.model"
    model.save_model(model.Model(w=np.array([1.0]), header={"train_file": "\udcff.dat"}), str(path))
    assert path.read_bytes().isascii()
    loaded = model.load_model(str(path))
    assert loaded.header["train_file"] == "\udcff.dat" and loaded.w.tolist() == [1.0]
