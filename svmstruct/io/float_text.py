"""Weights as `index value` lines, a million at a time (a model of SVM-multiclass on text holds a million weights:
Python's repr one by one takes 0.6 s to write them, float() and the checks 2.7 s to read them), written exactly as
repr writes them and read exactly as float() reads them.

repr writes the shortest decimal that reads back as the same double, the nearest one of that length. `shortest`
finds it in numba for the doubles where exact double arithmetic can decide (Clinger's fast path: an integer
C < 2^53 divided or multiplied by 10^s, s <= 22, is rounded once, so C 10^-s reads back as x exactly when
fl(C / 10^s) == x): every normal double of magnitude 1e-6 to 1e17 that is not a power of two, not a tie and whose
16-digit candidate is below 2^53 (about 94 % of a model's weights). The rest are written by repr itself. x 10^s is
computed exactly as a sum of two doubles (Dekker's product), so every rounding to p digits is exact too.
`read_id_value_lines` checks every line's form at once and reads in numba the decimals of the fast path
(io.svmlight_numbers) and repr's 16- and 17-digit ones (M / 10^k with M >= 2^53: the candidates next to
fl(M) / 10^k tried against the exact remainder); float() reads the others.
"""
import math

import numpy as np

from svmstruct.compute import threads
from svmstruct.compute.jit import kernel_bytes, njit, prange
from svmstruct.io.svmlight_numbers import POW10, _next_token, _parse_int, fast_float, is_decimal

NS_PER_NUMBER = 70.0  # one-thread nanoseconds of `shortest` per number
NS_PER_LINE = 100.0  # ... of writing a line
INT_POW10 = np.array([10 ** k for k in range(19)], dtype=np.int64)
TWO53 = float(2 ** 53)
SPLITTER = 134217729.0  # 2^27 + 1 (Veltkamp's split)


@njit(cache=True)
def _exact_product(a, b):
    """(p, e) with p + e == a b exactly (Dekker; no overflow for the magnitudes used here)."""
    p = a * b
    t = SPLITTER * a
    a_hi = t - (t - a)
    a_lo = a - a_hi
    t = SPLITTER * b
    b_hi = t - (t - b)
    b_lo = b - b_hi
    return p, ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


@njit(cache=True)
def _reads_back(c, s, ax):
    """True when the decimal c 10^-s is read as ax (c < 2^53 and |s| <= 22: one correctly rounded operation)."""
    if c >= TWO53 or s > 22 or s < -22:
        return False
    value = c / POW10[s] if s >= 0 else c * POW10[-s]
    return value == ax


@njit(cache=True)
def _seventeen(ax):
    """(D, f, s): ax 10^s = D + f exactly, D the 17-digit integer nearest (|f| <= 1/2); s = -1 out of range."""
    k = int(np.floor(np.log10(ax)))
    for _ in range(3):
        s = 16 - k
        if s < 0 or s > 22:
            return 0, 0.0, -1
        hi, lo = _exact_product(ax, POW10[s])
        near = np.rint(lo)
        d = np.int64(hi) + np.int64(near)
        if d < INT_POW10[16]:
            k -= 1
        elif d >= INT_POW10[17]:
            k += 1
        else:
            return d, lo - near, s
    return 0, 0.0, -1


@njit(cache=True)
def _shortest_one(x):
    """(digits, decimal exponent): x's repr is 0.<digits> 10^exponent (sign aside); digits 0 when not decided."""
    ax = abs(x)
    if not (ax >= 2.2250738585072014e-308 and ax <= 1.7976931348623157e308):
        return 0, 0  # zero, subnormal, inf, nan
    mantissa, _ = math.frexp(ax)
    if mantissa == 0.5:
        return 0, 0  # a power of two: its rounding interval is lopsided
    d, f, s = _seventeen(ax)
    if s < 0 or abs(f) == 0.5:
        return 0, 0
    best, best_s = d, s
    for p in range(16, 0, -1):
        q = 17 - p
        c, r = d // INT_POW10[q], d % INT_POW10[q]
        half = INT_POW10[q] // 2
        if r > half or (r == half and f > 0.0):
            c += 1
        elif r == half and f == 0.0:
            return 0, 0  # exactly between two candidates
        if not _reads_back(float(c), s - q, ax):
            if p == 16 and c >= TWO53:
                return 0, 0  # cannot tell whether 16 digits would do
            break
        best, best_s = c, s - q
    while best % 10 == 0:
        best //= 10
        best_s -= 1
    digits = 1
    while best >= INT_POW10[digits]:
        digits += 1
    return best, digits - best_s


