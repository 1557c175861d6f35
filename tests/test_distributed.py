"""Training on a Dask cluster (svmstruct.train.distributed): a local cluster of 2 worker processes on the
loopback interface; the same objective and model as one process, a lost worker recovered from."""
import os
import signal

import numpy as np
import pytest
from helpers import one_line_error

from svmstruct import api, training
from svmstruct.dataset import arrays
from svmstruct.errors import InputError, UsageError
from svmstruct.io import data
from svmstruct.train import loop

from conftest import ROOT, invoke, invoke_here

pytest.importorskip("distributed")

from svmstruct.train import address, distributed  # noqa: E402

RANKING = ROOT / "data" / "mq2008-small" / "train.txt"
DIV = ROOT / "data" / "div" / "small"


def split_by_query(path, shards: int, out) -> list:
    """The file as `shards` files of whole queries (query i to shard i mod shards), in order."""
    files = [open(out / f"shard-{i}.txt", "w") for i in range(shards)]
    previous, index = None, -1
    with open(path) as f:
        for line in f:
            qid = line.split()[1]
            if qid != previous:
                index, previous = index + 1, qid
            files[index % shards].write(line)
    for f in files:
        f.close()
    return [str(out / f"shard-{i}.txt") for i in range(shards)]


@pytest.fixture(scope="module")
def client():
    client, close, _ = distributed.client_for(workers=2, threads=1)
    yield client
    close()


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    ranking, div = tmp_path_factory.mktemp("ranking"), tmp_path_factory.mktemp("div")
    return {"ranking": split_by_query(RANKING, 3, ranking), "div": split_by_query(f"{DIV}.svm", 2, div)}


def train_both(client, files, name, C, options=None, normalize="none", progress=None, kernel=None):
    loss, opts = api.resolve_loss(name, options or {})
    local = api.train_loss(loss, opts, arrays.concatenate([data.read_svmlight(f) for f in files]), C,
                           normalize=normalize, kernel=kernel)
    cluster = distributed.Cluster(client, files, threads=1)
    callbacks = [loop.Progress(progress)] if progress else []
    remote = next(training.train_grid(distributed.ClusterSource(cluster, kernel), loss, opts,
                                      api.Settings([C], normalize=normalize), callbacks))
    return local, remote, cluster


def assert_same_training(local, remote):
    assert remote.result.converged
    assert remote.result.primal == pytest.approx(local.result.primal, rel=1e-6)
    assert remote.result.dual == pytest.approx(local.result.dual, rel=1e-6)
    assert np.abs(remote.w - local.w).max() <= 1e-6 * np.abs(local.w).max()
    assert remote.threshold == pytest.approx(local.threshold, rel=1e-6, abs=1e-12)
    assert remote.header["documents"] == local.header["documents"]
    assert remote.header["examples"] == local.header["examples"]


@pytest.mark.parametrize("name, C, options, normalize", [
    ("pairs", 1.0, {}, "none"), ("map", 10.0, {}, "none"), ("ndcg@10", 10.0, {}, "none"),
    ("div", 1.0, {"subtopics": f"{DIV}.qrels", "k": 3}, "none"), ("errorrate", 1.0, {"per_query": True}, "none"),
    ("pairs", 1.0, {}, "global"), ("map", 10.0, {}, "query"), ("combo:ndcg@10,mrr,map", 10.0, {}, "none"),
])
@pytest.mark.slow
def test_sharded_training_equals_one_process(client, shards, name, C, options, normalize):
    """pairs, map, ndcg@10 (a latent target), div (its features built per candidate set), a per-query svm_perf
    loss and combo on shards of whole queries: the single-process objective to 1e-6 relative, the same
    iterations and weights equal to round-off (the shards' sums are added in another order)."""
    files = shards["div" if name == "div" else "ranking"]
    local, remote, cluster = train_both(client, files, name, C, options, normalize)
    assert_same_training(local, remote)
    assert remote.result.iterations == local.result.iterations
    assert remote.header.get("normalize") == local.header.get("normalize")
    assert cluster.traffic.calls > 0 and cluster.traffic.recoveries == 0


STRUCT = ROOT.parent / "shared" / "reference" / "struct"


