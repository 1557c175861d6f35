"""The bytes and numbers of svm_light's syntax, read by numba kernels (svmlight_parser's): a byte of the text
without wrap-around, spaces, and numbers converted exactly in the common form (optional sign, at most 18 significant
digits, optional fraction and exponent, mantissa < 2**53, |decimal exponent| <= 22: one correctly rounded
multiplication or division by an exact power of ten, Clinger's fast path); the rest is left to Python's float()."""
from typing import Any

import numpy as np
from numba import njit  # (a leaf of helpers: the kernel modules that call them import compute.jit)
from numba.core import types
from numba.extending import intrinsic

SPACE, TAB, CR = 32, 9, 13

POW10 = np.array([10.0 ** k for k in range(23)])


def _byte_at(typingctx, buf, p):
    """buf[p] without numba's wrap-around of negative indices (a compare and a select on every byte read:
    ~20 % of the parsing time). Positions in this module are never negative; like buf[p] in numba, no
    bounds check: every caller keeps p < n. buf is a contiguous array (np.frombuffer of the text)."""
    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.load(builder.gep(array.data, [args[1]]))
    return types.uint8(buf, p), codegen


_at: Any = intrinsic(_byte_at)  # (Any: the intrinsic's call signature, without typingctx, is unknown to mypy)


def _word_at_codegen(typingctx, buf, p):
    """The 8 bytes buf[p:p + 8] as one uint64 in the machine's byte order (its callers ask only whether some byte is
    zero), loaded unaligned (as _byte_at: no bounds check; every caller keeps p + 8 <= n)."""
    def codegen(context, builder, signature, args):
        from llvmlite import ir

        array = context.make_array(signature.args[0])(context, builder, args[0])
        word = builder.bitcast(builder.gep(array.data, [args[1]]), ir.IntType(64).as_pointer())
        return builder.load(word, align=1)
    return types.uint64(buf, p), codegen


_word_at: Any = intrinsic(_word_at_codegen)


@njit(cache=True)
def _spells(buf, k, word):
    """buf[k:k + len(word)] == word (the caller knows those bytes exist)."""
    for j in range(word.shape[0]):
        if _at(buf, k + j) != word[j]:
            return False
    return True


@njit(cache=True)
def _is_space(c):
    return c == SPACE or c == TAB or c == CR or c == 11 or c == 12


@njit(cache=True)
def _next_token(buf, q, end):
    """(start, end) of the next whitespace-separated token of buf[q:end]; start == end if none."""
    while q < end and _is_space(_at(buf, q)):
        q += 1
    t = q
    while q < end and not _is_space(_at(buf, q)):
        q += 1
    return t, q


@njit(cache=True)
def scan_float(buf, start, end):
    """(ok, stop, value): read a decimal in the fast-path form from buf[start:] up to the first byte that
    cannot continue it (stop <= end); ok says the bytes read are such a decimal and value is its exact
    double. The caller decides whether buf[stop] may follow a number."""
    p = start
    negative = False
    if p < end and (_at(buf, p) == 43 or _at(buf, p) == 45):  # + -
        negative = _at(buf, p) == 45
        p += 1
    mantissa = 0
    digits = 0
    exponent = 0
    seen = False
    while p < end and 48 <= _at(buf, p) <= 57:
        if digits > 0 or _at(buf, p) != 48:
            if digits >= 18:
                return False, p, 0.0
            mantissa = mantissa * 10 + (np.int64(_at(buf, p)) - 48)
            digits += 1
        seen = True
        p += 1
    if p < end and _at(buf, p) == 46:  # .
        p += 1
        while p < end and 48 <= _at(buf, p) <= 57:
            if digits > 0 or _at(buf, p) != 48:
                if digits >= 18:
                    return False, p, 0.0
                mantissa = mantissa * 10 + (np.int64(_at(buf, p)) - 48)
                digits += 1
            exponent -= 1
            seen = True
            p += 1
    if not seen:
        return False, p, 0.0
    if p < end and (_at(buf, p) == 101 or _at(buf, p) == 69):  # e E
        p += 1
        eneg = False
        if p < end and (_at(buf, p) == 43 or _at(buf, p) == 45):
            eneg = _at(buf, p) == 45
            p += 1
        if p == end or not (48 <= _at(buf, p) <= 57):
            return False, p, 0.0
        e = 0
        while p < end and 48 <= _at(buf, p) <= 57:
            if e < 100000:
                e = e * 10 + (np.int64(_at(buf, p)) - 48)
            p += 1
        exponent += -e if eneg else e
    if mantissa == 0:
        return True, p, -0.0 if negative else 0.0
    if mantissa >= 9007199254740992 or exponent > 22 or exponent < -22:
        return False, p, 0.0
    value = float(mantissa)
    if exponent >= 0:
        value = value * POW10[exponent]
    else:
        value = value / POW10[-exponent]
    return True, p, -value if negative else value


@njit(cache=True)
def fast_float(buf, start, end):
    """(ok, value): the exact double of buf[start:end] if it is a decimal in the fast-path form."""
    ok, stop, value = scan_float(buf, start, end)
    return ok and stop == end, value


@njit(cache=True)
def _plain_decimal(buf, p, end):
    """(ok, stop, value) of `[-]digits[.digits]` with 1-15 digits in all (leading zeros included, so the
    mantissa is below 2**53 and the value mantissa / 10**fraction_digits is exact) from buf[p:], the
    commonest form of a value, read with one branch per digit; anything else is left to scan_float."""
    negative = False
    if p < end and _at(buf, p) == 45:
        negative = True
        p += 1
    first = p
    mantissa = 0
    while p < end:
        digit = np.uint8(_at(buf, p) - np.uint8(48))  # bytes below '0' wrap around above 9
        if digit > 9:
            break
        mantissa = mantissa * 10 + np.int64(digit)
        p += 1
    digits = p - first
    fraction = 0
    if p < end and _at(buf, p) == 46:  # .
        p += 1
        fraction_start = p
        while p < end:
            digit = np.uint8(_at(buf, p) - np.uint8(48))
            if digit > 9:
                break
            mantissa = mantissa * 10 + np.int64(digit)
            p += 1
        fraction = p - fraction_start
        digits += fraction
    if digits == 0 or digits > 15:
        return False, p, 0.0
    value = float(mantissa)
    if fraction:
        value = value / POW10[fraction]
    return True, p, -value if negative else value


@njit(cache=True)
def _parse_int(buf, start, end):
    """(ok, value) of a decimal integer with optional sign (at most 18 digits)."""
    p = start
    negative = False
    if p < end and (_at(buf, p) == 43 or _at(buf, p) == 45):
        negative = _at(buf, p) == 45
        p += 1
    if p == end or end - p > 18:
        return False, 0
    v = 0
    while p < end:
        c = _at(buf, p)
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
    if p < end and (_at(buf, p) == 43 or _at(buf, p) == 45):
        p += 1
    digits = 0
    while p < end and 48 <= _at(buf, p) <= 57:
        p += 1
        digits += 1
    if p < end and _at(buf, p) == 46:
        p += 1
        while p < end and 48 <= _at(buf, p) <= 57:
            p += 1
            digits += 1
    if digits == 0:
        return False
    if p < end and (_at(buf, p) == 101 or _at(buf, p) == 69):
        p += 1
        if p < end and (_at(buf, p) == 43 or _at(buf, p) == 45):
            p += 1
        if p == end or not (48 <= _at(buf, p) <= 57):
            return False
        while p < end and 48 <= _at(buf, p) <= 57:
            p += 1
    return p == end