@threads.parallel_kernel
def shortest(values, digits, exponents):
    """digits[i], exponents[i] for every value (_shortest_one); digits 0 where repr must write it."""
    for i in prange(values.shape[0]):
        digits[i], exponents[i] = _shortest_one(values[i])


@njit(cache=True)
def _put_int(buffer, at, value):
    """The decimal digits of value >= 0 at buffer[at:], two at a time; returns the end."""
    length = 1
    while length < 19 and value >= INT_POW10[length]:
        length += 1
    k = at + length
    while value >= 100:
        pair = value % 100
        value //= 100
        k -= 2
        buffer[k] = 48 + pair // 10
        buffer[k + 1] = 48 + pair % 10
    if value >= 10:
        buffer[k - 2] = 48 + value // 10
        buffer[k - 1] = 48 + value % 10
    else:
        buffer[k - 1] = 48 + value
    return at + length


@njit(cache=True)
def _put_repr(buffer, at, negative, digits, exponent):
    """repr's text of -/+ 0.<digits> 10^exponent: positional for -4 < exponent <= 16, else d.ddde+XX."""
    if negative:
        buffer[at] = 45
        at += 1
    start = at
    end = _put_int(buffer, at, digits)
    n = end - start
    if -4 < exponent <= 16:
        if exponent <= 0:  # 0.000ddd
            shift = 2 - exponent
            for k in range(n - 1, -1, -1):
                buffer[start + shift + k] = buffer[start + k]
            buffer[start] = 48
            buffer[start + 1] = 46
            for k in range(-exponent):
                buffer[start + 2 + k] = 48
            return start + shift + n
        if exponent >= n:  # ddd000.0
            for k in range(exponent - n):
                buffer[end + k] = 48
            end = start + exponent
            buffer[end] = 46
            buffer[end + 1] = 48
            return end + 2
        for k in range(n - 1, exponent - 1, -1):  # dd.ddd
            buffer[start + k + 1] = buffer[start + k]
        buffer[start + exponent] = 46
        return end + 1
    if n > 1:  # d.ddd
        for k in range(n - 1, 0, -1):
            buffer[start + k + 1] = buffer[start + k]
        buffer[start + 1] = 46
        end += 1
    buffer[end] = 101
    buffer[end + 1] = 45 if exponent - 1 < 0 else 43
    power = abs(exponent - 1)
    if power < 10:
        buffer[end + 2] = 48
        return _put_int(buffer, end + 3, power)
    return _put_int(buffer, end + 2, power)


@threads.parallel_kernel
def _blocks(ids, values, digits, exponents, fallback, fallback_at, starts, first_fallback, buffer, bound_at, lengths):
    """The `id value` lines of block b (rows starts[b] to starts[b + 1]) joined by newlines into
    buffer[bound_at[b]:], their length in lengths[b]; the text of a number from fallback[fallback_at[f]:
    fallback_at[f + 1]] where digits is 0 (f counting from first_fallback[b])."""
    for b in prange(starts.shape[0] - 1):
        at = bound_at[b]
        f = first_fallback[b]
        for i in range(starts[b], starts[b + 1]):
            if i > starts[b]:
                buffer[at] = 10
                at += 1
            at = _put_int(buffer, at, ids[i])
            buffer[at] = 32
            at += 1
            if digits[i] == 0:
                for k in range(fallback_at[f], fallback_at[f + 1]):
                    buffer[at] = fallback[k]
                    at += 1
                f += 1
            else:
                at = _put_repr(buffer, at, values[i] < 0.0, digits[i], exponents[i])
        lengths[b] = at - bound_at[b]


BLOCKS = 64  # of lines written apart (on several threads), then joined
LINE_BYTES = 20 + 1 + 25  # the longest line a decided number makes: an int64 id, a space, repr's 24 characters