def struct_shards(out) -> dict:
    """digits in two shards, class 10 only in the second (the first settles 9 classes: merged, 10); the OCR
    letters' first 120 words in two shards of whole words."""
    digits = (STRUCT / "digits.train.svm").read_text().splitlines(keepends=True)[:400]
    (out / "d0.svm").write_text("".join(line for line in digits if not line.startswith("10 ")))
    (out / "d1.svm").write_text("".join(line for line in digits if line.startswith("10 ")))
    words: dict = {}
    for line in (STRUCT / "letters.train.hmm").read_text().splitlines(keepends=True):
        words.setdefault(line.split()[1], []).append(line)
    chosen = list(words.values())[:120]
    (out / "l0.hmm").write_text("".join(line for word in chosen[:70] for line in word))
    (out / "l1.hmm").write_text("".join(line for word in chosen[70:] for line in word))
    return {"multiclass": [str(out / "d0.svm"), str(out / "d1.svm")], "hmm": [str(out / "l0.hmm"),
                                                                            str(out / "l1.hmm")]}


@pytest.mark.parametrize("name, C, options", [("multiclass", 100.0, {}), ("hmm", 10.0, {"transitions": 2}),
                                              ("hmm", 10.0, {"emissions": 1})])
def test_a_problem_on_shards_equals_one_process(client, tmp_path, name, C, options):
    """A structured problem's examples in shards of whole examples (distributed.ProblemShard): each shard
    settles its options, the problem merges them (the largest number of classes), and the 1-slack loop over the
    shards' summed cuts gives the one-process objective to 1e-6, the same iterations and options."""
    if not STRUCT.exists():
        pytest.skip("needs ../shared/reference/struct")
    from svmstruct import registry

    files = struct_shards(tmp_path)[name]
    loss = registry.problem(name)
    opts = loss.resolve({"rescaling": 2, **options})
    one = loss.instance(opts)
    local = next(training.train_grid(training.ExamplesSource(one, one.read_all(files)), loss, opts,
                                     api.Settings([C], 0.5 if name == "hmm" else 0.01)))
    structured = loss.instance(opts)
    cluster = distributed.problem_cluster(client, files, structured, 1)
    remote = next(training.train_grid(distributed.ProblemClusterSource(cluster, structured), loss, opts,
                                      api.Settings([C], 0.5 if name == "hmm" else 0.01)))
    assert remote.result.primal == pytest.approx(local.result.primal, rel=1e-6)
    assert remote.result.iterations == local.result.iterations
    assert remote.options == local.options
    assert np.abs(remote.w - local.w).max() <= 1e-6 * np.abs(local.w).max()
    assert remote.header["examples"] == local.header["examples"]


def test_shards_that_settle_an_option_differently_are_told_apart():
    from svmstruct.problems.base import StructuredProblem

    merged = StructuredProblem().merge_settled([{"classes": 9, "features": 64, "kind": "a"},
                                                {"classes": 10, "features": 60, "kind": "a"}])
    assert merged == {"classes": 10, "features": 64, "kind": "a"}
    with pytest.raises(InputError, match="settle StructuredProblem's option kind differently"):
        StructuredProblem().merge_settled([{"kind": "a"}, {"kind": "b"}])


@pytest.mark.slow
def test_cli_learn_of_a_problem_on_a_local_cluster_writes_the_one_process_model(tmp_path):
    """`learn --problem multiclass --workers 2 SHARD...` (issue 53): the objective of `learn --problem multiclass
    SHARD...` to 1e-6, the model's classes settled over both shards."""
    if not STRUCT.exists():
        pytest.skip("needs ../shared/reference/struct")
    from svmstruct import model

    files = struct_shards(tmp_path)["multiclass"]
    one, two = tmp_path / "one.model", tmp_path / "two.model"
    assert invoke("learn", "--problem", "multiclass", "-c", "100", "-e", "0.01", *files, str(one)).returncode == 0
    run = invoke("learn", "--problem", "multiclass", "-c", "100", "-e", "0.01", "-v", "1", "--workers", "2", *files,
                 str(two))
    assert run.returncode == 0, run.stderr
    assert "Training set: 2 shards, 400 examples on 2 local workers, dimension 640" in run.stderr
    a, b = model.load_model(str(one)), model.load_model(str(two))
    assert float(b.header["primal"]) == pytest.approx(float(a.header["primal"]), rel=1e-6)
    assert b.options["classes"] == a.options["classes"] == "10"


