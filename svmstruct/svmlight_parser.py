"""numba kernels that parse SVMlight text (bytes) without Python objects per token.

Two passes over the text: `count_lines` sizes the arrays (rows, nonzeros, highest index), `parse_lines`
fills them (CSR or dense). Numbers in the common form (optional sign, at most 18 significant digits, optional
fraction and exponent, mantissa < 2**53, |decimal exponent| <= 22) are converted exactly in the kernel
(one correctly rounded multiplication or division by an exact power of ten: Clinger's fast path);
every other token (long mantissas, 'nan', 'inf', garbage) is handed back with its byte span so the
caller converts or rejects it with Python's float(), bit for bit the same as Python.
A malformed line stops the kernel with an error code and the span of the offending token.
"""
import numpy as np
from numba import njit

NEWLINE, CR, HASH, SPACE, TAB, COLON = 10, 13, 35, 32, 9, 58

# error codes (the caller turns them into messages naming file:line and the token)
OK = 0
BAD_TARGET = 1
MALFORMED = 2
BAD_INDEX = 3
INDEX_TOO_SMALL = 4
NOT_INCREASING = 5
BAD_QID = 6
QID_MISPLACED = 7
BAD_OPTION = 8
OPTION_MISPLACED = 9
FULL = 10  # the fallback buffer is full: call again from the returned position
INDEX_TOO_LARGE = 11

MAX_INDEX = 2**31 - 1  # feature indices are stored 0-based in int32
CHECK_ONLY = -(2**62)  # fallback slot of a token that is checked but not stored (cost:<number>)

POW10 = np.array([10.0 ** k for k in range(23)])


@njit(cache=True)
def _is_space(c):
    return c == SPACE or c == TAB or c == CR or c == 11 or c == 12


@njit(cache=True)
def fast_float(buf, start, end):
    """(ok, value): the exact double of buf[start:end] if it is a decimal in the fast-path form."""
    p = start
    negative = False
    if p < end and (buf[p] == 43 or buf[p] == 45):  # + -
        negative = buf[p] == 45
        p += 1
    mantissa = 0
    digits = 0
    exponent = 0
    seen = False
    while p < end and 48 <= buf[p] <= 57:
        if digits > 0 or buf[p] != 48:
            if digits >= 18:
                return False, 0.0
            mantissa = mantissa * 10 + (np.int64(buf[p]) - 48)
            digits += 1
        seen = True
        p += 1
    if p < end and buf[p] == 46:  # .
        p += 1
        while p < end and 48 <= buf[p] <= 57:
            if digits > 0 or buf[p] != 48:
                if digits >= 18:
                    return False, 0.0
                mantissa = mantissa * 10 + (np.int64(buf[p]) - 48)
                digits += 1
            exponent -= 1
            seen = True
            p += 1
    if not seen:
        return False, 0.0
    if p < end and (buf[p] == 101 or buf[p] == 69):  # e E
        p += 1
        eneg = False
        if p < end and (buf[p] == 43 or buf[p] == 45):
            eneg = buf[p] == 45
            p += 1
        if p == end or not (48 <= buf[p] <= 57):
            return False, 0.0
        e = 0
        while p < end and 48 <= buf[p] <= 57:
            if e < 100000:
                e = e * 10 + (np.int64(buf[p]) - 48)
            p += 1
        exponent += -e if eneg else e
    if p != end:
        return False, 0.0
    if mantissa == 0:
        return True, -0.0 if negative else 0.0
    if mantissa >= 9007199254740992 or exponent > 22 or exponent < -22:
        return False, 0.0
    value = float(mantissa)
    if exponent >= 0:
        value = value * POW10[exponent]
    else:
        value = value / POW10[-exponent]
    return True, -value if negative else value


@njit(cache=True)
def _parse_int(buf, start, end):
    """(ok, value) of a decimal integer with optional sign (at most 18 digits)."""
    p = start
    negative = False
    if p < end and (buf[p] == 43 or buf[p] == 45):
        negative = buf[p] == 45
        p += 1
    if p == end or end - p > 18:
        return False, 0
    v = 0
    while p < end:
        c = buf[p]
        if c < 48 or c > 57:
            return False, 0
        v = v * 10 + (np.int64(c) - 48)
        p += 1
    return True, -v if negative else v


