"""Training on a Dask cluster: `learn --workers N` (a local cluster of N processes) or `--scheduler
ADDRESS` (an existing one), and api.fit_shards; needs the optional extra svmstruct[distributed].
ClusterSource is the training source training.train_grid trains on (this module knows nothing of the API).

The cutting-plane loop (train.optimise) and its QP run on the driver. Every training file (a shard of
whole queries) is read by a worker into a Shard actor, which keeps the shard's data, scores and training
problem in memory for the whole run and answers the loop's calls for its queries (the LocalEvaluator
protocol of svmstruct.train.evaluator). Per call only w (d numbers) or a step goes out, and an evaluation
(3 numbers) or a cutting plane (d + 1 numbers) comes back; the driver adds the shards' answers in shard
order. The driver never reads the data. Losses whose oracle treats each query on its own
(Loss.decomposes) give the same objective as one process, up to the order of the sums.

A worker lost mid-training: the shards it held are read again by the workers left (Dask places the new
actors), their state is rebuilt from the driver's w_b, w_t and the w of the last re-imputation
(LocalEvaluator.restore) and the call is repeated; after RETRIES losses of one shard, or when no worker
takes it within TIMEOUT seconds, training stops with a DistributedError and no model.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from svmstruct.errors import InputError, SvmStructError, UsageError
from svmstruct.train.address import DistributedError, client_for  # noqa: F401 - distributed.client_for

RETRIES = 3  # reloads of one shard before giving up
TIMEOUT = 300.0  # seconds to wait for a worker to load a shard or answer a call
PARAMETERS = ("K", "k")  # training-set statistics that are settings, not counts (not summed over shards)


def _set_threads(threads: int | None) -> None:
    if threads:
        from svmstruct.compute import threads as policy

        policy.set_count(threads)


class Shard:
    """A Dask actor: one training file, read on the worker, and its training problem."""

    def __init__(self, path: str, single_precision: bool = True, layout: str = "auto", threads: int | None = None):
        from svmstruct.io import data

        self.threads = threads
        _set_threads(threads)
        self.data: Any = data.read_svmlight(path, dtype=np.float32 if single_precision else np.float64, layout=layout)
        self.problem: Any = None
        self.evaluator: Any = None

    def describe(self) -> dict:
        """What the driver needs to align the shards: size, columns, query ids, largest |x|."""
        from svmstruct.dataset import arrays

        d = self.data
        return dict(path=d.path, documents=d.n_docs, width=d.n_features, columns=d.columns, has_qid=d.has_qid,
                    qids=np.unique(d.qid) if d.has_qid else None, largest=arrays.largest_magnitude(d),
                    pairs=_pairs_of_different_label(d.y, d.qptr) if d.has_qid else 0)

    def column_largest(self, width: int, columns: np.ndarray | None) -> np.ndarray:
        """Per column of the aligned data: the largest |value| (0 for a column not used here)."""
        from svmstruct.dataset import arrays

        X = arrays.align(self.data, width, columns).X
        largest = np.abs(X).max(axis=0)
        return np.asarray(largest.toarray() if hasattr(largest, "toarray") else largest, dtype=np.float64).ravel()

    def rows(self, positions: np.ndarray):
        """The documents at these positions as kernels.Basis vectors (feature ids): basis candidates."""
        from svmstruct.kernels.kernel_functions import Rows

        return Rows.of(self.data).select(positions)

    def build(self, loss, opts: dict, width: int, columns: np.ndarray | None, normalize: str,
              scale: np.ndarray | None, mapping: Any = None) -> dict:
        """The shard's training problem of `loss` (the driver's Loss, pickled: a loss registered only there
        trains too) over the common columns (or over a kernel map's features, learn -t); its n, epsilon scale
        and statistics."""
        import dataclasses

        from svmstruct.dataset import arrays
        from svmstruct.dataset import normalize as normalization
        from svmstruct.kernels.kernel_functions import Rows

        _set_threads(self.threads)
        if mapping is not None:
            aligned = dataclasses.replace(self.data, X=mapping.map(Rows.of(self.data)), columns=None)
        else:
            aligned = arrays.align(self.data, width, columns)
        if normalize == "query":
            aligned = normalization.query_level(aligned)
        elif normalize == "global":
            assert scale is not None
            aligned = normalization.scaled(aligned, scale)
        self.data = None  # the problem keeps what it needs
        self.problem = loss.build(aligned, opts)
        self.reset()
        p = self.problem
        return dict(n=p.n, scaled_n=p.epsilon_scale * p.n, skipped=p.skipped, examples=p.examples_in_data,
                    info=p.info, bias=p.bias, exact=p.exact, latent=p.latent_target is not None, dim=p.X.shape[1],
                    search_calls=p.search_calls)

    def widen(self, dim: int) -> None:
        """Zero columns up to dim (a loss whose features are built from the documents, e.g. SVM-div)."""
        import scipy.sparse as sp

        X = self.problem.X
        if sp.issparse(X):
            X = sp.csr_matrix(X)
            X.resize((X.shape[0], dim))
        else:
            X = np.pad(X, ((0, 0), (0, dim - X.shape[1])))
        self.problem.X = X
        self.reset()

    def reset(self) -> None:
        """A fresh start (w_b = w_t = 0) for the next training run."""
        from svmstruct.train.evaluator import LocalEvaluator

        self.evaluator = LocalEvaluator(self.problem)

    # the LocalEvaluator protocol (svmstruct.train.evaluator)
    def evaluate(self, step: float):
        _set_threads(self.threads)
        return tuple(self.evaluator.evaluate(step))

    def point(self, w: np.ndarray):
        _set_threads(self.threads)
        slope, found = self.evaluator.point(w)
        return slope, tuple(found)

    def accept(self, step: float) -> None:
        _set_threads(self.threads)
        self.evaluator.accept(step)

    def cut(self, step: float):
        _set_threads(self.threads)
        return self.evaluator.cut(step)

    def cached_cut(self, w: np.ndarray):
        _set_threads(self.threads)
        return self.evaluator.cached_cut(w)

    def reimpute(self):
        _set_threads(self.threads)
        return self.evaluator.reimpute()

    def restore(self, w_b: np.ndarray, w_t: np.ndarray, w_imputed: np.ndarray | None) -> None:
        _set_threads(self.threads)
        self.evaluator.restore(w_b, w_t, w_imputed)


def _pairs_of_different_label(y: np.ndarray, qptr: np.ndarray) -> int:
    """svm_rank's pairs of the queries: sum_q (n_q^2 - sum_label c_ql^2) / 2."""
    query = np.repeat(np.arange(len(qptr) - 1), np.diff(qptr))
    _, counts = np.unique(np.stack([query.astype(np.float64), np.asarray(y, dtype=np.float64)]), axis=1,
                          return_counts=True)
    return int((np.sum(np.diff(qptr).astype(np.int64) ** 2) - np.sum(counts.astype(np.int64) ** 2)) // 2)


def payload_bytes(value: Any) -> int:
    """Bytes of the numbers in a call's arguments or answer (arrays by size, scalars 8): what crosses the
    network beyond Dask's own framing."""
    if isinstance(value, np.ndarray):
        return value.nbytes
    if isinstance(value, (tuple, list)):
        return sum(payload_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(payload_bytes(v) for v in value.values())
    return 0 if value is None else 8


@dataclass
class Traffic:
    calls: int = 0  # calls to shards
    sent: int = 0  # payload bytes to the workers
    received: int = 0  # payload bytes back
    recoveries: int = 0  # shards reloaded after a lost worker


class Cluster:
    """The shards' actors on a Dask cluster, with recovery of lost shards (see the module docstring)."""

    def __init__(self, client, paths: list, single_precision: bool = True, layout: str = "auto",
                 threads: int | None = None, on_reload: Callable[[str], None] | None = None, actor: tuple = ()):
        self.client = client
        self.on_reload = on_reload  # told about every shard read again after a lost worker
        self.paths = list(paths)
        # the actor class reading a shard and its arguments after the path: a Shard of documents by default
        self.actor = actor or (Shard, (single_precision, layout, threads))
        self.traffic = Traffic()
        self.built: tuple = ()  # build's arguments, to rebuild a reloaded shard
        self.dim = 0
        self.state: tuple = (None, None, None)  # (w_b, w_t, w_imputed) of the current run
        self.actors = [f for f in self._wait([self._submit(p) for p in self.paths], "reading")]

    def _submit(self, path: str):
        kind, arguments = self.actor
        return _dask_call(f"reading {path}", self.client.submit, kind, path, *arguments, actor=True, pure=False)

    def _wait(self, futures: list, doing: str) -> list:
        out = []
        for path, future in zip(self.paths, futures):
            try:
                out.append(_dask_call(f"{doing} {path}", future.result, timeout=TIMEOUT))
            except TimeoutError:
                raise DistributedError(f"no worker finished {doing} {path} within {TIMEOUT:g} s") from None
        return out

    def call(self, method: str, *args, shards: list | None = None) -> list:
        """method(*args) on every shard (or those listed), answers in shard order; a shard whose worker
        is lost is reloaded and asked again."""
        indices = range(len(self.actors)) if shards is None else shards
        futures = {i: _dask_call(f"calling {self.paths[i]}", getattr(self.actors[i], method), *args)
                   for i in indices}
        size = payload_bytes(args)
        answers = []
        for i, future in futures.items():
            for attempt in range(RETRIES + 1):
                try:
                    answer = _dask_call(f"waiting for {self.paths[i]}", future.result, timeout=TIMEOUT)
                    break
                except (OSError, TimeoutError) as e:  # the actor's worker is gone (or silent)
                    if attempt == RETRIES:
                        raise DistributedError(f"lost the worker holding {self.paths[i]} {RETRIES + 1} times "
                                               f"({type(e).__name__}: {e}); no model written") from None
                    self._reload(i)
                    future = _dask_call(f"calling {self.paths[i]}", getattr(self.actors[i], method), *args)
            self.traffic.calls += 1
            self.traffic.sent += size
            self.traffic.received += payload_bytes(answer)
            answers.append(answer)
        return answers

    def _reload(self, i: int) -> None:
        """Read shard i again on a live worker and bring it to the run's state."""
        self.traffic.recoveries += 1
        message = f"lost the worker holding {self.paths[i]}: reading it again on another worker"
        if self.on_reload:
            self.on_reload(message)
        actor = self._wait_one(self._submit(self.paths[i]), self.paths[i])
        doing = f"bringing {self.paths[i]} back to the run's state"
        if self.built:
            _dask_call(doing, lambda: actor.build(*self.built).result(timeout=TIMEOUT))
            if self.dim:
                _dask_call(doing, lambda: actor.widen(self.dim).result(timeout=TIMEOUT))
            w_b, w_t, w_imputed = self.state
            if w_b is not None:
                _dask_call(doing, lambda: actor.restore(w_b, w_t, w_imputed).result(timeout=TIMEOUT))
        self.actors[i] = actor

    def _wait_one(self, future, path: str):
        try:
            return _dask_call(f"reading {path} again", future.result, timeout=TIMEOUT)
        except TimeoutError:
            raise DistributedError(f"no worker took {path} within {TIMEOUT:g} s") from None


def _dask_call(doing: str, call: Callable, *args, **kwargs):
    """call(*args, **kwargs), a call into Dask while DOING something: an error of ours raised on a worker (a bad
    shard) as it is, a lost or silent worker (OSError, TimeoutError) to the caller, which reloads the shard; anything
    else Dask raises (the scheduler gone, a cancelled future, a closed connection) a DistributedError of one line."""
    try:
        return call(*args, **kwargs)
    except (SvmStructError, OSError, TimeoutError):
        raise
    except Exception as e:  # noqa: BLE001 - Dask's errors are many; each becomes one line
        message = [line for line in str(e).strip().splitlines() if line.strip()]
        raise DistributedError(f"the Dask cluster failed while {doing}: {type(e).__name__}"
                               f"{': ' + message[0] if message else ''}; no model written") from None


class DistributedEvaluator:
    """The LocalEvaluator protocol over all shards: answers summed in shard order. It follows w_b, w_t
    and the w of the last re-imputation as the loop moves them, to restore a reloaded shard."""

    def __init__(self, cluster: Cluster, dim: int):
        from svmstruct.train.evaluator import combine

        self.cluster = cluster
        self._combine = combine
        zero = np.zeros(dim)
        cluster.call("reset")
        cluster.state = (zero, zero, None)

    def evaluate(self, step: float):
        return self._combine(self.cluster.call("evaluate", step))

    def point(self, w: np.ndarray):
        w_b, _, w_imputed = self.cluster.state
        self.cluster.state = (w_b, w, w_imputed)
        answers = self.cluster.call("point", w)
        return sum(slope for slope, _ in answers), self._combine(found for _, found in answers)

    def accept(self, step: float) -> None:
        self.cluster.call("accept", step)
        w_b, w_t, w_imputed = self.cluster.state
        if step == 1.0:
            w_b = w_t.copy()
        elif step != 0.0:
            w_b = w_b + step * (w_t - w_b)
        self.cluster.state = (w_b, w_t, w_imputed)

    def cut(self, step: float):
        return self._sum(self.cluster.call("cut", step))

    def cached_cut(self, w: np.ndarray):
        """The shards' cuts of their kept outputs at w, summed (None when a shard keeps none)."""
        parts = self.cluster.call("cached_cut", w)
        return None if any(part is None for part in parts) else self._sum(parts)

    def kept(self):
        """None: each shard keeps its own outputs, in memory (a run resumed on a cluster starts without them)."""
        return None

    def restore_kept(self, state) -> None:
        pass

    @staticmethod
    def _sum(parts) -> tuple:
        a, delta = None, 0.0
        for part, part_delta in parts:
            a = part.copy() if a is None else a + part
            delta += part_delta
        return a, delta

    def restore(self, w_b: np.ndarray, w_t: np.ndarray, w_imputed: np.ndarray | None) -> None:
        self.cluster.state = (w_b, w_t, w_imputed)
        self.cluster.call("restore", w_b, w_t, w_imputed)

    def reimpute(self):
        moved = self.cluster.call("reimpute")
        w_b, w_t, _ = self.cluster.state
        self.cluster.state = (w_b, w_t, w_b.copy())
        if all(m is None for m in moved):
            return None
        total = np.zeros(self.cluster.dim)
        for m in moved:
            if m is not None:
                total += m
        return total


def _merge_info(infos: list) -> dict:
    merged: dict = {}
    for key in infos[0]:
        values = [info.get(key) for info in infos]
        counts = all(isinstance(v, int) and not isinstance(v, bool) for v in values) and key not in PARAMETERS
        merged[key] = sum(values) if counts else values[0]
    return merged


class ClusterSource:
    """Shards on a Dask cluster as a training source of training.train_grid (the other one is training.LocalSource):
    prepare aligns and builds the shards' problems, evaluator sums their answers for one run."""

    def __init__(self, cluster: Cluster, kernel: Any = None):
        self.cluster = cluster
        self.kernel = kernel  # a kernel_map.Spec (learn -t): the shards map their documents

    def prepare(self, loss, opts: dict, normalize: str):
        """(as training.LocalSource.prepare) the outline, summary, largest |x|, global scale and kernel map of the
        shards."""
        from svmstruct.train.problem import Prepared

        return Prepared(*prepare(self.cluster, loss, opts, normalize, self.kernel))

    def evaluator(self, prepared) -> DistributedEvaluator:
        return DistributedEvaluator(self.cluster, prepared.outline.dim)

    def judge(self, trained, loss, opts: dict) -> None:
        """The shards' data stay on the workers: whether the model learned is the objective's gain."""


def prepare(cluster: Cluster, loss, opts: dict, normalize: str = "none", kernel: Any = None) -> tuple:
    """Align and build the shards' problems: (Outline, TrainingSummary, the largest |x| of the data, the
    global scale of --normalize global or None, the kernel map of learn -t or None)."""
    from svmstruct.errors import InputError
    from svmstruct.train.problem import Outline, TrainingSummary

    loss.check_decomposes(opts)
    shapes = cluster.call("describe")
    if loss.needs_qid or opts.get("per_query"):
        for shape in shapes:
            if not shape["has_qid"]:
                raise InputError(f"loss {loss.name} needs qid:<id> on every line", shape["path"])
        _check_disjoint_queries(shapes)
    if any(s["columns"] is not None for s in shapes):
        ids = [np.arange(s["width"]) if s["columns"] is None else s["columns"] for s in shapes]
        columns: np.ndarray | None = np.unique(np.concatenate(ids)).astype(np.int64)
        width = len(columns)  # type: ignore[arg-type]
    else:
        columns, width = None, max(s["width"] for s in shapes)
    scale = mapping = None
    if normalize == "global":
        largest = np.max(cluster.call("column_largest", width, columns), axis=0)
        scale = np.where(largest > 0, largest, 1.0)
    if kernel is not None:
        mapping = kernel_map(cluster, kernel, loss, normalize, [s["documents"] for s in shapes])
        columns, width = None, mapping.size
    if loss.needs_qid:  # --pairwise's scale, the mean pairs a query, is the whole data's (losses.combo.with_pairs)
        queries = sum(len(s["qids"]) for s in shapes)
        opts = {**opts, "pairs_per_query": sum(s["pairs"] for s in shapes) / max(queries, 1)}
    cluster.built = (loss, opts, width, columns, normalize, scale, mapping)
    built = cluster.call("build", *cluster.built)
    dim = max(b["dim"] for b in built)
    narrower = [i for i, b in enumerate(built) if b["dim"] < dim]
    if narrower:
        cluster.call("widen", dim, shards=narrower)
    cluster.dim = dim
    n = sum(b["n"] for b in built)
    outline = Outline(n, dim, sum(b["scaled_n"] for b in built) / n, all(b["exact"] for b in built),
                      any(b["latent"] for b in built), min(b["search_calls"] for b in built))
    summary = TrainingSummary("+".join(cluster.paths), sum(s["documents"] for s in shapes), columns, n,
                              sum(b["skipped"] for b in built), sum(b["examples"] for b in built), built[0]["bias"],
                              _merge_info([b["info"] for b in built]))
    return outline, summary, max(s["largest"] for s in shapes), scale, mapping


def kernel_map(cluster: Cluster, spec, loss, normalize: str, documents: list):
    """The kernel map of learn -t over the shards: its basis drawn from the documents of all shards (as
    numbered in shard order) or from --f, read here."""
    from svmstruct.io.data import read_basis
    from svmstruct.kernels.kernel_functions import Basis
    from svmstruct.kernels.nystroem import KernelMap, select

    spec.check_for(loss, normalize)
    offsets = np.cumsum([0] + documents)

    def sample(positions: np.ndarray) -> Basis:
        shard = np.searchsorted(offsets, positions, side="right") - 1
        parts = [cluster.call("rows", positions[shard == i] - offsets[i], shards=[i])[0]
                 for i in np.unique(shard)]
        return Basis.stack(parts)

    return KernelMap.over(spec.kernel, select(spec, int(offsets[-1]), sample, read_basis))


def _check_disjoint_queries(shapes: list) -> None:
    from svmstruct.errors import InputError

    owner = np.concatenate([np.full(len(s["qids"]), i) for i, s in enumerate(shapes)])
    qids = np.concatenate([s["qids"] for s in shapes])
    order = np.argsort(qids, kind="stable")
    twice = np.flatnonzero(qids[order][1:] == qids[order][:-1])
    if len(twice):
        first, second = owner[order[twice[0]]], owner[order[twice[0] + 1]]
        raise InputError(f"qid {qids[order[twice[0]]]} is in {shapes[first]['path']} and in "
                         f"{shapes[second]['path']}: every shard must hold whole queries", shapes[second]["path"])


# ---- structured problems on the cluster (learn --problem ... --workers N | --scheduler ADDRESS)

class ProblemShard(Shard):
    """A Dask actor: one training file of a structured problem, read on the worker, and its training problem."""

    def __init__(self, path: str, structured: Any, threads: int | None = None):  # not Shard's: no documents
        self.threads = threads
        _set_threads(threads)
        self.structured = structured  # the driver's problem with the options given (pickled)
        self.examples: Any = structured.read(path)
        self.path = path
        self.problem: Any = None
        self.evaluator: Any = None

    def settle(self) -> dict:
        """The options the problem settles on this shard's examples (dimension() writes them)."""
        if not len(self.examples):
            raise InputError("no examples in this shard", self.path)
        settling = copy.deepcopy(self.structured)
        settling.dimension(self.examples)
        return dict(settling.options)

    def build(self, options: dict, rescaling: int) -> dict:  # type: ignore[override]  # a problem's, not a loss's
        """The shard's training problem, the problem built with the merged OPTIONS (the whole set's)."""
        _set_threads(self.threads)
        structured = type(self.structured)(**options)
        self.problem = structured.training_problem(self.examples, rescaling)
        self.reset()
        p = self.problem
        return dict(n=p.n, dim=p.X.shape[1], exact=p.exact, search_calls=p.search_calls, info=p.info,
                    cached=p.cached is not None)

    def widen(self, dim: int) -> None:
        """Every shard's problem has the whole set's dimension (its options merged): nothing to widen."""
        if self.problem.X.shape[1] != dim:
            raise InputError(f"the problem has {self.problem.X.shape[1]} weights on this shard and {dim} on others",
                             self.path)


def problem_cluster(client, paths: list, structured, threads: int | None, on_reload=None) -> Cluster:
    """The shards of a structured problem (STRUCTURED: its instance with the options given) on a Dask cluster."""
    return Cluster(client, paths, on_reload=on_reload, actor=(ProblemShard, (structured, threads)))


class ProblemClusterSource:
    """A structured problem's shards on a Dask cluster as a training source of training.train_grid (as
    training.ExamplesSource in one process)."""

    def __init__(self, cluster: Cluster, structured):
        self.cluster = cluster
        self.structured = structured

    def prepare(self, loss, opts: dict, normalize: str):
        from svmstruct.train.problem import Outline, Prepared, TrainingSummary

        if normalize != "none":
            raise UsageError("--normalize applies to feature files; a problem's Psi is its own")
        options = {**self.structured.options, **self.structured.merge_settled(self.cluster.call("settle"))}
        self.structured = type(self.structured)(**options)
        self.cluster.built = (options, int(opts["rescaling"]))
        built = self.cluster.call("build", *self.cluster.built)
        dims = {b["dim"] for b in built}
        if len(dims) != 1:
            raise InputError(f"the shards' problems have {sorted(dims)} weights: the merged options do not settle "
                             "the dimension", "+".join(self.cluster.paths))
        dim = self.cluster.dim = dims.pop()
        n = sum(b["n"] for b in built)
        outline = Outline(n, dim, 1.0, all(b["exact"] for b in built), False, min(b["search_calls"] for b in built),
                          all(b["cached"] for b in built))
        info = {**built[0]["info"], "examples": n}
        summary = TrainingSummary("+".join(self.cluster.paths), n, None, n, 0, n, 0.0, info)
        settled = {k: v for k, v in options.items() if v is not None}
        return Prepared(outline, summary, 0.0, settled=settled)

    def evaluator(self, prepared) -> DistributedEvaluator:
        return DistributedEvaluator(self.cluster, prepared.outline.dim)

    def judge(self, trained, loss, opts: dict) -> None:
        """A problem has no measure: whether it learned is the objective's gain (TrainResult.learned)."""
