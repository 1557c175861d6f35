"""numba kernels that parse SVMlight text (bytes) without Python objects per token.

Two passes over the text: `count_lines` sizes the arrays (rows, nonzeros, highest index), `parse_lines`
fills them (CSR or dense); each looks at a line's bytes once when the line is in the common form (a target,
maybe qid:<digits>, increasing index:value tokens), and only the rest of an unusual line takes the careful
path that validates token by token. Numbers in the common form (optional sign, at most 18 significant digits, optional
fraction and exponent, mantissa < 2**53, |decimal exponent| <= 22) are converted exactly in the kernel
(one correctly rounded multiplication or division by an exact power of ten: Clinger's fast path);
every other token (long mantissas, 'nan', 'inf', garbage) is handed back with its byte span so the
caller converts or rejects it with Python's float(), bit for bit the same as Python.
A malformed line stops the kernel with an error code and the span of the offending token.
"""

import numpy as np

from svmstruct.compute.jit import njit
from svmstruct.io.svmlight_codes import (  # noqa: F401 - the codes the kernel returns (io.data reads them here)
    BAD_INDEX,
    BAD_OPTION,
    BAD_QID,
    BAD_TARGET,
    FULL,
    INDEX_TOO_LARGE,
    INDEX_TOO_SMALL,
    MALFORMED,
    MAX_INDEX,
    NOT_INCREASING,
    OK,
    OPTION_MISPLACED,
    QID_MISPLACED,
)
from svmstruct.io.svmlight_numbers import (
    POW10,
    _at,
    _is_space,
    _next_token,
    _parse_int,
    _plain_decimal,
    _spells,
    _word_at,
    fast_float,
    is_decimal,
    scan_float,
)

NEWLINE, CR, HASH, SPACE, TAB, COLON = 10, 13, 35, 32, 9, 58

CHECK_ONLY = -(2**62)  # fallback slot of a token that is checked but not stored (cost:<number>)
ONES, HIGHS = np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)  # _data_end's words
NEWLINES, HASHES = ONES * np.uint64(NEWLINE), ONES * np.uint64(HASH)
QID, SID, COST, DOCID = (np.frombuffer(word, dtype=np.uint8) for word in (b"qid", b"sid", b"cost", b"docid"))

@njit(cache=True)
def _token_ends(buf, p, end):
    """A token ends at buf[p]: the end, a space, a newline or a comment's '#'."""
    if p >= end:
        return True
    c = _at(buf, p)
    return _is_space(c) or c == NEWLINE or c == HASH


@njit(cache=True)
def _number(buf, p, end):
    """(ok, stop, value): a whole token buf[p:stop] that is a decimal in fast-path form, and its double."""
    ok, stop, value = _plain_decimal(buf, p, end)
    if not ok or not _token_ends(buf, stop, end):  # e.g. an exponent: the general scan decides
        ok, stop, value = scan_float(buf, p, end)
        ok = ok and _token_ends(buf, stop, end)
    return ok, stop, value


@njit(cache=True)
def _fast_feature(buf, t, end):
    """(ok, stop, index, value): the feature token `index:value` starting at buf[t], read in one scan,
    if it is in the common form (1-10 plain digits, an index in 1..MAX_INDEX, a fast-path value). ok
    False sends the token to the careful path, which reports or converts it."""
    k = t
    index = 0
    while k < end:
        digit = np.uint8(_at(buf, k) - np.uint8(48))
        if digit > 9:
            break
        index = index * 10 + np.int64(digit)
        k += 1
    if k == t or k - t > 10 or k == end or _at(buf, k) != COLON or index < 1 or index > MAX_INDEX:
        return False, k, 0, 0.0
    ok, stop, value = _number(buf, k + 1, end)
    return ok, stop, index, value