@njit(cache=True)
def is_decimal(buf, start, end):
    """buf[start:end] is a plain decimal: [+-] digits [. digits] | [+-] . digits, then [eE [+-] digits]
    (what strtod reads completely; no underscores, no other digits, no spaces, no nan/inf)."""
    p = start
    if p < end and (buf[p] == 43 or buf[p] == 45):
        p += 1
    digits = 0
    while p < end and 48 <= buf[p] <= 57:
        p += 1
        digits += 1
    if p < end and buf[p] == 46:
        p += 1
        while p < end and 48 <= buf[p] <= 57:
            p += 1
            digits += 1
    if digits == 0:
        return False
    if p < end and (buf[p] == 101 or buf[p] == 69):
        p += 1
        if p < end and (buf[p] == 43 or buf[p] == 45):
            p += 1
        if p == end or not (48 <= buf[p] <= 57):
            return False
        while p < end and 48 <= buf[p] <= 57:
            p += 1
    return p == end


@njit(cache=True)
def _next_token(buf, q, end):
    """(start, end) of the next whitespace-separated token of buf[q:end]; start == end if none."""
    while q < end and _is_space(buf[q]):
        q += 1
    t = q
    while q < end and not _is_space(buf[q]):
        q += 1
    return t, q


@njit(cache=True)
def _line_end(buf, p, n):
    while p < n and buf[p] != NEWLINE:
        p += 1
    return p


@njit(cache=True)
def _line_and_content_end(buf, p, n):
    """(end of the line starting at p (its newline, or n), end of its data part (its first '#', or the
    line's end)) in one scan."""
    while p < n:
        c = buf[p]
        if c == NEWLINE:
            return p, p
        if c == HASH:
            return _line_end(buf, p, n), p
        p += 1
    return n, n


@njit(cache=True)
def _has_colon(buf, start, end):
    for r in range(start, end):
        if buf[r] == COLON:
            return True
    return False


@njit(cache=True, nogil=True)
def count_lines(buf, n):
    """(data rows, feature tokens, highest feature index, physical lines) of the complete lines in buf[:n].

    Only counts; parse_lines validates. Feature tokens are those not starting with qid/sid/cost.
    nogil: chunks of a file are counted (and parsed) on several threads."""
    rows = 0
    nnz = 0
    highest = 0
    physical = 0
    p = 0
    while p < n:
        physical += 1
        e, c_end = _line_and_content_end(buf, p, n)
        q = p
        first = True
        while q < c_end:
            t, q = _next_token(buf, q, c_end)
            if t == q:
                break
            if first:
                rows += 1
                first = False
                continue
            if buf[t] == 113 or buf[t] == 115 or buf[t] == 99:  # q s c: qid sid cost
                continue
            nnz += 1
            colon = t
            while colon < q and buf[colon] != COLON:
                colon += 1
            ok, idx = _parse_int(buf, t, colon)
            if ok and highest < idx <= MAX_INDEX:
                highest = idx
        p = e + 1
    return rows, nnz, highest, physical