@pytest.mark.parametrize("name, method", [("map", 1), ("pairs", 2)])
def test_kernel_training_on_shards_equals_one_process(client, shards, name, method):
    """learn -t on shards: the basis drawn from the documents of all shards in order (or by incomplete
    Cholesky over them) is the one-process basis; each shard maps its own documents; the same model."""
    from svmstruct.kernels.nystroem import Spec
    from svmstruct.kernels.table import Kernel

    spec = Spec(Kernel(2, 3, 0.5, 1.0, 1.0), size=30, method=method)
    local, remote, _ = train_both(client, shards["ranking"], name, 10.0, kernel=spec)
    assert remote.result.primal == pytest.approx(local.result.primal, rel=1e-6)
    assert np.array_equal(remote.kernel.basis.values, local.kernel.basis.values)
    assert np.abs(remote.kernel.coef - local.kernel.coef).max() <= 1e-5 * np.abs(local.kernel.coef).max()


@pytest.mark.slow
def test_a_worker_lost_mid_training_is_recovered(client, shards):
    """SIGKILL to the worker holding a shard at iteration 3: the shard is read again on a live worker,
    brought to the run's state and asked again; the model is the one of an undisturbed run."""
    killed = []

    def kill_at_third(row):
        if row["iteration"] == 3 and not killed:
            address = cluster_ref[0].actors[0]._address
            pid = client.run(os.getpid, workers=[address])[address]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    cluster_ref: list = []
    loss, opts = api.resolve_loss("map")
    local = api.train_loss(loss, opts, arrays.concatenate([data.read_svmlight(f) for f in shards["ranking"]]), 10.0)
    told: list = []
    cluster = distributed.Cluster(client, shards["ranking"], threads=1, on_reload=told.append)
    cluster_ref.append(cluster)
    remote = next(training.train_grid(distributed.ClusterSource(cluster), loss, opts, api.Settings([10.0]),
                                      [loop.Progress(kill_at_third)]))
    assert killed and cluster.traffic.recoveries >= 1
    assert told[0].startswith("lost the worker holding ") and "shard-0.txt" in told[0]
    assert_same_training(local, remote)
    client.wait_for_workers(2)


@pytest.mark.slow
def test_a_shard_lost_too_often_stops_training_without_a_model(client, shards, monkeypatch):
    """With no reload allowed, losing a worker is a DistributedError (the CLI's one line, exit 5)."""
    monkeypatch.setattr(distributed, "RETRIES", 0)
    cluster = distributed.Cluster(client, shards["ranking"], threads=1)
    loss, opts = api.resolve_loss("pairs")

    held: list = []  # the shards of the killed worker (after an earlier test's restart it may hold both)

    def kill_at_second(row):
        if row["iteration"] == 2:
            address = cluster.actors[1]._address
            held.extend(path for path, actor in zip(cluster.paths, cluster.actors) if actor._address == address)
            os.kill(client.run(os.getpid, workers=[address])[address], signal.SIGKILL)

    with pytest.raises(distributed.DistributedError, match="lost the worker holding ") as lost:
        next(training.train_grid(distributed.ClusterSource(cluster), loss, opts, api.Settings([1.0]),
                                 [loop.Progress(kill_at_second)]))
    assert any(f"lost the worker holding {path} " in str(lost.value) for path in held), (held, str(lost.value))
    assert any(path.endswith("shard-1.txt") for path in held)
    assert distributed.DistributedError("x").exit_code == 5
    client.wait_for_workers(2)


@pytest.mark.slow
def test_a_query_split_over_two_shards_is_refused(client, tmp_path):
    lines = RANKING.read_text().splitlines(keepends=True)
    (tmp_path / "a.txt").write_text("".join(lines[:5]))
    (tmp_path / "b.txt").write_text("".join(lines[5:10]))  # the first query goes on past line 5
    cluster = distributed.Cluster(client, [str(tmp_path / "a.txt"), str(tmp_path / "b.txt")], threads=1)
    loss, opts = api.resolve_loss("pairs")
    with pytest.raises(InputError, match="is in .*a.txt and in .*b.txt: every shard must hold whole queries"):
        next(training.train_grid(distributed.ClusterSource(cluster), loss, opts, api.Settings([1.0])))


@pytest.mark.slow
def test_cli_learn_on_a_local_cluster_writes_the_one_process_model(shards, tmp_path):
    """`learn --workers 2 SHARD...` (a cluster of its own) with a C grid chosen on validation data writes
    the model `learn SHARD...` writes, up to the last digits of the sums."""
    one, two = tmp_path / "one.model", tmp_path / "two.model"
    grid = ["-l", "map", "-c", "0.1,10", "--validate", str(ROOT / "data" / "mq2008-small" / "vali.txt")]
    assert invoke("learn", *grid, "-v", "0", *shards["ranking"], str(one)).returncode == 0
    run = invoke("learn", *grid, "--workers", "2", *shards["ranking"], str(two))
    assert run.returncode == 0, run.stderr
    assert "Cluster:" in run.stderr and "0 shards reloaded" in run.stderr and "Selected C 10" in run.stderr
    from svmstruct import model

    a, b = model.load_model(str(one)), model.load_model(str(two))
    assert a.header["C"] == b.header["C"] and a.header["validation_value"] == b.header["validation_value"]
    assert np.abs(a.w - b.w).max() <= 1e-9 * np.abs(a.w).max()
    assert b.header["train_file"] == "+".join(shards["ranking"])


