"""The synthetic diversity data of Yue & Joachims 2008 (section 6), deterministic for a seed.

Each candidate set has `--docs` documents covering up to `--max-topics` subtopics; each subtopic has a
word distribution over a vocabulary of its own, drawn from the `--words` words, whose size is
log-uniform between the two numbers of `--support` (default 30..2000: some subtopics use a narrow
jargon, others a broad vocabulary; `--support 200,200` makes every subtopic equally broad); each
document covers one to three subtopics (popular subtopics more often) and samples `--length` words
independently from the mixture of its subtopics' distributions and the candidate set's background
distribution.
Writes PREFIX.svm (SVMlight: `0 qid:SET word:tf ... # docid`) and PREFIX.qrels (`SET subtopic docid 1`).
Usage: python scripts/make_div_synthetic.py PREFIX [--sets 100] [--docs 100] [--max-topics 25]
       [--words 5000] [--length 300] [--support 30,2000] [--seed 0]
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("prefix")
    ap.add_argument("--sets", type=int, default=100)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--max-topics", type=int, default=25)
    ap.add_argument("--words", type=int, default=5000)
    ap.add_argument("--length", type=int, default=300)
    ap.add_argument("--support", default="30,2000", help="MIN,MAX size of a subtopic's vocabulary")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    smallest, largest = (min(a.words, int(v)) for v in a.support.split(","))
    rng = np.random.default_rng(a.seed)
    with open(a.prefix + ".svm", "w") as svm, open(a.prefix + ".qrels", "w") as qrels:
        for s in range(1, a.sets + 1):
            n_topics = int(rng.integers(max(2, a.max_topics // 5), a.max_topics + 1))
            background = rng.dirichlet(np.full(a.words, 0.05))
            topics = []
            for _ in range(n_topics):
                size = smallest if smallest == largest else int(np.exp(rng.uniform(np.log(smallest), np.log(largest))))
                support = rng.choice(a.words, size=size, replace=False)
                dist = np.zeros(a.words)
                dist[support] = rng.dirichlet(np.full(len(support), 0.3))
                topics.append(dist)
            popularity = 1.0 / np.arange(1, n_topics + 1)
            popularity /= popularity.sum()
            for d in range(a.docs):
                covered = rng.choice(n_topics, size=int(rng.integers(1, min(3, n_topics) + 1)), replace=False,
                                     p=popularity)
                mixture = 0.5 * background + 0.5 * np.mean([topics[t] for t in covered], axis=0)
                counts = rng.multinomial(a.length, mixture)
                words = np.flatnonzero(counts)
                docid = f"s{s}d{d}"
                svm.write(f"0 qid:{s} " + " ".join(f"{w + 1}:{counts[w]}" for w in words) + f" # {docid}\n")
                for t in sorted(covered):
                    qrels.write(f"{s} t{t} {docid} 1\n")


if __name__ == "__main__":
    main()
