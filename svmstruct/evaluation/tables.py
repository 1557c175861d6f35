"""Evaluation of predictions: reading them, comparing runs, output formats (the table of measures per query and
overall is measures.measure_table)."""
from __future__ import annotations

import json
import re

import numpy as np

from svmstruct.errors import InputError
from svmstruct.evaluation import measures
from svmstruct.io import files
from svmstruct.options import NON_FINITE, NUMBER

_NON_FINITE = re.compile(NON_FINITE, re.IGNORECASE)
_SCORE_LINE = re.compile(rf"[ \t]*({NUMBER})[ \t]*\r?\Z")


def read_predictions(path: str, n_rows: int) -> np.ndarray:
    """One score per line, as `classify` writes them (`-` = stdin): exactly one finite number in svm_light's
    syntax on each of exactly n_rows lines; anything else is an InputError naming file:line (a TREC run or
    qrels file given as predictions is named as such)."""
    name = "<stdin>" if path == "-" else path
    with files.open_binary(path) as f:  # lines end at \n (or \r\n) only, as in the data reader
        raw = f.read()
    values = _common_scores(raw)
    if values is None:
        lines = raw.decode("utf-8", errors="surrogateescape").split("\n")
        if lines[-1] == "":  # the end of the last line
            lines.pop()
        values = np.array([_score(line, name, lineno) for lineno, line in enumerate(lines, 1)], dtype=float)
    if not np.all(np.isfinite(values)):
        lineno = int(np.flatnonzero(~np.isfinite(values))[0]) + 1
        raise InputError("score is not finite (it overflows double precision)", name, lineno)
    if len(values) != n_rows:
        raise InputError(f"{len(values)} predictions for {n_rows} data lines", name)
    return values


# the bytes of svm_light's number syntax, and the blanks around it on a line
_NUMBER_BYTES = np.zeros(256, dtype=bool)
_NUMBER_BYTES[list(b"0123456789.eE+-")] = True
_BLANK_BYTES = np.zeros(256, dtype=bool)
_BLANK_BYTES[list(b" \t\r\n")] = True


# from this size of a predictions file on, its numbers are read by numba (io.float_text) even where its kernels are not
# loaded yet: 24 MB of 1.2 million scores take 0.43 s in numpy, 0.03 s in numba, whose start costs about a second
KERNEL_BYTES = 64 << 20


def _common_scores(raw: bytes) -> np.ndarray | None:
    """The scores when every line is one number (the common case; else None: the line-by-line reader names the first
    bad line): by numba's reader (io.float_text.read_scores) where its kernels are loaded already (a large data file
    read them) or the file is large, else by numpy's (_plain_scores): the same values to the bit
    (tests/test_twins.py)."""
    from svmstruct.compute import paths

    if any(paths.compiled(len(raw), KERNEL_BYTES, module) for module in ("svmstruct.io.float_text",
                                                                        "svmstruct.io.svmlight_parser")):
        from svmstruct.io import float_text

        return float_text.read_scores(raw)
    return _plain_scores(raw)


def _plain_scores(raw: bytes, piece: int = 1 << 22) -> np.ndarray | None:
    """The scores when every line is one number in svm_light's syntax between spaces or tabs (else None: the
    line-by-line reader names the first bad line), checked and converted about `piece` bytes (whole lines)
    at a time, in numpy: only number and blank bytes, a \r only before a \n, one token on every line;
    numpy's text parser then reads exactly one number a line (a token it cannot read whole is an error, and
    one it reads as two, such as 1-2, changes the count), correctly rounded."""
    parts = []
    start = 0
    while start < len(raw):
        cut = raw.find(b"\n", start + piece)
        cut = len(raw) if cut < 0 else cut + 1
        values = _plain_piece(np.frombuffer(raw, dtype=np.uint8, count=cut - start, offset=start))
        if values is None:
            return None
        parts.append(values)
        start = cut
    return np.concatenate(parts) if parts else np.zeros(0)


def _plain_piece(piece: np.ndarray) -> np.ndarray | None:
    blank = _BLANK_BYTES[piece]
    if not np.all(blank | _NUMBER_BYTES[piece]):
        return None
    returns = np.flatnonzero(piece[:-1] == 13)  # a \r ends a line: before its \n, or the file's last byte
    if len(returns) and not np.all(piece[returns + 1] == 10):
        return None
    newlines = np.flatnonzero(piece == 10)
    lines = len(newlines) + (0 if piece[-1] == 10 else 1)
    starts = np.flatnonzero(~blank & np.concatenate(([True], blank[:-1])))  # the first byte of every token
    if len(starts) != lines:
        return None
    # one token a line: token i after newline i - 1 and before newline i
    if np.any(starts[1:] < newlines[:lines - 1]) or np.any(starts[:len(newlines)] > newlines):
        return None
    try:
        numbers = np.fromstring(piece.tobytes(), sep=" ")
    except ValueError:  # a token it cannot read whole
        return None
    return numbers if len(numbers) == lines else None


