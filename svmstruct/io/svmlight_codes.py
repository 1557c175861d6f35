"""The error codes of the SVMlight readers (svmlight_parser's kernel and its plain twin, svmlight_twin) and the words
io.data says them with: one list for both, importable without numba."""
from svmstruct.options import LARGEST_INTEGER

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
FULL = 10  # the kernel's fallback buffer is full: call again from the returned position
INDEX_TOO_LARGE = 11

MAX_INDEX = LARGEST_INTEGER  # feature indices are stored 0-based in int32

MESSAGES = {  # {tok}: the token, {last}: the index before it
    BAD_TARGET: "bad target '{tok}'",
    MALFORMED: "malformed token '{tok}' (expected index:value)",
    BAD_INDEX: "bad feature index '{tok}'",
    INDEX_TOO_SMALL: "feature index must be >= 1: '{tok}'",
    NOT_INCREASING: "feature indices must increase: '{tok}' after index {last}",
    BAD_QID: "bad qid '{tok}'",
    QID_MISPLACED: "qid must come once, before the features: '{tok}'",
    BAD_OPTION: "bad sid/cost token '{tok}' (sid:<integer>, cost:<number>)",
    OPTION_MISPLACED: "sid/cost must come before the features: '{tok}'",
    INDEX_TOO_LARGE: f"feature index '{{tok}}' is above the largest supported, {MAX_INDEX}",
}
