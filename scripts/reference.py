"""The original programs' reference runs in ../shared/reference and how to replay them: the one place
that knows their names, files and logged numbers (used by tests/test_reference_parity.py and the
parity/speed scripts). Set the shared folder with SVMSTRUCT_SHARED or the scripts' --shared."""
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SHARED = Path(os.environ.get("SVMSTRUCT_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
DATA = SHARED / "data"
REFERENCE = SHARED / "reference"

PERF_LOSS_CODES = {"err": "2", "f1": "1", "prbep": "3", "preck": "4", "reck": "5", "roc": "10"}


def use_shared(path) -> None:
    """Point this module at another shared folder (a script's --shared)."""
    global SHARED, DATA, REFERENCE
    SHARED = Path(path)
    DATA, REFERENCE = SHARED / "data", SHARED / "reference"


def require_shared() -> None:
    """Exit with one clear line when the shared reference data is absent (scripts and make targets)."""
    if not REFERENCE.is_dir() or not DATA.is_dir():
        sys.exit(f"error: this needs the shared data and reference runs at {SHARED} (../shared beside the "
                 "repository, or SHARED=... / --shared)")


@dataclass
class Case:
    name: str
    loss: str
    C: float
    epsilon: float
    train: list
    test: Path

    def log_value(self, key: str) -> float:
        text = (REFERENCE / f"{self.name}.learn.log").read_text()
        return float(re.search(rf"{key}=([-\d.eE+]+)", text).group(1))

    @property
    def pval(self) -> float:
        return self.log_value("pval")

    @property
    def dval(self) -> float:
        return self.log_value("dval")

    @property
    def wall_s(self) -> float:
        last = (REFERENCE / f"{self.name}.learn.log").read_text().strip().splitlines()[-1]
        return float(last.split()[1])

    @property
    def pred(self) -> np.ndarray:
        return np.loadtxt(REFERENCE / f"{self.name}.pred")

    @property
    def model(self) -> Path:
        return REFERENCE / f"{self.name}.model"


def case(name: str) -> Case:
    """Parse a reference case name (e.g. corn-perf-err-c100, mq2008-S1-rank-l2-c10) into its run."""
    parts = name.split("-")
    C = float(parts[-1][1:])
    if parts[0] in ("corn", "acq", "earn"):
        train = [DATA / "reuters" / f"{parts[0]}.train.svm"]
        test = DATA / "reuters" / f"{parts[0]}.test.svm"
    elif name.startswith("mq2008-S1"):
        train, test = [DATA / "mq2008" / "S1.txt"], DATA / "mq2008" / "S5.txt"
    elif name.startswith("mq2008-fold1"):
        train, test = [DATA / "mq2008" / f"S{k}.txt" for k in (1, 2, 3)], DATA / "mq2008" / "S5.txt"
    elif name.startswith("yahoo"):
        train, test = [DATA / "yahoo-sample" / "train.txt"], DATA / "yahoo-sample" / "test.txt"
    else:
        raise ValueError(name)
    if "-perf-" in name:
        loss = PERF_LOSS_CODES[parts[-2]]
    else:
        loss = "pairs-avg" if "-l2-" in name else "pairs"
    return Case(name, loss, C, 0.001 if "-perf-" in name else 0.0001, train, test)


def all_cases():
    """Every reference run's name (except the scale case)."""
    return sorted(p.name[: -len(".model")] for p in REFERENCE.glob("*.model") if not p.name.startswith("synth"))


def train_case(c):
    """Our training of a reference case: (Model, TrainResult)."""
    from svmstruct import api
    from svmstruct.io import data

    dataset = data.read_svmlight(str(c.train[0])) if len(c.train) == 1 else concatenated(c.train)
    trained = api.fit(dataset, c.loss, C=c.C, epsilon=c.epsilon)
    return trained, trained.result


def concatenated(paths):
    from svmstruct.dataset import arrays
    from svmstruct.io import data

    return arrays.concatenate([data.read_svmlight(str(p)) for p in paths])


def classify_log(name):
    text = (REFERENCE / f"{name}.classify.log").read_text()
    return {k: float(v) for k, v in re.findall(r"^(Accuracy|F1|PRBEP)\s*:\s*([\d.]+)", text, re.M)}


def certified_weight_distance(c, trained, result):
    """(|w_ours - w_ref|, sqrt(2 gap_ours) + sqrt(2 gap_ref)) over all weights, bias weight included.

    The primal objective is 1-strongly convex, so a w whose primal exceeds a dual value by g lies within
    sqrt(2 g) of the unique optimum: two correct runs are at most the sum apart."""
    from svmstruct import model

    reference = model.load_model(str(c.model))
    width = max(len(trained.w), len(reference.w))
    ours, theirs = np.zeros(width + 1), np.zeros(width + 1)
    ours[: len(trained.w)] = trained.w
    theirs[: len(reference.w)] = reference.w
    if "-perf-" in c.name:  # svm_perf folds the bias weight into b = -w_bias (bias feature 1)
        ours[-1], theirs[-1] = -trained.threshold, -reference.threshold
    bound = np.sqrt(2 * max(result.primal - result.dual, 0)) + np.sqrt(2 * max(c.pval - c.dval, 0))
    return float(np.linalg.norm(ours - theirs)), float(bound)


# svm_perf's kernel runs (reference/kernel/README.md), as learn's options: loss, C, kernel, how the basis is chosen
# (None: CPSP, -w 9, which finds its own basis: replayed over the basis it found, its SV lines as --f)
KERNEL_OPTIONS = {
    "mq2008-S1-perf-err-rbf-i1-k100": ("errorrate", "10", ["-t", "2", "-g", "1"], None),
    "mq2008-S1-perf-roc-rbf-chol-k100": ("rocarea", "10", ["-t", "2", "-g", "1"], ["--t", "2", "--k", "100"]),
    "mq2008-S1-perf-err-poly-d2-rand-k100": ("errorrate", "10", ["-t", "1", "-d", "2", "-s", "1", "-r", "1"],
                                             ["--t", "1", "--k", "100"]),
    "mq2008-S1-perf-f1-sigmoid-rand-k100": ("f1", "10", ["-t", "3", "-s", "0.1", "-r", "0"],
                                            ["--t", "1", "--k", "100"]),
    "corn-perf-f1-rbf-rand-k200": ("f1", "100", ["-t", "2", "-g", "1"], ["--t", "1", "--k", "200"]),
}


@dataclass
class KernelCase:
    name: str

    @property
    def folder(self) -> Path:
        return REFERENCE / "kernel"

    @property
    def train(self) -> Path:
        return DATA / ("reuters/corn.train.svm" if self.name.startswith("corn") else "mq2008/S1.txt")

    @property
    def test(self) -> Path:
        return DATA / ("reuters/corn.test.svm" if self.name.startswith("corn") else "mq2008/S5.txt")

    @property
    def model(self) -> Path:
        return self.folder / f"{self.name}.model"

    @property
    def pred(self) -> Path:
        return self.folder / f"{self.name}.pred"

    def log_value(self, pattern: str) -> float:
        return float(re.search(pattern, (self.folder / f"{self.name}.learn.log").read_text()).group(1))

    @property
    def pval(self) -> float:
        return self.log_value(r"pval=([0-9.]+)")

    @property
    def wall_s(self) -> float:
        return self.log_value(r"wall_s ([0-9.]+)")

    @property
    def cpu_s(self) -> float:
        return self.log_value(r"Runtime in cpu-seconds: ([0-9.]+)")

    def learn_args(self, folder: Path) -> list:
        """learn's arguments for this run, before TRAIN_FILE MODEL_FILE (a CPSP run's basis file written
        into folder)."""
        loss, C, kernel, basis_options = KERNEL_OPTIONS[self.name]
        basis = self.train
        if basis_options is None:
            sv_lines = self.model.read_text().splitlines()[11:]
            basis = folder / f"{self.name}.basis.svm"
            basis.write_text("".join("0 " + " ".join(line.split("#")[0].split()[1:]) + "\n" for line in sv_lines))
            basis_options = ["--k", str(len(sv_lines))]
        return ["-l", loss, "-c", C, "-e", "0.01", "--b", "0", *kernel, *basis_options, "--f", str(basis)]
