"""A structured problem on a Dask cluster (`learn --problem ... --workers N | --scheduler ADDRESS`): every
TRAIN_FILE is a shard of whole examples, read on a worker by the problem's read(); the 1-slack loop and its QP run on
the driver, as for the losses' shards (svmstruct.train.distributed), because a problem's cut is a sum over its
examples (Joachims, Finley & Yu 2009, eq. 9): the shards' cuts, added in shard order, are the cut of the whole set.

The options a problem settles on its examples (SVM-multiclass's classes and features, SVM-hmm's tags) are settled on
every shard first and merged by the problem (StructuredProblem.merge_settled: the largest count), so that every
shard builds the problem of the whole training set: the same w's layout, the model one process writes.
"""
from __future__ import annotations

import copy
from typing import Any

from svmstruct.errors import InputError, UsageError
from svmstruct.train.distributed import Cluster, DistributedEvaluator, Shard, _set_threads


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


def cluster(client, paths: list, structured, threads: int | None, on_reload=None) -> Cluster:
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
