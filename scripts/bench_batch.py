"""A batch of experiments as users run them: the README's Makefile pattern, timed.

5 MQ2008 folds x `pairs`, `map`, `ndcg@10` x C in {0.1, 1, 10}: learn, classify and eval per run (45 runs,
135 processes), written as a Makefile into exp/batch and run with `make -j1` and `make -j2` on an idle
machine, and with -j1 beside two CPU hogs. Where ANCHOR_BIN holds svm_rank_learn, svm_rank_classify and
trec_eval, the `pairs` runs are also made with them (the same -c; trec_eval on the qrels and a TREC run of
svm_rank's predictions), next to ours alone on the same 15 runs; without them that column is skipped.
Every batch of ours runs twice: each command in its own process (SVMSTRUCT_RESIDENT=0) and as users run it,
through the resident worker that serves inside make (svmstruct.worker.resident), started by the batch's first
command (a fresh socket directory each time, so its start-up is in the time) and stopped after the batch.
Usage: python scripts/bench_batch.py [--shared ../shared] [--out exp/batch]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from svmstruct.worker import control

import experiment

LOSSES = ["pairs", "map", "ndcg@10"]
CS = ["0.1", "1", "10"]

MAKEFILE = """\
# the README's experiment pattern: data/FOLD/{train,vali,test}.txt -> out/FOLD/LOSS-C.{model,pred,eval}
SVM ?= svmstruct
FOLDS := Fold1 Fold2 Fold3 Fold4 Fold5
LOSSES := pairs map ndcg@10
CS := 0.1 1 10
EVALS := $(foreach f,$(FOLDS),$(foreach l,$(LOSSES),$(foreach c,$(CS),out/$(f)/$(l)-$(c).eval)))
ANCHOR_EVALS := $(foreach f,$(FOLDS),$(foreach c,$(CS),anchor/$(f)/rank-$(c).eval))
OURS_PAIRS := $(foreach f,$(FOLDS),$(foreach c,$(CS),out/$(f)/pairs-$(c).eval))

all: $(EVALS)
pairs: $(OURS_PAIRS)
anchor: $(ANCHOR_EVALS)
.SECONDARY:

out/%.model:
\t@mkdir -p $(@D)
\t$(SVM) learn -l $(word 1,$(subst -, ,$(*F))) -c $(word 2,$(subst -, ,$(*F))) -v 0 data/$(*D)/train.txt $@
out/%.pred: out/%.model
\t$(SVM) classify data/$(*D)/test.txt $< $@
out/%.eval: out/%.pred
\t$(SVM) eval -m map -m ndcg@10 data/$(*D)/test.txt $< > $@

