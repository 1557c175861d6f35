"""Helpers that several test modules use (tests import this module, never another test module)."""
import signal

import numpy as np


def one_line_error(result, code, *fragments):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    errors = [line for line in lines if not line.startswith("svmstruct: warning:")]
    assert len(errors) == 1 and errors[0].startswith("svmstruct: error: "), result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def files_in(folder):
    return sorted(p.name for p in folder.iterdir())


def slow_training_set(path):
    """A ranking set whose training at a large C takes several seconds."""
    rng = np.random.default_rng(0)
    lines = []
    for q in range(400):
        for _ in range(40):
            features = " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(rng.normal(size=30)))
            lines.append(f"{int(rng.integers(0, 3))} qid:{q + 1} {features}")
    path.write_text("\n".join(lines) + "\n")


def default_dispositions() -> None:
    """preexec_fn of a command that a test signals: SIGINT, SIGTERM and SIGHUP at their defaults in it, also when
    the suite runs as a shell's background job (which ignores SIGINT) or under nohup (SIGHUP): an ignored signal
    stays ignored across exec, and the command then rightly ignores it."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


# ---- the toy structured problem of tests/multilabel_problem.py, as files and examples

SPEC = "multilabel_problem:MultiLabel"


def examples(rng, n=12, L=3, D=4):
    truth = rng.normal(size=(L, D))
    out = []
    for _ in range(n):
        x = rng.normal(size=D)
        y = tuple(int(v) for v in (truth @ x + rng.normal(scale=0.7, size=L) > 0))
        out.append((x, y))
    return out


def write(path, data):
    path.write_text("".join(
        (",".join(str(i + 1) for i, v in enumerate(y) if v) or "none") + " "
        + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(x)) + "\n" for x, y in data))
    return path
