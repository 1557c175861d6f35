"""svmstruct: structural SVMs trained with the 1-slack cutting-plane algorithm.

The Python API (docs/python.md):

    import svmstruct
    train = svmstruct.read_svmlight("train.txt")
    model = svmstruct.fit(train, loss="ndcg@10", C=100)        # svmstruct.Model
    scores = model.predict(svmstruct.read_svmlight("test.txt"))
    model.save("ndcg.model")                                   # `svmstruct classify` reads it
    svmstruct.SVMRank(loss="map", C=10).fit(X, y, qid=qid)     # scikit-learn compatible
    svmstruct.SVMPerf(loss="f1", C=100).fit(X, y)

Attributes are imported on first use, so that the command line starts without loading what it does not use.
Importing the package changes neither the environment nor the process's thread pools (svmstruct.compute.threads:
what a training run limits, and only for its duration), but for NUMBA_CACHE_DIR where numba has no writable cache at
all (svmstruct.compute.numba_cache).
"""
def _numba_cache() -> None:
    """A writable place for numba's compiled kernels, also where the installation and the home are read-only."""
    import sys

    from svmstruct.compute import numba_cache

    notice = numba_cache.ensure()
    if notice:
        sys.stderr.write(notice + "\n")


_numba_cache()

__version__ = "0.3.0"

_EXPORTS = {
    "read_svmlight": ("svmstruct.io.data", "read_svmlight"),
    "from_arrays": ("svmstruct.dataset.arrays", "from_arrays"),
    "Dataset": ("svmstruct.io.data", "Dataset"),
    "fit": ("svmstruct.api", "fit"),
    "fit_shards": ("svmstruct.api", "fit_shards"),
    "fit_problem": ("svmstruct.api", "fit_problem"),
    "Model": ("svmstruct.model", "Model"),
    "load_model": ("svmstruct.model", "load_model"),
    "save_model": ("svmstruct.model", "save_model"),
    "SVMPerf": ("svmstruct.estimators", "SVMPerf"),
    "SVMRank": ("svmstruct.estimators", "SVMRank"),
    "StructuredSVM": ("svmstruct.estimators", "StructuredSVM"),
    "InputError": ("svmstruct.errors", "InputError"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        import importlib

        module, attribute = _EXPORTS[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'svmstruct' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))
