"""Training on Dask (svmstruct.train.distributed): the 1.2M-document synthetic set of bench-big split into 8
shards of whole queries, `pairs -c 1` (--float32 --dense) on local clusters of 1 worker x 1 thread,
2 workers x 1 thread and 1 worker x 2 threads, against the single-process run in the same benchmark.

Per configuration: seconds to read the shards on the workers and build their problems, iterations, time
per iteration, the payload bytes sent and received per iteration (w out; evaluations and cutting planes
back), the driver's peak resident memory (it holds no data: the loop, the QP and Dask's scheduler) against
the size of one shard, the workers' peak memory, and the objective against the single-process one.
Then a model of the time per iteration, T = k L + D t / P (k calls per iteration, L a call's round trip to
all shards, D documents, t seconds per document and iteration on one core, P cores in use), fitted on
the first run, checked on the others and extrapolated (stated as such) to more workers.

The data is generated once with ../shared/tools/make_synthetic_ltr.py (1.7 GB) if absent.
Usage: python scripts/bench_dask.py [--shared ../shared] [--file exp/big/synth.txt] [--out exp/dask]
                                    [--shards 8] [--configs 1x1,2x1,1x2]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("SVMSTRUCT_RESIDENT", "0")  # each command's own process is timed (svmstruct.worker.resident)

ROOT = Path(__file__).resolve().parents[1]


def split(path: Path, shards: int, out: Path) -> list:
    """The file as `shards` files of consecutive whole queries, about equal in lines (made once)."""
    files = [out / f"shard-{i}.txt" for i in range(shards)]
    if all(f.exists() for f in files):
        return files
    out.mkdir(parents=True, exist_ok=True)
    with open(path, "rb") as f:
        lines = sum(1 for _ in f)
    per_shard = -(-lines // shards)
    with open(path, "rb") as f:
        index, written, previous = 0, 0, None
        sink = open(str(files[0]) + ".partial", "wb")
        for line in f:
            qid = line.split(maxsplit=2)[1]
            if qid != previous and written >= per_shard * (index + 1) and index + 1 < shards:
                sink.close()
                index += 1
                sink = open(str(files[index]) + ".partial", "wb")
            previous = qid
            sink.write(line)
            written += 1
        sink.close()
    for f in files:
        os.replace(str(f) + ".partial", f)
    return files


def one_configuration(files: list, workers: int, threads: int) -> dict:
    """Runs in a child process (its peak memory is the driver's): train on a local cluster."""
    from svmstruct import api, training
    from svmstruct.train import distributed

    loss, opts = api.resolve_loss("pairs")
    client, close, threads = distributed.client_for(workers=workers, threads=threads)
    try:
        start = time.perf_counter()
        cluster = distributed.Cluster(client, [str(f) for f in files], single_precision=True, layout="dense",
                                      threads=threads)
        read = time.perf_counter() - start
        prepared = {}

        def mark(ready):
            prepared["seconds"] = time.perf_counter() - start
            prepared["traffic"] = (cluster.traffic.calls, cluster.traffic.sent, cluster.traffic.received)

        trained = next(training.train_grid(distributed.ClusterSource(cluster), loss, opts, api.Settings([1.0]),
                                           on_prepared=mark))
        total = time.perf_counter() - start
        calls0, sent0, received0 = prepared["traffic"]
        result = trained.result
        traffic = (cluster.traffic.calls, cluster.traffic.sent, cluster.traffic.received)
        t = time.perf_counter()
        for _ in range(50):
            cluster.call("accept", 0.0)  # a call to every shard with no payload and no work: the round trip
        latency = (time.perf_counter() - t) / 50

        def peak():
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        worker_peaks = list(client.run(peak).values())
    finally:
        close()
    it = result.iterations
    return dict(workers=workers, threads=threads, read=read, build=prepared["seconds"] - read,
                train=result.seconds, total=total, iterations=it, per_iteration=result.seconds / it,
                calls_per_iteration=(traffic[0] - calls0) / it / len(files),
                sent_per_iteration=(traffic[1] - sent0) / it,
                received_per_iteration=(traffic[2] - received0) / it,
                primal=result.primal, latency=latency,
                driver_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                worker_mb=max(worker_peaks))


def single_process(path: Path) -> dict:
    import numpy as np

    from svmstruct import api
    from svmstruct.io import data

    start = time.perf_counter()
    dataset = data.read_svmlight(str(path), dtype=np.float32, layout="dense")
    read = time.perf_counter() - start
    trained = api.fit(dataset, loss="pairs", C=1.0)
    return dict(read=read, train=trained.result.seconds, total=time.perf_counter() - start,
                iterations=trained.result.iterations, per_iteration=trained.result.seconds / trained.result.iterations,
                primal=trained.result.primal, mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def label(run: dict) -> str:
    workers, threads = run["workers"], run["threads"]
    return f"{workers} worker{'s' * (workers > 1)} x {threads} thread{'s' * (threads > 1)}"


def child(kind: str, *args) -> dict:
    """A configuration in a fresh process, so that each peak memory is its own."""
    run = subprocess.run([sys.executable, __file__, "--child", kind, *args], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(run.stderr[-3000:])
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=str(ROOT.parent / "shared"))
    parser.add_argument("--file", default=str(ROOT / "exp" / "big" / "synth.txt"))
    parser.add_argument("--out", default=str(ROOT / "exp" / "dask"))
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--configs", default="1x1,2x1,1x2", help="workers x threads per worker, comma-separated")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "single":
            print(json.dumps(single_process(Path(rest[0]))))
        else:
            workers, threads = map(int, rest[0].split("x"))
            print(json.dumps(one_configuration([Path(f) for f in rest[1:]], workers, threads)))
        return
    data, out = Path(args.file), Path(args.out)
    sys.path.insert(0, str(ROOT / "scripts"))
    from experiment import synthetic_ltr  # here: the measured child processes do not import it (nor scipy.stats)

    synthetic_ltr(data, 10000, Path(args.shared))
    files = split(data, args.shards, out)
    shard_mb = max(f.stat().st_size for f in files) / 2**20
    single = child("single", str(data))
    runs = [child("cluster", config, *map(str, files)) for config in args.configs.split(",")]
    lines = [f"# make bench-dask: `pairs -c 1` on {data.name} ({data.stat().st_size / 2**30:.2f} GB) in "
             f"{len(files)} shards (largest {shard_mb:.0f} MB), --float32 --dense, {os.cpu_count()} cores",
             "",
             "| run | read+build s | train s | iterations | s/iteration | calls/iteration/shard | payload out/in "
             "per iteration | driver peak MB | worker peak MB | primal (rel. to 1 process) |",
             "|---|---|---|---|---|---|---|---|---|---|",
             f"| 1 process | {single['read']:.1f} | {single['train']:.2f} | {single['iterations']} | "
             f"{single['per_iteration']:.3f} | - | - | {single['mb']:.0f} | - | {single['primal']:.6f} |"]
    for r in runs:
        lines.append(f"| {label(r)} | "
                     f"{r['read'] + r['build']:.1f} | {r['train']:.2f} | {r['iterations']} | "
                     f"{r['per_iteration']:.3f} | "
                     f"{r['calls_per_iteration']:.1f} | {r['sent_per_iteration'] / 1024:.1f} KB / "
                     f"{r['received_per_iteration'] / 1024:.1f} KB | {r['driver_mb']:.0f} | {r['worker_mb']:.0f} | "
                     f"{r['primal'] / single['primal'] - 1:+.1e} |")
    # the model T = k L + D t / P, fitted on the first run (P = workers x threads: cores in use)
    base = runs[0]
    k = base["calls_per_iteration"]
    documents = 1_200_000

    def cores(r):
        return r["workers"] * r["threads"]

    t = max(base["per_iteration"] - k * base["latency"], 0.0) * cores(base) / documents
    lines += ["", f"Model of the time per iteration: T = k L + D t / P with k = {k:.1f} calls to every shard per "
              f"iteration, L = {base['latency'] * 1000:.1f} ms for a call to all {len(files)} shards (measured), "
              f"D = {documents} documents, P cores in use (workers x threads) and t = {t * 1e9:.0f} ns per "
              f"document and iteration on one core (fitted on the {base['workers']}x{base['threads']} run)."]
    for r in runs[1:]:
        predicted = k * r["latency"] + documents * t / cores(r)
        lines.append(f"- {label(r)}: predicted {predicted:.3f} s, measured "
                     f"{r['per_iteration']:.3f} s per iteration.")
    lines.append("- Extrapolated (not measured: one core per worker, L as measured here, which a real network "
                 "raises): " + ", ".join(f"{w} workers {k * base['latency'] + documents * t / w:.3f} s"
                                          for w in (4, 8, 32)) + " per iteration; at 12M documents "
                 + ", ".join(f"{w} workers {k * base['latency'] + 10 * documents * t / w:.2f} s" for w in (8, 32, 128))
                 + ".")
    lines.append(f"- The driver's peak memory against one shard's file: {max(r['driver_mb'] for r in runs):.0f} MB vs "
                 f"{shard_mb:.0f} MB.")
    text = "\n".join(lines) + "\n"
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text(text)


if __name__ == "__main__":
    main()