def id_value_lines(ids: np.ndarray, values: np.ndarray) -> str:
    """"\\n".join(f"{j} {v!r}") over ids (integers >= 0) and values (doubles): the same text, several times faster."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.float64)
    if len(values) == 0:
        return ""
    if ids.min() < 0:
        raise ValueError("negative ids")
    digits = np.empty(len(values), dtype=np.int64)
    exponents = np.empty(len(values), dtype=np.int64)
    with threads.for_work(len(values) * NS_PER_NUMBER * 1e-9):
        shortest(values, digits, exponents)
    undecided = digits == 0
    texts = [repr(v).encode("ascii") for v in values[undecided].tolist()]
    fallback = kernel_bytes(b"".join(texts))
    fallback_at = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=fallback_at[1:])
    starts = np.linspace(0, len(values), min(BLOCKS, len(values)) + 1).astype(np.int64)
    first_fallback = np.concatenate([[0], np.cumsum(undecided)])[starts[:-1]]
    sizes = np.diff(starts) * (LINE_BYTES + 1) + np.diff(fallback_at[np.append(first_fallback, len(texts))])
    bound_at = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    buffer = np.empty(int(bound_at[-1]), dtype=np.uint8)
    lengths = np.zeros(len(starts) - 1, dtype=np.int64)
    with threads.for_work(len(values) * NS_PER_LINE * 1e-9):
        _blocks(ids, values, digits, exponents, fallback, fallback_at, starts, first_fallback, buffer, bound_at,
                lengths)
    return b"\n".join(buffer[at:at + length].tobytes() for at, length in zip(bound_at, lengths)).decode("ascii")


@njit(cache=True)
def _decimal_parts(buf, p, end):
    """(ok, negative, M, e): buf[p:end], a decimal (is_decimal), is -/+ M 10^e with M < 10^18; ok False with more
    significant digits."""
    negative = buf[p] == 45
    if buf[p] == 43 or buf[p] == 45:
        p += 1
    M = np.int64(0)
    digits = 0
    e = 0
    fraction = False
    while p < end and buf[p] != 101 and buf[p] != 69:
        c = buf[p]
        if c == 46:
            fraction = True
        elif digits > 0 or c != 48:
            if digits == 18:
                return False, negative, M, e
            M = M * 10 + (c - 48)
            digits += 1
            if fraction:
                e -= 1
        elif fraction:
            e -= 1
        p += 1
    if p < end:  # the exponent
        p += 1
        sign = 1
        if buf[p] == 43 or buf[p] == 45:
            sign = -1 if buf[p] == 45 else 1
            p += 1
        power = 0
        while p < end:
            if power < 100000:
                power = power * 10 + (buf[p] - 48)
            p += 1
        e += sign * power
    return True, negative, M, e


@njit(cache=True)
def _quotient(M, k):
    """(ok, M / 10^k correctly rounded) for 2^53 <= M < 2^63 and 1 <= k <= 22: the candidates around fl(fl(M) / 10^k)
    are tried against the exact remainder M - c 10^k (Dekker's product); ok False near a tie or a power of two."""
    P = POW10[k]
    q = float(M) / P
    for c in (q, np.nextafter(q, -np.inf), np.nextafter(q, np.inf)):
        mantissa, exponent = math.frexp(c)
        if mantissa == 0.5:
            return False, 0.0
        high, low = _exact_product(c, P)
        whole = np.int64(high)  # high = c 10^k ~ M < 2^63; its integer part and fraction are exact
        remainder = float(M - whole) - (high - float(whole)) - low
        half = math.ldexp(P, exponent - 54)  # 10^k ulp(c) / 2
        if abs(remainder) < half * (1.0 - 1e-9):
            return True, c
        if abs(remainder) <= half * (1.0 + 1e-9):
            return False, 0.0
    return False, 0.0


@njit(cache=True)
def _long_decimal(buf, p, end):
    """(ok, value) of a decimal beyond the fast path whose value is M / 10^k, 2^53 <= M < 2^63, k <= 22 (the
    16- and 17-digit weights repr writes); ok False for the others (float() reads them)."""
    ok, negative, M, e = _decimal_parts(buf, p, end)
    if not ok or M < TWO53 or e >= 0 or e < -22:
        return False, 0.0
    ok, value = _quotient(M, -e)
    return ok, -value if negative else value


@njit(cache=True)
def _read_lines(buf, count, ids, values, slow_at):
    """Parse `count` lines of two whitespace-separated tokens, an integer and a decimal, each ended by a newline (the
    last one may end with the buffer): ids, values (the exact doubles this module reads); slow_at[3k:3k + 3] the line
    and the text's bounds of the k-th value left to float(), as far as slow_at holds. Returns (the number of values
    left to float(), -1 or the first line that has another form or is missing, the position after the last line)."""
    n = buf.shape[0]
    start = 0
    slow = 0
    room = slow_at.shape[0] // 3
    for k in range(count):
        if start >= n:
            return slow, k, start
        end = start
        while end < n and buf[end] != 10:
            end += 1
        p, q = _next_token(buf, start, end)
        ok, ids[k] = _parse_int(buf, p, q)
        if not ok:
            return slow, k, start
        p, q = _next_token(buf, q, end)
        if p == q or not is_decimal(buf, p, q) or _next_token(buf, q, end)[0] != end:
            return slow, k, start
        ok, values[k] = fast_float(buf, p, q)
        if not ok:
            ok, values[k] = _long_decimal(buf, p, q)
        if not ok:
            if slow < room:
                slow_at[3 * slow] = k
                slow_at[3 * slow + 1] = p
                slow_at[3 * slow + 2] = q
            slow += 1
        start = end + 1
    return slow, -1, start


# read_id_value_block's room for values left to float() without a second pass: one in SLOW_SHARE (a text model of
# 2.6 million weights from svm_multiclass's 20-class text, C 100000, has one in 45, exponents below -22; its second pass
# cost classify a quarter of a second)
SLOW_SHARE = 16


def read_id_value_block(buf: np.ndarray, count: int) -> tuple:
    """(ids, values, -1, end) of the first COUNT `index value` lines of the bytes BUF (a uint8 array), read as int()
    and float() read them, end the position after them; or (None, None, k, start) when line k (at position start)
    has another form or is missing (the caller reads it by itself to say why)."""
    ids = np.empty(count, dtype=np.int64)
    values = np.empty(count)
    slow_at = np.empty(3 * min(count, max(4096, count // SLOW_SHARE)), dtype=np.int64)
    slow, bad, end = _read_lines(buf, count, ids, values, slow_at)
    if bad >= 0:
        return None, None, bad, end
    if 3 * slow > len(slow_at):  # more values than expected left to float(): read again with room for all
        slow_at = np.empty(3 * slow, dtype=np.int64)
        slow, bad, end = _read_lines(buf, count, ids, values, slow_at)
    for row, start, stop in slow_at[:3 * slow].reshape(-1, 3).tolist():
        values[row] = float(buf[start:stop].tobytes())
    return ids, values, -1, end


def read_id_value_lines(rows: list) -> tuple | None:
    """(ids, values) of `index value` lines, as int(index) and float(value) read them; None when a line has another
    form, or characters other than ASCII (the caller reads those line by line, to say where)."""
    text = "\n".join(rows)
    if not rows or not text.isascii():
        return None
    ids, values, bad, _ = read_id_value_block(kernel_bytes(text.encode("ascii")), len(rows))
    return None if bad >= 0 else (ids, values)


@njit(cache=True)
def _score_lines(buf, values, slow_at):
    """Parse buf as lines of one number each, `[ \t]* NUMBER [ \t]* \r?` ended by a newline (the last one may end
    with the buffer), into values (sized for every line): the exact doubles this module reads, slow_at[3k:3k + 3]
    the line and the bounds of the k-th value left to float(). Returns (lines, values left to float()), or (-1, 0)
    when a line has another form (the caller's line-by-line reader says which)."""
    n = buf.shape[0]
    start = 0
    line = 0
    slow = 0
    while start < n:
        end = start
        while end < n and buf[end] != 10:
            end += 1
        stop = end - 1 if end > start and buf[end - 1] == 13 else end  # a \r before the newline
        p = start
        while p < stop and (buf[p] == 32 or buf[p] == 9):
            p += 1
        q = p
        while q < stop and buf[q] != 32 and buf[q] != 9:
            q += 1
        rest = q
        while rest < stop and (buf[rest] == 32 or buf[rest] == 9):
            rest += 1
        if p == q or rest != stop or not is_decimal(buf, p, q):
            return -1, 0
        ok, values[line] = fast_float(buf, p, q)
        if not ok:
            ok, values[line] = _long_decimal(buf, p, q)
        if not ok:
            slow_at[3 * slow] = line
            slow_at[3 * slow + 1] = p
            slow_at[3 * slow + 2] = q
            slow += 1
        line += 1
        start = end + 1
    return line, slow


def read_scores(raw: bytes) -> np.ndarray | None:
    """The numbers of RAW, one a line as svm_light writes them (blanks around, \r\n or \n), read exactly as float()
    reads them; None when a line has another form."""
    buf = kernel_bytes(raw)
    count = int(np.count_nonzero(buf == 10)) + (1 if len(buf) and buf[-1] != 10 else 0)
    values = np.empty(count)
    slow_at = np.empty(3 * count, dtype=np.int64)
    lines, slow = _score_lines(buf, values, slow_at)
    if lines < 0:
        return None
    for line, start, stop in slow_at[:3 * slow].reshape(-1, 3).tolist():
        values[line] = float(raw[start:stop])
    return values
