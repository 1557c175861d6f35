"""Compile and cache every numba kernel the commands use, once, right after installing.

numba compiles a kernel on its first call and caches the machine code next to the package
(`cache=True`); without this step every loss family pays its compilation (seconds each) on first use,
and parallel jobs on a cold cache each pay it again. `make install` runs `python -m svmstruct.worker.warmup`:
it writes tiny inputs to a temporary directory and runs, in this process, what users run — `learn` with
every registered loss (with and without `--float32`, `--dense`, `--normalize`, a validation grid),
`classify` and `eval` with all measures, gzip input — so the cached signatures are the ones real runs
use. Run it again after upgrading numba or moving the package.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def _ranking_file(path: Path, rng) -> None:
    lines = []
    for q in range(1, 5):
        for d in range(6):
            values = rng.random(5)
            label = int(3 * values[0] * values[1])
            features = " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(values))
            lines.append(f"{label} qid:{q} {features} # q{q}d{d}")
    path.write_text("\n".join(lines) + "\n")


def _div_files(svm: Path, qrels: Path, rng) -> None:
    lines, judgments = [], []
    for q in range(1, 3):
        for d in range(5):
            words = np.sort(rng.choice(np.arange(1, 30), size=6, replace=False))
            lines.append(f"0 qid:{q} " + " ".join(f"{w}:{1 + w % 3}" for w in words) + f" # q{q}d{d}")
            judgments += [f"{q} t{t} q{q}d{d} 1" for t in range(3) if rng.random() < 0.5]
    svm.write_text("\n".join(lines) + "\n")
    qrels.write_text("\n".join(judgments) + "\n")


def _run(args: list) -> None:
    from svmstruct import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            cli.main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    if code != 0:
        raise RuntimeError(f"svmstruct {' '.join(map(str, args))} failed: {err.getvalue().strip()}")


def warm_up(say=print) -> None:
    """Run every command on tiny inputs (see the module docstring): the one-thread twins of the parallel
    kernels, then on two threads the parallel kernels themselves."""
    from svmstruct.compute import threads

    with tempfile.TemporaryDirectory() as tmp:
        _every_command(Path(tmp), say)  # tiny work: the parallel kernels' one-thread twins
        kept = threads.PARALLEL_SECONDS
        threads.PARALLEL_SECONDS = 0.0  # every kernel on two threads (even inside make -j): the parallel kernels
        threads.set_count(2)
        try:
            _every_command(Path(tmp), say)
        finally:
            threads.PARALLEL_SECONDS = kept
            threads.set_count(None)


def _every_command(d: Path, say) -> None:
    from svmstruct import registry

    rng = np.random.default_rng(0)
    _ranking_file(d / "train.txt", rng)
    (d / "train.txt.gz").write_bytes(gzip.compress((d / "train.txt").read_bytes()))
    _div_files(d / "div.svm", d / "div.qrels", rng)
    for loss in registry.REGISTRY.values():
        start = time.perf_counter()
        if loss.output == "subset":
            _run(["learn", "-l", loss.name, "--subtopics", d / "div.qrels", "-k", "2", "-c", "1", "-v", "0",
                  d / "div.svm", d / "div.model"])
            _run(["classify", d / "div.svm", d / "div.model", d / "div.sel"])
            _run(["eval", "--subtopics", d / "div.qrels", d / "div.svm", d / "div.sel"])
        else:
            model, pred = d / f"{loss.name}.model", d / f"{loss.name}.pred"
            _run(["learn", "-l", loss.name, "-c", "1", "-v", "0", d / "train.txt", model])
            _run(["classify", d / "train.txt", model, pred])
        say(f"{loss.name:<16} {time.perf_counter() - start:6.1f} s")
    start = time.perf_counter()
    for variant in (["--float32"], ["--dense"], ["--normalize", "query"], ["--normalize", "global"],
                    ["-c", "1,10", "--validate", d / "train.txt"]):
        _run(["learn", "-l", "pairs", *variant, "-v", "0", d / "train.txt.gz", d / "variant.model"])
    for name in ("pairs", "errorrate"):  # sparse data (text): CSR products, float32 and with the bias float64
        _run(["learn", "-l", name, "--layout", "sparse", "-v", "0", d / "train.txt.gz", d / "variant.model"])
    _run(["classify", "--format", "trec", d / "train.txt", d / "pairs.model", d / "run.txt"])
    (d / "kernel.model").write_text("\n".join([  # svm_light's kernel models (svmstruct.kernels.kernel_functions)
        "SVM-light Version V6.20", "2 # kernel type", "3 # -d", "1 # -g", "1 # -s", "1 # -r", "empty# -u",
        "5 # highest feature index", "2 # training documents", "2 # number of support vectors plus 1",
        "0 # threshold b", "0.5 1:0.25 3:1 #"]) + "\n")
    _run(["classify", "-v", "0", d / "train.txt", d / "kernel.model", d / "kernel.pred"])
    _run(["learn", "-l", "pairs", "-t", "2", "--k", "5", "-v", "0", d / "train.txt", d / "rbf.model"])
    _run(["classify", "-v", "0", d / "train.txt", d / "rbf.model", d / "rbf.pred"])
    _run(["eval", "-m", "all", d / "train.txt", d / "pairs.pred", d / "map.pred"])
    lines = [f"{1 + (q + t) % 3} qid:{q} 1:{rng.random():.3f} 2:{rng.random():.3f}"
             for q in range(1, 6) for t in range(4)]
    (d / "tags.txt").write_text("\n".join(lines) + "\n")  # tags of short sequences: the built-in problems
    for problem in ("multiclass", "hmm"):
        _run(["learn", "--problem", problem, "-c", "1", "-v", "0", d / "tags.txt", d / f"{problem}.model"])
        _run(["classify", d / "tags.txt", d / f"{problem}.model", d / f"{problem}.pred"])
    # text of many words: the wide working set (train.loop_state.WideWorkingSet: K D >= 2^17 weights)
    (d / "words.txt").write_text("".join(f"{1 + i % 3} {1 + i}:0.5 {70000 - i}:1\n" for i in range(30)))
    _run(["learn", "--problem", "multiclass", "-c", "1000", "-v", "0", d / "words.txt", d / "words.model"])
    say(f"{'other paths':<16} {time.perf_counter() - start:6.1f} s")


def cached() -> str:
    """What the cache now holds for the worker's preload (preload.KERNEL_MODULES), and the modules it holds no
    kernel of (their first user compiles them)."""
    from svmstruct.worker import preload

    loaded = preload.kernels()
    modules = {kernel.__module__ for kernel, _ in loaded}
    missing = [name for name in preload.KERNEL_MODULES if name not in modules]
    return f"{len(loaded)} kernel signatures cached in {len(modules)} modules" + \
        (f"; none in {', '.join(missing)}" if missing else "")


def _installed_elsewhere() -> bool:
    """`python -m svmstruct.worker.warmup` run where a source checkout of svmstruct sits (the current directory is
    first on sys.path) while another copy is installed: the installed copy is the one to compile."""
    import importlib.util
    import os

    import svmstruct

    here = os.path.dirname(os.path.dirname(os.path.abspath(svmstruct.__file__)))
    if not sys.path or os.path.abspath(sys.path[0] or ".") != here:
        return False
    saved_path, saved_module = sys.path[:], sys.modules.pop("svmstruct")
    try:
        del sys.path[0]
        spec = importlib.util.find_spec("svmstruct")  # through every finder (an editable install's too)
    finally:
        sys.path[:] = saved_path
        sys.modules["svmstruct"] = saved_module
    return spec is not None and spec.origin is not None and os.path.dirname(os.path.dirname(spec.origin)) != here


def main() -> None:
    if _installed_elsewhere():  # the same command from a neutral directory imports the installed copy
        import os

        os.chdir("/")
        os.execv(sys.executable, [sys.executable, "-m", "svmstruct.worker.warmup"])
    start = time.perf_counter()
    print("svmstruct: compiling and caching the numba kernels (once per installation)", file=sys.stderr)
    warm_up(lambda line: print(f"  {line}", file=sys.stderr))
    print(f"svmstruct: {cached()}", file=sys.stderr)
    print(f"svmstruct: done in {time.perf_counter() - start:.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