def _score(line: str, name: str, lineno: int) -> float:
    """The score of one line of a predictions file, or the InputError that says what the line is."""
    match = _SCORE_LINE.match(line)
    if match:
        value = float(match.group(1))
        if not np.isfinite(value):
            raise InputError("score is not finite (it overflows double precision)", name, lineno)
        return value
    tokens = line.split()
    if not tokens:
        raise InputError("empty line where a score was expected", name, lineno)
    if len(tokens) == 6 and tokens[1] == "Q0":
        raise InputError("a TREC run line (qid Q0 docid rank score tag), not a score: eval reads classify's default "
                         "output, one score per data line (trec_eval reads TREC runs)", name, lineno)
    if len(tokens) == 4:
        raise InputError("four fields, as a TREC qrels line (qid 0 docid relevance), where one score was expected: "
                         "PREDICTIONS are classify's scores, one per data line", name, lineno)
    if len(tokens) > 1:
        raise InputError(f"{len(tokens)} fields where one score was expected", name, lineno)
    if _NON_FINITE.match(tokens[0]):
        raise InputError(f"score is not finite: '{tokens[0]}'", name, lineno)
    raise InputError(f"not a number: '{tokens[0]}'", name, lineno)


def format_table(table: dict, per_query: bool, fmt: str = "trec") -> str:
    """trec: `measure<TAB>qid<TAB>value` (per-query lines first, then qid `all`), as trec_eval prints;
    table: one row per measure; json: the nested dictionary."""
    if fmt == "json":
        body = table if per_query else {m: {"all": row["all"]} for m, row in table.items()}
        return json.dumps(body, indent=1) + "\n"
    if fmt == "table":
        width = max(len(m) for m in table)
        return "".join(f"{m:<{width}}  {row['all']:.4f}\n" for m, row in table.items())
    lines: list[str] = []
    for m, row in table.items():
        if per_query:
            lines.extend(f"{m}\t{q}\t{v:.4f}\n" for q, v in row.items() if q != "all")
        lines.append(f"{m}\tall\t{row['all']:.4f}\n")
    return "".join(lines)


def compare(dataset, runs: list, names: list, rel_threshold: float = 0.0) -> dict:
    """Paired comparison of runs (list of (label, scores)) against the first one.

    Per measure and run: the mean (or file value); for per-query measures also, against the first run,
    per-query wins/ties/losses and the p-values of the Wilcoxon signed-rank test (scipy's default
    zero_method 'wilcox', two-sided) and of the paired t-test; both are 1.0 when all differences are 0.
    """
    from scipy import stats

    result = {}
    for name in names:
        tables = [measures.measure_table(dataset, scores, [name], rel_threshold)[name] for _, scores in runs]
        per_query = len(tables[0]) > 1
        base = np.array([v for q, v in tables[0].items() if q != "all"]) if per_query else None
        rows: list[dict] = []
        for (label, _), table in zip(runs, tables):
            row = {"run": label, "value": table["all"]}
            if per_query and rows:
                values = np.array([v for q, v in table.items() if q != "all"])
                diff = values - base
                row.update(wins=int(np.sum(diff > 0)), ties=int(np.sum(diff == 0)), losses=int(np.sum(diff < 0)))
                if np.any(diff != 0):
                    row["wilcoxon_p"] = float(stats.wilcoxon(values, base).pvalue)
                    row["ttest_p"] = float(stats.ttest_rel(values, base).pvalue)
                else:
                    row["wilcoxon_p"] = row["ttest_p"] = 1.0
            rows.append(row)
        result[name] = rows
    return result


def stars(p: float) -> str:
    return "**" if p < 0.01 else "*" if p < 0.05 else ""


def format_comparison(comparison: dict, fmt: str = "table") -> str:
    """Papers' layout: per measure a row, per run `mean  wins/losses stars` against the first run
    (* p < 0.05, ** p < 0.01, Wilcoxon signed-rank); json gives every number."""
    if fmt == "json":
        return json.dumps(comparison, indent=1) + "\n"
    runs = [row["run"] for row in next(iter(comparison.values()))]
    width = max(12, *(len(r) for r in runs))
    mwidth = max(len(m) for m in comparison)
    lines = [f"{'':<{mwidth}}  " + "  ".join(f"{r:<{width}}" for r in runs)]
    for name, rows in comparison.items():
        cells = []
        for row in rows:
            cell = f"{row['value']:.4f}"
            if "wins" in row:
                cell += f" {row['wins']}/{row['losses']} {stars(row['wilcoxon_p'])}"
            cells.append(f"{cell:<{width}}")
        lines.append(f"{name:<{mwidth}}  " + "  ".join(cells).rstrip())
    lines.append("(wins/losses per query against the first run; * p < 0.05, ** p < 0.01, Wilcoxon signed-rank;"
                 " --format json adds ties and paired t-test p-values)")
    return "\n".join(lines) + "\n"