anchor/%.model:
\t@mkdir -p $(@D)
\t$(ANCHOR_BIN)/svm_rank_learn -c $(word 2,$(subst -, ,$(*F))) -e 0.001 data/$(*D)/train-by-qid.txt $@ > /dev/null
anchor/%.pred: anchor/%.model
\t$(ANCHOR_BIN)/svm_rank_classify data/$(*D)/test.txt $< $@ > /dev/null
anchor/%.eval: anchor/%.pred
\tawk '{d=$$0; sub(/.*docid = /,"",d); sub(/ .*/,"",d); split($$2,q,":"); print q[2], "0", d, $$1}' \\
\t    data/$(*D)/test.txt > $(@D)/qrels-$(*F)
\tpaste -d' ' $< data/$(*D)/test.txt | awk '{d=$$0; sub(/.*docid = /,"",d); sub(/ .*/,"",d); \\
\t    split($$3,q,":"); print q[2], "Q0", d, NR, $$1, "svm_rank"}' > $(@D)/run-$(*F)
\t$(ANCHOR_BIN)/trec_eval -m map -m ndcg_cut.10 $(@D)/qrels-$(*F) $(@D)/run-$(*F) > $@
"""


def folds(shared: Path, out: Path) -> None:
    for name, train, vali, test in experiment.mq2008_folds(shared):
        folder = out / "data" / name.split()[1].replace("F", "Fold")
        folder.mkdir(parents=True, exist_ok=True)
        for part, files in (("train", train), ("vali", vali), ("test", test)):
            target = folder / f"{part}.txt"
            if not target.exists():
                target.write_bytes(b"".join(Path(f).read_bytes() for f in files))
        by_qid = folder / "train-by-qid.txt"  # svm_rank wants increasing qids (a fold's train part is S_k..S_k+2)
        if not by_qid.exists():
            lines = (folder / "train.txt").read_bytes().splitlines(keepends=True)
            by_qid.write_bytes(b"".join(sorted(lines, key=lambda line: int(line.split()[1][4:]))))


def timed_make(out: Path, target: str, jobs: int, svm: str, env_extra: dict | None = None) -> float:
    for folder in ("out", "anchor"):
        shutil.rmtree(out / folder, ignore_errors=True)
    start = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k != "SVMSTRUCT_RESIDENT"}  # make's default: the worker serves
    run = subprocess.run(["make", "-s", f"-j{jobs}", target, f"SVM={svm}"], cwd=out, capture_output=True, text=True,
                         env={**env, **(env_extra or {})})
    if run.returncode:
        sys.exit(run.stderr[-3000:])
    return time.perf_counter() - start


def both(out: Path, target: str, jobs: int, svm: str) -> tuple[float, float]:
    """(seconds with every command in its own process, through a resident worker started by the batch)."""
    own = timed_make(out, target, jobs, svm, {"SVMSTRUCT_RESIDENT": "0"})
    with tempfile.TemporaryDirectory(prefix="svmr") as sockets:
        through = timed_make(out, target, jobs, svm, {"SVMSTRUCT_RESIDENT_DIR": sockets})
        control.stop_servers(sockets, every=True)
    return own, through


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared"))
    parser.add_argument("--out", default="exp/batch")
    args = parser.parse_args()
    out = Path(args.out)
    folds(Path(args.shared), out)
    (out / "Makefile").write_text(MAKEFILE)
    svm = str(Path(sys.executable).with_name("svmstruct"))
    runs = len(LOSSES) * len(CS) * 5
    print(f"{runs} runs (learn, classify, eval each) on MQ2008's 5 folds: {', '.join(LOSSES)} x C {', '.join(CS)}")
    one = both(out, "all", 1, svm)
    two = both(out, "all", 2, svm)
    with experiment.CpuHogs():
        busy = both(out, "all", 1, svm)
    for way, i in (("own processes", 0), ("resident worker", 1)):
        print(f"  {way:<16} make -j1 {one[i]:6.1f} s ({one[i] / runs:.2f} s a run)   make -j2 {two[i]:6.1f} s "
              f"({one[i] / two[i]:.2f}x faster)   make -j1 beside two CPU hogs {busy[i]:6.1f} s")
    anchor = os.environ.get("ANCHOR_BIN")
    needed = ("svm_rank_learn", "svm_rank_classify", "trec_eval")
    pairs = both(out, "pairs", 2, svm)
    shown = f"own processes {pairs[0]:.1f} s, resident worker {pairs[1]:.1f} s"
    if anchor and all((Path(anchor) / b).exists() for b in needed):
        theirs = timed_make(out, "anchor", 2, svm, {"ANCHOR_BIN": anchor})
        print(f"  the 15 pairs runs, make -j2: svmstruct {shown} ({pairs[0] / theirs:.2f}x, {pairs[1] / theirs:.2f}x); "
              f"svm_rank + trec_eval {theirs:.1f} s")
    else:
        print(f"  the 15 pairs runs, make -j2: svmstruct {shown} (svm_rank + trec_eval: ANCHOR_BIN does not hold "
              f"{', '.join(needed)}; skipped)")

if __name__ == "__main__":
    main()
