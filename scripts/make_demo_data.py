"""Cut the small example data shipped in data/ from the shared development data (run once by a developer).

data/mq2008-small/{train,vali,test}.txt: the first 60 / 20 / 40 queries of MQ2008 S1 / S4 / S5 (LETOR 4.0).
"""
import sys
from pathlib import Path

SHARED = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared")
OUT = Path(__file__).resolve().parents[1] / "data" / "mq2008-small"


def first_queries(path: Path, n: int) -> str:
    kept, seen = [], []
    for line in path.read_text().splitlines(keepends=True):
        qid = line.split()[1]
        if qid not in seen:
            if len(seen) == n:
                break
            seen.append(qid)
        kept.append(line)
    return "".join(kept)


OUT.mkdir(parents=True, exist_ok=True)
for name, part, n in (("train", "S1", 60), ("vali", "S4", 20), ("test", "S5", 40)):
    (OUT / f"{name}.txt").write_text(first_queries(SHARED / "data" / "mq2008" / f"{part}.txt", n))