@njit(cache=True, nogil=True)
def parse_lines(buf, n, p, line, row, nz, dense, X, indptr, indices, data, y, qid, has_qid, lines,
                comment_start, comment_end, fallback_pos, fallback_start, fallback_end, fallback_count):
    """Parse the complete lines of buf[p:n] into preallocated arrays from row `row` / nonzero `nz` on.

    dense: write X[row, idx-1] (indices/data unused) else CSR (indptr, indices, data). A token that is
    not in fast-path form is recorded as a fallback: fallback_pos = the slot it goes to (-1 - row for a
    target, row * width + j for dense, the CSR position otherwise) and its byte span.
    Returns (code, p, line, row, nz, fallback_count, error_start, error_end, previous_index): on an
    error, `line` is the offending line and error_start:error_end the token; code FULL asks for a
    call with more fallback space from p (a line boundary).
    """
    capacity = fallback_pos.shape[0]
    width = X.shape[1]
    while p < n:
        e, c_end = _line_and_content_end(buf, p, n)
        if fallback_count + (e - p) // 2 + 2 > capacity:  # this line might not fit: come back with room
            return FULL, p, line, row, nz, fallback_count, 0, 0, 0
        line += 1
        t, q = _next_token(buf, p, c_end)
        if t == q:  # blank or comment-only line
            p = e + 1
            continue
        ok, v = fast_float(buf, t, q)
        if ok:
            y[row] = v
        else:
            fallback_pos[fallback_count] = -1 - row
            fallback_start[fallback_count] = t
            fallback_end[fallback_count] = q
            fallback_count += 1
        last = 0
        has_qid[row] = False
        qid[row] = 0
        while True:
            t, q = _next_token(buf, q, c_end)
            if t == q:
                break
            colon = t
            while colon < q and buf[colon] != COLON:
                colon += 1
            if colon == t or colon >= q - 1:
                return MALFORMED, p, line, row, nz, fallback_count, t, q, last
            # a second colon makes the token malformed; a value on the fast path has none, so the scan for
            # it is done only where its absence is not already known (before any other error and off the
            # fast path), which reports the same error as checking first
            key_len = colon - t
            if buf[t] == 113 or buf[t] == 115 or buf[t] == 99:  # q s c: maybe qid/sid/cost
                if _has_colon(buf, colon + 1, q):
                    return MALFORMED, p, line, row, nz, fallback_count, t, q, last
            if key_len == 3 and buf[t] == 113 and buf[t + 1] == 105 and buf[t + 2] == 100:  # qid
                if has_qid[row] or last > 0:
                    return QID_MISPLACED, p, line, row, nz, fallback_count, t, q, last
                ok, v_int = _parse_int(buf, colon + 1, q)
                if not ok:
                    return BAD_QID, p, line, row, nz, fallback_count, colon + 1, q, last
                qid[row] = v_int
                has_qid[row] = True
                continue
            if (key_len == 3 and buf[t] == 115 and buf[t + 1] == 105 and buf[t + 2] == 100) or \
                    (key_len == 4 and buf[t] == 99 and buf[t + 1] == 111 and buf[t + 2] == 115 and buf[t + 3] == 116):
                if last > 0:
                    return OPTION_MISPLACED, p, line, row, nz, fallback_count, t, q, last
                if key_len == 3:  # sid:<int>
                    ok, _ = _parse_int(buf, colon + 1, q)
                else:  # cost:<float>, not stored; off the fast path the caller checks that it is finite
                    ok = is_decimal(buf, colon + 1, q)
                    if ok and not fast_float(buf, colon + 1, q)[0]:
                        fallback_pos[fallback_count] = CHECK_ONLY
                        fallback_start[fallback_count] = colon + 1
                        fallback_end[fallback_count] = q
                        fallback_count += 1
                if not ok:
                    return BAD_OPTION, p, line, row, nz, fallback_count, t, q, last
                continue
            ok, idx = _parse_int(buf, t, colon)
            ok_value, v = fast_float(buf, colon + 1, q)
            index_error = not ok or buf[t] == 43 or buf[t] == 45 or idx < 1 or idx > MAX_INDEX or idx <= last
            if (index_error or not ok_value) and _has_colon(buf, colon + 1, q):
                return MALFORMED, p, line, row, nz, fallback_count, t, q, last
            if not ok or buf[t] == 43 or buf[t] == 45:
                if ok:  # a signed index
                    if idx < 1:
                        return INDEX_TOO_SMALL, p, line, row, nz, fallback_count, t, q, last
                return BAD_INDEX, p, line, row, nz, fallback_count, t, colon, last
            if idx < 1:
                return INDEX_TOO_SMALL, p, line, row, nz, fallback_count, t, q, last
            if idx > MAX_INDEX:
                return INDEX_TOO_LARGE, p, line, row, nz, fallback_count, t, colon, last
            if idx <= last:
                return NOT_INCREASING, p, line, row, nz, fallback_count, t, q, last
            last = idx
            ok = ok_value
            if dense:
                slot = row * width + (idx - 1)
                if ok:
                    X[row, idx - 1] = v
            else:
                slot = nz
                indices[nz] = idx - 1
                if ok:
                    data[nz] = v
                nz += 1
            if not ok:
                fallback_pos[fallback_count] = slot
                fallback_start[fallback_count] = colon + 1
                fallback_end[fallback_count] = q
                fallback_count += 1
        if not dense:
            indptr[row + 1] = nz
        lines[row] = line
        comment_start[row] = c_end + 1 if c_end < e else e
        comment_end[row] = e
        row += 1
        p = e + 1
    return OK, p, line, row, nz, fallback_count, 0, 0, 0


@njit(cache=True, nogil=True)
def docid_spans(buf, comment_start, comment_end, row0, row1, start, end):
    """For rows row0:row1, the byte span of the docid in the comment buf[comment_start:comment_end]:
    the first `docid<spaces>=<spaces>TOKEN` (LETOR), else the comment's first token; start = end = -1
    when the comment is empty. The same as data.docid_from_comment's regular expression (a comment holds
    no newline, so _is_space is whitespace there)."""
    for r in range(row0, row1):
        c0, c1 = comment_start[r], comment_end[r]
        start[r] = -1
        end[r] = -1
        k = c0
        while k + 5 <= c1:
            if buf[k] == 100 and buf[k + 1] == 111 and buf[k + 2] == 99 and buf[k + 3] == 105 and buf[k + 4] == 100:
                j = k + 5
                while j < c1 and _is_space(buf[j]):
                    j += 1
                if j < c1 and buf[j] == 61:  # '='
                    t, q = _next_token(buf, j + 1, c1)
                    if q > t:
                        start[r], end[r] = t, q
                        break
            k += 1
        if start[r] < 0:  # the first token
            t, q = _next_token(buf, c0, c1)
            if q > t:
                start[r], end[r] = t, q
