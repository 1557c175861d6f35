"""io.float_text writes `id value` lines exactly as f"{id} {value!r}" does and reads them exactly as int() and
float() do: checked against Python on doubles of every kind, and checked to decide most of a model's weights itself
(otherwise Python would do all the work and the equality would prove nothing)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmstruct.compute import threads
from svmstruct.io import float_text


def expected(ids, values) -> str:
    return "\n".join(f"{j} {v!r}" for j, v in zip(np.asarray(ids).tolist(), np.asarray(values, dtype=float).tolist()))


def same_as_repr(values, ids=None) -> None:
    values = np.asarray(values, dtype=float)
    ids = np.arange(1, len(values) + 1) * 7919 % 1000003 if ids is None else ids
    got, want = float_text.id_value_lines(ids, values), expected(ids, values)
    if got != want:
        wrong = [(a, b) for a, b in zip(got.split("\n"), want.split("\n")) if a != b]
        pytest.fail(f"{len(wrong)} lines differ from repr's, e.g. {wrong[:3]}")


def decided(values) -> float:
    """The share of values the numba path writes itself."""
    values = np.asarray(values, dtype=float)
    digits, exponents = np.empty(len(values), dtype=np.int64), np.empty(len(values), dtype=np.int64)
    float_text.shortest(values, digits, exponents)
    return float(np.mean(digits != 0))


def neighbours(values) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    return np.concatenate([values, np.nextafter(values, 0), np.nextafter(values, np.inf), -values])


def test_weights_of_every_magnitude_are_written_as_repr_writes_them():
    rng = np.random.default_rng(0)
    weights = rng.standard_normal(200_000) * 0.01
    same_as_repr(weights)
    assert decided(weights) > 0.9  # measured 0.94: repr writes the rest
    same_as_repr(rng.standard_normal(100_000) * 10.0 ** rng.integers(-12, 22, 100_000))
    same_as_repr(rng.random(100_000))
    same_as_repr(np.concatenate([np.round(rng.standard_normal(3000) * 10.0 ** k, d) for k in range(8)
                                 for d in range(6)]))  # short decimals: 1 to 15 digits
    same_as_repr(rng.integers(-10 ** 6, 10 ** 6, 10_000).astype(float))
    bits = rng.integers(0, 2 ** 63, 100_000, dtype=np.int64).view(np.float64)
    same_as_repr(neighbours(bits[np.isfinite(bits)]))


def test_the_edges_of_the_fast_path_are_written_as_repr_writes_them():
    same_as_repr(neighbours(2.0 ** np.arange(-1074, 1024)))  # powers of two: lopsided rounding intervals
    same_as_repr(neighbours(10.0 ** np.arange(-30, 30)))  # where the digit count and the notation change
    same_as_repr(neighbours([1e-6, 1e-5, 1e-4, 1e16, 1e17, 9007199254740992.0, 2.5, 0.5, 1.5e-5, 123456.0]))
    same_as_repr([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 0.2, 0.3, 1 / 3,
                  2 / 3, 1234567890123456.0, 12345678901234567.0, 9.999999999999999e-05, 0.9999999999999999,
                  99999999999999.99, float("inf"), float("-inf")])
    assert float_text.id_value_lines(np.zeros(0, dtype=np.int64), np.zeros(0)) == ""
    assert float_text.id_value_lines(np.array([0, 123456789012]), np.array([1.0, -2.5e-7])) == \
        "0 1.0\n123456789012 -2.5e-07"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=50),
       st.integers(min_value=0, max_value=2 ** 62))
def test_any_doubles_are_written_as_repr_writes_them(values, first_id):
    same_as_repr(values, ids=np.arange(len(values), dtype=np.int64) + first_id)


def test_the_text_does_not_depend_on_the_thread_count(monkeypatch):
    values = np.random.default_rng(1).standard_normal(50_000) * 1e-3
    ids = np.arange(len(values))
    monkeypatch.setenv("SVMSTRUCT_PARALLEL_SECONDS", "0")  # the parallel kernels whatever the work
    texts = []
    for n in (1, 2):
        threads.set_count(n)
        try:
            texts.append(float_text.id_value_lines(ids, values))
        finally:
            threads.set_count(None)
    assert texts[0] == texts[1] == expected(ids, values)


def read_as_python(texts) -> None:
    rows = [f"{k + 1} {text}" for k, text in enumerate(texts)]
    ids, values = float_text.read_id_value_lines(rows)
    want = np.array([float(text) for text in texts])
    np.testing.assert_array_equal(ids, np.arange(1, len(texts) + 1))
    wrong = np.flatnonzero(values.view(np.int64) != want.view(np.int64))
    assert len(wrong) == 0, [(texts[k], values[k], want[k]) for k in wrong[:3]]


def left_to_float(texts) -> float:
    """The share of values float() reads (the rest the numba kernel)."""
    text = "\n".join(f"1 {t}" for t in texts)
    slow_at = np.empty(3 * len(texts), dtype=np.int64)
    slow, _, _ = float_text._read_lines(np.frombuffer(text.encode(), dtype=np.uint8), len(texts), np.empty(len(texts),
                                  dtype=np.int64), np.empty(len(texts)), slow_at)
    return slow / len(texts)


def test_weights_are_read_as_float_reads_them():
    rng = np.random.default_rng(2)
    weights = [repr(v) for v in (rng.standard_normal(200_000) * 0.01).tolist()]
    read_as_python(weights)
    assert left_to_float(weights) < 0.05  # measured 0.00002
    scaled = rng.standard_normal(50_000) * 10.0 ** rng.integers(-25, 25, 50_000)
    for form in ("%r", "%.17g", "%.18g", "%.3e"):
        read_as_python([form % v for v in scaled.tolist()])
    digits = rng.integers(10 ** 15, 10 ** 18, 50_000).tolist()
    read_as_python([f"0.{d}" for d in digits] + [f"-{d}e-20" for d in digits] + [f"+{d}.5E-3" for d in digits])
    # exactly between two doubles (to even), next to powers of two, beyond 18 digits, huge and tiny
    read_as_python(["9007199254740993.0", "9007199254740995.0", "-9007199254740993.0", "18014398509481990.0",
                    "4503599627370497.5", "0.50000000000000001", "1.0000000000000001", "9.999999999999999e-3",
                    "0.1000000000000000055511151231257827", "1e308", "2.2250738585072014e-308", "5e-324", "-0.0",
                    "00012", ".5", "5.", "0"])


def test_weight_lines_of_another_form_are_left_to_the_line_by_line_reader():
    assert float_text.read_id_value_lines(["1 0.5", "2 0.25"])[1].tolist() == [0.5, 0.25]
    spaced = [" 3\t-1e-3 ", "+4  7", "5 0.5\r", "6\x0b2\x0c"]  # whitespace as str.split() takes it
    ids, values = float_text.read_id_value_lines(spaced)
    assert ids.tolist() == [int(row.split()[0]) for row in spaced]
    assert values.tolist() == [float(row.split()[1]) for row in spaced]
    for rows in (["1 0.5 7", "2"], ["1"], ["1 0.5", ""], ["1 0x5"], ["1 1_0"], ["1 nan"], ["1.5 2"], ["1 ½"],
                 ["1234567890123456789 1"], []):
        assert float_text.read_id_value_lines(rows) is None, rows


def test_a_block_whose_values_all_need_float_is_read_exactly():
    """Values beyond the fast paths (17 digits, exponent below -22) left to float(), more of them than the first
    pass has room for (read_id_value_block reads again with room for all): each exactly as float() reads it."""
    rng = np.random.default_rng(5)
    values = (rng.normal(size=20_000) * 1e-7).tolist()
    text = "".join(f"{i + 1} {v!r}\n" for i, v in enumerate(values))
    ids, read, bad, end = float_text.read_id_value_block(np.frombuffer(text.encode(), dtype=np.uint8), len(values))
    assert bad == -1 and end == len(text)
    np.testing.assert_array_equal(ids, np.arange(1, len(values) + 1))
    assert read.tobytes() == np.array([float(repr(v)) for v in values]).tobytes()