@njit(cache=True)
def _fast_qid(buf, t, end):
    """(ok, stop, qid): the token `qid:<1-18 plain digits>` starting at buf[t], else ok False."""
    if t + 4 >= end or not _spells(buf, t, QID) or _at(buf, t + 3) != COLON:
        return False, t, 0
    k = t + 4
    value = 0
    while k < end:
        digit = np.uint8(_at(buf, k) - np.uint8(48))
        if digit > 9:
            break
        value = value * 10 + np.int64(digit)
        k += 1
    if k == t + 4 or k - t - 4 > 18 or not _token_ends(buf, k, end):
        return False, k, 0
    return True, k, value


@njit(cache=True)
def _skip_spaces(buf, q, end):
    while q < end and _is_space(_at(buf, q)):
        q += 1
    return q


@njit(cache=True)
def _line_end(buf, p, n):
    while p < n and _at(buf, p) != NEWLINE:
        p += 1
    return p


@njit(cache=True)
def _data_end(buf, p, n):
    """The position of the first '#' or newline from p (n if none): 8 bytes at a time up to the word that holds one
    (a word has a zero byte where (w - ONES) & ~w & HIGHS is not 0), then byte by byte."""
    while p + 8 <= n:
        word = _word_at(buf, p)
        newline, comment = word ^ NEWLINES, word ^ HASHES
        if ((newline - ONES) & ~newline | (comment - ONES) & ~comment) & HIGHS:
            break
        p += 8
    while p < n:
        c = _at(buf, p)
        if c == NEWLINE or c == HASH:
            return p
        p += 1
    return n


@njit(cache=True)
def _line_and_content_end(buf, p, n):
    """(end of the line starting at p (its newline, or n), end of its data part (its first '#', or the
    line's end)) in one scan."""
    while p < n:
        c = _at(buf, p)
        if c == NEWLINE:
            return p, p
        if c == HASH:
            return _line_end(buf, p, n), p
        p += 1
    return n, n


@njit(cache=True)
def _has_colon(buf, start, end):
    for r in range(start, end):
        if _at(buf, r) == COLON:
            return True
    return False


@njit(cache=True, nogil=True)
def count_lines(buf, n):
    """(data rows, feature tokens, highest feature index, physical lines) of the complete lines in buf[:n].

    Only counts; parse_lines validates. Feature tokens are those not starting with qid/sid/cost; the highest
    index is an upper bound of every index parse_lines may store (equal for a valid file).
    nogil: chunks of a file are counted (and parsed) on several threads."""
    rows = 0
    nnz = 0
    highest = 0
    physical = 0
    p = 0
    while p < n:  # a line; every byte is looked at once
        physical += 1
        first = True
        while True:
            p = _skip_spaces(buf, p, n)
            if p == n:
                break
            c = _at(buf, p)
            if c == NEWLINE:
                break
            if c == HASH:
                p = _line_end(buf, p, n)
                break
            if first:  # the target
                rows += 1
                first = False
            elif c != 113 and c != 115 and c != 99:  # not q s c: a feature token (qid/sid/cost are not)
                nnz += 1
                k = p
                index = 0
                while k < n and k - p < 18:
                    digit = np.uint8(_at(buf, k) - np.uint8(48))
                    if digit > 9:
                        break
                    index = index * 10 + np.int64(digit)
                    k += 1
                if k > p and k < n and _at(buf, k) == COLON and highest < index <= MAX_INDEX:
                    highest = index
                p = k
            while p < n and not _token_ends(buf, p, n):
                p += 1
        p += 1
    return rows, nnz, highest, physical


@njit(cache=True)
def _store(dense, X, indices, data, row, nz, index, value):
    """Feature `index` (1-based) of `row` is `value`: X[row, index - 1] (dense) or the CSR entry nz. Returns
    the next nonzero position."""
    if dense:
        X[row, index - 1] = value
        return nz
    indices[nz] = index - 1
    data[nz] = value
    return nz + 1


