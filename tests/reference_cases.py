"""The original programs' reference runs in ../shared/reference: options, files and logged numbers."""
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from conftest import DATA, REFERENCE

PERF_LOSS_CODES = {"err": "2", "f1": "1", "prbep": "3", "preck": "4", "reck": "5", "roc": "10"}


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
    return sorted(p.name[: -len(".model")] for p in REFERENCE.glob("*.model") if not p.name.startswith("synth"))