def test_cli_refusals_before_any_cluster_starts(shards, tmp_path):
    out = tmp_path / "m.model"
    for args, message in [
        (["-l", "f1", "--workers", "2"], "loss f1 is a measure of the whole training set"),
        (["-l", "map", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "give one of them"),
        (["-l", "map", "--workers", "2", "-"], "'-' (stdin) cannot be one"),
    ]:
        run = invoke("learn", *args, *shards["ranking"], str(out))
        assert run.returncode == 2 and message in run.stderr and run.stderr.count("\n") == 1, run.stderr
        assert not out.exists()


def test_an_unreachable_scheduler_is_one_line(shards, tmp_path, monkeypatch):
    monkeypatch.setattr(distributed, "TIMEOUT", 2.0)
    out = tmp_path / "m.model"
    run = invoke_here("learn", "-l", "map", "--scheduler", "tcp://127.0.0.1:9", *shards["ranking"], str(out))
    assert run.returncode == 5 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in run.stderr
    assert run.stderr.count("\n") == 1 and not out.exists()


@pytest.mark.slow
def test_a_checkpointed_run_resumes_on_a_cluster(shards, tmp_path):
    """A run stopped after 3 iterations in one process continues on a local cluster from its checkpoint
    (the shards are restored from w_b and w_t) to the uninterrupted model."""
    from svmstruct import model

    state, first, resumed, whole = (str(tmp_path / n) for n in ("run.ckpt", "a.model", "b.model", "c.model"))
    common = ["learn", "-l", "ndcg@10", "-c", "10", "-v", "0"]
    assert invoke(*common, "-#", "3", "--checkpoint", state, *shards["ranking"], first).returncode == 0
    run = invoke(*common, "--workers", "2", "--checkpoint", state, "--resume", *shards["ranking"], resumed)
    assert run.returncode == 0, run.stderr
    assert invoke(*common, *shards["ranking"], whole).returncode == 0
    a, b = model.load_model(resumed), model.load_model(whole)
    assert a.header["iterations"] == b.header["iterations"]
    assert float(a.header["primal"]) == pytest.approx(float(b.header["primal"]), rel=1e-9)
    assert np.abs(a.w - b.w).max() <= 1e-7 * np.abs(b.w).max()


def test_the_python_api_trains_on_a_client_of_yours(client, shards):
    local = api.fit(arrays.concatenate([data.read_svmlight(f) for f in shards["ranking"]]), loss="pairs-avg", C=3.0)
    remote = api.fit_shards(shards["ranking"], loss="pairs-avg", C=3.0, client=client)
    assert_same_training(local, remote)
    with pytest.raises(UsageError, match="at least one worker"):
        api.fit_shards(shards["ranking"], loss="pairs-avg")


@pytest.mark.slow
def test_a_port_that_is_not_a_dask_scheduler_is_one_line_within_the_timeout(shards, tmp_path, monkeypatch):
    """An HTTP server where the scheduler should be accepts the connection and never speaks Dask's protocol:
    Dask's own timeout does not end the wait (it was still waiting after 606 s); ours does."""
    import http.server
    import threading
    import time

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(address, "CONNECT_TIMEOUT", 3.0)
    started = time.monotonic()
    try:
        run = invoke_here("learn", "-l", "pairs", "--scheduler", f"tcp://127.0.0.1:{server.server_address[1]}",
                          *shards["ranking"], tmp_path / "m")
    finally:
        server.shutdown()
    assert run.returncode == 5 and run.stderr.count("\n") == 1, run.stderr
    assert "no Dask scheduler answered within 3 s" in run.stderr and time.monotonic() - started < 20
    assert not (tmp_path / "m").exists()


@pytest.mark.slow
def test_a_port_that_answers_another_protocol_is_said_so(shards, tmp_path, monkeypatch):
    """A server that answers in another protocol at once (an HTTP error): Dask reads its text as a frame length
    and asks for exabytes (MemoryError: Unable to allocate 3.07 EiB); the line says what happened instead."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))

    def answer():
        while True:
            try:
                peer, _ = listener.accept()
            except OSError:
                return
            peer.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>bad</html>\r\n" * 4)

    threading.Thread(target=answer, daemon=True).start()
    monkeypatch.setattr(address, "CONNECT_TIMEOUT", 3.0)
    try:
        run = invoke_here("learn", "-l", "pairs", "--scheduler", f"tcp://127.0.0.1:{listener.getsockname()[1]}",
                          *shards["ranking"], tmp_path / "m")
    finally:
        listener.close()
    assert run.returncode == 5 and run.stderr.count("\n") == 1, run.stderr
    assert "not in Dask's protocol" in run.stderr and "EiB" not in run.stderr, run.stderr


def test_a_local_cluster_that_does_not_start_is_one_line(shards, tmp_path):
    run = invoke("learn", "-l", "pairs", "--workers", "2", *shards["ranking"], tmp_path / "m",
                 env={"DASK_TEMPORARY_DIRECTORY": "/etc/hostname/sub"})
    assert run.returncode == 5 and run.stderr.count("\n") == 1, run.stderr
    assert "the local Dask cluster did not start" in run.stderr and "Traceback" not in run.stderr


def test_a_missing_shard_is_refused_before_a_local_cluster_starts(shards, tmp_path):
    """--workers 4 on a file that does not exist started a cluster of 4 processes (24 s) and printed Dask's `Compute
    Failed` block with a traceback before the one line; a shard that does not parse is one line too."""
    import time

    started = time.monotonic()
    run = invoke("learn", "-l", "pairs", "--workers", "4", tmp_path / "nothing.txt", tmp_path / "m")
    one_line_error(run, 1, "nothing.txt: cannot open")
    assert time.monotonic() - started < 10
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:x\n")
    one_line_error(invoke("learn", "-l", "pairs", "--workers", "2", bad, tmp_path / "m"), 1, "bad.txt:1:")
    assert not (tmp_path / "m").exists()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ranking_data(path, queries: range, rng) -> None:
    with open(path, "w") as f:
        for q in queries:
            X = rng.normal(size=(30, 40))
            labels = np.clip(np.round(X[:, 0] + X[:, 1] + rng.normal(size=30)), 0, 3).astype(int)
            f.writelines(f"{y} qid:{q + 1} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(row)) + "\n"
                         for y, row in zip(labels, X))


@pytest.mark.slow
def test_a_scheduler_killed_mid_training_is_one_line_and_the_previous_model_stays(tmp_path):
    """The scheduler of --scheduler killed (SIGKILL) at iteration 2: one line on stderr, exit 5, no traceback (there
    were two chained ones), and the model file that was there is untouched."""
    import subprocess
    import sys
    import time
    from pathlib import Path

    dask = str(Path(sys.executable).with_name("dask"))
    port = _free_port()
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s"}
    scheduler = subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--dashboard-address", ":0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=env)
    worker = None
    try:
        address = f"tcp://127.0.0.1:{port}"
        worker = subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        rng = np.random.default_rng(4)
        shards = [tmp_path / "a.txt", tmp_path / "b.txt"]
        for i, shard in enumerate(shards):
            _ranking_data(shard, range(200 * i, 200 * (i + 1)), rng)
        model = tmp_path / "prev.model"
        model.write_text("old\n")
        quick = ("import sys; from svmstruct.train import address; address.CONNECT_TIMEOUT = 5.0; "
                 "from svmstruct.__main__ import main; sys.exit(main())")  # Dask's client waits 30 s to reconnect
        learn = subprocess.Popen([sys.executable, "-c", quick, "learn", "-l", "pairs", "-c", "1000", "-e", "0.0000001",
                                  "--scheduler", address, *map(str, shards), str(model)], stderr=subprocess.PIPE,
                                 text=True, env=env)
        seen = []
        for line in learn.stderr:
            seen.append(line)
            if line.startswith("iter    2"):
                scheduler.kill()
                break
        seen += learn.stderr.readlines()
        learn.wait(120)
        assert scheduler.poll() is not None, ("training ended before the scheduler was killed", seen)
        one_line_error(subprocess.CompletedProcess([], learn.returncode, "", "".join(
            line for line in seen if not line.startswith(("iter", "Training set", "Reading")))), 5, "Dask")
        assert "Traceback" not in "".join(seen) and model.read_text() == "old\n"
    finally:
        for process in (worker, scheduler):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(30)
        time.sleep(0)