@njit(cache=True, nogil=True)
def parse_lines(buf, n, p, line, row, nz, dense, features, X, indptr, indices, data, y, qid, has_qid, lines,
                comment_start, comment_end, fallback_pos, fallback_start, fallback_end, fallback_count):
    """Parse the complete lines of buf[p:n] into preallocated arrays from row `row` / nonzero `nz` on.

    dense: write X[row, idx-1] (indices/data unused) else CSR (indptr, indices, data). features False: the
    features are not read (eval needs a line's target, qid and comment): the rest of the line from its first
    token that cannot be qid/sid/cost (not starting q, s or c) up to the comment is skipped unread. A token that is
    not in fast-path form is recorded as a fallback: fallback_pos = the slot it goes to (-1 - row for a
    target, row * width + j for dense, the CSR position otherwise) and its byte span.
    Returns (code, p, line, row, nz, fallback_count, error_start, error_end, previous_index): on an
    error, `line` is the offending line and error_start:error_end the token; code FULL asks for a
    call with more fallback space from p (a line boundary), or with more rows when row == len(y) (the
    per-row arrays are full).
    """
    capacity = fallback_pos.shape[0]
    width = X.shape[1]
    while p < n:
        line += 1
        line_nz = nz
        last = 0
        # the common form of a line is read in one scan without looking for its end first: a target, maybe
        # `qid:<digits>`, features in increasing order; the tokens read here hold no '#' and no newline
        q = _skip_spaces(buf, p, n)
        target_read, stop, v = _number(buf, q, n)
        if target_read:  # a data line (a token): its row exists
            if row == y.shape[0]:
                return FULL, p, line - 1, row, line_nz, fallback_count, 0, 0, 0
            y[row] = v
            has_qid[row] = False
            qid[row] = 0
            q = _skip_spaces(buf, stop, n)
            ok, stop, v_int = _fast_qid(buf, q, n)
            if ok:
                qid[row] = v_int
                has_qid[row] = True
                q = stop
            # the features: _skip_spaces, _fast_feature with _plain_decimal's values and _store, written out
            # here because numba's calls to them in this loop made it 2.9x slower (583 vs 201 MB/s on
            # bench-big's file); a token this loop does not take is read again by the careful path below
            while True:
                while q < n and _is_space(_at(buf, q)):
                    q += 1
                if not features:  # unread from the first feature (a digit) to the comment
                    if q < n and np.uint8(_at(buf, q) - np.uint8(48)) <= 9:
                        q = _data_end(buf, q, n)
                    break
                k = q
                index = 0
                while k < n:
                    digit = np.uint8(_at(buf, k) - np.uint8(48))
                    if digit > 9:
                        break
                    index = index * 10 + np.int64(digit)
                    k += 1
                if k == q or k - q > 10 or k == n or _at(buf, k) != COLON or index <= last or index > MAX_INDEX:
                    break
                k += 1
                negative = False
                if k < n and _at(buf, k) == 45:
                    negative = True
                    k += 1
                first = k
                mantissa = 0
                while k < n:
                    digit = np.uint8(_at(buf, k) - np.uint8(48))
                    if digit > 9:
                        break
                    mantissa = mantissa * 10 + np.int64(digit)
                    k += 1
                digits = k - first
                fraction = 0
                if k < n and _at(buf, k) == 46:  # .
                    k += 1
                    fraction_start = k
                    while k < n:
                        digit = np.uint8(_at(buf, k) - np.uint8(48))
                        if digit > 9:
                            break
                        mantissa = mantissa * 10 + np.int64(digit)
                        k += 1
                    fraction = k - fraction_start
                    digits += fraction
                if digits == 0 or digits > 15 or not _token_ends(buf, k, n):
                    break
                v = float(mantissa)
                if fraction:
                    v = v / POW10[fraction]
                if negative:
                    v = -v
                last = index
                if dense:
                    X[row, index - 1] = v
                else:
                    indices[nz] = index - 1
                    data[nz] = v
                    nz += 1
                q = k
        # the rest of the line (nothing, a comment, an unusual token, an error) the careful way
        e, c_end = _line_and_content_end(buf, q, n)
        if fallback_count + (e - q) // 2 + 2 > capacity:  # the rest might not fit: come back with room
            return FULL, p, line - 1, row, line_nz, fallback_count, 0, 0, 0
        if not target_read:
            t, q = _next_token(buf, q, c_end)
            if t == q:  # blank or comment-only line
                p = e + 1
                continue
            if row == y.shape[0]:
                return FULL, p, line - 1, row, line_nz, fallback_count, 0, 0, 0
            fallback_pos[fallback_count] = -1 - row  # not in fast-path form: Python converts or rejects it
            fallback_start[fallback_count] = t
            fallback_end[fallback_count] = q
            fallback_count += 1
            has_qid[row] = False
            qid[row] = 0
        while True:
            q = _skip_spaces(buf, q, c_end)
            if not features and q < c_end and _at(buf, q) != 113 and _at(buf, q) != 115 and _at(buf, q) != 99:
                break  # not qid/sid/cost: the features, unread
            ok, stop, idx, v = _fast_feature(buf, q, c_end)
            if ok and idx > last:  # the common case, read once; anything else takes the careful path below
                last = idx
                nz = _store(dense, X, indices, data, row, nz, idx, v)
                q = stop
                continue
            t, q = _next_token(buf, q, c_end)
            if t == q:
                break
            colon = t
            while colon < q and _at(buf, colon) != COLON:
                colon += 1
            if colon == t or colon >= q - 1:
                return MALFORMED, p, line, row, nz, fallback_count, t, q, last
            # a second colon makes the token malformed; a value on the fast path has none, so the scan for
            # it is done only where its absence is not already known (before any other error and off the
            # fast path), which reports the same error as checking first
            key_len = colon - t
            if _at(buf, t) == 113 or _at(buf, t) == 115 or _at(buf, t) == 99:  # q s c: maybe qid/sid/cost
                if _has_colon(buf, colon + 1, q):
                    return MALFORMED, p, line, row, nz, fallback_count, t, q, last
            if key_len == 3 and _spells(buf, t, QID):
                if has_qid[row] or last > 0:
                    return QID_MISPLACED, p, line, row, nz, fallback_count, t, q, last
                ok, v_int = _parse_int(buf, colon + 1, q)
                if not ok:
                    return BAD_QID, p, line, row, nz, fallback_count, colon + 1, q, last
                qid[row] = v_int
                has_qid[row] = True
                continue
            if (key_len == 3 and _spells(buf, t, SID)) or (key_len == 4 and _spells(buf, t, COST)):
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
            index_error = not ok or _at(buf, t) == 43 or _at(buf, t) == 45 or idx < 1 or idx > MAX_INDEX or idx <= last
            if (index_error or not ok_value) and _has_colon(buf, colon + 1, q):
                return MALFORMED, p, line, row, nz, fallback_count, t, q, last
            if not ok or _at(buf, t) == 43 or _at(buf, t) == 45:
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
        if not dense and features:
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
            if _spells(buf, k, DOCID):
                j = k + 5
                while j < c1 and _is_space(_at(buf, j)):
                    j += 1
                if j < c1 and _at(buf, j) == 61:  # '='
                    t, q = _next_token(buf, j + 1, c1)
                    if q > t:
                        start[r], end[r] = t, q
                        break
            k += 1
        if start[r] < 0:  # the first token
            t, q = _next_token(buf, c0, c1)
            if q > t:
                start[r], end[r] = t, q


@njit(cache=True, nogil=True)
def gather_spans(buf, start, end):
    """(the bytes buf[start[i]:end[i]] of every i one after another, True when they are all ASCII); every
    start >= 0."""
    total = 0
    for i in range(start.shape[0]):
        total += end[i] - start[i]
    out = np.empty(total, dtype=np.uint8)
    at = 0
    seen = np.uint8(0)  # every byte or-ed: its high bit is set if one byte is not ASCII
    for i in range(start.shape[0]):
        for k in range(start[i], end[i]):
            b = _at(buf, k)
            out[at] = b
            seen |= b
            at += 1
    return out, seen < 128
